#include "cri/in_process.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using StringMap = google::protobuf::Map<std::string, std::string>;

}  // namespace

bool LabelsMatch(const StringMap& labels, const StringMap& selector) {
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

bool SandboxMatches(const std::string& id, const v1::PodSandboxStatus& st,
                    const v1::PodSandboxFilter* filter) {
  if (filter == nullptr) return true;
  if (!filter->id().empty() && filter->id() != id) return false;
  if (filter->has_state() && filter->state().state() != st.state()) return false;
  return LabelsMatch(st.labels(), filter->label_selector());
}

v1::PodSandbox SandboxListItem(const std::string& id, const v1::PodSandboxStatus& st) {
  v1::PodSandbox item;
  item.set_id(id);
  *item.mutable_metadata() = st.metadata();
  item.set_state(st.state());
  item.set_created_at(st.created_at());
  *item.mutable_labels() = st.labels();
  *item.mutable_annotations() = st.annotations();
  item.set_runtime_handler(st.runtime_handler());
  return item;
}

bool ContainerMatches(const std::string& id, const std::string& pod_sandbox_id,
                      const v1::ContainerStatus& st, const v1::ContainerFilter* filter) {
  if (filter == nullptr) return true;
  if (!filter->id().empty() && filter->id() != id) return false;
  if (filter->has_state() && filter->state().state() != st.state()) return false;
  if (!filter->pod_sandbox_id().empty() && filter->pod_sandbox_id() != pod_sandbox_id) {
    return false;
  }
  return LabelsMatch(st.labels(), filter->label_selector());
}

v1::Container ContainerListItem(const std::string& id, const std::string& pod_sandbox_id,
                                const v1::ContainerStatus& st) {
  v1::Container item;
  item.set_id(id);
  item.set_pod_sandbox_id(pod_sandbox_id);
  *item.mutable_metadata() = st.metadata();
  *item.mutable_image() = st.image();
  item.set_image_ref(st.image_ref());
  item.set_state(st.state());
  item.set_created_at(st.created_at());
  *item.mutable_labels() = st.labels();
  *item.mutable_annotations() = st.annotations();
  return item;
}

std::string NormalizeImageRef(std::string_view ref) {
  std::string out(ref);
  if (absl::StartsWith(out, "sha256:")) return out;
  const size_t slash = out.find('/');
  if (slash == std::string::npos) {
    out = absl::StrCat("docker.io/library/", out);
  } else {
    const std::string_view host = std::string_view(out).substr(0, slash);
    const bool is_host = host.find('.') != std::string_view::npos ||
                         host.find(':') != std::string_view::npos || host == "localhost";
    if (!is_host) out = absl::StrCat("docker.io/", out);
  }
  if (out.find('@') == std::string::npos) {
    const std::string_view last = std::string_view(out).substr(out.rfind('/') + 1);
    if (last.find(':') == std::string_view::npos) out += ":latest";
  }
  return out;
}

}  // namespace kubelet::cri
