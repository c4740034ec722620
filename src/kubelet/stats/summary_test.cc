#include "kubelet/stats/summary.h"

#include <string>

#include "gtest/gtest.h"

namespace kubelet::stats {
namespace {

TEST(SummaryToJsonTest, InvalidUtf8FromTheRuntimeIsReplacedNotThrown) {
  Summary s;
  s.node.node_name = "node";
  PodStats pod;
  pod.pod_ref = {"web", "default", "u1"};
  ContainerStats c;
  c.name = "app\xff\xfe";  // a container name read back from corrupt runtime labels
  pod.containers.push_back(c);
  s.pods.push_back(pod);
  const std::string out = SummaryToJson(s);
  EXPECT_NE(out.find("\"name\":\"app\xEF\xBF\xBD\xEF\xBF\xBD\""), std::string::npos) << out;
}

}  // namespace
}  // namespace kubelet::stats
