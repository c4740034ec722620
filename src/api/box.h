// Box<T>: an optional value kept on the heap, for large members of the API structs that are
// usually unset (probes, lifecycle hooks, security contexts, env var sources). An unset Box is one
// pointer, where std::optional<T> is sizeof(T) plus a flag: a one-container pod copy shrinks from
// about 5 KiB to about 2.5 KiB, and the kubelet keeps several copies of every pod.
//
// The interface is std::optional's, as far as this code uses it: has_value / operator bool,
// * and ->, value(), value_or(), emplace(), reset(), assignment from T, std::nullopt or a
// std::optional<T>, and == (by value; unset equals unset and
// std::nullopt). No implicit conversion to std::optional<T>: a `const std::optional<T>&` bound to
// a Box would be a temporary copy. Copies are deep: a Box is a value, never shared.
// Thread-compatible, as the structs holding it.
#ifndef KUBELET_API_BOX_H_
#define KUBELET_API_BOX_H_

#include <memory>
#include <optional>
#include <utility>

namespace kubelet::api {

template <typename T>
class Box {
 public:
  using value_type = T;

  Box() = default;
  Box(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): as std::optional
  Box(const T& v) : p_(std::make_unique<T>(v)) {}        // NOLINT
  Box(T&& v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT
  Box(const std::optional<T>& o) {                       // NOLINT
    if (o) p_ = std::make_unique<T>(*o);
  }
  Box(const Box& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Box(Box&&) noexcept = default;
  ~Box() = default;

  Box& operator=(const Box& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  Box& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  Box& operator=(const T& v) {
    if (p_) {
      *p_ = v;
    } else {
      p_ = std::make_unique<T>(v);
    }
    return *this;
  }
  Box& operator=(T&& v) {
    if (p_) {
      *p_ = std::move(v);
    } else {
      p_ = std::make_unique<T>(std::move(v));
    }
    return *this;
  }
  Box& operator=(const std::optional<T>& o) {
    if (o) return *this = *o;
    p_.reset();
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& value() {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  template <typename U>
  T value_or(U&& fallback) const {
    return p_ ? *p_ : static_cast<T>(std::forward<U>(fallback));
  }
  template <typename... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() { p_.reset(); }

  friend bool operator==(const Box& a, const Box& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a.has_value() || *a == *b;
  }
  friend bool operator==(const Box& a, std::nullopt_t) { return !a.has_value(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace kubelet::api

#endif  // KUBELET_API_BOX_H_
