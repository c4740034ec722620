// Go's text for values the kubelet's options echo in their messages: strconv.ParseBool and the
// %v of a map[string]string. Pure functions; thread-safe.
#ifndef KUBELET_CONFIG_GO_TEXT_H_
#define KUBELET_CONFIG_GO_TEXT_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubelet::config {

// strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False; anything else is
// `strconv.ParseBool: parsing "<s>": invalid syntax`.
absl::StatusOr<bool> ParseGoBool(std::string_view s);

// "map[k1:v1 k2:v2]", keys sorted (fmt's %v of a map[string]string).
std::string GoMapString(const std::map<std::string, std::string>& m);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_GO_TEXT_H_
