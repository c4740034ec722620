#include "kubelet/status/status_manager.h"

#include <gtest/gtest.h>

namespace kubelet::status {
namespace {

api::PodStatus Phase(const std::string& phase) {
  api::PodStatus s;
  s.phase = phase;
  return s;
}

TEST(StatusManagerTest, VersionsGrowOnlyWithChanges) {
  StatusManager m;
  EXPECT_FALSE(m.GetPodStatus("a").has_value());
  const uint64_t v1 = m.SetPodStatus("a", Phase("Pending"));
  // The same status again keeps its version: a later API syncer pushes nothing.
  EXPECT_EQ(m.SetPodStatus("a", Phase("Pending")), v1);
  const uint64_t v2 = m.SetPodStatus("a", Phase("Running"));
  EXPECT_GT(v2, v1);
  // Versions are global: another pod's change gets a newer one still.
  const uint64_t vb = m.SetPodStatus("b", Phase("Pending"));
  EXPECT_GT(vb, v2);
  std::optional<StatusManager::Versioned> a = m.GetPodStatus("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status.phase, "Running");
  EXPECT_EQ(a->version, v2);
}

TEST(StatusManagerTest, OrphanedStatusesAreDropped) {
  StatusManager m;
  m.SetPodStatus("a", Phase("Running"));
  m.SetPodStatus("b", Phase("Running"));
  m.RemoveOrphanedStatuses({"b"});
  EXPECT_FALSE(m.GetPodStatus("a").has_value());
  EXPECT_TRUE(m.GetPodStatus("b").has_value());
}

}  // namespace
}  // namespace kubelet::status
