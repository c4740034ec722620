// Go encoding/json's output for scalars, and a nesting check for JSON text, shared by the
// declarative codec and the Pod codec's YAML path so every object the kubelet writes escapes and
// formats alike. Thread-safe (no state).
#ifndef KUBELET_API_GO_JSON_H_
#define KUBELET_API_GO_JSON_H_

#include <string>
#include <string_view>

#include "common/json_nesting.h"

namespace kubelet::api {

// Appends `s` as a JSON string literal exactly as Go's encoding/json writes it: HTML-safe
// escaping of < > & (\u003c...), control characters as \u00XX except \n \r \t, U+2028 and
// U+2029 escaped, each invalid UTF-8 byte replaced by \ufffd.
void AppendGoString(std::string* out, std::string_view s);

// strconv.FormatFloat(f, 'f' or 'e', -1, 64) as encoding/json chooses between them (exponent
// form below 1e-6 and from 1e21, two-digit exponents); NaN and infinities, which Go refuses to
// encode, are written as null so the document stays valid.
void AppendGoFloat(std::string* out, double f);

// JsonNestingExceeds (common/json_nesting.h) refuses a document too deep before a recursive
// parser sees it.
using ::kubelet::JsonNestingExceeds;

}  // namespace kubelet::api

#endif  // KUBELET_API_GO_JSON_H_
