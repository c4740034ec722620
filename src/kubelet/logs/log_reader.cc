#include "kubelet/logs/log_reader.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/civil_time.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::logs {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
constexpr int64_t kTailBlock = 1024;
// How much of a bad line an error record quotes: a log line may be megabytes of anything.
constexpr size_t kQuotedLineBytes = 256;

std::string ErrnoText(int err) { return std::strerror(err); }

// Go's %q.
std::string Q(std::string_view s) { return log::Quote(s); }

// The start of `line` for a log record, marked when cut.
std::string Excerpt(std::string_view line) {
  if (line.size() <= kQuotedLineBytes) return std::string(line);
  return absl::StrCat(AV(line.substr(0, kQuotedLineBytes)), "...(", line.size(), " bytes)");
}

// Reads `n` decimal digits at `s[*pos]`.
bool Digits(std::string_view s, size_t* pos, size_t n, int* out) {
  if (*pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

// Go's time.Parse(time.RFC3339Nano, s): any number of fractional digits (or none), "Z" or a
// numeric offset.
bool ParseRfc3339(std::string_view s, absl::Time* t, int* offset) {
  size_t p = 0;
  int year, month, day, hour, minute, second;
  if (!Digits(s, &p, 4, &year) || !Expect(s, &p, '-') || !Digits(s, &p, 2, &month) ||
      !Expect(s, &p, '-') || !Digits(s, &p, 2, &day) || !Expect(s, &p, 'T') ||
      !Digits(s, &p, 2, &hour) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &minute) ||
      !Expect(s, &p, ':') || !Digits(s, &p, 2, &second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  int64_t nanos = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    size_t digits = 0;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (s[p] - '0');
      ++digits;
      ++p;
    }
    if (digits == 0) return false;
    for (size_t i = digits; i < 9; ++i) nanos *= 10;
  }
  int off = 0;
  if (p < s.size() && s[p] == 'Z') {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    int sign = s[p] == '-' ? -1 : 1;
    ++p;
    int oh, om;
    if (!Digits(s, &p, 2, &oh) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &om)) return false;
    if (oh > 23 || om > 59) return false;
    off = sign * (oh * 3600 + om * 60);
  } else {
    return false;
  }
  if (p != s.size()) return false;
  absl::CivilSecond cs(year, month, day, hour, minute, second);
  if (cs.day() != day) return false;  // e.g. Feb 30 normalised away
  *t = absl::FromCivil(cs, absl::UTCTimeZone()) - absl::Seconds(off) + absl::Nanoseconds(nanos);
  *offset = off;
  return true;
}

// Writes what the record contributes to the output, as upstream's logWriter.
class Writer {
 public:
  Writer(const ReadOptions& options, const LogSink& sink)
      : options_(options),
        sink_(sink),
        remain_(options.bytes < 0 ? std::numeric_limits<int64_t>::max() : options.bytes) {}

  enum class Result { kOk, kLimitReached, kSinkClosed };

  Result Write(const LogMessage& msg, bool add_prefix) {
    if (msg.timestamp < options_.since) return Result::kOk;
    std::string_view line = msg.content;
    std::string prefixed;
    if (options_.timestamps && add_prefix) {
      prefixed = FormatLogTimestamp(msg.timestamp, msg.utc_offset_seconds);
      prefixed.push_back(' ');
      prefixed.append(line.data(), line.size());
      line = prefixed;
    }
    if (static_cast<int64_t>(line.size()) > remain_) line = line.substr(0, remain_);
    if (!line.empty() && !sink_(line)) return Result::kSinkClosed;
    remain_ -= static_cast<int64_t>(line.size());
    if (remain_ <= 0) return Result::kLimitReached;
    return Result::kOk;
  }

 private:
  const ReadOptions& options_;
  const LogSink& sink_;
  int64_t remain_;
};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

