#include "common/go_compat.h"

#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"

namespace kubelet {

std::string GoCleanPath(std::string_view p) {
  if (p.empty()) return ".";
  const bool rooted = p[0] == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back(part);
      }
      continue;
    }
    parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out += '/';
    out.append(parts[k]);
  }
  return out.empty() ? "." : out;
}

std::string GoErrnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty() && !(text.size() > 1 && absl::ascii_isupper(text[1]))) {
    text[0] = absl::ascii_tolower(text[0]);
  }
  return text;
}

}  // namespace kubelet
