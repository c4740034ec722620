#include "kubelet/credentialprovider/keyring.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::credentialprovider {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string B64(std::string_view s) { return absl::Base64Escape(AV(s)); }

AuthConfig User(std::string name) {
  AuthConfig a;
  a.username = std::move(name);
  return a;
}

std::vector<std::string> Users(const std::vector<AuthConfig>& creds) {
  std::vector<std::string> out;
  for (const auto& c : creds) out.push_back(c.username);
  return out;
}

BasicDockerKeyring KeyringOf(const DockerConfig& cfg) {
  BasicDockerKeyring k;
  k.Add(cfg);
  return k;
}

// --- Parsing ---

TEST(ParseDockerConfigJsonTest, ReadsEntries) {
  auto cfg = ParseDockerConfigJson(R"({
    "auths": {
      "https://index.docker.io/v1/": {"username": "u1", "password": "p1", "email": "e@x"},
      "reg.io:5000": {"identitytoken": "id", "registrytoken": "rt", "unknown": 1}
    },
    "HttpHeaders": {"User-Agent": "x"},
    "credsStore": "desktop"
  })");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->size(), 2u);
  EXPECT_EQ((*cfg)[0].first, "https://index.docker.io/v1/");
  AuthConfig want1;
  want1.username = "u1";
  want1.password = "p1";
  want1.email = "e@x";
  EXPECT_EQ((*cfg)[0].second, want1);
  EXPECT_EQ((*cfg)[1].first, "reg.io:5000");
  AuthConfig want2;
  want2.identity_token = "id";
  want2.registry_token = "rt";
  EXPECT_EQ((*cfg)[1].second, want2);
}

TEST(ParseDockerConfigJsonTest, AuthFieldSetsUsernameAndPassword) {
  const std::string padded = B64("user:pa:ss");  // "dXNlcjpwYTpzcw=="
  ASSERT_EQ(padded.back(), '=');
  std::string unpadded = padded;
  while (unpadded.back() == '=') unpadded.pop_back();
  for (const std::string& auth : {padded, unpadded}) {
    auto cfg = ParseDockerConfigJson(
        absl::StrCat(R"({"auths": {"reg.io": {"username": "ignored", "password": "x", "auth": ")",
                     auth, R"("}}})"));
    ASSERT_TRUE(cfg.ok()) << auth << ": " << cfg.status();
    ASSERT_EQ(cfg->size(), 1u);
    const AuthConfig& a = (*cfg)[0].second;
    EXPECT_EQ(a.username, "user");
    EXPECT_EQ(a.password, "pa:ss");  // split at the first ':'
    EXPECT_EQ(a.auth, "");           // not carried, as upstream
    EXPECT_EQ(a.server_address, "");
  }
}

TEST(ParseDockerConfigJsonTest, MembersMatchCaseInsensitivelyAndNullIsAbsent) {
  auto cfg = ParseDockerConfigJson(
      R"({"Auths": {"reg.io": {"UserName": "u", "password": null}, "other.io": null}})");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->size(), 2u);
  EXPECT_EQ((*cfg)[0].second, User("u"));
  EXPECT_EQ((*cfg)[1].second, AuthConfig{});
  auto empty = ParseDockerConfigJson(R"({"auths": null})");
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(*empty, IsEmpty());
  auto no_auths = ParseDockerConfigJson(R"({"credHelpers": {"x": "y"}})");
  ASSERT_TRUE(no_auths.ok());
  EXPECT_THAT(*no_auths, IsEmpty());
}

TEST(ParseDockerConfigJsonTest, Errors) {
  // Bad base64 (padded and unpadded), and a decoded value without ':'.
  for (const std::string& bad :
       {std::string("!!!!"), std::string("dXNlcjpw==="), std::string("a"), B64("nocolon")}) {
    auto cfg =
        ParseDockerConfigJson(absl::StrCat(R"({"auths": {"reg.io": {"auth": ")", bad, R"("}}})"));
    EXPECT_FALSE(cfg.ok()) << bad;
    EXPECT_THAT(cfg.status().message(), HasSubstr("reg.io")) << bad;
  }
  for (const char* doc : {"", "{", "[]", R"({"auths": []})", R"({"auths": {"reg.io": "str"}})",
                          R"({"auths": {"reg.io": {"username": 5}}})",
                          R"({"HttpHeaders": {"a": 1}})", R"({"auths": {}} trailing)"}) {
    EXPECT_FALSE(ParseDockerConfigJson(doc).ok()) << doc;
  }
}

