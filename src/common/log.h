// Structured logging in the upstream klog formats.
//
// Text format (default), one line per record, as klog writes it:
//   I1122 01:02:03.456789    1234 file.cc:12] "msg" key="value" n=3
// JSON format (--logging-format=json), as component-base's JSON logger writes it:
//   {"ts":1700000000.123456,"caller":"file.cc:12","msg":"msg","v":0,"key":"value"}
//
// Use the macros: KLOG_INFO("Starting", "node", name); KLOG_V(2, "Relist", "pods", n);
// KLOG_WARNING(...); KLOG_ERROR(status, "Failed to start", "pod", key). Arguments after the
// message are key/value pairs. Values may be strings, numbers, bools, absl::Status,
// absl::Duration, or vectors of strings.
//
// Thread-safety: all functions are safe to call from any thread; each record is written to the
// sink with a single write so lines never interleave. Configure() is meant to be called once at
// start-up before other threads log, but is also safe later.
#ifndef KUBELET_COMMON_LOG_H_
#define KUBELET_COMMON_LOG_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kubelet::log {

enum class Severity { kInfo = 0, kWarning = 1, kError = 2, kFatal = 3 };
enum class Format { kText, kJson };

struct Options {
  int verbosity = 0;
  Format format = Format::kText;
  // Where records go; default writes to stderr (fd 2). Tests capture with this.
  std::function<void(std::string_view line)> sink;
};

void Configure(Options options);
int Verbosity();
// Changes the verbosity at run time (/debug/flags/v); thread-safe.
void SetVerbosity(int level);
inline bool V(int level) { return level <= Verbosity(); }
// Parses "text" / "json"; an error names the accepted values.
absl::Status ParseFormat(std::string_view name, Format* out);

// A rendered value: `text` is the value as it appears in the text format; `json` is a JSON
// fragment for the JSON format.
struct Field {
  std::string key;
  std::string text;
  std::string json;
};

std::string Quote(std::string_view s);  // Go strconv.Quote style, used for both formats.
Field MakeField(std::string_view key, std::string_view v);
Field MakeField(std::string_view key, const std::string& v);
Field MakeField(std::string_view key, const char* v);
Field MakeField(std::string_view key, bool v);
Field MakeField(std::string_view key, int64_t v);
Field MakeField(std::string_view key, uint64_t v);
Field MakeField(std::string_view key, double v);
Field MakeField(std::string_view key, const absl::Status& v);
Field MakeField(std::string_view key, absl::Duration v);
Field MakeField(std::string_view key, const std::vector<std::string>& v);
template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T> &&
         !std::is_same_v<T, int64_t>) Field MakeField(std::string_view key, T v) {
  return MakeField(key, static_cast<int64_t>(v));
}
template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_unsigned_v<T> &&
         !std::is_same_v<T, uint64_t>) Field MakeField(std::string_view key, T v) {
  return MakeField(key, static_cast<uint64_t>(v));
}

void Emit(Severity severity, int v, const char* file, int line, std::string_view msg,
          std::vector<Field> fields);

namespace internal {
inline void Collect(std::vector<Field>&) {}
template <typename V, typename... Rest>
void Collect(std::vector<Field>& out, std::string_view key, const V& value, const Rest&... rest) {
  out.push_back(MakeField(key, value));
  Collect(out, rest...);
}
template <typename... KV>
void Log(Severity s, int v, const char* file, int line, std::string_view msg, const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "log arguments after the message are key/value pairs");
  std::vector<Field> fields;
  fields.reserve(sizeof...(KV) / 2);
  Collect(fields, kv...);
  Emit(s, v, file, line, msg, std::move(fields));
}
template <typename... KV>
void LogError(const char* file, int line, const absl::Status& err, std::string_view msg,
              const KV&... kv) {
  // klog's ErrorS puts err right after the message, and omits it for a nil error.
  std::vector<Field> fields;
  if (!err.ok()) fields.push_back(MakeField("err", err));
  Collect(fields, kv...);
  Emit(Severity::kError, 0, file, line, msg, std::move(fields));
}
}  // namespace internal

}  // namespace kubelet::log

#define KLOG_INFO(...) \
  ::kubelet::log::internal::Log(::kubelet::log::Severity::kInfo, 0, __FILE__, __LINE__, __VA_ARGS__)
#define KLOG_V(level, ...)                                                                      \
  do {                                                                                          \
    if (::kubelet::log::V(level))                                                               \
      ::kubelet::log::internal::Log(::kubelet::log::Severity::kInfo, level, __FILE__, __LINE__, \
                                    __VA_ARGS__);                                               \
  } while (0)
#define KLOG_WARNING(...)                                                                  \
  ::kubelet::log::internal::Log(::kubelet::log::Severity::kWarning, 0, __FILE__, __LINE__, \
                                __VA_ARGS__)
// KLOG_ERROR(status, "msg", kv...): an error record with err="<status message>" appended.
#define KLOG_ERROR(err, ...) \
  ::kubelet::log::internal::LogError(__FILE__, __LINE__, err, __VA_ARGS__)

#endif  // KUBELET_COMMON_LOG_H_
