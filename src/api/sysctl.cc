#include "api/sysctl.h"

#include "absl/strings/match.h"

namespace kubelet::api {
namespace {

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Calls `segment` for each part of `name` between '.' / '/' separators; false when one is
// empty or `segment` refuses it.
template <typename Fn>
bool ForEachSegment(std::string_view name, Fn segment) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.' || name[i] == '/') {
      std::string_view seg = name.substr(start, i - start);
      if (seg.empty() || !segment(seg)) return false;
      start = i + 1;
    }
  }
  return true;
}

}  // namespace

std::string NormalizeSysctlName(std::string_view name) {
  std::string out(name);
  const size_t first = out.find_first_of("./");
  if (first == std::string::npos || out[first] == '.') return out;
  for (char& c : out) {
    if (c == '.') {
      c = '/';
    } else if (c == '/') {
      c = '.';
    }
  }
  return out;
}

SysctlNamespace SysctlNamespaceOf(std::string_view name) {
  const std::string n = NormalizeSysctlName(name);
  if (n == "kernel.sem") return SysctlNamespace::kIPC;
  if (absl::StartsWith(n, "kernel.shm") || absl::StartsWith(n, "kernel.msg") ||
      absl::StartsWith(n, "fs.mqueue.")) {
    return SysctlNamespace::kIPC;
  }
  if (absl::StartsWith(n, "net.")) return SysctlNamespace::kNet;
  return SysctlNamespace::kUnknown;
}

std::string_view SysctlNamespaceName(SysctlNamespace ns) {
  switch (ns) {
    case SysctlNamespace::kNet:
      return "net";
    case SysctlNamespace::kIPC:
      return "ipc";
    case SysctlNamespace::kUnknown:
      break;
  }
  return "";
}

bool IsValidSysctlName(std::string_view name) {
  return ForEachSegment(name, [](std::string_view seg) {
    if (!LowerAlnum(seg.front()) || !LowerAlnum(seg.back())) return false;
    for (char c : seg) {
      if (!LowerAlnum(c) && c != '-' && c != '_') return false;
    }
    return true;
  });
}

bool IsValidSysctlPattern(std::string_view pattern) {
  // All but the last segment are name segments; the last may end in '*'.
  const size_t last_sep = pattern.find_last_of("./");
  const std::string_view head =
      last_sep == std::string_view::npos ? std::string_view() : pattern.substr(0, last_sep);
  const std::string_view last =
      last_sep == std::string_view::npos ? pattern : pattern.substr(last_sep + 1);
  if (pattern.size() > 253 || last.empty()) return false;
  if (!head.empty() && !IsValidSysctlName(head)) return false;
  if (last_sep != std::string_view::npos && head.empty()) return false;
  const char end = last.back();
  if (!LowerAlnum(end) && end != '*') return false;
  if (last.size() == 1) return true;
  if (!LowerAlnum(last.front())) return false;
  for (char c : last.substr(0, last.size() - 1)) {
    if (!LowerAlnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

}  // namespace kubelet::api
