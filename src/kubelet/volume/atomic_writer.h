// AtomicWriter: publishes a set of files ("payload") into a volume directory so that readers
// always see one complete version, as upstream pkg/volume/util/atomic_writer.go does for the
// downwardAPI, configMap, secret and projected volumes.
//
// Layout of the target directory after Write():
//   <dir>/..2026_11_22_06_31_52.abc123/   the current version's files (a fresh dir per version)
//   <dir>/..data -> ..2026_11_22_06_31_52.abc123   swapped atomically (rename of ..data_tmp)
//   <dir>/<top-level name> -> ..data/<top-level name>   user-visible paths, one per top entry
// A Write whose payload equals what ..data holds (contents and modes) changes nothing. Paths of
// the previous version that the new payload lacks are removed (their user-visible symlinks),
// and the previous version's directory is deleted after the swap.
//
// Payload paths must be relative, must not contain ".." elements nor start with "..", and must
// not exceed upstream's limits (4096 bytes in all, 255 per element).
//
// Thread-safety: one writer per target directory; concurrent Write() calls on the same directory
// must be serialized by the caller. Ownership: borrows the clock.
#ifndef KUBELET_KUBELET_VOLUME_ATOMIC_WRITER_H_
#define KUBELET_KUBELET_VOLUME_ATOMIC_WRITER_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "common/clock.h"

namespace kubelet::volume {

struct FileProjection {
  std::string data;
  uint32_t mode = 0644;
  bool operator==(const FileProjection&) const = default;
};

// Relative path -> file.
using Payload = std::map<std::string, FileProjection>;

inline constexpr char kDataDirName[] = "..data";
inline constexpr char kNewDataDirName[] = "..data_tmp";

class AtomicWriter {
 public:
  // `log_context` names the volume in errors (e.g. "pod default/web volume podinfo").
  AtomicWriter(std::string target_dir, std::string log_context, const Clock& clock);

  // Publishes `payload`; creates the target directory when missing.
  absl::Status Write(const Payload& payload);

 private:
  std::string target_dir_;
  std::string log_context_;
  const Clock& clock_;
};

// Checks one payload path (upstream validatePath); the error names the problem.
absl::Status ValidatePayloadPath(const std::string& path);

}  // namespace kubelet::volume

#endif  // KUBELET_KUBELET_VOLUME_ATOMIC_WRITER_H_