TEST(ParseDockerCfgTest, ReadsLegacyFormat) {
  auto cfg = ParseDockerCfg(absl::StrCat(R"({"https://reg.io": {"auth": ")", B64("a:b"),
                                         R"(", "email": "e"}, "127.0.0.1:5000": {}})"));
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->size(), 2u);
  EXPECT_EQ((*cfg)[0].first, "https://reg.io");
  EXPECT_EQ((*cfg)[0].second.username, "a");
  EXPECT_EQ((*cfg)[0].second.password, "b");
  EXPECT_EQ((*cfg)[0].second.email, "e");
  EXPECT_EQ((*cfg)[1].first, "127.0.0.1:5000");
  auto null_doc = ParseDockerCfg("null");
  ASSERT_TRUE(null_doc.ok());
  EXPECT_THAT(*null_doc, IsEmpty());
  EXPECT_FALSE(ParseDockerCfg("not json").ok());
  EXPECT_FALSE(ParseDockerCfg(R"(["reg.io"])").ok());
  EXPECT_FALSE(ParseDockerCfg(R"({"reg.io": {"auth": "%%%"}})").ok());
}

// --- Matching ---

TEST(URLsMatchTest, Rules) {
  EXPECT_TRUE(URLsMatch("reg.io:5000", "reg.io:5000/img"));
  EXPECT_FALSE(URLsMatch("reg.io:5000", "reg.io/img"));
  EXPECT_FALSE(URLsMatch("reg.io", "reg.io:5000/img"));
  EXPECT_FALSE(URLsMatch("reg.io:5000", "reg.io:5001/img"));
  EXPECT_TRUE(URLsMatch("*.example.com", "a.example.com/img"));
  EXPECT_FALSE(URLsMatch("*.example.com", "a.b.example.com/img"));
  EXPECT_FALSE(URLsMatch("*.example.com", "example.com/img"));
  EXPECT_TRUE(URLsMatch("re*.io", "reg1.io/x"));
  // As in a Go URL, "?" starts the query: "reg?.io" is the host "reg".
  EXPECT_FALSE(URLsMatch("reg?.io", "reg1.io/x"));
  EXPECT_TRUE(URLsMatch("reg?.io", "reg/x"));
  EXPECT_TRUE(URLsMatch("reg[0-9].io", "reg7.io/x"));
  EXPECT_FALSE(URLsMatch("reg[0-9].io", "rega.io/x"));
  EXPECT_TRUE(URLsMatch("reg.io/ns", "reg.io/ns/img"));
  EXPECT_FALSE(URLsMatch("reg.io/ns", "reg.io/other/img"));
  EXPECT_FALSE(URLsMatch("reg.io:bad", "reg.io:bad/x"));  // invalid port: no parse, no match
}

TEST(BasicDockerKeyringTest, ExactHostAndPort) {
  DockerConfig cfg = {{"127.0.0.1:5000", User("local")}, {"reg.io", User("reg")}};
  BasicDockerKeyring k = KeyringOf(cfg);
  EXPECT_THAT(Users(k.Lookup("127.0.0.1:5000/app:v1")), ElementsAre("local"));
  EXPECT_THAT(Users(k.Lookup("127.0.0.1:5001/app")), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("127.0.0.1/app")), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("reg.io/team/app")), ElementsAre("reg"));
  EXPECT_THAT(Users(k.Lookup("reg.io:443/team/app")), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("other.io/app")), IsEmpty());
}

TEST(BasicDockerKeyringTest, SchemesAndVersionPathsAreDropped) {
  DockerConfig cfg = {{"https://a.io/v2/", User("a")},
                      {"http://b.io/v1/team", User("b")},
                      {"c.io/v2/team/sub", User("c")}};
  BasicDockerKeyring k = KeyringOf(cfg);
  EXPECT_THAT(Users(k.Lookup("a.io/x/y")), ElementsAre("a"));
  EXPECT_THAT(Users(k.Lookup("b.io/team/app")), ElementsAre("b"));
  EXPECT_THAT(Users(k.Lookup("b.io/v1/team/app")), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("c.io/team/sub/app")), ElementsAre("c"));
  EXPECT_THAT(Users(k.Lookup("c.io/team/app")), IsEmpty());
}

