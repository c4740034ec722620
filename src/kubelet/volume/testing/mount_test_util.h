// Helpers for the volume folder's tests that mount.
#ifndef KUBELET_KUBELET_VOLUME_TESTING_MOUNT_TEST_UTIL_H_
#define KUBELET_KUBELET_VOLUME_TESTING_MOUNT_TEST_UTIL_H_

#include <errno.h>
#include <sys/mount.h>

#include <filesystem>
#include <string>

namespace kubelet::volume::testing {

// False when this process may not mount (not root, or a restricted container): tests that
// bind-mount skip then. Any other failure is left to the test to report. Probes with a bind
// mount between two scratch directories under `dir`.
inline bool MountAllowed(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string a = dir + "/probe-a";
  const std::string b = dir + "/probe-b";
  fs::create_directories(a);
  fs::create_directories(b);
  const int rc = ::mount(a.c_str(), b.c_str(), nullptr, MS_BIND, nullptr);
  const int err = errno;
  if (rc == 0) ::umount2(b.c_str(), 0);
  fs::remove(a);
  fs::remove(b);
  return rc == 0 || (err != EPERM && err != EACCES);
}

}  // namespace kubelet::volume::testing

#endif  // KUBELET_KUBELET_VOLUME_TESTING_MOUNT_TEST_UTIL_H_
