#include "common/memory_trim.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/guarded.h"

namespace kubelet {

void LimitMallocArenas(int arenas) {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) (void)mallopt(M_ARENA_MAX, arenas);
}

absl::StatusOr<size_t> PageOutCode() {
  std::ifstream maps("/proc/self/maps");
  if (!maps) {
    return absl::UnavailableError(
        absl::StrCat("cannot read /proc/self/maps: ", std::strerror(errno)));
  }
  size_t advised = 0;
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode path": executable mappings of a file only.
    unsigned long start = 0, end = 0;
    char perms[8] = {0};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &path_at) <
            3 ||
        path_at <= 0 || static_cast<size_t>(path_at) >= line.size() || line[path_at] != '/' ||
        perms[2] != 'x') {
      continue;
    }
    // Files that are gone or memory-backed (memfd, shared anonymous memory) hold no pages a
    // read of the file brings back.
    if (line.ends_with(" (deleted)") || line.compare(path_at, 7, "/memfd:") == 0) continue;
    if (::madvise(reinterpret_cast<void*>(start), end - start, MADV_PAGEOUT) == 0) {
      advised += end - start;
    }
  }
  return advised;
}

namespace {

std::function<void()> DefaultTrim() {
  return [first = true]() mutable {
    (void)malloc_trim(0);
    if (first) (void)PageOutCode();
    first = false;
  };
}

}  // namespace

MemoryTrimmer::MemoryTrimmer(const Clock& clock, absl::Duration period, std::function<void()> trim)
    : clock_(clock), period_(period), trim_(trim ? std::move(trim) : DefaultTrim()) {
  thread_ = GuardedThread("memory trimmer", [this] { Loop(); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void MemoryTrimmer::Loop() {
  absl::MutexLock lock(&mu_);
  while (!clock_.AwaitWithTimeout(mu_, absl::Condition(&stopping_), period_)) {
    mu_.Unlock();
    trim_();
    mu_.Lock();
  }
}

}  // namespace kubelet
