#include "api/yaml.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Json(std::string_view yaml) {
  absl::StatusOr<YamlJson> j = YamlToJson(yaml);
  EXPECT_TRUE(j.ok()) << j.status();
  return j.ok() ? j->json : "";
}

std::string Error(std::string_view yaml) {
  absl::StatusOr<YamlJson> j = YamlToJson(yaml);
  EXPECT_FALSE(j.ok()) << j->json;
  return j.ok() ? "" : std::string(j.status().message());
}

TEST(YamlToJsonTest, ScalarsResolveAsYamlV2) {
  EXPECT_EQ(Json("a: yes\nb: Off\nc: ~\nd: 0x1F\ne: 1_000\nf: 017\ng: '5'\nh: 1.0\ni: 2.5e3\n"
                 "j: 18446744073709551615\nk: -9223372036854775808\nl: 1.5.6\nm: !!str true\n"),
            R"({"a":true,"b":false,"c":null,"d":31,"e":1000,"f":15,"g":"5","h":1,"i":2500,)"
            R"("j":18446744073709551615,"k":-9223372036854775808,"l":"1.5.6","m":"true"})");
  EXPECT_EQ(Json("- 0.000001\n- 1e21\n- .5\n"), "[0.000001,1e+21,0.5]");
}

TEST(YamlToJsonTest, KeysAreStringsAndKeepDocumentOrder) {
  EXPECT_EQ(Json("z: 1\ntrue: 2\n5: 3\na: 4\n"), R"({"z":1,"true":2,"5":3,"a":4})");
  EXPECT_THAT(Error("~: 1\n"), HasSubstr("unsupported map key of type: <nil>"));
  EXPECT_THAT(Error("[a]: 1\n"), HasSubstr("unsupported map key"));
}

TEST(YamlToJsonTest, DuplicatesKeepFirstPlaceLastValueAndAreReported) {
  absl::StatusOr<YamlJson> j = YamlToJson("a: 1\nb: 2\na: 3\n");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->json, R"({"a":3,"b":2})");
  EXPECT_THAT(j->duplicate_keys, ElementsAre("line 3: key \"a\" already set in map"));
}

TEST(YamlToJsonTest, MergeKeys) {
  absl::StatusOr<YamlJson> j = YamlToJson(
      "base: &b {p: 1, q: 2}\nother: &o {q: 3, r: 4}\n"
      "m:\n  <<: [*b, *o]\n  p: 9\n");
  ASSERT_TRUE(j.ok()) << j.status();
  // Earlier maps win over later ones, the mapping's own keys over all; no duplicates reported.
  EXPECT_EQ(j->json, R"({"base":{"p":1,"q":2},"other":{"q":3,"r":4},"m":{"q":2,"r":4,"p":9}})");
  EXPECT_TRUE(j->duplicate_keys.empty());
  EXPECT_THAT(Error("m:\n  <<: 5\n"), HasSubstr("map merge requires map or sequence of maps"));
}

TEST(YamlToJsonTest, RefusesWhatJsonCannotHoldAndBadTags) {
  EXPECT_EQ(Error("a: .nan\n"), "error converting YAML to JSON: json: unsupported value: NaN");
  EXPECT_EQ(Error("a: -.inf\n"), "error converting YAML to JSON: json: unsupported value: -Inf");
  EXPECT_EQ(Error("a: 1e999\n"), "error converting YAML to JSON: json: unsupported value: +Inf");
  EXPECT_THAT(Error("a: !!int abc\n"), HasSubstr("cannot decode abc as a tag:yaml.org,2002:int"));
  EXPECT_THAT(Error("a: [1\n"), HasSubstr("error converting YAML to JSON: yaml: line"));
}

TEST(YamlToJsonTest, AliasesCannotBlowUpAndDepthIsBounded) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c, ++prev) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  EXPECT_THAT(Error(bomb), HasSubstr("too many nodes or aliases"));
  EXPECT_THAT(Error("foo: &x [*x]\n"), HasSubstr("exceeded max depth"));
  EXPECT_EQ(Json(""), "null");
}

}  // namespace
}  // namespace kubelet::api
