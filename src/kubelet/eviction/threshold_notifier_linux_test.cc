// The memcg threshold notifier against the real kernel: a child cgroup in the cgroup v1 memory
// hierarchy, a threshold above its usage, a process in it that allocates past the threshold.
// Skipped without root or without a v1 memory hierarchy (cgroup v2 has no such events; there
// the notifier must be a silent no-op).
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "kubelet/eviction/threshold_notifier.h"

namespace kubelet::eviction {
namespace {

constexpr char kMemoryRoot[] = "/sys/fs/cgroup/memory";

TEST(CgroupNotifierTest, FiresWhenUsageCrossesTheThreshold) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a memory cgroup";
  if (::access((std::string(kMemoryRoot) + "/cgroup.event_control").c_str(), W_OK) != 0) {
    GTEST_SKIP() << "no cgroup v1 memory hierarchy";
  }
  const std::string cgroup = absl::StrCat(kMemoryRoot, "/kubelet-notifier-test-", ::getpid());
  ASSERT_EQ(::mkdir(cgroup.c_str(), 0755), 0) << std::strerror(errno);

  std::atomic<int> crossings{0};
  constexpr int64_t kThreshold = 48 << 20;
  auto notifier = NewCgroupNotifier(cgroup, "memory.usage_in_bytes", kThreshold,
                                    [&] { crossings.fetch_add(1); });
  ASSERT_TRUE(notifier.ok()) << notifier.status();

  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    ::close(go[1]);
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    // 96 MiB touched page by page: past the 48 MiB threshold. mmap, not malloc: the child of a
    // multithreaded process may only make async-signal-safe calls (under TSan malloc hangs).
    constexpr size_t kSize = 96 << 20;
    void* m = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) ::_exit(1);
    char* p = static_cast<char*>(m);
    for (size_t i = 0; i < kSize; i += 4096) p[i] = 1;
    ::pause();
    ::_exit(0);
  }
  ::close(go[0]);
  {
    std::ofstream procs(cgroup + "/cgroup.procs");
    procs << child;
  }
  ASSERT_EQ(::write(go[1], "x", 1), 1);
  for (int i = 0; i < 500 && crossings.load() == 0; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_GE(crossings.load(), 1);

  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(go[1]);
  notifier->reset();  // unregisters before the cgroup goes
  for (int i = 0; i < 100 && ::rmdir(cgroup.c_str()) != 0; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
  }
}

TEST(CgroupNotifierTest, WithoutEventControlItIsANoOp) {
  const std::string dir = ::testing::TempDir() + "/not-a-memcg";
  ::mkdir(dir.c_str(), 0755);
  auto notifier = NewCgroupNotifier(dir, "memory.usage_in_bytes", 1, [] { FAIL(); });
  ASSERT_TRUE(notifier.ok()) << notifier.status();
  EXPECT_NE(notifier->get(), nullptr);
}

}  // namespace
}  // namespace kubelet::eviction