TEST(BasicDockerKeyringTest, WildcardHosts) {
  BasicDockerKeyring k = KeyringOf({{"*.example.com", User("wild")}});
  EXPECT_THAT(Users(k.Lookup("a.example.com/img")), ElementsAre("wild"));
  EXPECT_THAT(Users(k.Lookup("a.b.example.com/img")), IsEmpty());
}

TEST(BasicDockerKeyringTest, PathPrefix) {
  BasicDockerKeyring k = KeyringOf({{"reg.io/ns", User("ns")}});
  EXPECT_THAT(Users(k.Lookup("reg.io/ns/img")), ElementsAre("ns"));
  EXPECT_THAT(Users(k.Lookup("reg.io/other/img")), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("reg.io/nsx/img")), ElementsAre("ns"));  // a string prefix
  // A trailing '/' stays in the key (as upstream), so it bounds the prefix.
  BasicDockerKeyring slash = KeyringOf({{"reg.io/ns/", User("slash")}});
  EXPECT_THAT(Users(slash.Lookup("reg.io/ns/img")), ElementsAre("slash"));
  EXPECT_THAT(Users(slash.Lookup("reg.io/nsx/img")), IsEmpty());
}

TEST(BasicDockerKeyringTest, MoreSpecificKeysFirstAndSharedKeysInOrder) {
  DockerConfig cfg = {{"reg.io", User("host")},
                      {"reg.io/team", User("team")},
                      {"https://reg.io/v1/", User("host2")},  // same key as "reg.io"
                      {"reg.io/team/app", User("app")},
                      {"*.io", User("wild")}};
  BasicDockerKeyring k = KeyringOf(cfg);
  EXPECT_THAT(Users(k.Lookup("reg.io/team/app:1.0")),
              ElementsAre("app", "team", "host", "host2", "wild"));
  EXPECT_THAT(Users(k.Lookup("reg.io/solo")), ElementsAre("host", "host2", "wild"));
  // A second Add keeps the index sorted and appends to shared keys.
  k.Add({{"reg.io/team", User("team2")}, {"reg.io/team/a", User("a")}});
  EXPECT_THAT(Users(k.Lookup("reg.io/team/app")),
              ElementsAre("app", "a", "team", "team2", "host", "host2", "wild"));
}

TEST(BasicDockerKeyringTest, DockerHubDefault) {
  BasicDockerKeyring k = KeyringOf({{"https://index.docker.io/v1/", User("hub")}});
  EXPECT_THAT(Users(k.Lookup("busybox")), ElementsAre("hub"));
  EXPECT_THAT(Users(k.Lookup("busybox:1.36")), ElementsAre("hub"));
  EXPECT_THAT(Users(k.Lookup("library/busybox")), ElementsAre("hub"));
  EXPECT_THAT(Users(k.Lookup("docker.io/library/busybox")), ElementsAre("hub"));
  EXPECT_THAT(Users(k.Lookup("index.docker.io/foo/bar:tag")), ElementsAre("hub"));
  EXPECT_THAT(Users(k.Lookup("myuser/app")), ElementsAre("hub"));
  EXPECT_THAT(Users(k.Lookup("quay.io/foo/bar")), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("reg:5000/foo")), IsEmpty());
  // Upstream's check looks only for '.' or ':' in the registry part, so "localhost" counts.
  EXPECT_THAT(Users(k.Lookup("localhost/foo")), ElementsAre("hub"));
}

TEST(BasicDockerKeyringTest, DockerHubDefaultOnlyWhenNothingMatched) {
  BasicDockerKeyring k = KeyringOf({{"index.docker.io", User("hub")}, {"docker.io", User("io")}});
  EXPECT_THAT(Users(k.Lookup("busybox")), ElementsAre("io"));
}

TEST(BasicDockerKeyringTest, TagsAndDigests) {
  const std::string digest =
      "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  BasicDockerKeyring k = KeyringOf({{"reg.io:5000/team", User("team")}});
  EXPECT_THAT(Users(k.Lookup("reg.io:5000/team/app:v2")), ElementsAre("team"));
  EXPECT_THAT(Users(k.Lookup(absl::StrCat("reg.io:5000/team/app@", digest))), ElementsAre("team"));
  EXPECT_THAT(Users(k.Lookup(absl::StrCat("reg.io:5000/team/app:v2@", digest))),
              ElementsAre("team"));
  EXPECT_THAT(Users(k.Lookup("reg.io:5000/teamwork/app")), ElementsAre("team"));  // a string prefix
  EXPECT_THAT(Users(k.Lookup("reg.io:5000/app@" + digest)), IsEmpty());
  EXPECT_THAT(Users(k.Lookup("not a reference")), IsEmpty());
}

