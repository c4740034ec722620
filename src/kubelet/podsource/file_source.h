// The static pod file source (upstream pkg/kubelet/config/file.go + file_linux.go): reads pod
// manifests from KubeletConfiguration.staticPodPath and delivers full snapshots to
// PodConfig::SetSource("file", ...).
//
// Path semantics (as upstream):
//   * A directory: every entry whose name does not start with '.' is considered, in sorted
//     order, without recursion. Regular files (symlinks followed) hold one Pod each, YAML or JSON
//     (a PodList is rejected, as upstream's tryDecodeSinglePod does). A file that fails to read,
//     decode, default or validate is logged once per distinct content:
//       "Could not process manifest file" err="invalid pod: [...]" path="/etc/.../bad.yaml"
//     and left out; as upstream, a file that was valid and breaks keeps its last good pod until
//     the next periodic re-read (a truncate-then-write must not restart the pod). The other pods
//     are unaffected. Subdirectories and special files (FIFOs, sockets, devices) are skipped
//     with a log and never opened for reading; a symlink loop is a stat error naming the file.
//     A manifest over 10 MiB (api::kMaxConfigLength, the URL source's body bound) is rejected
//     with "the read limit is reached" without being read; binary garbage and documents nested
//     deeper than the codec's limit are decode errors.
//   * A regular file: the one pod it holds. If it fails to decode, the error is logged
//     ("Unable to read config path") and the previous snapshot stays in force.
//   * Missing: an empty snapshot is delivered (so the source counts as seen) and the path is
//     watched for. It may appear later, be removed, or be replaced (rename, symlink swap).
// Pods get the static pod defaults (api::DecodeStaticPodFile: node-name suffix, UID hash of
// content + node + path, config.hash/source/seen annotations, NoExecute toleration, Pending).
//
// Change detection: inotify on the path (IN_CREATE, IN_MODIFY, IN_CLOSE_WRITE, IN_ATTRIB,
// IN_MOVED_TO, IN_MOVED_FROM, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF) and on its parent
// directory (to see the path itself come and go). Events about hidden names (editor swap files)
// are ignored. A burst of events is coalesced: the rescan runs once no event has arrived for
// `debounce`, or `max_debounce` after the first event of the burst. Independently the path is
// re-read every `check_frequency` (fileCheckFrequency). A rescan reads every manifest again but
// only decodes files whose content changed, and delivers a snapshot only when the pod set differs
// from the last delivery (PodConfig would drop an identical one anyway).
//
// Threading: Start() spawns one thread that does all the work; it catches every exception at
// each step (logged with the path) and keeps running; Stop() (or destruction) wakes it
// through an eventfd and joins it promptly, also when it is blocked on a full PodConfig queue.
// Ownership: PodConfig and Clock are borrowed and must outlive the FileSource.
#ifndef KUBELET_KUBELET_PODSOURCE_FILE_SOURCE_H_
#define KUBELET_KUBELET_PODSOURCE_FILE_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "kubelet/podsource/pod_config.h"

namespace kubelet::podsource {

struct FileSourceOptions {
  std::string path;  // staticPodPath (trailing '/' ignored)
  std::string node_name;
  absl::Duration check_frequency = absl::Seconds(20);  // fileCheckFrequency
  absl::Duration debounce = absl::Milliseconds(2);
  absl::Duration max_debounce = absl::Milliseconds(20);
  // How often to retry watching when the path or its parent directory does not exist.
  absl::Duration watch_retry = absl::Seconds(1);
};

class FileSource {
 public:
  // Registers the "file" source with `config`.
  FileSource(FileSourceOptions options, PodConfig& config, Clock& clock);
  ~FileSource();
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  // Starts the worker thread; the first scan happens at once. Fails if already started or if
  // the stop eventfd cannot be created (inotify failures only degrade to periodic re-reads).
  absl::Status Start();
  // Idempotent and final (no restart); returns once the worker has exited.
  void Stop();

  // Number of completed scans (for tests and diagnostics).
  uint64_t scans() const { return scans_.load(); }

 private:
  // One pod object per manifest, shared by the cache entry, the last delivered snapshot and the
  // snapshot handed to PodConfig (which keeps it to recognize it unchanged next time).
  using PodPtr = api::PodPtr;
  struct CacheEntry {
    std::optional<std::string> content;  // last content read (none after a read error)
    absl::Status status = absl::UnknownError("not read");  // of the last read and decode
    PodPtr last_good;  // last pod this file decoded to (the current content's when status is ok)
  };

  void Run();
  // Runs one step of the worker loop, logging (never propagating) any exception.
  template <class F>
  void Guarded(std::string_view step, F&& f);
  // `authoritative` (start-up and periodic re-reads): a manifest that fails to decode is left
  // out. Event-driven rescans keep the last good pod of such a file instead.
  void Scan(bool authoritative);
  void HandleInotify(bool* relevant);
  void EnsureWatches();
  void DropWatch(int* wd);
  // Reads and decodes one manifest, reusing the cached result when the content is unchanged.
  absl::StatusOr<PodPtr> ExtractFromFile(const std::string& file);
  std::vector<PodPtr> ExtractFromDir(bool authoritative);
  void Deliver(std::vector<PodPtr> pods);
  // Logs `message` for `key` unless the same message was the last one logged for it.
  bool ShouldLog(const std::string& key, const std::string& message);

  const FileSourceOptions options_;
  std::string path_;    // normalized
  std::string parent_;  // directory holding path_
  std::string base_;    // last component of path_
  PodConfig& config_;
  Clock& clock_;

  std::thread thread_;
  std::atomic<bool> stopping_{false};
  int stop_fd_ = -1;
  bool started_ = false;

  // Worker-thread state.
  int inotify_fd_ = -1;
  int parent_wd_ = -1;
  int path_wd_ = -1;
  bool path_is_dir_ = false;
  uint64_t path_dev_ = 0;
  uint64_t path_ino_ = 0;
  std::map<std::string, CacheEntry> cache_;         // manifest path -> last read
  std::map<std::string, std::string> last_logged_;  // key -> last problem logged
  std::optional<std::vector<PodPtr>> last_delivered_;
  std::atomic<uint64_t> scans_{0};
};

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_FILE_SOURCE_H_