absl::StatusOr<bool> IsContainerRunning(cri::RuntimeService* runtime, const std::string& id) {
  auto resp = runtime->ContainerStatus(id, false);
  if (!resp.ok()) {
    // A runtime that is briefly unavailable keeps its containers running.
    if (resp.status().code() == absl::StatusCode::kUnavailable) return true;
    return resp.status();
  }
  if (!resp->has_status()) return absl::UnknownError("container status is nil");
  if (resp->status().state() != runtime::v1::CONTAINER_RUNNING) {
    KLOG_V(5, "Container is not running", "containerId", id, "state",
           runtime::v1::ContainerState_Name(resp->status().state()));
    return false;
  }
  return true;
}

// Inode of what `path` names now, or 0 when it does not exist.
ino_t PathInode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_ino;
}

ino_t FdInode(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return 0;
  return st.st_ino;
}

}  // namespace

absl::Status ParseCriLogLine(std::string_view line, LogMessage* msg) {
  size_t idx = line.find(' ');
  if (idx == std::string_view::npos) return absl::InvalidArgumentError("timestamp is not found");
  if (!ParseRfc3339(line.substr(0, idx), &msg->timestamp, &msg->utc_offset_seconds)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unexpected timestamp format %s: cannot parse %s",
                        Q("2006-01-02T15:04:05.999999999Z07:00"), Q(line.substr(0, idx))));
  }
  line.remove_prefix(idx + 1);
  idx = line.find(' ');
  if (idx == std::string_view::npos) return absl::InvalidArgumentError("stream type is not found");
  std::string_view stream = line.substr(0, idx);
  if (stream == "stdout") {
    msg->stream = LogStream::kStdout;
  } else if (stream == "stderr") {
    msg->stream = LogStream::kStderr;
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("unexpected stream type %s", Q(std::string(stream))));
  }
  line.remove_prefix(idx + 1);
  idx = line.find(' ');
  if (idx == std::string_view::npos) return absl::InvalidArgumentError("log tag is not found");
  // Tags are ':'-separated for forward compatibility; the first says partial or full.
  std::string_view tags = line.substr(0, idx);
  std::string_view first = tags.substr(0, tags.find(':'));
  msg->partial = first == "P";
  if (msg->partial && !line.empty() && line.back() == '\n') line.remove_suffix(1);
  msg->content = line.substr(idx + 1);
  return absl::OkStatus();
}

std::string FormatLogTimestamp(absl::Time t, int utc_offset_seconds) {
  absl::TimeZone tz =
      utc_offset_seconds == 0 ? absl::UTCTimeZone() : absl::FixedTimeZone(utc_offset_seconds);
  // %E4Y: Go writes years below 1000 with four digits ("0859"), %Y would not.
  return absl::FormatTime(
      utc_offset_seconds == 0 ? "%E4Y-%m-%dT%H:%M:%E9SZ" : "%E4Y-%m-%dT%H:%M:%E9S%Ez", t, tz);
}

ReadOptions NewReadOptions(const LogOptions& options, absl::Time now) {
  ReadOptions out;
  out.follow = options.follow;
  out.timestamps = options.timestamps;
  if (options.tail_lines) out.tail = *options.tail_lines;
  if (options.limit_bytes) out.bytes = *options.limit_bytes;
  if (options.since_seconds) out.since = now - absl::Seconds(*options.since_seconds);
  if (options.since_time && *options.since_time > out.since) out.since = *options.since_time;
  return out;
}

