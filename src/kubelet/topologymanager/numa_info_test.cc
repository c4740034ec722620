#include "kubelet/topologymanager/numa_info.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::topologymanager {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A sysfs tree in a temporary directory.
class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/numa-info-test-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }
  void Distance(int node, const std::string& text) {
    const std::filesystem::path p =
        absl::StrCat(root_, "/devices/system/node/node", node, "/distance");
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// The distances of a 4-node machine made of two 2-node packages.
NUMAInfo FourNodes() {
  NUMAInfo n;
  n.nodes = {0, 1, 2, 3};
  n.distances = {
      {0, {10, 11, 12, 12}}, {1, {11, 10, 12, 12}}, {2, {12, 12, 10, 11}}, {3, {12, 12, 11, 10}}};
  return n;
}

TEST(ReadNUMADistances, ReadsTheRow) {
  FakeSysfs sysfs;
  sysfs.Distance(0, "10 21\n");
  sysfs.Distance(1, "21 10\n");
  absl::StatusOr<std::vector<uint64_t>> d0 = ReadNUMADistances(0, sysfs.root());
  ASSERT_TRUE(d0.ok()) << d0.status();
  EXPECT_THAT(*d0, ElementsAre(10, 21));
  absl::StatusOr<std::vector<uint64_t>> d1 = ReadNUMADistances(1, sysfs.root());
  ASSERT_TRUE(d1.ok()) << d1.status();
  EXPECT_THAT(*d1, ElementsAre(21, 10));
}

TEST(ReadNUMADistances, MissingFile) {
  FakeSysfs sysfs;
  absl::StatusOr<std::vector<uint64_t>> d = ReadNUMADistances(3, sysfs.root());
  ASSERT_FALSE(d.ok());
  const std::string path = sysfs.root() + "/devices/system/node/node3/distance";
  EXPECT_THAT(std::string(d.status().message()),
              StartsWith(absl::StrCat("problem reading ", path, ": open ", path)));
}

TEST(ReadNUMADistances, BadFields) {
  FakeSysfs sysfs;
  sysfs.Distance(0, "10 x\n");
  EXPECT_EQ(ReadNUMADistances(0, sysfs.root()).status().message(), "cannot convert x to int");
  sysfs.Distance(0, "10  11\n");  // a doubled space is an empty field, as upstream splits
  EXPECT_EQ(ReadNUMADistances(0, sysfs.root()).status().message(), "cannot convert  to int");
  sysfs.Distance(0, "10 -1\n");
  EXPECT_EQ(ReadNUMADistances(0, sysfs.root()).status().message(), "cannot convert -1 to int");
}

TEST(NewNUMAInfo, ReadsDistancesOnlyWhenAsked) {
  FakeSysfs sysfs;
  absl::StatusOr<NUMAInfo> plain = NewNUMAInfo({0, 1}, false, sysfs.root());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(plain->nodes, ElementsAre(0, 1));
  EXPECT_TRUE(plain->distances.empty());

  absl::StatusOr<NUMAInfo> missing = NewNUMAInfo({0, 1}, true, sysfs.root());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              StartsWith("cannot discover NUMA topology: error getting NUMA distances from "
                         "sysfs: problem reading "));

  sysfs.Distance(0, "10 20\n");
  sysfs.Distance(1, "20 10\n");
  absl::StatusOr<NUMAInfo> info = NewNUMAInfo({0, 1}, true, sysfs.root());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->distances.at(0), ElementsAre(10, 20));
  EXPECT_THAT(info->distances.at(1), ElementsAre(20, 10));
  EXPECT_TRUE(info->Validate(true).ok());
}

TEST(NUMAInfo, DefaultAffinityMask) {
  EXPECT_EQ(FourNodes().DefaultAffinityMask(), NUMAMask({0, 1, 2, 3}));
  NUMAInfo sparse;
  sparse.nodes = {0, 2};
  EXPECT_EQ(sparse.DefaultAffinityMask(), NUMAMask({0, 2}));
  EXPECT_TRUE(NUMAInfo().DefaultAffinityMask().IsEmpty());
}

TEST(NUMAInfo, AverageDistance) {
  const NUMAInfo n = FourNodes();
  EXPECT_DOUBLE_EQ(n.AverageDistance(NUMAMask{0}), 10);
  EXPECT_DOUBLE_EQ(n.AverageDistance(NUMAMask({0, 1})), 10.5);
  EXPECT_DOUBLE_EQ(n.AverageDistance(NUMAMask({0, 2})), 11);
  EXPECT_DOUBLE_EQ(n.AverageDistance(NUMAMask({0, 1, 2, 3})), 4 * 45 / 16.0);
  EXPECT_DOUBLE_EQ(n.AverageDistance(NUMAMask()), 0);
}

TEST(NUMAInfo, NarrowestAndClosest) {
  const NUMAInfo n = FourNodes();
  // Fewer nodes wins for both.
  EXPECT_EQ(n.Narrowest(NUMAMask({2, 3}), NUMAMask{1}), NUMAMask{1});
  EXPECT_EQ(n.Closest(NUMAMask({2, 3}), NUMAMask{1}), NUMAMask{1});
  // Same width: Narrowest takes the lower mask, Closest the closer nodes.
  EXPECT_EQ(n.Narrowest(NUMAMask({0, 2}), NUMAMask({2, 3})), NUMAMask({0, 2}));
  EXPECT_EQ(n.Closest(NUMAMask({0, 2}), NUMAMask({2, 3})), NUMAMask({2, 3}));
  EXPECT_EQ(n.Closest(NUMAMask({2, 3}), NUMAMask({0, 2})), NUMAMask({2, 3}));
  // Same distance: the lower mask, whichever comes first.
  EXPECT_EQ(n.Closest(NUMAMask({2, 3}), NUMAMask({0, 1})), NUMAMask({0, 1}));
  EXPECT_EQ(n.Closest(NUMAMask({0, 1}), NUMAMask({2, 3})), NUMAMask({0, 1}));
  EXPECT_EQ(n.Closest(NUMAMask({0, 3}), NUMAMask({1, 2})), NUMAMask({1, 2}));
}

TEST(NUMAInfo, Validate) {
  EXPECT_TRUE(FourNodes().Validate(true).ok());
  NUMAInfo no_rows;
  no_rows.nodes = {0, 1};
  EXPECT_TRUE(no_rows.Validate(false).ok());
  EXPECT_EQ(no_rows.Validate(true).message(), "no NUMA distances for node 0");
  NUMAInfo short_row = no_rows;
  short_row.distances = {{0, {10, 11}}, {1, {11}}};
  EXPECT_EQ(short_row.Validate(true).message(), "NUMA distances of node 1 do not include node 1");
  NUMAInfo bad_id;
  bad_id.nodes = {0, 64};
  EXPECT_THAT(std::string(bad_id.Validate(false).message()), HasSubstr("0-63"));
}

}  // namespace
}  // namespace kubelet::topologymanager
