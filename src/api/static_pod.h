// Static pod handling and small pod helpers, after upstream v1.28 pkg/kubelet/config (common.go
// applyDefaults / tryDecodeSinglePod / tryDecodePodList, file.go, http.go, config.go's
// source/first-seen annotations), pkg/kubelet/types (pod source, criticality), pkg/kubelet/
// container (GetPodFullName, HashContainer) and pkg/apis/core/v1/helper/qos.
//
// ApplyStaticPodDefaults does what applyDefaults plus PodConfig's annotation stamping do:
//   * UID (only when empty): hex MD5 over a canonical serialization of the (already defaulted)
//     pod followed by "host:<nodeName>" and "file:<path>" (file) or "url:<url>" (http). Upstream
//     hashes Go's spew dump of the internal object, which cannot be reproduced byte for byte;
//     ours hashes EncodePodJson, so the same manifest on the same node and path always yields the
//     same UID, and any change to it (or to the node name / path) yields a different one.
//   * metadata.name += "-" + lowercase(nodeName); namespace "" -> "default";
//     spec.nodeName = nodeName; annotations kubernetes.io/config.hash = UID,
//     kubernetes.io/config.source = source, kubernetes.io/config.seen = now (RFC3339Nano, local
//     time zone, as kubetypes.NewTimestamp().GetString());
//   * file sources: toleration {operator: Exists, effect: NoExecute} added (or replacing a
//     toleration matching on key/operator/value/effect), so node problems do not evict it;
//   * status.phase = Pending.
// Static pods get no priority from these defaults (upstream neither); they are nevertheless
// critical (IsCriticalPod).
// Pure functions; thread-safe.
#ifndef KUBELET_API_STATIC_POD_H_
#define KUBELET_API_STATIC_POD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"

namespace kubelet::api {

inline constexpr char kConfigSourceAnnotationKey[] = "kubernetes.io/config.source";
inline constexpr char kConfigMirrorAnnotationKey[] = "kubernetes.io/config.mirror";
inline constexpr char kConfigFirstSeenAnnotationKey[] = "kubernetes.io/config.seen";
inline constexpr char kConfigHashAnnotationKey[] = "kubernetes.io/config.hash";

inline constexpr char kFileSource[] = "file";
inline constexpr char kHTTPSource[] = "http";
inline constexpr char kApiserverSource[] = "api";

inline constexpr char kNamespaceDefault[] = "default";
// scheduling.SystemCriticalPriority: priorities at or above it are critical.
inline constexpr int32_t kSystemCriticalPriority = 2 * 1000000000;
// Largest manifest the file/http sources read (upstream maxConfigLength, 10 MiB).
inline constexpr size_t kMaxConfigLength = 10 << 20;

// `source` is kFileSource or kHTTPSource; `source_path` the manifest path or URL.
absl::Status ApplyStaticPodDefaults(Pod* pod, std::string_view node_name, std::string_view source,
                                    std::string_view source_path, absl::Time now = absl::Now());

// tryDecodeSinglePod for a file manifest as file.go uses it: decode, SetDefaultsPod,
// ApplyStaticPodDefaults(file), ValidatePodCreate, forbidden API references. Errors read like
// upstream's: "<path>: couldn't parse as pod(<err>), please check config file",
// "invalid pod: [<field errors>]", "pod \"<name>\" has forbidden references to API objects: ...".
absl::StatusOr<Pod> DecodeStaticPodFile(std::string_view data, std::string_view node_name,
                                        std::string_view path, absl::Time now = absl::Now());

// http.go: a single Pod, else a PodList, each pod defaulted/validated as above with source http.
absl::StatusOr<std::vector<Pod>> DecodeStaticPodsHTTP(std::string_view data,
                                                      std::string_view node_name,
                                                      std::string_view url,
                                                      absl::Time now = absl::Now());

// Human-readable references to API objects (service accounts, secrets, config maps, API-backed
// volumes) that static pods may not use, sorted; empty when none (getAPIReferences).
std::vector<std::string> GetAPIReferences(const Pod& pod);

// kubecontainer.GetPodFullName: "<name>_<namespace>".
std::string PodFullName(const Pod& pod);
// klog.KObj form used in log lines: "<namespace>/<name>" ("<name>" without a namespace).
std::string PodKey(const Pod& pod);

// Pod source annotation value, or NotFound ("cannot get source of pod ...").
absl::StatusOr<std::string> GetPodSource(const Pod& pod);
bool IsStaticPod(const Pod& pod);  // source annotation present and not "api"
bool IsMirrorPod(const Pod& pod);  // kubernetes.io/config.mirror present
bool IsCriticalPodBasedOnPriority(int32_t priority);
bool IsCriticalPod(const Pod& pod);  // static, mirror, or priority >= system critical

enum class QOSClass { kGuaranteed, kBurstable, kBestEffort };
std::string_view QOSClassName(QOSClass c);  // "Guaranteed", "Burstable", "BestEffort"
// qos.ComputePodQOS: from cpu/memory requests and limits of init and regular containers.
QOSClass ComputePodQOS(const Pod& pod);
// qos.GetPodQOS: status.qosClass when set, else ComputePodQOS.
QOSClass GetPodQOS(const Pod& pod);

// Container spec hash (the io.kubernetes.container.hash label), computed as the v1.28 kubelet
// does (FNV-32a over spew's rendering of the container's JSON bytes), so containers started by
// an upstream kubelet are recognised as unchanged on take-over. Equal to upstream's only as far
// as EncodeContainerJson matches Go's json.Marshal of the container.
uint64_t HashContainer(const Container& container);

// Go time.Time.Format(time.RFC3339Nano) in `tz` ("2006-01-02T15:04:05.999999999Z07:00": trailing
// zeros of the fraction dropped, "Z" for a zero offset).
std::string FormatRFC3339Nano(absl::Time t, absl::TimeZone tz = absl::LocalTimeZone());

}  // namespace kubelet::api

#endif  // KUBELET_API_STATIC_POD_H_
