// Percent-decoding of URL components (RFC 3986 %XX escapes), for the HTTP server's request
// targets and the API client's reading of request paths.
#ifndef KUBELET_COMMON_PERCENT_H_
#define KUBELET_COMMON_PERCENT_H_

#include <string>
#include <string_view>

namespace kubelet {

// Decodes `in` into *out; `plus_is_space` for query components ('+' is a space there). False on
// a malformed escape ('%' not followed by two hex digits); *out is then unspecified.
bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out);

}  // namespace kubelet

#endif  // KUBELET_COMMON_PERCENT_H_
