// Fuzzes the CRI log format reader behind /containerLogs and `kubectl logs`. The first byte picks
// the request's options (tail, limitBytes, timestamps, sinceTime); the rest is a container log
// file as a runtime wrote it. Each line goes through ParseCriLogLine; the whole file goes through
// ReadLogs from a scratch file. Properties checked: a parsed record's content is the end of its
// line; its timestamp, written as the timestamps option writes it, parses back to the same
// instant and offset; and without options ReadLogs outputs exactly the content of the records
// that parse, in order. Any crash, sanitizer report, exception, hang or property violation is a
// finding; an error result is not.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/logs/log_reader.h"

namespace {

namespace logs = kubelet::logs;

std::string& ScratchPath() {
  static std::string* path = new std::string;
  return *path;
}

void RemoveScratch() { ::unlink(ScratchPath().c_str()); }

[[noreturn]] void Fail(const char* what, std::string_view line) {
  std::fprintf(stderr, "%s: %.*s\n", what, static_cast<int>(line.size()), line.data());
  std::abort();
}

// The content of the records of `file` that parse, checking each record on the way.
std::string ParseEachLine(std::string_view file) {
  std::string contents;
  while (!file.empty()) {
    size_t nl = file.find('\n');
    std::string_view line = nl == std::string_view::npos ? file : file.substr(0, nl + 1);
    file.remove_prefix(line.size());
    logs::LogMessage msg;
    if (!logs::ParseCriLogLine(line, &msg).ok()) continue;
    if (msg.content.size() > line.size() || msg.content.data() < line.data() ||
        msg.content.data() + msg.content.size() > line.data() + line.size()) {
      Fail("content is not within its line", line);
    }
    const std::string ts = logs::FormatLogTimestamp(msg.timestamp, msg.utc_offset_seconds);
    logs::LogMessage again;
    const std::string reparsed_line = ts + " stdout F x";
    if (!logs::ParseCriLogLine(reparsed_line, &again).ok() || again.timestamp != msg.timestamp ||
        again.utc_offset_seconds != msg.utc_offset_seconds) {
      Fail("timestamp does not round-trip", reparsed_line);
    }
    contents.append(msg.content);
  }
  return contents;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Bad lines are logged; keep the fuzzer's output readable and fast.
  kubelet::log::Configure(
      kubelet::log::Options{0, kubelet::log::Format::kText, [](std::string_view) {}});
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/cri_log_fuzzer-XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) std::abort();
  ::close(fd);
  ScratchPath() = tmpl;
  std::atexit(RemoveScratch);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t opts = data[0];
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string expected = ParseEachLine(file);

  int fd = ::open(ScratchPath().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) std::abort();
  if (::write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) std::abort();
  ::close(fd);

  logs::ReadOptions ro;
  if (opts & 0x01) ro.tail = (opts >> 4) & 0x7;         // 0..7 records
  if (opts & 0x02) ro.bytes = 1 + ((opts >> 4) & 0xf);  // 1..16 bytes
  ro.timestamps = (opts & 0x04) != 0;
  if (opts & 0x08) ro.since = absl::FromUnixSeconds(1475713030);  // 2016-10-06T00:17:10Z
  std::string out;
  absl::Status st = logs::ReadLogs(ScratchPath(), "0123456789ab", ro, logs::FollowOptions{},
                                   [&out](std::string_view chunk) {
                                     out.append(chunk);
                                     return true;
                                   });
  if (!st.ok()) Fail("ReadLogs failed", kubelet::SV(st.message()));
  if ((opts & 0x0f) == 0 && out != expected) Fail("ReadLogs output differs from the records", out);
  if (ro.bytes >= 0 && static_cast<int64_t>(out.size()) > ro.bytes) {
    Fail("ReadLogs wrote past limitBytes", out);
  }
  return 0;
}
