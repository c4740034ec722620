#include "kubelet/podsource/file_source.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/static_pod.h"
#include "gtest/gtest.h"
#include "kubelet/podsource/podsource_test_util.h"

namespace kubelet::podsource {
namespace {

namespace fs = std::filesystem;
using kubelet::testing::Eventually;
using testutil::LogCapture;
using testutil::MergedNames;
using testutil::PodJson;
using testutil::PodYaml;
using Names = std::vector<std::string>;

void WriteFile(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

// Writes next to the target and renames over it, as kubeadm and most editors do.
void AtomicWrite(const fs::path& p, const std::string& content) {
  fs::path tmp = p.parent_path() / ("." + p.filename().string() + ".tmp");
  WriteFile(tmp, content);
  fs::rename(tmp, p);
}

std::string ImageOf(const PodConfig& config, const std::string& name) {
  for (const auto& p : config.MergedState()) {
    if (p->metadata.name == name) {
      return p->spec.containers.empty() ? "" : p->spec.containers[0].image;
    }
  }
  return "";
}

class FileSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podsource-file-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    source_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  FileSource& StartSource(const fs::path& path, absl::Duration check = absl::Hours(1)) {
    FileSourceOptions o;
    o.path = path.string();
    o.node_name = "node1";
    o.check_frequency = check;
    o.watch_retry = absl::Milliseconds(50);
    source_ = std::make_unique<FileSource>(o, config_, clock_);
    EXPECT_TRUE(source_->Start().ok());
    return *source_;
  }

  bool WaitNames(const Names& want) {
    bool ok = Eventually([&] { return MergedNames(config_) == want; });
    if (!ok) {
      ADD_FAILURE() << "merged pods never became the expected set; last: "
                    << ::testing::PrintToString(MergedNames(config_));
    }
    return ok;
  }

  fs::path root_;
  RealClock clock_;
  PodConfig config_{clock_, PodConfigOptions{10000}};
  std::unique_ptr<FileSource> source_;
};

TEST_F(FileSourceTest, DirectoryCreateModifyRenameDelete) {
  const fs::path dir = root_ / "manifests";
  fs::create_directory(dir);
  config_.AddSource(kFileSource);
  StartSource(dir.string() + "/");  // a trailing slash is ignored
  ASSERT_TRUE(Eventually([&] { return config_.SeenAllSources({kFileSource}); }));
  EXPECT_TRUE(MergedNames(config_).empty());

  WriteFile(dir / "a.yaml", PodYaml("a"));
  ASSERT_TRUE(WaitNames({"default/a-node1"}));
  const api::Pod pod = *config_.MergedState()[0];
  EXPECT_EQ(pod.spec.node_name, "node1");
  EXPECT_EQ(pod.metadata.annotations.at(api::kConfigSourceAnnotationKey), "file");
  EXPECT_EQ(pod.metadata.annotations.at(api::kConfigHashAnnotationKey), pod.metadata.uid);
  EXPECT_FALSE(pod.metadata.uid.empty());

  WriteFile(dir / "a.yaml", PodYaml("a", "nginx:1.25"));
  ASSERT_TRUE(Eventually([&] { return ImageOf(config_, "a-node1") == "nginx:1.25"; }));

  WriteFile(dir / "b.json", PodJson("b"));
  ASSERT_TRUE(WaitNames({"default/a-node1", "default/b-node1"}));

  // Renamed to a hidden name: gone; renamed into the directory: back.
  fs::rename(dir / "b.json", dir / ".b.json");
  ASSERT_TRUE(WaitNames({"default/a-node1"}));
  fs::rename(dir / ".b.json", root_ / "b.json");
  fs::rename(root_ / "b.json", dir / "b.json");
  ASSERT_TRUE(WaitNames({"default/a-node1", "default/b-node1"}));

  AtomicWrite(dir / "c.yaml", PodYaml("c"));
  ASSERT_TRUE(WaitNames({"default/a-node1", "default/b-node1", "default/c-node1"}));

  fs::remove(dir / "a.yaml");
  fs::rename(dir / "b.json", root_ / "b.json");
  ASSERT_TRUE(WaitNames({"default/c-node1"}));

  // Every change arrived as an incremental update (a new content is a new UID: REMOVE + ADD).
  bool saw_add = false, saw_remove = false;
  for (const auto& u : config_.Drain()) {
    saw_add |= u.op == PodOperation::kAdd;
    saw_remove |= u.op == PodOperation::kRemove;
  }
  EXPECT_TRUE(saw_add && saw_remove);
}

TEST_F(FileSourceTest, RewritingTheSameContentChangesNothing) {
  const fs::path dir = root_ / "manifests";
  fs::create_directory(dir);
  // An explicit UID survives content changes, so a spec change is an UPDATE.
  const std::string manifest =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: u\n  uid: fixed-uid\nspec:\n"
      "  containers:\n  - name: c\n    image: IMAGE\n";
  auto with_image = [&](const std::string& image) {
    return absl::StrReplaceAll(manifest, {{"IMAGE", image}});
  };
  WriteFile(dir / "u.yaml", with_image("busybox:1.36"));
  auto& source = StartSource(dir);
  ASSERT_TRUE(WaitNames({"default/u-node1"}));
  ASSERT_EQ(config_.Drain().size(), 1u);  // the ADD

  // Truncate-and-write of the same content, many times: no REMOVE/ADD churn.
  for (int i = 0; i < 20; ++i) {
    WriteFile(dir / "u.yaml", with_image("busybox:1.36"));
    absl::SleepFor(absl::Milliseconds(1));
  }
  const uint64_t scans = source.scans();
  WriteFile(dir / "other.yaml", PodYaml("other"));
  ASSERT_TRUE(WaitNames({"default/other-node1", "default/u-node1"}));
  // A scan counts itself after it delivered: the one that brought other.yaml may not have yet.
  EXPECT_TRUE(Eventually([&] { return source.scans() > scans; }));
  for (const auto& u : config_.Drain()) {
    EXPECT_EQ(u.op, PodOperation::kAdd);
    for (const auto& p : u.pods) EXPECT_EQ(p->metadata.name, "other-node1");
  }

  AtomicWrite(dir / "u.yaml", with_image("nginx:1.25"));
  ASSERT_TRUE(Eventually([&] { return ImageOf(config_, "u-node1") == "nginx:1.25"; }));
  auto updates = config_.Drain();
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].op, PodOperation::kUpdate);
  EXPECT_EQ(updates[0].pods[0]->metadata.uid, "fixed-uid");
}

