#include "app/options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "app/server.h"
#include "config/kubelet_configuration_fields.h"
#include "gtest/gtest.h"

namespace kubelet::app {
namespace {

class OptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/kubelet-options-XXXXXX";
    dir_ = ::mkdtemp(templ);
  }
  std::string WriteConfig(const std::string& body) {
    std::string path = dir_ + "/kubelet.yaml";
    std::ofstream f(path);
    f << "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" << body;
    return path;
  }
  absl::Status Parse(std::vector<std::string> args) {
    settings_ = std::make_unique<Settings>();
    out_.str("");
    return ParseCommandLine(args, settings_.get(), out_, &result_);
  }
  std::string dir_;
  std::unique_ptr<Settings> settings_;
  std::ostringstream out_;
  ParseResult result_ = ParseResult::kRun;
};

TEST_F(OptionsTest, NoConfigUsesUpstreamFlagDefaults) {
  ASSERT_TRUE(Parse({}).ok());
  EXPECT_EQ(result_, ParseResult::kRun);
  const auto& c = settings_->config;
  EXPECT_EQ(c.sync_frequency, absl::Minutes(1));
  EXPECT_EQ(c.healthz_port, 10248);
  EXPECT_EQ(c.healthz_bind_address, "127.0.0.1");
  EXPECT_EQ(c.max_pods, 110);
  EXPECT_EQ(c.oom_score_adj, -999);
  EXPECT_EQ(c.container_runtime_endpoint, "unix:///run/containerd/containerd.sock");
  EXPECT_EQ(settings_->flags.root_directory, "/var/lib/kubelet");
}

TEST_F(OptionsTest, FlagsWinOverTheConfigFile) {
  std::string path = WriteConfig(
      "maxPods: 50\nsyncFrequency: 30s\nfeatureGates:\n  GracefulNodeShutdown: false\n"
      "  InPlacePodVerticalScaling: true\nhealthzPort: 1234\n");
  ASSERT_TRUE(
      Parse({"--config", path, "--max-pods=20", "--feature-gates=GracefulNodeShutdown=true"}).ok());
  const auto& c = settings_->config;
  EXPECT_EQ(c.max_pods, 20);                       // flag wins
  EXPECT_EQ(c.sync_frequency, absl::Seconds(30));  // only in the file
  EXPECT_EQ(c.healthz_port, 1234);
  // --feature-gates merges per key over the file's featureGates.
  EXPECT_TRUE(c.feature_gates.at("GracefulNodeShutdown"));
  EXPECT_TRUE(c.feature_gates.at("InPlacePodVerticalScaling"));
  EXPECT_TRUE(settings_->gates.Enabled("InPlacePodVerticalScaling"));
  EXPECT_TRUE(settings_->gates.Enabled("GracefulNodeShutdown"));
  EXPECT_NE(std::find(settings_->file_fields.begin(), settings_->file_fields.end(), "maxPods"),
            settings_->file_fields.end());
}

