#include "apiclient/request_info.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/percent.h"
#include "common/strings.h"

namespace kubelet::apiclient {
namespace {

// A query component, percent-decoded ('+' is a space); one with a malformed escape is kept as
// written.
std::string UnescapeQuery(std::string_view s) {
  std::string out;
  if (!PercentDecode(s, /*plus_is_space=*/true, &out)) return std::string(s);
  return out;
}

}  // namespace

std::optional<RequestInfo> ParseRequestPath(std::string_view path_and_query) {
  RequestInfo info;
  std::string_view path = path_and_query;
  if (size_t q = path.find('?'); q != std::string_view::npos) {
    for (absl::string_view akv : absl::StrSplit(AV(path.substr(q + 1)), '&', absl::SkipEmpty())) {
      std::string_view kv = SV(akv);
      size_t eq = kv.find('=');
      info.query[UnescapeQuery(kv.substr(0, eq))] =
          eq == std::string_view::npos ? "" : UnescapeQuery(kv.substr(eq + 1));
    }
    path = path.substr(0, q);
  }
  std::vector<std::string_view> seg;
  for (absl::string_view s : absl::StrSplit(AV(path), '/', absl::SkipEmpty())) seg.push_back(SV(s));
  size_t prefix = 0;
  if (!seg.empty() && seg[0] == "api") prefix = 2;
  if (!seg.empty() && seg[0] == "apis") prefix = 3;
  if (prefix == 0 || seg.size() <= prefix) return std::nullopt;
  for (size_t i = 0; i < prefix; ++i) absl::StrAppend(&info.base, "/", AV(seg[i]));
  size_t r = prefix;
  // namespaces/<ns>/<resource>...; namespaces/<ns>/status and /finalize are the namespace's own.
  if (seg[r] == "namespaces" && seg.size() > r + 1) {
    info.namespace_ = seg[r + 1];
    if (seg.size() > r + 2 && seg[r + 2] != "status" && seg[r + 2] != "finalize") r += 2;
  }
  info.resource = seg[r];
  if (seg.size() > r + 1) info.name = seg[r + 1];
  if (seg.size() > r + 2) info.subresource = seg[r + 2];
  if (seg.size() > r + 3) return std::nullopt;
  if (info.resource == "namespaces") info.namespace_.clear();
  return info;
}

std::string RequestVerb(std::string_view method, const RequestInfo& info) {
  if (method == "GET") {
    auto w = info.query.find("watch");
    if (w != info.query.end() && (w->second == "true" || w->second == "1")) return "watch";
    return info.name.empty() ? "list" : "get";
  }
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return info.name.empty() ? "deletecollection" : "delete";
  return "";
}

}  // namespace kubelet::apiclient