TEST_F(FileSourceTest, HiddenFilesSubdirectoriesAndPodListsAreSkipped) {
  LogCapture logs;
  const fs::path dir = root_ / "manifests";
  fs::create_directory(dir);
  WriteFile(dir / ".hidden.yaml", PodYaml("hidden"));
  WriteFile(dir / "good.yaml", PodYaml("good"));
  fs::create_directory(dir / "sub");
  WriteFile(dir / "sub" / "nested.yaml", PodYaml("nested"));
  WriteFile(dir / "list.json",
            R"({"apiVersion":"v1","kind":"PodList","items":[)" + PodJson("inlist") + "]}");
  StartSource(dir);
  ASSERT_TRUE(WaitNames({"default/good-node1"}));
  ASSERT_TRUE(Eventually([&] {
    return logs.Count({"Provided manifest path is a directory, not recursing into manifest path",
                       (dir / "sub").string()}) == 1 &&
           logs.Count({"Could not process manifest file", "couldn't parse as pod",
                       (dir / "list.json").string()}) == 1;
  })) << logs.Dump();
}

TEST_F(FileSourceTest, BrokenManifestIsReportedOncePerChange) {
  LogCapture logs;
  const fs::path dir = root_ / "manifests";
  fs::create_directory(dir);
  WriteFile(dir / "good.yaml", PodYaml("good"));
  WriteFile(dir / "bad.yaml", PodYaml("bad", ""));
  auto& source = StartSource(dir, absl::Milliseconds(10));
  ASSERT_TRUE(WaitNames({"default/good-node1"}));
  const std::vector<std::string> bad_line = {"Could not process manifest file",
                                             "spec.containers[0].image: Required value",
                                             "path=\"" + (dir / "bad.yaml").string() + "\""};
  ASSERT_TRUE(Eventually([&] { return logs.Count(bad_line) == 1; })) << logs.Dump();

  // Many periodic re-reads and unrelated events later: still reported once.
  const uint64_t scans = source.scans();
  ASSERT_TRUE(Eventually([&] { return source.scans() >= scans + 5; }));
  WriteFile(dir / "other.yaml", PodYaml("other"));
  ASSERT_TRUE(WaitNames({"default/good-node1", "default/other-node1"}));
  EXPECT_EQ(logs.Count(bad_line), 1) << logs.Dump();

  // A different broken content is a new report; the fix brings the pod in.
  AtomicWrite(dir / "bad.yaml", "kind: Pod\napiVersion: v1\nmetadata: [\n");
  ASSERT_TRUE(Eventually([&] {
    return logs.Count({"Could not process manifest file", (dir / "bad.yaml").string()}) == 2;
  })) << logs.Dump();
  AtomicWrite(dir / "bad.yaml", PodYaml("bad"));
  ASSERT_TRUE(WaitNames({"default/bad-node1", "default/good-node1", "default/other-node1"}));
  EXPECT_EQ(logs.Count({"Could not process manifest file"}), 2) << logs.Dump();
}

