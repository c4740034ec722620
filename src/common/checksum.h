// The checksum of the kubelet's checkpoint files (upstream pkg/kubelet/checkpointmanager/
// checksum): FNV-1a, 32 bits (Go's hash/fnv New32a), over the go-spew "%#v" text of the
// checkpoint with its checksum field zeroed. Each checkpoint format writes its own spew text;
// this is the hash they share. Pure function; thread-safe.
#ifndef KUBELET_COMMON_CHECKSUM_H_
#define KUBELET_COMMON_CHECKSUM_H_

#include <cstdint>
#include <string_view>

namespace kubelet {

inline uint32_t Fnv1a32(std::string_view data) {
  uint32_t h = 2166136261u;
  for (unsigned char c : data) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

}  // namespace kubelet

#endif  // KUBELET_COMMON_CHECKSUM_H_
