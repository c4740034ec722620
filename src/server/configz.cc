#include "server/configz.h"

#include "absl/strings/str_cat.h"

namespace kubelet::server {

absl::Status Configz::Register(const std::string& name, std::string json) {
  absl::MutexLock lock(&mu_);
  if (sections_.count(name)) {
    return absl::AlreadyExistsError(absl::StrCat("register config \"", name, "\" twice"));
  }
  sections_[name] = std::move(json);
  return absl::OkStatus();
}

std::string Configz::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out = "{";
  bool first = true;
  for (const auto& [name, json] : sections_) {
    if (!first) out += ",";
    first = false;
    absl::StrAppend(&out, "\"", name, "\":", json);
  }
  out += "}";
  return out;
}

}  // namespace kubelet::server