absl::StatusOr<int64_t> FindTailLineStartIndex(int fd, int64_t n) {
  if (n < 0) return 0;
  struct stat st;
  if (::fstat(fd, &st) != 0) return absl::InternalError(ErrnoText(errno));
  int64_t right = st.st_size;
  int64_t count = 0;
  std::vector<char> buf(kTailBlock);
  // Walk back block by block; the start of the last n lines is just after the (n+1)th newline
  // from the end.
  while (right > 0) {
    int64_t left = right > kTailBlock ? right - kTailBlock : 0;
    size_t len = static_cast<size_t>(right - left);
    ssize_t got = ::pread(fd, buf.data(), len, left);
    if (got < 0) return absl::InternalError(ErrnoText(errno));
    if (static_cast<size_t>(got) != len) return absl::InternalError("short read");
    for (int64_t i = static_cast<int64_t>(len) - 1; i >= 0; --i) {
      if (buf[i] != '\n') continue;
      if (++count > n) return left + i + 1;
    }
    right = left;
  }
  return 0;
}

absl::Status ReadLogs(const std::string& path, const std::string& container_id,
                      const ReadOptions& options, const FollowOptions& follow,
                      const LogSink& sink) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    return absl::NotFoundError(absl::StrFormat("failed to try resolving symlinks in path %s: %s",
                                               Q(path), ErrnoText(errno)));
  }
  const std::string real_path = resolved;
  Fd file(::open(real_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) {
    return absl::NotFoundError(
        absl::StrFormat("failed to open log file %s: %s", Q(real_path), ErrnoText(errno)));
  }
  auto start = FindTailLineStartIndex(file.get(), options.tail);
  if (!start.ok()) {
    return absl::InternalError(absl::StrFormat("failed to tail %d lines of log file %s: %s",
                                               options.tail, Q(real_path),
                                               start.status().message()));
  }
  if (::lseek(file.get(), *start, SEEK_SET) < 0) {
    return absl::InternalError(
        absl::StrFormat("failed to seek in log file %s: %s", Q(real_path), ErrnoText(errno)));
  }
  if (options.follow && follow.runtime == nullptr) {
    return absl::InvalidArgumentError("following a log needs the runtime");
  }

  const bool limited = options.tail >= 0 && !options.follow;
  int64_t limited_num = options.tail;
  Writer writer(options, sink);
  std::string buf;  // unparsed bytes read from the file
  size_t consumed = 0;
  size_t scanned = 0;     // buf[consumed, scanned) holds no newline
  bool skipping = false;  // dropping the rest of a line over kMaxLogLineBytes
  bool at_eof = false;
  bool is_new_line = true;
  bool found = true;  // the container still runs (following only)
  bool rotation_drained = false;
  Fd watcher;
  const std::string dir = real_path.substr(0, real_path.rfind('/') + 1);

  // Handles one line; returns false when reading must end.
  bool done = false;
  auto handle = [&](std::string_view line) {
    LogMessage msg;
    absl::Status st = ParseCriLogLine(line, &msg);
    if (!st.ok()) {
      KLOG_ERROR(st, "Failed when parsing line in log file", "path", real_path, "line",
                 Excerpt(line));
      return;
    }
    switch (writer.Write(msg, is_new_line)) {
      case Writer::Result::kOk:
        break;
      case Writer::Result::kLimitReached:
        KLOG_V(2, "Finished parsing log file, hit bytes limit", "path", real_path, "limit",
               options.bytes);
        done = true;
        return;
      case Writer::Result::kSinkClosed:
        done = true;
        return;
    }
    if (limited) --limited_num;
    is_new_line = msg.content.empty() || msg.content.back() == '\n';
  };

  while (true) {
    if (done || (limited && limited_num == 0)) {
      KLOG_V(2, "Finished parsing log file", "path", real_path);
      return absl::OkStatus();
    }
    // A complete line already buffered?
    size_t nl = buf.find('\n', std::max(consumed, scanned));
    if (nl != std::string::npos) {
      if (skipping) {
        skipping = false;
        is_new_line = true;
      } else {
        handle(std::string_view(buf).substr(consumed, nl + 1 - consumed));
      }
      consumed = nl + 1;
      scanned = consumed;
      continue;
    }
    if (consumed > 0) {
      buf.erase(0, consumed);
      consumed = 0;
    }
    scanned = buf.size();
    // A line that does not end within the limit is not a CRI record (runtimes split long output
    // into partial records of 16 KiB by default): it is dropped up to its newline rather than
    // buffered without bound.
    if (buf.size() >= kMaxLogLineBytes) {
      if (!skipping) {
        KLOG_ERROR(absl::OutOfRangeError(
                       absl::StrCat("log line longer than ", kMaxLogLineBytes, " bytes")),
                   "Skipping line in log file", "path", real_path, "line", Excerpt(buf));
      }
      skipping = true;
      buf.clear();
      scanned = 0;
    }
    if (!at_eof) {
      size_t old = buf.size();
      buf.resize(old + kReadChunk);
      ssize_t got = ::read(file.get(), buf.data() + old, kReadChunk);
      if (got < 0) {
        int err = errno;
        buf.resize(old);
        if (err == EINTR) continue;
        return absl::InternalError(
            absl::StrFormat("failed to read log file %s: %s", Q(real_path), ErrnoText(err)));
      }
      buf.resize(old + static_cast<size_t>(got));
      if (got == 0) at_eof = true;
      continue;
    }
    // End of the file, possibly with an unterminated line in `buf`.
    at_eof = false;
    if (!options.follow) {
      if (!buf.empty() && !skipping) {
        KLOG_INFO("Incomplete line in log file", "path", real_path, "line", Excerpt(buf));
        handle(buf);
      }
      buf.clear();
      KLOG_V(2, "Finished parsing log file", "path", real_path);
      return absl::OkStatus();
    }
    if (!found) return absl::OkStatus();  // the container stopped and the file is drained
    // Rotated: the name now points at a new file. Read the old one once more to its end, then
    // continue with the new one from its start.
    ino_t now_ino = PathInode(real_path);
    if (now_ino != 0 && now_ino != FdInode(file.get())) {
      if (!rotation_drained) {
        rotation_drained = true;
        continue;
      }
      int nfd = ::open(real_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (nfd >= 0) {
        if (!buf.empty() && !skipping) handle(buf);
        buf.clear();
        scanned = 0;
        skipping = false;
        file.Reset(nfd);
        rotation_drained = false;
        continue;
      }
      if (errno != ENOENT) {
        return absl::InternalError(
            absl::StrFormat("failed to open log file %s: %s", Q(real_path), ErrnoText(errno)));
      }
    }
    if (watcher.get() < 0) {
      watcher.Reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
      if (watcher.get() < 0) {
        return absl::InternalError(
            absl::StrCat("failed to create inotify watcher: ", ErrnoText(errno)));
      }
      if (::inotify_add_watch(
              watcher.get(), dir.c_str(),
              IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO) < 0) {
        return absl::InternalError(
            absl::StrFormat("failed to watch directory %s: %s", Q(dir), ErrnoText(errno)));
      }
      // Data may have arrived before the watch existed: look again first.
      continue;
    }
    // Wait for the next change (upstream waitLogs): no need to wait when the container is gone.
    auto running = IsContainerRunning(follow.runtime, container_id);
    if (!running.ok()) return running.status();
    if (!*running) {
      found = false;
      continue;
    }
    struct pollfd fds[2] = {{watcher.get(), POLLIN, 0}, {follow.stop_fd, POLLIN, 0}};
    int nfds = follow.stop_fd >= 0 ? 2 : 1;
    int r =
        ::poll(fds, nfds, static_cast<int>(absl::ToInt64Milliseconds(follow.force_check_period)));
    if (r < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("failed to wait for log changes: ", ErrnoText(errno)));
    }
    if (nfds == 2 && (fds[1].revents & POLLIN)) return absl::OkStatus();
    if (fds[0].revents & POLLIN) {
      char events[4096];
      while (::read(watcher.get(), events, sizeof(events)) > 0) {
      }
    }
  }
}

}  // namespace kubelet::logs
