#include "common/memory_trim.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
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

// The code pages of this test binary that only it maps leave its RSS (they fault back in as
// it runs on, so the figure is read right after the call). Only private pages count: another
// test process of the same binary may share some, and those the kernel leaves alone.
TEST(PageOutCodeTest, HandsBackTheProcessesOwnCodePages) {
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  // Resident private KiB of the test binary's executable mapping(s), from smaps.
  auto resident_text_kib = [&exe] {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool in_text = false;
    long kib = 0;
    while (std::getline(smaps, line)) {
      size_t dash = line.find('-'), space = line.find(' ');
      if (dash != std::string::npos && space != std::string::npos && dash < space &&
          std::isxdigit(static_cast<unsigned char>(line[0]))) {
        in_text = line.find(" r-xp ") != std::string::npos && line.ends_with(exe);
      } else if (in_text && line.starts_with("Private_")) {
        // Private_Clean, and Private_Dirty: a binary linked a moment ago is still dirty in
        // the page cache.
        kib += std::strtol(line.c_str() + line.find(':') + 1, nullptr, 10);
      }
    }
    return kib;
  };
  // The kernel pages out clean pages only: a binary linked a moment ago may still be dirty in
  // the page cache, so it is written back first.
  if (int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC); fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
  const long before = resident_text_kib();
  ASSERT_GT(before, 0);
  absl::StatusOr<size_t> advised = PageOutCode();
  ASSERT_TRUE(advised.ok()) << advised.status();
  EXPECT_GT(*advised, 0u);
  EXPECT_LT(resident_text_kib(), before);
}

}  // namespace
}  // namespace kubelet
