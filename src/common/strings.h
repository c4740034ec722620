// Bridges between std::string_view and absl::string_view.
//
// Debian's abseil (20220623) is built with its own absl::string_view type rather than an alias of
// std::string_view, so the two do not convert implicitly. Our public APIs take std::string_view;
// code that calls absl string utilities converts at the call with these helpers.
#ifndef KUBELET_COMMON_STRINGS_H_
#define KUBELET_COMMON_STRINGS_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace kubelet {

inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view SV(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace kubelet

#endif  // KUBELET_COMMON_STRINGS_H_
