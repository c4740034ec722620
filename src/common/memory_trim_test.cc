#include "common/memory_trim.h"

#include <fcntl.h>
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
  const std::string path = ::testing::TempDir() + "/page-out-code-" + std::to_string(::getpid());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::string bytes(kSize, '\xc3');  // ret
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(kSize));
  // The kernel pages out clean pages only.
  ASSERT_EQ(::fsync(fd), 0);
  void* map = ::mmap(nullptr, kSize, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    // A noexec temporary directory: mapping the file executable is refused.
    ::unlink(path.c_str());
    GTEST_SKIP() << "cannot map " << path << " executable: " << std::strerror(errno);
  }
  const auto start = reinterpret_cast<uintptr_t>(map);
  // Resident KiB of the mapping, from smaps.
  auto resident_kib = [start] {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool in_map = false;
    long kib = 0;
    while (std::getline(smaps, line)) {
      unsigned long from = 0, to = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2 && line.find(' ') > 0 &&
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
  EXPECT_EQ(resident_kib(), 0);
  ::munmap(map, kSize);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace kubelet