TEST(BasicDockerKeyringTest, InvalidLocationIsSkipped) {
  BasicDockerKeyring k = KeyringOf({{"bad host", User("bad")}, {"reg.io", User("ok")}});
  EXPECT_THAT(Users(k.Lookup("reg.io/a")), ElementsAre("ok"));
}

// --- MakeDockerKeyring ---

class FixedKeyring final : public DockerKeyring {
 public:
  explicit FixedKeyring(std::vector<AuthConfig> creds) : creds_(std::move(creds)) {}
  std::vector<AuthConfig> Lookup(std::string_view) const override { return creds_; }

 private:
  std::vector<AuthConfig> creds_;
};

constexpr char kJson[] = "kubernetes.io/dockerconfigjson";
constexpr char kCfg[] = "kubernetes.io/dockercfg";

TEST(MakeDockerKeyringTest, SecretsBeforeFallback) {
  FixedKeyring node({User("node")});
  std::vector<PullSecret> secrets = {
      {"json", kJson, {{".dockerconfigjson", R"({"auths": {"reg.io": {"username": "json"}}})"}}},
      {"cfg", kCfg, {{".dockercfg", R"({"reg.io/team": {"username": "cfg"}})"}}},
      // A secret is read by its type only.
      {"json-type",
       kJson,
       {{".dockerconfigjson", R"({"auths": {"reg.io": {"username": "json-type"}}})"},
        {".dockercfg", R"({"reg.io": {"username": "ignored-cfg"}})"}}},
      {"opaque", "Opaque", {{".dockerconfigjson", R"({"auths": {"reg.io": {"username": "o"}}})"}}},
      {"empty", kJson, {{".dockerconfigjson", ""}, {"other", "x"}}},
  };
  auto keyring = MakeDockerKeyring(secrets, &node);
  ASSERT_TRUE(keyring.ok()) << keyring.status();
  EXPECT_THAT(Users((*keyring)->Lookup("reg.io/team/app")),
              ElementsAre("cfg", "json", "json-type", "node"));
  EXPECT_THAT(Users((*keyring)->Lookup("other.io/app")), ElementsAre("node"));
}

TEST(MakeDockerKeyringTest, NoSecretsOrNoFallback) {
  FixedKeyring node({User("node")});
  auto only_node = MakeDockerKeyring({}, &node);
  ASSERT_TRUE(only_node.ok());
  EXPECT_THAT(Users((*only_node)->Lookup("reg.io/a")), ElementsAre("node"));
  auto nothing = MakeDockerKeyring({}, nullptr);
  ASSERT_TRUE(nothing.ok());
  EXPECT_THAT((*nothing)->Lookup("reg.io/a"), IsEmpty());
  auto no_fallback = MakeDockerKeyring(
      {{"s", kCfg, {{".dockercfg", R"({"reg.io": {"username": "s"}})"}}}}, nullptr);
  ASSERT_TRUE(no_fallback.ok());
  EXPECT_THAT(Users((*no_fallback)->Lookup("reg.io/a")), ElementsAre("s"));
}

TEST(MakeDockerKeyringTest, InvalidSecretIsAnErrorNamingIt) {
  std::vector<PullSecret> secrets = {
      {"good", kCfg, {{".dockercfg", R"({"reg.io": {}})"}}},
      {"broken-secret", kJson, {{".dockerconfigjson", R"({"auths": )"}}},
  };
  auto keyring = MakeDockerKeyring(secrets, nullptr);
  ASSERT_FALSE(keyring.ok());
  EXPECT_EQ(keyring.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(keyring.status().message(), HasSubstr("broken-secret"));
  EXPECT_THAT(keyring.status().message(), HasSubstr(".dockerconfigjson"));
  auto bad_auth =
      MakeDockerKeyring({{"bad-auth", kCfg, {{".dockercfg", R"({"r": {"auth": "?"}})"}}}}, nullptr);
  ASSERT_FALSE(bad_auth.ok());
  EXPECT_THAT(bad_auth.status().message(), HasSubstr("bad-auth"));
}

TEST(UnionDockerKeyringTest, ConcatenatesInOrder) {
  FixedKeyring a({User("a")});
  UnionDockerKeyring u;
  u.Add(std::make_unique<FixedKeyring>(std::vector<AuthConfig>{User("b1"), User("b2")}));
  u.AddBorrowed(&a);
  u.AddBorrowed(nullptr);
  u.Add(std::make_unique<FixedKeyring>(std::vector<AuthConfig>{}));
  EXPECT_THAT(Users(u.Lookup("x")), ElementsAre("b1", "b2", "a"));
}

// --- NodeDockerKeyring ---

class NodeDockerKeyringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "credprov-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(std::filesystem::path(dir_) / name) << content;
  }
  static std::string ConfigJson(const std::string& user) {
    return absl::StrCat(R"({"auths": {"reg.io": {"auth": ")", B64(user + ":pw"), R"("}}})");
  }

  std::string dir_;
  FakeClock clock_;
};

