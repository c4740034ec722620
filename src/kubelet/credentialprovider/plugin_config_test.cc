#include "kubelet/credentialprovider/plugin_config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/credentialprovider/keyring.h"

namespace kubelet::credentialprovider {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kV1[] = "kubelet.config.k8s.io/v1";
constexpr char kPluginV1[] = "credentialprovider.kubelet.k8s.io/v1";

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// --- decoding ---

TEST(DecodeCredentialProviderConfigTest, JsonV1) {
  auto c = DecodeCredentialProviderConfig(R"({
    "kind": "CredentialProviderConfig", "apiVersion": "kubelet.config.k8s.io/v1",
    "providers": [{
      "name": "ecr", "matchImages": ["*.dkr.ecr.*.amazonaws.com", "reg.io:5000/team"],
      "defaultCacheDuration": "12h", "apiVersion": "credentialprovider.kubelet.k8s.io/v1",
      "args": ["get-credentials", "--v=2"],
      "env": [{"name": "AWS_PROFILE", "value": "node"}, {"name": "EMPTY"}],
      "unknownField": {"ignored": true}
    }]
  })");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->providers.size(), 1u);
  const CredentialProvider& p = c->providers[0];
  EXPECT_EQ(p.name, "ecr");
  EXPECT_THAT(p.match_images, ElementsAre("*.dkr.ecr.*.amazonaws.com", "reg.io:5000/team"));
  EXPECT_EQ(p.default_cache_duration, absl::Hours(12));
  EXPECT_EQ(p.api_version, kPluginV1);
  EXPECT_THAT(p.args, ElementsAre("get-credentials", "--v=2"));
  ASSERT_EQ(p.env.size(), 2u);
  EXPECT_EQ(p.env[0].name, "AWS_PROFILE");
  EXPECT_EQ(p.env[0].value, "node");
  EXPECT_EQ(p.env[1].name, "EMPTY");
  EXPECT_EQ(p.env[1].value, "");
  EXPECT_THAT(ValidateCredentialProviderConfig(*c), IsEmpty());
}

TEST(DecodeCredentialProviderConfigTest, YamlEveryVersion) {
  for (const char* version : {"v1", "v1beta1", "v1alpha1"}) {
    SCOPED_TRACE(version);
    auto c = DecodeCredentialProviderConfig(absl::StrCat(R"(
# a comment
apiVersion: kubelet.config.k8s.io/)",
                                                         version, R"(
kind: CredentialProviderConfig
providers:
  - name: a
    matchImages:
      - "*.io"
    defaultCacheDuration: "0"
    apiVersion: credentialprovider.kubelet.k8s.io/v1beta1
  - name: b
    matchImages: [reg.io]
    defaultCacheDuration: 1m30s
    apiVersion: credentialprovider.kubelet.k8s.io/v1alpha1
    env:
      - name: X
        value: "1"
)"));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_EQ(c->providers.size(), 2u);
    EXPECT_EQ(c->providers[0].default_cache_duration, absl::ZeroDuration());
    EXPECT_EQ(c->providers[1].default_cache_duration, absl::Seconds(90));
    EXPECT_EQ(c->providers[1].env[0].value, "1");
    EXPECT_THAT(ValidateCredentialProviderConfig(*c), IsEmpty());
  }
}

TEST(DecodeCredentialProviderConfigTest, YamlNumberIsNotADuration) {
  // As upstream: YAML's bare 0 is a number, and metav1.Duration only reads strings.
  EXPECT_EQ(Message(DecodeCredentialProviderConfig(
                        "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n"
                        "providers:\n- name: a\n  defaultCacheDuration: 0\n")
                        .status()),
            "json: cannot unmarshal number into Go value of type string");
}

