#include "kubelet/events/event_recorder.h"

#include <string>
#include <vector>

#include "common/log.h"
#include "gtest/gtest.h"

namespace kubelet::events {
namespace {

api::Pod TestPod() {
  api::Pod pod;
  pod.metadata.name = "web";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "uid-1";
  pod.spec.containers.emplace_back().name = "main";
  pod.spec.init_containers.emplace_back().name = "setup";
  return pod;
}

TEST(EventRecorderTest, ContainerRefsCarryUpstreamFieldPaths) {
  api::Pod pod = TestPod();
  ObjectReference main = ContainerRef(pod, "main");
  EXPECT_EQ(main.field_path, "spec.containers{main}");
  EXPECT_EQ(main.kind, "Pod");
  EXPECT_EQ(main.api_version, "v1");
  EXPECT_EQ(main.namespace_, "default");
  EXPECT_EQ(main.name, "web");
  EXPECT_EQ(main.uid, "uid-1");
  EXPECT_EQ(ContainerRef(pod, "setup").field_path, "spec.initContainers{setup}");
  EXPECT_EQ(ContainerRef(pod, "nope").field_path, "");
  EXPECT_EQ(PodRef(pod).field_path, "");
}

TEST(EventRecorderTest, LoggingRecorderWritesUpstreamsEventLine) {
  std::vector<std::string> lines;
  log::Configure({.verbosity = 3, .sink = [&](std::string_view l) { lines.emplace_back(l); }});
  auto recorder = NewLoggingRecorder();
  api::Pod pod = TestPod();
  recorder->Record(ContainerRef(pod, "main"), kWarning, kContainerUnhealthy,
                   "Liveness probe failed: boom");
  log::Configure({.verbosity = 2, .sink = [&](std::string_view l) { lines.emplace_back(l); }});
  recorder->Record(PodRef(pod), kNormal, kKillingContainer, "not logged below --v=3");
  log::Configure({});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"Event occurred\" object=\"default/web\" "
                          "fieldPath=\"spec.containers{main}\" kind=\"Pod\" apiVersion=\"v1\" "
                          "type=\"Warning\" reason=\"Unhealthy\" "
                          "message=\"Liveness probe failed: boom\""),
            std::string::npos)
      << lines[0];
}

}  // namespace
}  // namespace kubelet::events
