// The unit of change that flows from the pod sources, through PodConfig, to the sync loop
// (upstream pkg/kubelet/types/pod_update.go: PodUpdate, PodOperation and the source names).
//
// Value types; thread-compatible. The pods are shared and immutable (api::PodPtr): the object a
// source built is the one PodConfig stores and hands on, unless the merge had to change it (then
// PodConfig builds the new version once), and the sync loop keeps that same object in the pod
// manager and the pod workers.
#ifndef KUBELET_KUBELET_PODSOURCE_POD_UPDATE_H_
#define KUBELET_KUBELET_PODSOURCE_POD_UPDATE_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/pod.h"

namespace kubelet::podsource {

// What a PodUpdate means to its receiver.
enum class PodOperation {
  kSet,        // the complete pod configuration of `source` (or of all sources for "*")
  kAdd,        // pods new to this source
  kUpdate,     // pods whose spec/labels/annotations/deletion fields changed in this source
  kRemove,     // pods removed from this source (to be killed and forgotten)
  kDelete,     // pods gracefully deleted in this source (deletionTimestamp set)
  kReconcile,  // pods whose only change is their status; the kubelet reconciles its status
};

// Upper-case name as upstream prints it ("SET", "ADD", "UPDATE", "REMOVE", "DELETE",
// "RECONCILE").
constexpr std::string_view PodOperationName(PodOperation op) {
  switch (op) {
    case PodOperation::kSet:
      return "SET";
    case PodOperation::kAdd:
      return "ADD";
    case PodOperation::kUpdate:
      return "UPDATE";
    case PodOperation::kRemove:
      return "REMOVE";
    case PodOperation::kDelete:
      return "DELETE";
    case PodOperation::kReconcile:
      return "RECONCILE";
  }
  return "UNKNOWN";
}

// Source names (kubetypes.FileSource, HTTPSource, ApiserverSource, AllSource).
inline constexpr char kFileSource[] = "file";
inline constexpr char kHTTPSource[] = "http";
inline constexpr char kApiserverSource[] = "api";
inline constexpr char kAllSource[] = "*";

struct PodUpdate {
  PodOperation op = PodOperation::kSet;
  std::string source;
  std::vector<api::PodPtr> pods;
};

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_POD_UPDATE_H_
