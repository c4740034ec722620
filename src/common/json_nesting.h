// A bound on JSON nesting checked before parsing (Go's encoding/json stops at 10000 levels):
// nlohmann::json parses recursively, and so do its copies and dumps, so a deep enough document
// would overflow a thread's stack. Pure function; thread-safe.
#ifndef KUBELET_COMMON_JSON_NESTING_H_
#define KUBELET_COMMON_JSON_NESTING_H_

#include <string_view>

namespace kubelet {

// Whether brackets outside strings nest deeper than `limit` (exact for valid JSON, which is all
// that matters: anything else fails to parse).
bool JsonNestingExceeds(std::string_view text, int limit);

}  // namespace kubelet

#endif  // KUBELET_COMMON_JSON_NESTING_H_