TEST_F(NodeDockerKeyringTest, ReadsRootDirConfigJsonAndRefreshesAfterFiveMinutes) {
  Write("config.json", ConfigJson("first"));
  NodeDockerKeyring keyring(dir_, clock_);
  const std::vector<AuthConfig> creds = keyring.Lookup("reg.io/app:1");
  ASSERT_EQ(creds.size(), 1u);
  EXPECT_EQ(creds[0].username, "first");
  EXPECT_EQ(creds[0].password, "pw");

  Write("config.json", ConfigJson("second"));
  clock_.Advance(NodeDockerKeyring::kCacheLifetime - absl::Seconds(1));
  EXPECT_THAT(Users(keyring.Lookup("reg.io/app")), ElementsAre("first"));
  clock_.Advance(absl::Seconds(1));
  EXPECT_THAT(Users(keyring.Lookup("reg.io/app")), ElementsAre("second"));

  // The next refresh is five minutes after this read.
  Write("config.json", ConfigJson("third"));
  clock_.Advance(NodeDockerKeyring::kCacheLifetime - absl::Seconds(1));
  EXPECT_THAT(Users(keyring.Lookup("reg.io/app")), ElementsAre("second"));
  clock_.Advance(absl::Seconds(1));
  EXPECT_THAT(Users(keyring.Lookup("reg.io/app")), ElementsAre("third"));
}

TEST_F(NodeDockerKeyringTest, SearchOrderAndFallbacks) {
  const std::string other = dir_ + "/other";
  std::filesystem::create_directory(other);
  DockerConfigSearchPath sp;
  sp.config_json_dirs = {dir_ + "/missing", dir_, other};
  sp.dockercfg_dirs = {dir_};

  // Nothing yet: no credentials.
  NodeDockerKeyring empty(sp, clock_);
  EXPECT_THAT(empty.Lookup("reg.io/app"), IsEmpty());

  // Only a legacy .dockercfg.
  Write(".dockercfg", R"({"reg.io": {"username": "legacy"}})");
  EXPECT_THAT(Users(NodeDockerKeyring(sp, clock_).Lookup("reg.io/app")), ElementsAre("legacy"));

  // An invalid config.json is skipped in favour of the next directory's.
  Write("config.json", "{not json");
  Write("other/config.json", ConfigJson("other"));
  EXPECT_THAT(Users(NodeDockerKeyring(sp, clock_).Lookup("reg.io/app")), ElementsAre("other"));

  // The first valid config.json wins over later ones and over .dockercfg.
  Write("config.json", ConfigJson("root"));
  EXPECT_THAT(Users(NodeDockerKeyring(sp, clock_).Lookup("reg.io/app")), ElementsAre("root"));
}

TEST(DefaultDockerConfigSearchPathTest, UpstreamOrder) {
  const char* home = std::getenv("HOME");
  DockerConfigSearchPath sp = DefaultDockerConfigSearchPath("/var/lib/kubelet");
  ASSERT_GE(sp.config_json_dirs.size(), 2u);
  EXPECT_EQ(sp.config_json_dirs.front(), "/var/lib/kubelet");
  EXPECT_EQ(sp.config_json_dirs.back(), "/.docker");
  EXPECT_EQ(sp.dockercfg_dirs.front(), "/var/lib/kubelet");
  EXPECT_EQ(sp.dockercfg_dirs.back(), "/");
  if (home != nullptr && *home != '\0') {
    EXPECT_THAT(sp.config_json_dirs, ::testing::Contains(absl::StrCat(home, "/.docker")));
    EXPECT_THAT(sp.dockercfg_dirs, ::testing::Contains(std::string(home)));
  }
  EXPECT_THAT(sp.config_json_dirs, ::testing::Contains(std::filesystem::current_path().string()));
}

}  // namespace
}  // namespace kubelet::credentialprovider
