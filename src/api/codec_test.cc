#include "api/codec.h"

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "api/meta_codec.h"
#include "api/node.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {

// A type exercising every member shape the mechanism supports.
struct Inner {
  std::string name;
  int32_t port = 0;
  bool operator==(const Inner&) const = default;
};

struct Sample {
  std::string str;
  std::string str_omit;
  int32_t i32 = 0;
  int64_t i64_omit = 0;
  uint32_t u32_omit = 0;
  bool flag = false;
  double ratio = 0;
  std::optional<std::string> opt;
  std::optional<int32_t> opt_omit;
  std::vector<std::string> list;
  std::vector<Inner> inners_omit;
  std::map<std::string, std::string> labels;
  std::map<std::string, Inner> by_name_omit;
  Quantity qty;
  IntOrString port;
  Time time;
  std::optional<Time> time_omit;
  MicroTime micro;
  std::string bytes_omit;
  RawJson raw;
  Inner inner;
  std::optional<Inner> inner_omit;
  RawJson unknown;
  bool operator==(const Sample&) const = default;
};

template <>
struct codec::Fields<Inner> {
  static constexpr auto kList =
      std::tuple(Field("name", &Inner::name), Field("port", &Inner::port, kOmitEmpty));
};

template <>
struct codec::Fields<Sample> {
  using S = Sample;
  static constexpr auto kList = std::tuple(
      Field("str", &S::str), Field("strOmit", &S::str_omit, kOmitEmpty), Field("i32", &S::i32),
      Field("i64Omit", &S::i64_omit, kOmitEmpty), Field("u32Omit", &S::u32_omit, kOmitEmpty),
      Field("flag", &S::flag), Field("ratio", &S::ratio), Field("opt", &S::opt),
      Field("optOmit", &S::opt_omit, kOmitEmpty), Field("list", &S::list),
      Field("innersOmit", &S::inners_omit, kOmitEmpty), Field("labels", &S::labels),
      Field("byNameOmit", &S::by_name_omit, kOmitEmpty), Field("qty", &S::qty),
      Field("port", &S::port), Field("time", &S::time),
      Field("timeOmit", &S::time_omit, kOmitEmpty), Field("micro", &S::micro),
      Field("bytesOmit", &S::bytes_omit, kOmitEmpty | kBase64), Field("raw", &S::raw),
      Field("inner", &S::inner), Field("innerOmit", &S::inner_omit, kOmitEmpty));
};

namespace {

using ::testing::HasSubstr;

TEST(CodecTest, ZeroValueEncodesLikeGo) {
  EXPECT_EQ(Encode(Sample{}),
            R"({"str":"","i32":0,"flag":false,"ratio":0,"opt":null,"list":[],"labels":{},)"
            R"("qty":"0","port":0,"time":null,"micro":null,"raw":null,"inner":{"name":""}})");
}

Sample FullSample() {
  Sample s;
  s.str = "a<b>&c";
  s.str_omit = "x";
  s.i32 = -7;
  s.i64_omit = int64_t{1} << 40;
  s.u32_omit = 4000000000u;
  s.flag = true;
  s.ratio = 0.25;
  s.opt = "";
  s.opt_omit = 0;
  s.list = {"one", "two"};
  s.inners_omit = {Inner{"a", 1}, Inner{"b", 0}};
  s.labels = {{"z", "last"}, {"a", "first"}};
  s.by_name_omit = {{"k", Inner{"v", 9}}};
  s.qty = *Quantity::Parse("1536Mi");
  s.port = IntOrString::FromString("http");
  s.time = Time::FromUnix(1700000000, 999999999);
  s.time_omit = Time::FromUnix(0);
  s.micro = MicroTime::FromUnix(1700000000, 123456789);
  s.bytes_omit = std::string("\x00\xff hi", 5);
  s.raw = RawJson{R"({"b":1,"a":[true,null]})"};
  s.inner = Inner{"in", 80};
  s.inner_omit = Inner{};
  return s;
}

constexpr char kFullSampleJson[] =
    R"({"str":"a\u003cb\u003e\u0026c","strOmit":"x","i32":-7,"i64Omit":1099511627776,)"
    R"("u32Omit":4000000000,"flag":true,"ratio":0.25,"opt":"","optOmit":0,"list":["one","two"],)"
    R"("innersOmit":[{"name":"a","port":1},{"name":"b"}],"labels":{"a":"first","z":"last"},)"
    R"("byNameOmit":{"k":{"name":"v","port":9}},"qty":"1536Mi","port":"http",)"
    R"("time":"2023-11-14T22:13:20Z","timeOmit":"1970-01-01T00:00:00Z",)"
    R"("micro":"2023-11-14T22:13:20.123456Z","bytesOmit":"AP8gaGk=",)"
    R"("raw":{"b":1,"a":[true,null]},"inner":{"name":"in","port":80},"innerOmit":{"name":""}})";

TEST(CodecTest, EveryShapeEncodesInTableOrder) { EXPECT_EQ(Encode(FullSample()), kFullSampleJson); }

TEST(CodecTest, EveryShapeRoundTrips) {
  absl::StatusOr<Sample> s = Decode<Sample>(kFullSampleJson);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Encode(*s), kFullSampleJson);
  Sample want = FullSample();
  want.time.nanos = 0;  // the wire keeps seconds
  want.micro.nanos = 123456000;
  EXPECT_EQ(*s, want);
  EXPECT_EQ(s->bytes_omit, std::string("\x00\xff hi", 5));
}