TEST(DecodeCredentialProviderConfigTest, NullIsAbsentAndNamesAreCaseSensitive) {
  auto c = DecodeCredentialProviderConfig(R"({
    "kind": "CredentialProviderConfig", "apiVersion": "kubelet.config.k8s.io/v1",
    "providers": [{"name": "a", "Name": "b", "matchImages": null, "defaultCacheDuration": null,
                   "apiVersion": null}, null]
  })");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->providers.size(), 2u);
  EXPECT_EQ(c->providers[0].name, "a");
  EXPECT_FALSE(c->providers[0].default_cache_duration.has_value());
  EXPECT_EQ(c->providers[1].name, "");  // a null element is a zero provider, as in Go
}

TEST(DecodeCredentialProviderConfigTest, TypeMetaErrors) {
  EXPECT_EQ(
      Message(
          DecodeCredentialProviderConfig(R"({"apiVersion": "kubelet.config.k8s.io/v1"})").status()),
      "Object 'Kind' is missing in the document");
  EXPECT_EQ(
      Message(DecodeCredentialProviderConfig(R"({"kind": "CredentialProviderConfig"})").status()),
      "Object 'apiVersion' is missing in the document");
  EXPECT_EQ(Message(DecodeCredentialProviderConfig(
                        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
                        .status()),
            "failed to decode \"KubeletConfiguration\" (wrong Kind)");
  EXPECT_EQ(Message(DecodeCredentialProviderConfig(
                        "apiVersion: kubelet.config.k8s.io/v2\nkind: CredentialProviderConfig\n")
                        .status()),
            "no kind \"CredentialProviderConfig\" is registered for version "
            "\"kubelet.config.k8s.io/v2\"");
  EXPECT_EQ(
      Message(DecodeCredentialProviderConfig("apiVersion: a/b/c\nkind: CredentialProviderConfig\n")
                  .status()),
      "unexpected GroupVersion string: a/b/c");
  // Go's meta factory matches these two names ignoring case.
  EXPECT_TRUE(
      DecodeCredentialProviderConfig(
          R"({"KIND": "CredentialProviderConfig", "APIVERSION": "kubelet.config.k8s.io/v1"})")
          .ok());
  EXPECT_THAT(Message(DecodeCredentialProviderConfig("[1]").status()),
              HasSubstr("couldn't get version/kind; json parse error: json: cannot unmarshal "
                        "array into Go value of type struct"));
  EXPECT_EQ(Message(DecodeCredentialProviderConfig("{\"kind\": ").status()),
            "couldn't get version/kind; json parse error: unexpected end of JSON input");
  EXPECT_THAT(Message(DecodeCredentialProviderConfig("a: [").status()),
              HasSubstr("error converting YAML to JSON"));
}

TEST(DecodeCredentialProviderConfigTest, FieldTypeErrorsAreGos) {
  auto decode = [](std::string providers) {
    return Message(DecodeCredentialProviderConfig(
                       absl::StrCat(R"({"kind":"CredentialProviderConfig","apiVersion":")", kV1,
                                    R"(","providers":)", providers, "}"))
                       .status());
  };
  EXPECT_EQ(decode("{}"),
            "json: cannot unmarshal object into Go struct field "
            "CredentialProviderConfig.providers of type []v1.CredentialProvider");
  EXPECT_EQ(decode(R"(["x"])"),
            "json: cannot unmarshal string into Go struct field "
            "CredentialProviderConfig.providers of type v1.CredentialProvider");
  EXPECT_EQ(decode(R"([{"name": 5}])"),
            "json: cannot unmarshal number into Go struct field CredentialProvider.providers.name "
            "of type string");
  EXPECT_EQ(decode(R"([{"matchImages": "reg.io"}])"),
            "json: cannot unmarshal string into Go struct field "
            "CredentialProvider.providers.matchImages of type []string");
  EXPECT_EQ(decode(R"([{"args": [true]}])"),
            "json: cannot unmarshal bool into Go struct field CredentialProvider.providers.args "
            "of type string");
  EXPECT_EQ(decode(R"([{"env": ["A=B"]}])"),
            "json: cannot unmarshal string into Go struct field CredentialProvider.providers.env "
            "of type v1.ExecEnvVar");
  EXPECT_EQ(decode(R"([{"env": [{"name": ["A"]}]}])"),
            "json: cannot unmarshal array into Go struct field ExecEnvVar.providers.env.name of "
            "type string");
  EXPECT_EQ(decode(R"([{"defaultCacheDuration": 10}])"),
            "json: cannot unmarshal number into Go value of type string");
  EXPECT_EQ(decode(R"([{"defaultCacheDuration": "ten minutes"}])"),
            "time: invalid duration \"ten minutes\"");
}