TEST_F(OptionsTest, ConfigErrorsNameFileAndField) {
  std::string path = WriteConfig("maxPods: lots\n");
  absl::Status st = Parse({"--config", path});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("maxPods"), std::string::npos) << st.message();

  path = WriteConfig("authentication:\n  x509:\n    clientCAFil: /x\n");
  st = Parse({"--config", path});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("clientCAFil"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();

  st = Parse({"--config", dir_ + "/missing.yaml"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("missing.yaml"), std::string::npos) << st.message();
}

class DropinOptionsTest : public OptionsTest {
 protected:
  void SetUp() override {
    OptionsTest::SetUp();
    conf_d_ = dir_ + "/kubelet.conf.d";
    ::mkdir(conf_d_.c_str(), 0755);
    ::setenv("KUBELET_CONFIG_DROPIN_DIR_ALPHA", "", 1);
  }
  void TearDown() override { ::unsetenv("KUBELET_CONFIG_DROPIN_DIR_ALPHA"); }
  void WriteDropin(const std::string& name, const std::string& body) {
    std::ofstream(conf_d_ + "/" + name) << body;
  }
  std::string conf_d_;
};

TEST_F(DropinOptionsTest, DropinsOverTheFileFlagsOverBoth) {
  std::string path =
      WriteConfig("maxPods: 50\nport: 10250\nfeatureGates:\n  InPlacePodVerticalScaling: true\n");
  WriteDropin("10-a.conf", "maxPods: 60\nport: 10260\nhealthzPort: 1111\n");
  WriteDropin("20-b.conf",
              "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
              "port: 10270\nfeatureGates:\n  GracefulNodeShutdown: false\n");
  WriteDropin("30-c.yaml", "port: 1\n");  // not a .conf file: ignored
  ASSERT_TRUE(Parse({"--config", path, "--config-dir", conf_d_, "--max-pods=20",
                     "--feature-gates=GracefulNodeShutdown=true"})
                  .ok());
  const auto& c = settings_->config;
  EXPECT_EQ(c.max_pods, 20);        // the flag wins over the file and the drop-ins
  EXPECT_EQ(c.port, 10270);         // the later drop-in wins
  EXPECT_EQ(c.healthz_port, 1111);  // only in a drop-in
  EXPECT_TRUE(c.feature_gates.at("InPlacePodVerticalScaling"));  // the file's, kept
  EXPECT_TRUE(c.feature_gates.at("GracefulNodeShutdown"));       // the flag over the drop-in
  EXPECT_TRUE(settings_->gates.Enabled("InPlacePodVerticalScaling"));
  // Fields set by drop-ins count as set for the not-implemented report.
  EXPECT_NE(std::find(settings_->file_fields.begin(), settings_->file_fields.end(), "healthzPort"),
            settings_->file_fields.end());
}

TEST_F(DropinOptionsTest, DropinsWithoutAConfigFile) {
  WriteDropin("10-a.conf", "maxPods: 70\nreadOnlyPort: 0\n");
  ASSERT_TRUE(Parse({"--config-dir=" + conf_d_, "--read-only-port=10255"}).ok());
  EXPECT_EQ(settings_->config.max_pods, 70);
  EXPECT_EQ(settings_->config.read_only_port, 10255);
  // Still the command-line defaults underneath.
  EXPECT_TRUE(settings_->config.authentication.anonymous.enabled);
}

TEST_F(DropinOptionsTest, NeedsTheAlphaEnvironmentVariable) {
  WriteDropin("10-a.conf", "maxPods: 70\n");
  ::unsetenv("KUBELET_CONFIG_DROPIN_DIR_ALPHA");
  absl::Status st = Parse({"--config-dir", conf_d_});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "flag " + conf_d_ +
                              " specified but environment variable "
                              "KUBELET_CONFIG_DROPIN_DIR_ALPHA not set, cannot start kubelet");
}

TEST_F(DropinOptionsTest, BadDropinIsNamedInTheError) {
  WriteDropin("10-a.conf", "maxPods: 70\n");
  WriteDropin("20-b.conf", "authentication:\n  webhook:\n    cacheTTL: soon\n");
  absl::Status st = Parse({"--config-dir", conf_d_});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("failed to merge kubelet configs: failed to walk through kubelet "
                               "dropin directory",
                               0),
            0u)
      << st.message();
  EXPECT_NE(st.message().find(conf_d_ + "/20-b.conf"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("authentication.webhook.cacheTTL"), std::string::npos)
      << st.message();
  // The merged configuration is validated as a whole.
  std::filesystem::remove(conf_d_ + "/20-b.conf");
  WriteDropin("20-b.conf", "imageGCHighThresholdPercent: 10\nimageGCLowThresholdPercent: 20\n");
  st = Parse({"--config-dir", conf_d_});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("failed to validate kubelet configuration"), std::string::npos)
      << st.message();
}