TEST(CodecTest, NullMeansAbsent) {
  absl::StatusOr<Sample> s = Decode<Sample>(
      R"({"str":null,"i32":null,"opt":null,"list":null,"labels":{"a":null},"qty":null,)"
      R"("time":null,"inner":null,"innerOmit":null,"raw":null,"micro":null})");
  ASSERT_TRUE(s.ok()) << s.status();
  Sample want;
  want.labels["a"] = "";
  EXPECT_EQ(*s, want);
}

TEST(CodecTest, UnknownMembersAreKeptAndWrittenBack) {
  absl::StatusOr<Sample> s =
      Decode<Sample>(R"({"zeta":{"deep":[1,2]},"str":"s","alpha":"<x>","inner":{"extra":1}})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->str, "s");
  EXPECT_EQ(s->unknown.json, R"({"zeta":{"deep":[1,2]},"alpha":"\u003cx\u003e"})");
  const std::string out = Encode(*s);
  // Known members first (table order), then unknown ones in document order. Inner keeps none.
  EXPECT_EQ(out.substr(out.find(R"("inner":)")),
            R"("inner":{"name":""},"zeta":{"deep":[1,2]},"alpha":"\u003cx\u003e"})");
  // A member the table names is never duplicated from the unknown holder.
  s->unknown.json = R"({"str":"stale","other":true})";
  EXPECT_THAT(Encode(*s), HasSubstr(R"("str":"s",)"));
  EXPECT_THAT(Encode(*s), ::testing::EndsWith(R"(,"other":true})"));
  EXPECT_EQ(Encode(*s).find("stale"), std::string::npos);
}

TEST(CodecTest, TypeErrorsNameTheFieldPath) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"i32":"abc"})", R"(i32: expected integer, got "abc")"},
      {R"({"i32":1.5})", "i32: expected integer, got 1.5"},
      {R"({"i32":2147483648})", "i32: value 2147483648 out of range"},
      {R"({"u32Omit":-1})", "u32Omit: value -1 out of range"},
      {R"({"flag":"true"})", R"(flag: expected boolean, got "true")"},
      {R"({"str":7})", "str: expected string, got 7"},
      {R"({"list":["a",{}]})", "list[1]: expected string, got object"},
      {R"({"innersOmit":[{"name":"a"},{"port":[]}]})",
       "innersOmit[1].port: expected integer, got array"},
      {R"({"labels":{"app":false}})", "labels[app]: expected string, got false"},
      {R"({"byNameOmit":{"k":{"name":1}}})", "byNameOmit[k].name: expected string, got 1"},
      {R"({"qty":"12xyz"})", "qty: "},
      {R"({"qty":true})", "qty: expected quantity, got true"},
      {R"({"port":1.5})", "port: expected integer or string, got 1.5"},
      {R"({"time":"yesterday"})", R"(time: parsing time "yesterday" as RFC3339)"},
      {R"({"micro":5})", "micro: expected RFC3339 time string, got 5"},
      {R"({"bytesOmit":"***"})", "bytesOmit: illegal base64 data"},
      {R"({"inner":[]})", "inner: expected object, got array"},
      {R"([])", "expected object, got array"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Sample> s = Decode<Sample>(c.json);
    ASSERT_FALSE(s.ok()) << c.json;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.status().message()), ::testing::StartsWith(c.error)) << c.json;
  }
}

