#include "kubelet/cm/cgroup_name.h"

#include <algorithm>

namespace kubelet::cm {
namespace {

constexpr std::string_view kSliceSuffix = ".slice";

std::string EscapeSystemd(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

std::string UnescapeSystemd(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

}  // namespace

CgroupName NewCgroupName(const CgroupName& base, const std::vector<std::string>& components) {
  CgroupName out = base;
  out.insert(out.end(), components.begin(), components.end());
  return out;
}

CgroupName ParseCgroupfsToCgroupName(std::string_view path) {
  CgroupName out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string ToCgroupfs(const CgroupName& name) {
  if (name.empty()) return "/";
  std::string out;
  for (const std::string& c : name) {
    out += '/';
    out += c;
  }
  return out;
}

std::string SystemdSliceName(const CgroupName& name) {
  if (name.empty()) return "-.slice";
  std::string out;
  for (const std::string& c : name) {
    if (!out.empty()) out += '-';
    out += EscapeSystemd(c);
  }
  return out + std::string(kSliceSuffix);
}

std::string ToSystemd(const CgroupName& name) {
  if (name.empty() || (name.size() == 1 && name[0].empty())) return "/";
  // Expand "a-b-c.slice" into "/a.slice/a-b.slice/a-b-c.slice".
  std::string out;
  std::string prefix;
  for (const std::string& c : name) {
    if (!prefix.empty()) prefix += '-';
    prefix += EscapeSystemd(c);
    out += '/';
    out += prefix;
    out += kSliceSuffix;
  }
  return out;
}

CgroupName ParseSystemdToCgroupName(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.size() >= kSliceSuffix.size() &&
      base.substr(base.size() - kSliceSuffix.size()) == kSliceSuffix) {
    base.remove_suffix(kSliceSuffix.size());
  }
  CgroupName out;
  if (base.empty() || base == "-") return out;
  size_t i = 0;
  while (true) {
    size_t j = base.find('-', i);
    if (j == std::string_view::npos) j = base.size();
    out.push_back(UnescapeSystemd(std::string(base.substr(i, j - i))));
    if (j == base.size()) break;
    i = j + 1;
  }
  return out;
}

}  // namespace kubelet::cm