TEST_F(OptionsTest, ValidationErrorsNameTheField) {
  std::string path =
      WriteConfig("imageGCHighThresholdPercent: 50\nimageGCLowThresholdPercent: 80\n");
  absl::Status st = Parse({"--config", path});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("imageGCLowThresholdPercent (--image-gc-low-threshold) 80 must be "
                              "less than imageGCHighThresholdPercent"),
            std::string::npos)
      << st.message();
  // The same rule through flags alone.
  st = Parse({"--image-gc-high-threshold=10", "--image-gc-low-threshold=20"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("imageGCHighThresholdPercent"), std::string::npos);
}

TEST_F(OptionsTest, FeatureGateErrors) {
  absl::Status st = Parse({"--feature-gates=NoSuchGate=true"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unrecognized feature gate: NoSuchGate"), std::string::npos)
      << st.message();
  st = Parse({"--feature-gates=CPUManager=false"});  // GA and locked in v1.28
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot set feature gate CPUManager to false"), std::string::npos)
      << st.message();
}

TEST_F(OptionsTest, HelpAndVersion) {
  ASSERT_TRUE(Parse({"--help"}).ok());
  EXPECT_EQ(result_, ParseResult::kExit);
  EXPECT_NE(out_.str().find("--pod-manifest-path string"), std::string::npos);
  EXPECT_NE(out_.str().find("--config string"), std::string::npos);
  ASSERT_TRUE(Parse({"--version"}).ok());
  EXPECT_EQ(result_, ParseResult::kExit);
  EXPECT_EQ(out_.str().rfind("Kubernetes v1.28.", 0), 0u) << out_.str();
}

TEST_F(OptionsTest, BadCommandLines) {
  EXPECT_EQ(Parse({"--bogus"}).message(),
            "failed to parse kubelet flag: unknown flag: --bogus\nSee 'kubelet --help' for usage.");
  EXPECT_EQ(Parse({"run"}).message(), "unknown command run");
  EXPECT_TRUE(Parse({"--container-runtime=remote"}).ok());
  EXPECT_FALSE(Parse({"--node-labels=kubernetes.io/foo=bar"}).ok());
}

TEST(Hostname, OverrideIsTrimmedAndLowercased) {
  EXPECT_EQ(*GetHostname("  Node-1.Example "), "node-1.example");
  auto h = GetHostname("");
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h->empty());
}

TEST(UnimplementedFields, ReportsOnlyFieldsNotActedOn) {
  auto out = UnimplementedFields({"healthzPort", "containerRuntimeEndpoint", "logging.format",
                                  "qosReserved", "logging.vmodule"});
  EXPECT_EQ(out, (std::vector<std::string>{"qosReserved", "logging.vmodule"}));
}

// ImplementedFields is the union of what the functions from the configuration say they read:
// every name there must be a field of the configuration's tables, so a typo or a renamed field
// cannot hide a field from the report. (When the lists replaced the hand-kept set, the union was
// checked equal to it.)
TEST(ImplementedFields, NameFieldsOfTheConfiguration) {
  for (const std::string& f : ImplementedFields()) {
    if (f == "apiVersion" || f == "kind") continue;
    EXPECT_TRUE(config::IsConfigFieldPath(f)) << f;
  }
  EXPECT_EQ(ImplementedFields().count("syncFrequency"), 1u);
  EXPECT_EQ(ImplementedFields().count("logging.format"), 1u);
  EXPECT_EQ(ImplementedFields().count("qosReserved"), 0u);
  EXPECT_EQ(ImplementedFields().count("cpuManagerPolicy"), 1u);
  EXPECT_EQ(ImplementedFields().count("topologyManagerScope"), 1u);
  EXPECT_EQ(ImplementedFields().count("shutdownGracePeriod"), 1u);
  EXPECT_GT(ImplementedFields().size(), 80u);
}

}  // namespace
}  // namespace kubelet::app