TEST(CodecTest, GoStringEscaping) {
  Sample s;
  s.str = std::string(
      "tab\t nl\n quote\" bs\\ ctl\x01 ls\xe2\x80\xa8 ok\xc3\xa9 bad\xff"
      " end");
  EXPECT_THAT(Encode(s), HasSubstr(R"("str":"tab\t nl\n quote\" bs\\ ctl\u0001 ls\u2028 ok)"
                                   "\xc3\xa9"
                                   R"( bad\ufffd end")"));
}

TEST(CodecTest, GoFloatFormatting) {
  const std::pair<double, const char*> cases[] = {
      {100, "100"},
      {0.5, "0.5"},
      {1e20, "100000000000000000000"},
      {1e21, "1e+21"},
      {1e-7, "1e-7"},
      {-2.5e-10, "-2.5e-10"},
      {0.000001, "0.000001"},
      {123456.789, "123456.789"},
  };
  for (const auto& [f, want] : cases) EXPECT_EQ(SerializeJson(Json(f)), want) << f;
}

TEST(CodecTest, TimesParseOffsetsAndFractions) {
  absl::StatusOr<Sample> s =
      Decode<Sample>(R"({"time":"2024-02-29T23:59:59.9+02:00","micro":"2024-01-01T00:00:00Z"})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->time.RFC3339(), "2024-02-29T21:59:59Z");
  EXPECT_EQ(s->micro.RFC3339Micro(), "2024-01-01T00:00:00.000000Z");
}

TEST(CodecTest, QuantityAcceptsNumbers) {
  absl::StatusOr<Sample> s = Decode<Sample>(R"({"qty":1.5})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->qty.String(), "1500m");
}

TEST(CodecTest, DepthIsBounded) {
  const int n = codec::kMaxDepth + 1;
  const std::string deep = R"({"extra":)" + std::string(n, '[') + std::string(n, ']') + "}";
  absl::StatusOr<Sample> s = Decode<Sample>(deep);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("nested deeper"));
  // Just under the limit is fine, and kept.
  const int m = codec::kMaxDepth - 1;
  const std::string ok = R"({"extra":)" + std::string(m, '[') + std::string(m, ']') + "}";
  absl::StatusOr<Sample> s2 = Decode<Sample>(ok);
  ASSERT_TRUE(s2.ok()) << s2.status();
  EXPECT_EQ(Encode(*s2).size(), Encode(Sample{}).size() + ok.size() - 1);
}

TEST(CodecTest, DepthIsBoundedForTrees) {
  Json deep = Json::array();
  for (int i = 0; i < codec::kMaxDepth + 5; ++i) deep = Json::array({std::move(deep)});
  Json doc = {{"extra", deep}};
  absl::StatusOr<Sample> s = FromJson<Sample>(doc);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("nested deeper"));
  EXPECT_FALSE(FromJson<Sample>(nlohmann::json(doc)).ok());
}

TEST(CodecTest, GarbageNeverThrows) {
  const std::string inputs[] = {
      "",
      " ",
      "{",
      "}",
      "[1,",
      "nul",
      "\xff\xfe",
      "{\"str\":\"\xff\"}",
      "{\"a\":1,}",
      "1e999",
      "{\"i32\":1e999}",
      "\"str\"",
      "null",
      "{\"str\":\"\\ud800\"}",
      std::string("{\0}", 3),
  };
  for (const std::string& in : inputs) {
    EXPECT_NO_THROW({
      absl::StatusOr<Sample> s = Decode<Sample>(in);
      (void)s;
    }) << in;
  }
  EXPECT_FALSE(Decode<Sample>("null").ok());
  EXPECT_FALSE(Decode<Sample>("").ok());
}

TEST(CodecTest, MutatedDocumentsNeverThrow) {
  const std::string base = kFullSampleJson;
  std::mt19937 rng(42);
  const char alphabet[] = "{}[]\",:0123456789.-eE ntrufalse\\\xff\x00";
  for (int i = 0; i < 3000; ++i) {
    std::string doc = base;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % doc.size();
      switch (rng() % 3) {
        case 0:
          doc[pos] = alphabet[rng() % (sizeof(alphabet) - 1)];
          break;
        case 1:
          doc.erase(pos, 1 + rng() % 8);
          break;
        default:
          doc.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
      }
      if (doc.empty()) doc = "{";
    }
    EXPECT_NO_THROW({
      absl::StatusOr<Sample> s = Decode<Sample>(doc);
      if (s.ok()) (void)Encode(*s);
    }) << doc;
  }
}