TEST(ReadCredentialProviderConfigFileTest, NamesTheFile) {
  EXPECT_EQ(Message(ReadCredentialProviderConfigFile("").status()),
            "credential provider config path is empty");
  EXPECT_EQ(Message(ReadCredentialProviderConfigFile("/nonexistent/cp.yaml").status()),
            "unable to read external registry credential provider configuration from "
            "\"/nonexistent/cp.yaml\": open /nonexistent/cp.yaml: no such file or directory");

  const std::string path =
      std::filesystem::path(::testing::TempDir()) / absl::StrCat("cp-config-", ::getpid(), ".yaml");
  std::ofstream(path) << "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\n"
                         "providers:\n- name: 3\n  env: [{name: TOKEN, value: s3cr3t}]\n";
  absl::StatusOr<CredentialProviderConfig> c = ReadCredentialProviderConfigFile(path);
  EXPECT_EQ(Message(c.status()),
            absl::StrCat("error decoding config ", path,
                         ": json: cannot unmarshal number into Go struct field "
                         "CredentialProvider.providers.name of type string"));
  std::ofstream(path) << "kind: CredentialProviderConfig\nproviders: []\n"
                         "# TOKEN=s3cr3t\n";
  c = ReadCredentialProviderConfigFile(path);
  EXPECT_THAT(Message(c.status()), HasSubstr("error decoding config"));
  EXPECT_THAT(Message(c.status()), Not(HasSubstr("s3cr3t")));
  std::filesystem::remove(path);
}

// --- validation ---

CredentialProvider Valid(std::string name) {
  CredentialProvider p;
  p.name = std::move(name);
  p.match_images = {"*.reg.io"};
  p.default_cache_duration = absl::Minutes(10);
  p.api_version = kPluginV1;
  return p;
}

std::vector<std::string> Validate(std::vector<CredentialProvider> providers) {
  CredentialProviderConfig c;
  c.providers = std::move(providers);
  return ValidateCredentialProviderConfig(c);
}