TEST_F(FileSourceTest, SingleFilePath) {
  LogCapture logs;
  const fs::path file = root_ / "pod.yaml";
  WriteFile(file, PodYaml("single"));
  StartSource(file);
  ASSERT_TRUE(WaitNames({"default/single-node1"}));

  WriteFile(file, PodYaml("single", "nginx:1.25"));
  ASSERT_TRUE(Eventually([&] { return ImageOf(config_, "single-node1") == "nginx:1.25"; }));

  AtomicWrite(file, PodYaml("single", "redis:7"));
  ASSERT_TRUE(Eventually([&] { return ImageOf(config_, "single-node1") == "redis:7"; }));

  // A broken single file keeps the previous pod, as upstream.
  WriteFile(file, PodYaml("single", ""));
  ASSERT_TRUE(Eventually([&] {
    return logs.Count({"Unable to read config path", "Required value"}) == 1;
  })) << logs.Dump();
  EXPECT_EQ(MergedNames(config_), Names{"default/single-node1"});

  fs::remove(file);
  ASSERT_TRUE(WaitNames({}));
  WriteFile(file, PodYaml("again"));
  ASSERT_TRUE(WaitNames({"default/again-node1"}));
}

TEST_F(FileSourceTest, PathAppearsLaterAndSurvivesRecreation) {
  LogCapture logs;
  const fs::path dir = root_ / "manifests";
  config_.AddSource(kFileSource);
  StartSource(dir);
  // A missing path still marks the source as seen.
  ASSERT_TRUE(Eventually([&] { return config_.SeenAllSources({kFileSource}); }));
  ASSERT_TRUE(Eventually([&] {
    return logs.Count({"Unable to read config path", "path does not exist, ignoring"}) == 1;
  })) << logs.Dump();

  fs::create_directory(dir);
  WriteFile(dir / "a.yaml", PodYaml("a"));
  ASSERT_TRUE(WaitNames({"default/a-node1"}));

  fs::remove_all(dir);
  ASSERT_TRUE(WaitNames({}));
  fs::create_directory(dir);
  WriteFile(dir / "b.yaml", PodYaml("b"));
  ASSERT_TRUE(WaitNames({"default/b-node1"}));
  WriteFile(dir / "c.yaml", PodYaml("c"));
  ASSERT_TRUE(WaitNames({"default/b-node1", "default/c-node1"}));

  // Replaced by a directory renamed into place.
  const fs::path staged = root_ / "staged";
  fs::create_directory(staged);
  WriteFile(staged / "d.yaml", PodYaml("d"));
  fs::remove_all(dir);
  fs::rename(staged, dir);
  ASSERT_TRUE(WaitNames({"default/d-node1"}));
  WriteFile(dir / "e.yaml", PodYaml("e"));
  ASSERT_TRUE(WaitNames({"default/d-node1", "default/e-node1"}));
}

TEST_F(FileSourceTest, ParentDirectoryAppearsLater) {
  const fs::path dir = root_ / "x" / "y" / "manifests";
  StartSource(dir);
  absl::SleepFor(absl::Milliseconds(20));
  fs::create_directories(dir);
  WriteFile(dir / "a.yaml", PodYaml("a"));
  ASSERT_TRUE(WaitNames({"default/a-node1"}));
}

