// Walks over the KubeletConfiguration field tables (kubelet_configuration_fields.h).
#include "config/kubelet_configuration_fields.h"

#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::config {
namespace {

template <typename T>
bool FindPath(const T& obj, const void* member, const std::string& prefix, std::string* out);

template <typename T, typename M>
bool FindInField(const api::codec::FieldSpec<T, M>& f, const T& obj, const void* member,
                 const std::string& prefix, std::string* out) {
  const M& m = obj.*f.member;
  const std::string path =
      prefix.empty() ? std::string(f.name) : absl::StrCat(prefix, ".", AV(f.name));
  if constexpr (api::codec::Described<M>) {
    if (FindPath(m, member, path, out)) return true;
  }
  if (static_cast<const void*>(&m) != member) return false;
  *out = path;
  return true;
}

template <typename T>
bool FindPath(const T& obj, const void* member, const std::string& prefix, std::string* out) {
  return std::apply(
      [&](const auto&... f) { return (FindInField(f, obj, member, prefix, out) || ...); },
      api::codec::Fields<T>::kList);
}

template <typename T>
bool HasPath(std::string_view path);

template <typename T, typename M>
bool FieldHasPath(const api::codec::FieldSpec<T, M>& f, std::string_view head,
                  std::string_view rest, bool last) {
  if (f.name != head) return false;
  if (last) return true;
  if constexpr (api::codec::Described<M>) {
    return HasPath<M>(rest);
  } else {
    return false;
  }
}

template <typename T>
bool HasPath(std::string_view path) {
  const size_t dot = path.find('.');
  const bool last = dot == std::string_view::npos;
  const std::string_view head = path.substr(0, dot);
  const std::string_view rest = last ? std::string_view() : path.substr(dot + 1);
  return std::apply([&](const auto&... f) { return (FieldHasPath(f, head, rest, last) || ...); },
                    api::codec::Fields<T>::kList);
}

}  // namespace

bool IsConfigFieldPath(std::string_view path) { return HasPath<KubeletConfiguration>(path); }

std::string ConfigFieldPathAt(const KubeletConfiguration& c, const void* member) {
  std::string out;
  if (member != nullptr) FindPath(c, member, "", &out);
  return out;
}

}  // namespace kubelet::config
