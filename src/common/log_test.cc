#include "common/log.h"

#include <unistd.h>

#include <regex>

#include "gtest/gtest.h"

namespace kubelet::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void Use(Format format, int v) {
    lines_.clear();
    Configure(Options{v, format, [this](std::string_view l) { lines_.emplace_back(l); }});
  }
  void TearDown() override { Configure(Options{}); }
  std::vector<std::string> lines_;
};

TEST_F(LogTest, TextFormatMatchesKlog) {
  Use(Format::kText, 0);
  KLOG_INFO("SyncLoop ADD", "source", "file", "pods", std::vector<std::string>{"default/web-n1"});
  ASSERT_EQ(lines_.size(), 1u);
  std::regex re(
      R"(^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ log_test\.cc:\d+\] "SyncLoop ADD" source="file" pods=\["default/web-n1"\]\n$)");
  EXPECT_TRUE(std::regex_match(lines_[0], re)) << lines_[0];
  EXPECT_NE(lines_[0].find(" " + std::to_string(getpid()) + " "), std::string::npos);
}

TEST_F(LogTest, VerbosityGatesRecords) {
  Use(Format::kText, 2);
  KLOG_V(2, "shown");
  KLOG_V(3, "hidden");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("\"shown\""), std::string::npos);
}

TEST_F(LogTest, ErrorCarriesErr) {
  Use(Format::kText, 0);
  KLOG_ERROR(absl::UnavailableError("boom \"x\""), "Failed", "n", 3);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0][0], 'E');
  EXPECT_NE(lines_[0].find("\"Failed\" err=\"boom \\\"x\\\"\" n=3"), std::string::npos)
      << lines_[0];
}

TEST_F(LogTest, JsonFormat) {
  Use(Format::kJson, 0);
  KLOG_INFO("hello\nworld", "ok", true, "d", absl::Seconds(90));
  ASSERT_EQ(lines_.size(), 1u);
  std::regex re(
      R"(^\{"ts":\d+\.\d{6},"caller":"log_test\.cc:\d+","msg":"hello\\nworld","v":0,"ok":true,"d":"1m30s"\}\n$)");
  EXPECT_TRUE(std::regex_match(lines_[0], re)) << lines_[0];
}

TEST(LogFormat, Parse) {
  Format f;
  EXPECT_TRUE(ParseFormat("json", &f).ok());
  EXPECT_EQ(f, Format::kJson);
  EXPECT_FALSE(ParseFormat("xml", &f).ok());
}

}  // namespace
}  // namespace kubelet::log
