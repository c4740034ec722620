#include "kubelet/volume/atomic_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kubelet::volume {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class AtomicWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/atomic-writer-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/vol";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ + "/" + rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string DataTarget() { return fs::read_symlink(dir_ + "/..data").string(); }
  // Entries of the target directory that are version directories.
  std::vector<std::string> Versions() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("..", 0) == 0 && n != "..data" && e.is_directory() && !e.is_symlink()) {
        out.push_back(n);
      }
    }
    return out;
  }

  std::string root_, dir_;
  FakeClock clock_;
};

TEST_F(AtomicWriterTest, WritesFilesThroughDataSymlink) {
  AtomicWriter w(dir_, "test", clock_);
  ASSERT_TRUE(w.Write({{"name", {"web", 0644}}, {"sub/dir/labels", {"a=\"b\"", 0400}}}).ok());
  EXPECT_EQ(Read("name"), "web");
  EXPECT_EQ(Read("sub/dir/labels"), "a=\"b\"");
  EXPECT_EQ(fs::read_symlink(dir_ + "/name").string(), "..data/name");
  EXPECT_EQ(fs::read_symlink(dir_ + "/sub").string(), "..data/sub");
  EXPECT_EQ(DataTarget().rfind("..2023_11_14_22_13_20.", 0), 0u) << DataTarget();
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/name").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat((dir_ + "/sub/dir/labels").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "/..data_tmp")));
}

TEST_F(AtomicWriterTest, IdenticalPayloadIsANoOp) {
  AtomicWriter w(dir_, "test", clock_);
  const Payload p = {{"a", {"1", 0644}}, {"b", {"2", 0600}}};
  ASSERT_TRUE(w.Write(p).ok());
  const std::string first = DataTarget();
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(w.Write(p).ok());
  EXPECT_EQ(DataTarget(), first);
  EXPECT_EQ(Versions().size(), 1u);
}

TEST_F(AtomicWriterTest, ChangeSwapsVersionAndRemovesStaleFiles) {
  AtomicWriter w(dir_, "test", clock_);
  ASSERT_TRUE(w.Write({{"a", {"1", 0644}}, {"old", {"x", 0644}}, {"d/f", {"y", 0644}}}).ok());
  const std::string first = DataTarget();
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(w.Write({{"a", {"2", 0644}}, {"new", {"z", 0644}}}).ok());
  EXPECT_NE(DataTarget(), first);
  EXPECT_EQ(Read("a"), "2");
  EXPECT_EQ(Read("new"), "z");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "/old")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "/d")));
  EXPECT_FALSE(fs::exists(dir_ + "/" + first));
  EXPECT_EQ(Versions().size(), 1u);
}

TEST_F(AtomicWriterTest, ModeChangeAloneIsWritten) {
  AtomicWriter w(dir_, "test", clock_);
  ASSERT_TRUE(w.Write({{"a", {"1", 0644}}}).ok());
  ASSERT_TRUE(w.Write({{"a", {"1", 0600}}}).ok());
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(AtomicWriterTest, RepairsMissingUserVisibleLink) {
  AtomicWriter w(dir_, "test", clock_);
  ASSERT_TRUE(w.Write({{"a", {"1", 0644}}}).ok());
  ASSERT_EQ(::unlink((dir_ + "/a").c_str()), 0);
  ASSERT_TRUE(w.Write({{"a", {"1", 0644}}}).ok());
  EXPECT_EQ(Read("a"), "1");
}

TEST_F(AtomicWriterTest, RejectsBadPaths) {
  AtomicWriter w(dir_, "pod x volume y", clock_);
  absl::Status st = w.Write({{"/abs", {"1", 0644}}});
  EXPECT_THAT(std::string(st.message()), HasSubstr("invalid path: must be relative path"));
  st = w.Write({{"a/../../b", {"1", 0644}}});
  EXPECT_THAT(std::string(st.message()), HasSubstr("must not contain '..'"));
  st = w.Write({{"..a", {"1", 0644}}});
  EXPECT_THAT(std::string(st.message()), HasSubstr("must not start with '..'"));
  st = w.Write({{std::string(256, 'x'), {"1", 0644}}});
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(fs::exists(dir_ + "/..data"));
}

TEST_F(AtomicWriterTest, EmptyPayloadRemovesEverything) {
  AtomicWriter w(dir_, "test", clock_);
  ASSERT_TRUE(w.Write({{"a", {"1", 0644}}}).ok());
  ASSERT_TRUE(w.Write({}).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "/a")));
  EXPECT_TRUE(fs::is_symlink(dir_ + "/..data"));
}

}  // namespace
}  // namespace kubelet::volume
