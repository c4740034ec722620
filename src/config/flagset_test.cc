#include "config/flagset.h"

#include "gtest/gtest.h"

namespace kubelet::config {
namespace {

struct Targets {
  std::string root = "/var/lib/kubelet";
  bool fail_swap_on = true;
  bool flag_b = false;
  int32_t max_pods = 110;
  int32_t v = 0;
  absl::Duration sync = absl::Minutes(1);
  std::vector<std::string> dns;
  std::map<std::string, std::string> labels;
  std::map<std::string, bool> gates;
};

class FlagSetTest : public ::testing::Test {
 protected:
  FlagSetTest() : fs_("kubelet") {
    fs_.String("root-dir", &t_.root, "root");
    fs_.Bool("fail-swap-on", &t_.fail_swap_on, "swap");
    fs_.Bool("flag-b", &t_.flag_b, "b");
    fs_.Int32("max-pods", &t_.max_pods, "pods");
    fs_.Int32("v", &t_.v, "verbosity").shorthand = "v";
    fs_.Duration("sync-frequency", &t_.sync, "sync");
    fs_.StringSlice("cluster-dns", &t_.dns, "dns");
    fs_.StringMap("node-labels", &t_.labels, "labels");
    fs_.BoolMap("feature-gates", &t_.gates, "gates");
    fs_.Add(Flag{.name = "container-runtime",
                 .type_name = "string",
                 .deprecated = "will be removed",
                 .hidden = true,
                 .set = [](std::string_view, bool) { return absl::OkStatus(); }});
  }
  absl::Status Parse(std::vector<std::string> args) { return fs_.Parse(args); }
  Targets t_;
  FlagSet fs_;
};

TEST_F(FlagSetTest, AllValueForms) {
  ASSERT_EQ(Parse({"--root-dir=/x", "--max-pods", "20", "--fail-swap-on=false", "--flag-b",
                   "--sync_frequency=1m30s", "-v=4", "pos"}),
            absl::OkStatus());
  EXPECT_EQ(t_.root, "/x");
  EXPECT_EQ(t_.max_pods, 20);
  EXPECT_FALSE(t_.fail_swap_on);
  EXPECT_TRUE(t_.flag_b);
  EXPECT_EQ(t_.sync, absl::Seconds(90));
  EXPECT_EQ(t_.v, 4);
  EXPECT_EQ(fs_.Args(), std::vector<std::string>{"pos"});
  EXPECT_TRUE(fs_.Changed("max_pods"));
  EXPECT_FALSE(fs_.Changed("cluster-dns"));
}

TEST_F(FlagSetTest, ShorthandForms) {
  ASSERT_EQ(Parse({"-v", "3"}), absl::OkStatus());
  EXPECT_EQ(t_.v, 3);
  ASSERT_TRUE(Parse({"-v5"}).ok());
  EXPECT_EQ(t_.v, 5);
  ASSERT_TRUE(Parse({"--v=6"}).ok());
  EXPECT_EQ(t_.v, 6);
}

TEST_F(FlagSetTest, MapsAndSlices) {
  ASSERT_TRUE(Parse({"--node-labels=a=b,c=d", "--node-labels", "e=f", "--cluster-dns=10.0.0.10",
                     "--cluster-dns=10.0.0.11", "--feature-gates=A=true,B=false"})
                  .ok());
  EXPECT_EQ(t_.labels, (std::map<std::string, std::string>{{"a", "b"}, {"c", "d"}, {"e", "f"}}));
  EXPECT_EQ(t_.dns, (std::vector<std::string>{"10.0.0.10", "10.0.0.11"}));
  EXPECT_EQ(t_.gates, (std::map<std::string, bool>{{"A", true}, {"B", false}}));
}

TEST_F(FlagSetTest, Errors) {
  EXPECT_EQ(Parse({"--nope"}).message(), "unknown flag: --nope");
  EXPECT_EQ(Parse({"--root-dir"}).message(), "flag needs an argument: --root-dir");
  EXPECT_EQ(Parse({"--max-pods=abc"}).message(),
            "invalid argument \"abc\" for \"--max-pods\" flag: strconv.ParseInt: parsing "
            "\"abc\": invalid syntax");
  EXPECT_NE(Parse({"--sync-frequency=5x"}).message().find("--sync-frequency"), std::string::npos);
  EXPECT_NE(Parse({"--feature-gates=A=maybe"}).message().find("invalid value of A=maybe"),
            std::string::npos);
  EXPECT_NE(Parse({"--node-labels=novalue"}).message().find("--node-labels"), std::string::npos);
  EXPECT_EQ(Parse({"-x"}).message(), "unknown shorthand flag: 'x' in -x");
}

TEST_F(FlagSetTest, DeprecatedFlagsWarnAndHideFromHelp) {
  ASSERT_TRUE(Parse({"--container-runtime=remote"}).ok());
  ASSERT_EQ(fs_.Warnings().size(), 1u);
  EXPECT_EQ(fs_.Warnings()[0], "Flag --container-runtime has been deprecated, will be removed");
  EXPECT_EQ(fs_.Usages().find("container-runtime"), std::string::npos);
  EXPECT_NE(fs_.Usages().find("--max-pods int32"), std::string::npos);
  EXPECT_NE(fs_.Usages().find("(default 110)"), std::string::npos);
  EXPECT_NE(fs_.Usages().find("(default \"/var/lib/kubelet\")"), std::string::npos);
}

TEST_F(FlagSetTest, ApplyReplaysOverLaterChanges) {
  ASSERT_TRUE(Parse({"--max-pods=20", "--node-labels=a=b"}).ok());
  // Simulates loading a config file over the parsed values.
  t_.max_pods = 50;
  t_.labels = {{"file", "x"}};
  t_.root = "/from-file";
  ASSERT_TRUE(fs_.Apply().ok());
  EXPECT_EQ(t_.max_pods, 20);
  EXPECT_EQ(t_.labels, (std::map<std::string, std::string>{{"a", "b"}}));
  EXPECT_EQ(t_.root, "/from-file");  // not on the command line: the file wins
}

TEST_F(FlagSetTest, DoubleDashEndsFlags) {
  ASSERT_TRUE(Parse({"--", "--max-pods=1"}).ok());
  EXPECT_EQ(t_.max_pods, 110);
  EXPECT_EQ(fs_.Args(), std::vector<std::string>{"--max-pods=1"});
}

}  // namespace
}  // namespace kubelet::config
