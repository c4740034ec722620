#include "config/go_text.h"

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::config {

absl::StatusOr<bool> ParseGoBool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return false;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("strconv.ParseBool: parsing ", log::Quote(s), ": invalid syntax"));
}

std::string GoMapString(const std::map<std::string, std::string>& m) {
  std::string out = "map[";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += " ";
    first = false;
    absl::StrAppend(&out, k, ":", v);
  }
  return out + "]";
}

}  // namespace kubelet::config