TEST_F(FileSourceTest, StopIsPromptEvenWhenTheQueueIsFull) {
  const fs::path dir = root_ / "manifests";
  fs::create_directory(dir);
  PodConfig small(clock_, PodConfigOptions{1});
  FileSourceOptions o;
  o.path = dir.string();
  o.node_name = "n";
  FileSource source(o, small, clock_);
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(Eventually([&] { return small.Pending() == 1; }));  // the initial empty ADD
  WriteFile(dir / "a.yaml", PodYaml("a"));                        // blocks: nobody drains
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Time start = absl::Now();
  source.Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

// Hostile manifests: each is rejected with a log naming the file, the thread keeps scanning and
// the good pod keeps running.
TEST_F(FileSourceTest, HostileFilesAreRejectedAndOthersKeepRunning) {
  LogCapture logs;
  const fs::path dir = root_ / "manifests";
  fs::create_directory(dir);
  WriteFile(dir / "good.yaml", PodYaml("good"));
  // Over the 10 MiB bound: not read at all.
  WriteFile(dir / "huge.yaml", PodYaml("huge") + "\n#" + std::string(11 << 20, 'x') + "\n");
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919) & 0xff);
  WriteFile(dir / "garbage.bin", garbage);
  WriteFile(dir / "nested.json", std::string(200000, '[') + std::string(200000, ']'));
  WriteFile(dir / "nested-flow.yaml", "kind: Pod\nmetadata: " + std::string(100000, '[') + "\n");
  std::string block = "kind: Pod\nmetadata:\n";
  for (int i = 0; i < 3000; ++i) absl::StrAppend(&block, std::string(i + 1, ' '), "k:\n");
  WriteFile(dir / "nested-block.yaml", block);
  std::string seqs = "kind: Pod\nspec: ";
  for (int i = 0; i < 20000; ++i) seqs += "- ";
  WriteFile(dir / "nested-seq.yaml", seqs + "x\n");
  WriteFile(dir / "aliases.yaml",
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e]\n"
            "kind: Pod\n");
  ASSERT_EQ(::mkfifo((dir / "fifo.yaml").c_str(), 0644), 0);
  fs::create_directory(dir / "subdir.yaml");
  fs::create_symlink(dir / "loop-b.yaml", dir / "loop-a.yaml");
  fs::create_symlink(dir / "loop-a.yaml", dir / "loop-b.yaml");

  auto& source = StartSource(dir, absl::Milliseconds(20));
  ASSERT_TRUE(WaitNames({"default/good-node1"}));
  const uint64_t scans = source.scans();
  ASSERT_TRUE(Eventually([&] { return source.scans() >= scans + 3; }));  // still scanning
  EXPECT_EQ(MergedNames(config_), Names{"default/good-node1"});

  auto path = [&](const char* name) { return "path=\"" + (dir / name).string() + "\""; };
  EXPECT_EQ(logs.Count({"Could not process manifest file", "the read limit is reached",
                        path("huge.yaml")}),
            1)
      << logs.Dump();
  for (const char* name : {"garbage.bin", "nested.json", "nested-flow.yaml", "nested-block.yaml",
                           "nested-seq.yaml", "aliases.yaml"}) {
    EXPECT_EQ(logs.Count({"Could not process manifest file", path(name)}), 1) << name << "\n"
                                                                              << logs.Dump();
  }
  EXPECT_EQ(
      logs.Count({"Could not process manifest file", "exceeded max depth", path("nested.json")}), 1)
      << logs.Dump();
  EXPECT_EQ(logs.Count({"Manifest path is not a directory or file", path("fifo.yaml"),
                        "mode=\"prw-r--r--\""}),
            1)
      << logs.Dump();
  EXPECT_EQ(logs.Count({"Provided manifest path is a directory", path("subdir.yaml")}), 1)
      << logs.Dump();
  EXPECT_EQ(logs.Count({"Could not get metadata", "too many levels of symbolic links",
                        path("loop-a.yaml")}),
            1)
      << logs.Dump();

  // Fixing a file brings its pod in; the thread never stopped.
  AtomicWrite(dir / "garbage.bin", PodYaml("fixed"));
  ASSERT_TRUE(WaitNames({"default/fixed-node1", "default/good-node1"}));
  const absl::Time start = absl::Now();
  source_.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(FileSourceTest, FifoAsThePathDoesNotBlock) {
  LogCapture logs;
  const fs::path fifo = root_ / "pod.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto& source = StartSource(fifo, absl::Milliseconds(10));
  ASSERT_TRUE(Eventually([&] { return source.scans() >= 3; }));
  EXPECT_EQ(logs.Count({"Unable to read config path", "path is not a directory or file",
                        "path=\"" + fifo.string() + "\""}),
            1)
      << logs.Dump();
  const absl::Time start = absl::Now();
  source_.reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(FileSourceTest, HugeSingleFileKeepsThePreviousPod) {
  LogCapture logs;
  const fs::path file = root_ / "pod.yaml";
  WriteFile(file, PodYaml("web"));
  StartSource(file, absl::Milliseconds(10));
  ASSERT_TRUE(WaitNames({"default/web-node1"}));
  AtomicWrite(file, PodYaml("web") + "\n#" + std::string((10 << 20) + 1, 'x') + "\n");
  ASSERT_TRUE(Eventually([&] {
    return logs.Count({"Unable to read config path", "the read limit is reached",
                       "path=\"" + file.string() + "\""}) == 1;
  })) << logs.Dump();
  EXPECT_EQ(MergedNames(config_), Names{"default/web-node1"});
}

}  // namespace
}  // namespace kubelet::podsource