TEST(CodecTest, RawJsonThatIsNotJsonEncodesAsNull) {
  Sample s;
  s.raw.json = "{not json";
  s.unknown.json = "[1]";  // not an object: dropped
  EXPECT_THAT(Encode(s), HasSubstr(R"("raw":null)"));
  EXPECT_THAT(Encode(s), ::testing::EndsWith(R"("inner":{"name":""}})"));
}

TEST(CodecTest, JsonLevelVariants) {
  Json j = ToJson(FullSample());
  EXPECT_EQ(j["inner"]["port"], 80);
  j["i32"] = 12;
  absl::StatusOr<Sample> s = FromJson<Sample>(j);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->i32, 12);
  EXPECT_FALSE(FromJson<Sample>(Json::array()).ok());

  const nlohmann::json unordered = {{"i32", 5}, {"inner", {{"name", "x"}}}, {"zz", 1}};
  absl::StatusOr<Sample> u = FromJson<Sample>(unordered);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->i32, 5);
  EXPECT_EQ(u->inner.name, "x");
  EXPECT_EQ(u->unknown.json, R"({"zz":1})");
}

// ---------------------------------------------------------------------------------------------
// meta/v1.

TEST(MetaCodecTest, StatusAsTheApiServerWritesIt) {
  constexpr char kNotFound[] =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"("message":"nodes \"worker-1\" not found","reason":"NotFound",)"
      R"("details":{"name":"worker-1","kind":"nodes"},"code":404})";
  absl::StatusOr<Status> st = Decode<Status>(kNotFound);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->code, 404);
  EXPECT_EQ(st->reason, "NotFound");
  ASSERT_TRUE(st->details.has_value());
  EXPECT_EQ(st->details->kind, "nodes");
  EXPECT_EQ(Encode(*st), kNotFound);

  constexpr char kConflict[] =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
      R"("Operation cannot be fulfilled on leases.coordination.k8s.io \"n1\": the object has )"
      R"(been modified; please apply your changes to the latest version and try again",)"
      R"("reason":"Conflict","details":{"name":"n1","group":"coordination.k8s.io",)"
      R"("kind":"leases","causes":[{"reason":"FieldValueInvalid","message":"m",)"
      R"("field":"spec"}],"retryAfterSeconds":1},"code":409})";
  absl::StatusOr<Status> c = Decode<Status>(kConflict);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->details->causes.size(), 1u);
  EXPECT_EQ(Encode(*c), kConflict);
}

TEST(MetaCodecTest, ObjectMetaKeepsManagedFieldsAndUnknownMembers) {
  constexpr char kMeta[] =
      R"({"name":"n1","uid":"6d1f","resourceVersion":"42","generation":3,)"
      R"("creationTimestamp":"2024-05-01T10:00:00Z","deletionTimestamp":"2024-05-02T10:00:00Z",)"
      R"("deletionGracePeriodSeconds":0,"labels":{"b":"2","a":"1"},)"
      R"("ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"u",)"
      R"("controller":true}],"finalizers":["f"],)"
      R"("managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1",)"
      R"("time":"2024-05-01T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{}}}],)"
      R"("futureField":{"x":1}})";
  absl::StatusOr<ObjectMeta> m = Decode<ObjectMeta>(kMeta);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->generation, 3);
  ASSERT_TRUE(m->deletion_grace_period_seconds.has_value());
  EXPECT_EQ(*m->deletion_grace_period_seconds, 0);
  EXPECT_EQ(m->owner_references[0].controller, std::optional<bool>(true));
  EXPECT_THAT(m->managed_fields.json, HasSubstr(R"("manager":"kubelet")"));
  EXPECT_EQ(m->unknown.json, R"({"futureField":{"x":1}})");
  // Labels come back sorted, everything else as read.
  std::string want = kMeta;
  want.replace(want.find(R"({"b":"2","a":"1"})"), 17, R"({"a":"1","b":"2"})");
  EXPECT_EQ(Encode(*m), want);
}

TEST(MetaCodecTest, EmptyObjectMetaWritesNullCreationTimestamp) {
  EXPECT_EQ(Encode(ObjectMeta{}), R"({"creationTimestamp":null})");
}

