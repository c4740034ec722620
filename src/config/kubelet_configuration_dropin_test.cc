#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/kubelet_configuration.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

using ::testing::ElementsAre;

constexpr char kHead[] = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";

TEST(KubeletConfigurationDropin, FieldsReplaceObjectsAndMapsMergeListsReplace) {
  KubeletConfiguration c = DefaultKubeletConfiguration();
  c.authentication.webhook.enabled = true;
  c.authentication.webhook.cache_ttl = absl::Minutes(2);
  c.feature_gates = {{"A", true}, {"B", false}};
  c.cluster_dns = {"10.0.0.10", "10.0.0.11"};
  c.static_pod_path = "/etc/kubernetes/manifests";
  const auto before_hard = c.eviction_hard;

  absl::StatusOr<std::vector<std::string>> set =
      DecodeKubeletConfigurationDropin(std::string(kHead) +
                                           "maxPods: 42\n"
                                           "authentication:\n  webhook:\n    cacheTTL: 5m\n"
                                           "featureGates:\n  B: true\n  C: true\n"
                                           "evictionHard:\n  memory.available: 200Mi\n"
                                           "clusterDNS: [10.0.0.53]\n"
                                           "staticPodPath: manifests\n"
                                           "address: null\n"
                                           "unknownField: 1\n",
                                       &c);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(c.max_pods, 42);
  // Nested objects merge field by field.
  EXPECT_TRUE(c.authentication.webhook.enabled);
  EXPECT_EQ(c.authentication.webhook.cache_ttl, absl::Minutes(5));
  // Maps gain or replace keys.
  EXPECT_EQ(c.feature_gates, (std::map<std::string, bool>{{"A", true}, {"B", true}, {"C", true}}));
  EXPECT_EQ(c.eviction_hard.size(), before_hard.size());
  EXPECT_EQ(c.eviction_hard.at("memory.available"), "200Mi");
  EXPECT_EQ(c.eviction_hard.at("nodefs.available"), before_hard.at("nodefs.available"));
  // Lists are replaced.
  EXPECT_EQ(c.cluster_dns, std::vector<std::string>{"10.0.0.53"});
  // Relative paths stay as written; null changes nothing.
  EXPECT_EQ(c.static_pod_path, "manifests");
  EXPECT_EQ(c.address, "0.0.0.0");
  EXPECT_THAT(*set, ElementsAre("maxPods", "authentication.webhook.cacheTTL", "featureGates",
                                "evictionHard", "clusterDNS", "staticPodPath"));
}

TEST(KubeletConfigurationDropin, NothingIsDefaultedAndTypeMetaIsOptional) {
  KubeletConfiguration c = DefaultKubeletConfiguration();
  ASSERT_TRUE(DecodeKubeletConfigurationDropin("{\"syncFrequency\": \"0s\"}", &c).ok());
  EXPECT_EQ(c.sync_frequency, absl::ZeroDuration());
  ASSERT_TRUE(DecodeKubeletConfigurationDropin("featureGates:\n  X: null\n", &c).ok());
  EXPECT_EQ(c.feature_gates.count("X"), 0u);
}

TEST(KubeletConfigurationDropin, ErrorsNameTheField) {
  KubeletConfiguration c = DefaultKubeletConfiguration();
  absl::StatusOr<std::vector<std::string>> set =
      DecodeKubeletConfigurationDropin("maxPods: lots\n", &c);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "json: cannot unmarshal string into Go struct field KubeletConfiguration.maxPods of "
            "type int32");
  set = DecodeKubeletConfigurationDropin("syncFrequency: 5x\n", &c);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("syncFrequency"), absl::string_view::npos);
  set = DecodeKubeletConfigurationDropin("- a\n- b\n", &c);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("cannot unmarshal array"), absl::string_view::npos);
  set = DecodeKubeletConfigurationDropin("# only a comment\n", &c);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "failed to merge drop-in and current config: Invalid JSON Patch");
  set = DecodeKubeletConfigurationDropin("maxPods: [\n", &c);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("error converting YAML to JSON"), absl::string_view::npos);
}

class DropinDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/kubelet-dropin-XXXXXX";
    dir_ = ::mkdtemp(templ);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& body) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + name).parent_path());
    std::ofstream(dir_ + "/" + name) << body;
  }
  std::string dir_;
};

TEST_F(DropinDirTest, LexicalOrderLaterFilesWin) {
  Write("10-b.conf", std::string(kHead) + "maxPods: 10\nport: 10001\n");
  Write("00-a.conf", std::string(kHead) + "maxPods: 5\nreadOnlyPort: 0\n");
  Write("20-c.conf", std::string(kHead) + "port: 20002\n");
  KubeletConfiguration c = DefaultKubeletConfiguration();
  absl::StatusOr<std::vector<std::string>> set = MergeKubeletConfigDropins(dir_, &c);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(c.max_pods, 10);
  EXPECT_EQ(c.port, 20002);
  EXPECT_EQ(c.read_only_port, 0);
  EXPECT_THAT(*set, ElementsAre("maxPods", "readOnlyPort", "port"));
}

TEST_F(DropinDirTest, OnlyConfFilesAreReadSubdirectoriesInWalkOrder) {
  Write("10-a.conf", "maxPods: 10\n");
  Write("20-sub/x.conf", "maxPods: 20\n");
  Write("30-b.conf", "port: 3\n");
  Write("40-ignored.yaml", "maxPods: 40\n");
  Write("50-ignored.conf.bak", "maxPods: 50\n");
  Write("60-ignored.CONF", "maxPods: 60\n");
  Write("70-notes", "not a configuration at all: [\n");
  KubeletConfiguration c = DefaultKubeletConfiguration();
  ASSERT_TRUE(MergeKubeletConfigDropins(dir_, &c).ok());
  EXPECT_EQ(c.max_pods, 20);
  EXPECT_EQ(c.port, 3);

  // A subdirectory comes in its name's place: its files are overridden by later names.
  Write("25-late.conf", "maxPods: 25\n");
  c = DefaultKubeletConfiguration();
  ASSERT_TRUE(MergeKubeletConfigDropins(dir_, &c).ok());
  EXPECT_EQ(c.max_pods, 25);
}

TEST_F(DropinDirTest, ErrorsNameTheDirectoryTheFileAndTheField) {
  Write("10-good.conf", "maxPods: 10\n");
  Write("20-bad.conf", "maxPods: lots\n");
  KubeletConfiguration c = DefaultKubeletConfiguration();
  absl::StatusOr<std::vector<std::string>> set = MergeKubeletConfigDropins(dir_, &c);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "failed to walk through kubelet dropin directory \"" + dir_ +
                "\": failed to load kubelet dropin file, path: " + dir_ +
                "/20-bad.conf, error: json: cannot unmarshal string into Go struct field "
                "KubeletConfiguration.maxPods of type int32");

  std::filesystem::remove(dir_ + "/20-bad.conf");
  Write("30-empty.conf", "");
  set = MergeKubeletConfigDropins(dir_, &c);
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("path: " + dir_ +
                                        "/30-empty.conf, error: kubelet "
                                        "config file \"" +
                                        dir_ + "/30-empty.conf\" was empty"),
            absl::string_view::npos)
      << set.status();

  set = MergeKubeletConfigDropins(dir_ + "/missing", &c);
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(), "failed to walk through kubelet dropin directory \"" + dir_ +
                                        "/missing\": lstat " + dir_ +
                                        "/missing: no such file or directory");
}

TEST_F(DropinDirTest, EmptyDirectoryChangesNothing) {
  KubeletConfiguration c = DefaultKubeletConfiguration();
  absl::StatusOr<std::vector<std::string>> set = MergeKubeletConfigDropins(dir_, &c);
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->empty());
  EXPECT_EQ(c, DefaultKubeletConfiguration());
}

}  // namespace
}  // namespace kubelet::config
