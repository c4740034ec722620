// Reading CRI container log files (upstream pkg/kubelet/kuberuntime/logs): the line parser, the
// tail search and ReadLogs, which streams a log file into a LogSink honouring the
// /containerLogs options.
//
// CRI log format: one record a line, `<RFC3339Nano timestamp> <stdout|stderr> <P|F> <content>`.
// A partial record (P) carries a piece of a long line without its newline; the pieces and the
// final (F) record together make the line. Output follows upstream ReadLogs exactly: each
// record's content is written as it is (partial pieces therefore join up), with `timestamps` a
// record that starts a new line is prefixed with its timestamp in RFC3339Nano with nine fixed
// digits; `tail` counts records from the end of the current file only; `since` skips older
// records; `bytes` cuts the output after that many bytes.
//
// Thread-safety: the free functions are thread-safe (no shared state). ReadLogs blocks the
// calling thread; many may run at once.
// Ownership: ReadLogs borrows the runtime (may be null when not following) for the call.
#ifndef KUBELET_KUBELET_LOGS_LOG_READER_H_
#define KUBELET_KUBELET_LOGS_LOG_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cri/runtime_service.h"
#include "kubelet/logs/container_log_manager.h"

namespace kubelet::logs {

enum class LogStream { kStdout, kStderr };

// One parsed record. `content` points into the parsed line.
struct LogMessage {
  absl::Time timestamp;
  int utc_offset_seconds = 0;  // the offset the record was written with
  LogStream stream = LogStream::kStdout;
  bool partial = false;
  std::string_view content;  // with its newline for a full record, without for a partial one
};

// Parses one line (with or without its trailing newline) of the CRI format. Errors read as
// upstream's parseCRILog ("timestamp is not found", "unexpected stream type ...").
absl::Status ParseCriLogLine(std::string_view line, LogMessage* msg);

// Upstream's RFC3339NanoFixed ("2006-01-02T15:04:05.000000000Z07:00") in the given offset.
std::string FormatLogTimestamp(absl::Time t, int utc_offset_seconds);

// Options after upstream NewLogOptions: -1 means "no limit" for tail and bytes.
struct ReadOptions {
  int64_t tail = -1;
  int64_t bytes = -1;
  bool follow = false;
  bool timestamps = false;
  absl::Time since = absl::InfinitePast();
};
// since = the later of now - sinceSeconds and sinceTime.
ReadOptions NewReadOptions(const LogOptions& options, absl::Time now);

// The offset in the file `fd` where the last `n` complete lines start (0 for n < 0 or when the
// file has fewer lines). An unterminated last line is not counted, as upstream.
absl::StatusOr<int64_t> FindTailLineStartIndex(int fd, int64_t n);

// How a following ReadLogs waits and when it gives up.
struct FollowOptions {
  // Asked whether the container still runs each time the reader reaches the end of the file
  // (CRI ContainerStatus); required when following.
  cri::RuntimeService* runtime = nullptr;
  // An fd that becomes readable when reading must stop (the manager's Stop()); -1 for none.
  int stop_fd = -1;
  // Longest wait for file events before looking again (upstream logForceCheckPeriod).
  absl::Duration force_check_period = absl::Seconds(1);
};

// The longest line ReadLogs buffers. CRI runtimes split long output into partial records (16 KiB
// by default), so a longer line is corrupt or hostile.
inline constexpr size_t kMaxLogLineBytes = 1 << 20;

// Streams the log file at `path` of container `container_id` into `sink`. Returns OK when the
// file is read (not following), the limits are reached, the sink returned false, the followed
// container stopped and its file is drained, or stop_fd fired. With `follow`, a file renamed
// away and recreated (rotation) is drained and then the new file at `path` is read from its
// start. A line that is not a CRI record (no timestamp, bad stream, no tag, binary noise) is
// logged and skipped, as upstream does; so is a line longer than kMaxLogLineBytes, which is
// never buffered whole.
absl::Status ReadLogs(const std::string& path, const std::string& container_id,
                      const ReadOptions& options, const FollowOptions& follow, const LogSink& sink);

}  // namespace kubelet::logs

#endif  // KUBELET_KUBELET_LOGS_LOG_READER_H_
