#include "common/memory_trim.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "common/testing/eventually.h"
#include "gtest/gtest.h"

namespace kubelet {
namespace {

using testing::Eventually;

TEST(MemoryTrimmerTest, TrimsOncePerPeriodOfTheClock) {
  FakeClock clock;
  std::atomic<int> trims{0};
  {
    MemoryTrimmer trimmer(clock, absl::Minutes(1), [&] { ++trims; });
    ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
    clock.Advance(absl::Seconds(59));
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_EQ(trims.load(), 0);
    clock.Advance(absl::Seconds(1));
    ASSERT_TRUE(Eventually([&] { return trims.load() == 1; }));
    ASSERT_TRUE(Eventually([&] { return clock.Waiters() == 1; }));
    clock.Advance(absl::Minutes(1));
    ASSERT_TRUE(Eventually([&] { return trims.load() == 2; }));
  }  // stops without waiting for the next period
  EXPECT_EQ(trims.load(), 2);
}

// An executable mapping of a file that only this process maps (not the test binary itself:
// another test process of it may share its pages, which the kernel leaves alone) leaves RSS.
TEST(PageOutCodeTest, HandsBackExecutablePagesOnlyThisProcessMaps) {
  constexpr size_t kSize = 64 * 4096;
  // In the working directory (the build tree), not a temporary directory that may be tmpfs,
  // whose pages only swap could take.
  const std::string path = "page-out-code-test-" + std::to_string(::getpid());
  // Written, paged in and advised on one CPU: pages still in another CPU's batch on their way
  // to the LRU lists are passed over by the kernel.
  cpu_set_t old_cpus, one_cpu;
  const bool pinned = ::sched_getaffinity(0, sizeof(old_cpus), &old_cpus) == 0 && [&] {
    CPU_ZERO(&one_cpu);
    CPU_SET(::sched_getcpu(), &one_cpu);
    return ::sched_setaffinity(0, sizeof(one_cpu), &one_cpu) == 0;
  }();
  auto cleanup = absl::MakeCleanup([&] {
    ::unlink(path.c_str());
    if (pinned) (void)::sched_setaffinity(0, sizeof(old_cpus), &old_cpus);
  });
  void* map = MAP_FAILED;
  {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    ASSERT_GE(fd, 0) << path << ": " << std::strerror(errno);
    auto close_fd = absl::MakeCleanup([fd] { ::close(fd); });
    const std::string bytes(kSize, '\xc3');  // ret
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(kSize));
    ASSERT_EQ(::fsync(fd), 0);  // the kernel pages out clean pages only
    map = ::mmap(nullptr, kSize, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  }
  ASSERT_NE(map, MAP_FAILED) << "cannot map " << path << " executable: " << std::strerror(errno);
  auto unmap = absl::MakeCleanup([map] { ::munmap(map, kSize); });
  const auto start = reinterpret_cast<uintptr_t>(map);
  // Resident KiB of the mapping, from smaps.
  auto resident_kib = [start] {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool in_map = false;
    long kib = 0;
    while (std::getline(smaps, line)) {
      unsigned long from = 0, to = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2 &&
          line.find('-') < line.find(' ')) {
        in_map = from == start;
      } else if (in_map && line.starts_with("Rss:")) {
        kib += std::strtol(line.c_str() + 4, nullptr, 10);
      }
    }
    return kib;
  };
  volatile unsigned char sum = 0;
  for (size_t off = 0; off < kSize; off += 4096) sum += static_cast<unsigned char*>(map)[off];
  const long before = resident_kib();
  EXPECT_EQ(before, static_cast<long>(kSize / 1024));
  absl::StatusOr<size_t> advised = PageOutCode();
  ASSERT_TRUE(advised.ok()) << advised.status();
  EXPECT_GE(*advised, kSize);
  EXPECT_LT(resident_kib(), before / 2);
}

}  // namespace
}  // namespace kubelet
