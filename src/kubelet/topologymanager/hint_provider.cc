#include "kubelet/topologymanager/hint_provider.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_join.h"
#include "common/strings.h"

namespace kubelet::topologymanager {
namespace {

constexpr char kAdmissionErrorPayload[] = "kubelet.topologymanager/AdmissionError";

}  // namespace

std::string NUMAMask::String() const { return absl::StrJoin(Nodes(), ","); }

absl::Status AdmissionError(std::string_view reason, std::string_view message) {
  absl::Status status(absl::StatusCode::kFailedPrecondition, AV(message));
  status.SetPayload(kAdmissionErrorPayload, absl::Cord(AV(reason)));
  return status;
}

std::string AdmissionErrorReason(const absl::Status& status) {
  auto reason = status.GetPayload(kAdmissionErrorPayload);
  return reason.has_value() ? std::string(*reason) : std::string();
}

}  // namespace kubelet::topologymanager