TEST(MetaCodecTest, ListOfRawItemsAndOfTypedItems) {
  constexpr char kList[] =
      R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"900",)"
      R"("continue":"tok","remainingItemCount":3},"items":[)"
      R"({"metadata":{"name":"a","creationTimestamp":null},"spec":{},"status":{"daemonEndpoints":)"
      R"({"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"","systemUUID":"",)"
      R"("bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"",)"
      R"("kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}}]})";
  absl::StatusOr<List<RawJson>> raw = Decode<List<RawJson>>(kList);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->metadata.resource_version, "900");
  EXPECT_EQ(raw->metadata.continue_, "tok");
  EXPECT_EQ(raw->metadata.remaining_item_count, std::optional<int64_t>(3));
  ASSERT_EQ(raw->items.size(), 1u);
  EXPECT_EQ(Encode(*raw), kList);

  absl::StatusOr<NodeList> typed = Decode<NodeList>(kList);
  ASSERT_TRUE(typed.ok()) << typed.status();
  ASSERT_EQ(typed->items.size(), 1u);
  EXPECT_EQ(typed->items[0].metadata.name, "a");
  EXPECT_EQ(typed->items[0].status.daemon_endpoints.kubelet_endpoint.port, 10250);
  // Items of a list carry no TypeMeta; the typed Node defaults fill it in on the way back.
  typed->items[0].kind.clear();
  typed->items[0].api_version.clear();
  EXPECT_EQ(Encode(*typed), kList);

  List<RawJson> empty;
  empty.kind = "List";
  EXPECT_EQ(Encode(empty), R"({"kind":"List","metadata":{},"items":[]})");
}

TEST(MetaCodecTest, WatchEvents) {
  constexpr char kEvent[] =
      R"({"type":"MODIFIED","object":{"kind":"Node","apiVersion":"v1",)"
      R"("metadata":{"name":"n1","resourceVersion":"77","creationTimestamp":null},)"
      R"("spec":{"unschedulable":true},"status":{"daemonEndpoints":{"kubeletEndpoint":)"
      R"({"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"",)"
      R"("kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"",)"
      R"("kubeProxyVersion":"","operatingSystem":"","architecture":""}}}})";
  absl::StatusOr<WatchEvent<Node>> ev = Decode<WatchEvent<Node>>(kEvent);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->type, kWatchModified);
  EXPECT_TRUE(ev->object.spec.unschedulable);
  EXPECT_EQ(Encode(*ev), kEvent);

  constexpr char kError[] =
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"x("status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired",)x"
      R"("code":410}})";
  absl::StatusOr<WatchEvent<RawJson>> raw = Decode<WatchEvent<RawJson>>(kError);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(raw->type, kWatchError);
  absl::StatusOr<Status> st = Decode<Status>(raw->object.json);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->code, 410);
  EXPECT_EQ(Encode(*raw), kError);
}

}  // namespace
struct WithDuration {
  absl::Duration period;
  std::optional<absl::Duration> timeout;
};

template <>
struct codec::Fields<WithDuration> {
  using S = WithDuration;
  static constexpr auto kList =
      std::tuple(Field("period", &S::period), Field("timeout", &S::timeout, codec::kOmitEmpty));
};

TEST(CodecTest, DurationsAreGoDurationStrings) {
  WithDuration d{absl::Seconds(90), absl::Milliseconds(300)};
  EXPECT_EQ(Encode(d), R"({"period":"1m30s","timeout":"300ms"})");
  EXPECT_EQ(Encode(WithDuration{}), R"({"period":"0s"})");
  auto back = Decode<WithDuration>(R"({"period":"1h2m","timeout":"5s"})");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->period, absl::Minutes(62));
  EXPECT_EQ(back->timeout, absl::Seconds(5));
  EXPECT_THAT(std::string(Decode<WithDuration>(R"({"period":5})").status().message()),
              testing::HasSubstr("period"));
  EXPECT_THAT(std::string(Decode<WithDuration>(R"({"period":"5x"})").status().message()),
              testing::HasSubstr("unknown unit"));
}

TEST(MetadataMapsPatchTest, ChangedAddedAndRemovedKeys) {
  ObjectMeta before, after;
  before.labels = {{"keep", "1"}, {"change", "a"}, {"drop", "x"}};
  after.labels = {{"keep", "1"}, {"change", "b"}, {"add", "y"}};
  before.annotations = after.annotations = {{"same", "v"}};
  EXPECT_EQ(SerializeJson(MetadataMapsPatch(before, after)),
            R"({"metadata":{"labels":{"add":"y","change":"b","drop":null}}})");
  EXPECT_EQ(SerializeJson(MetadataMapsPatch(before, before)), "{}");
}

}  // namespace kubelet::api