TEST(ValidateCredentialProviderConfigTest, UpstreamMessages) {
  EXPECT_THAT(Validate({}),
              ElementsAre("providers: Required value: at least 1 item in plugins is required"));
  EXPECT_THAT(Validate({Valid("a"), Valid("b")}), IsEmpty());

  EXPECT_THAT(Validate({Valid("a/b")}),
              ElementsAre("providers.name: Invalid value: \"a/b\": provider name cannot contain "
                          "'/'"));
  EXPECT_THAT(Validate({Valid("a b")}),
              ElementsAre("providers.name: Invalid value: \"a b\": provider name cannot contain "
                          "spaces"));
  EXPECT_THAT(Validate({Valid(".")}),
              ElementsAre("providers.name: Invalid value: \".\": provider name cannot be '.'"));
  EXPECT_THAT(Validate({Valid("..")}),
              ElementsAre("providers.name: Invalid value: \"..\": provider name cannot be '..'"));
  EXPECT_THAT(Validate({Valid("a"), Valid("a")}),
              ElementsAre("providers.name: Duplicate value: \"a\""));

  CredentialProvider p = Valid("a");
  p.api_version = "";
  EXPECT_THAT(Validate({p}),
              ElementsAre("providers.apiVersion: Required value: apiVersion is required"));
  p.api_version = "credentialprovider.kubelet.k8s.io/v2";
  EXPECT_THAT(Validate({p}),
              ElementsAre("providers.apiVersion: Unsupported value: "
                          "\"credentialprovider.kubelet.k8s.io/v2\": supported values: "
                          "\"credentialprovider.kubelet.k8s.io/v1\", "
                          "\"credentialprovider.kubelet.k8s.io/v1alpha1\", "
                          "\"credentialprovider.kubelet.k8s.io/v1beta1\""));

  p = Valid("a");
  p.match_images.clear();
  EXPECT_THAT(Validate({p}), ElementsAre("providers.matchImages: Required value: at least 1 item "
                                         "in matchImages is required"));
  p.match_images = {"reg.io:port", "%zz.io", "ok.io", "reg.io/%", "re g.io", "[::1"};
  EXPECT_THAT(
      Validate({p}),
      ElementsAre("providers.matchImages: Invalid value: \"reg.io:port\": match image is invalid: "
                  "parse \"https://reg.io:port\": invalid port \":port\" after host",
                  "providers.matchImages: Invalid value: \"%zz.io\": match image is invalid: "
                  "parse \"https://%zz.io\": invalid URL escape \"%zz\"",
                  "providers.matchImages: Invalid value: \"reg.io/%\": match image is invalid: "
                  "parse \"https://reg.io/%\": invalid URL escape \"%\"",
                  "providers.matchImages: Invalid value: \"re g.io\": match image is invalid: "
                  "parse \"https://re g.io\": invalid character \" \" in host name",
                  "providers.matchImages: Invalid value: \"[::1\": match image is invalid: "
                  "parse \"https://[::1\": missing ']' in host"));

  p = Valid("a");
  p.default_cache_duration.reset();
  EXPECT_THAT(Validate({p}), ElementsAre("providers.defaultCacheDuration: Required value: "
                                         "defaultCacheDuration is required"));
  p.default_cache_duration = absl::Minutes(-1);
  EXPECT_THAT(Validate({p}),
              ElementsAre("providers.defaultCacheDuration: Invalid value: -1m0s: "
                          "defaultCacheDuration must be greater than or equal to 0"));
  p.default_cache_duration = absl::ZeroDuration();
  EXPECT_THAT(Validate({p}), IsEmpty());
}

TEST(ValidateCredentialProviderConfigTest, AggregateAsUpstream) {
  EXPECT_TRUE(ValidationStatus({}).ok());
  EXPECT_EQ(Message(ValidationStatus({"a: Required value"})),
            "failed to validate credential provider config: a: Required value");
  CredentialProvider p = Valid("x/y");
  p.api_version = "";
  CredentialProvider q = Valid("x/y");
  q.api_version = "";
  EXPECT_EQ(Message(ValidationStatus(Validate({p, q}))),
            "failed to validate credential provider config: [providers.name: Invalid value: "
            "\"x/y\": provider name cannot contain '/', providers.apiVersion: Required value: "
            "apiVersion is required, providers.name: Duplicate value: \"x/y\"]");
}

TEST(CheckSchemelessURLTest, GoUrlParse) {
  EXPECT_TRUE(CheckSchemelessURL("").ok());
  EXPECT_TRUE(CheckSchemelessURL("*.dkr.ecr.*.amazonaws.com").ok());
  EXPECT_TRUE(CheckSchemelessURL("reg.io:5000/a/b?x=%zz").ok());  // the query is not checked
  EXPECT_TRUE(CheckSchemelessURL("[fe80::1%25eth0]:5000").ok());
  EXPECT_TRUE(CheckSchemelessURL("r%C3%A9g.io").ok());
  EXPECT_EQ(Message(CheckSchemelessURL("r%41g.io")),
            "parse \"https://r%41g.io\": invalid URL escape \"%41\"");
  EXPECT_EQ(Message(CheckSchemelessURL("reg.io/a#%z")),
            "parse \"https://reg.io/a#%z\": invalid URL escape \"%z\"");
  EXPECT_EQ(Message(CheckSchemelessURL("u s@reg.io")),
            "parse \"https://u s@reg.io\": net/url: invalid userinfo");
  EXPECT_EQ(Message(CheckSchemelessURL("reg.io\x01")),
            "parse \"https://reg.io\\x01\": net/url: invalid control character in URL");
}

}  // namespace
}  // namespace kubelet::credentialprovider
