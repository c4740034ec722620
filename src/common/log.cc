#include "common/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "common/duration.h"
#include "common/strings.h"

namespace kubelet::log {
namespace {

struct State {
  std::mutex mu;
  std::atomic<int> verbosity{0};
  Format format = Format::kText;
  std::function<void(std::string_view)> sink;
};

State& GetState() {
  static State* s = new State();  // never destroyed: logging must work during exit
  return *s;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

const char* Basename(const char* file) {
  const char* slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

char SeverityChar(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return 'I';
    case Severity::kWarning:
      return 'W';
    case Severity::kError:
      return 'E';
    case Severity::kFatal:
      return 'F';
  }
  return 'I';
}

// JSON string escaping (RFC 8259).
std::string JsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

void Configure(Options options) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.verbosity.store(options.verbosity);
  s.format = options.format;
  s.sink = std::move(options.sink);
}

int Verbosity() { return GetState().verbosity.load(std::memory_order_relaxed); }

void SetVerbosity(int level) { GetState().verbosity.store(level, std::memory_order_relaxed); }

absl::Status ParseFormat(std::string_view name, Format* out) {
  if (name == "text" || name.empty()) {
    *out = Format::kText;
  } else if (name == "json") {
    *out = Format::kJson;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported log format \"", AV(name), "\", must be one of: json, text"));
  }
  return absl::OkStatus();
}

std::string Quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

Field MakeField(std::string_view key, std::string_view v) {
  return Field{std::string(key), Quote(v), JsonString(v)};
}
Field MakeField(std::string_view key, const std::string& v) {
  return MakeField(key, std::string_view(v));
}
Field MakeField(std::string_view key, const char* v) {
  return MakeField(key, std::string_view(v ? v : ""));
}
Field MakeField(std::string_view key, bool v) {
  return Field{std::string(key), v ? "true" : "false", v ? "true" : "false"};
}
Field MakeField(std::string_view key, int64_t v) {
  std::string s = absl::StrCat(v);
  return Field{std::string(key), s, s};
}
Field MakeField(std::string_view key, uint64_t v) {
  std::string s = absl::StrCat(v);
  return Field{std::string(key), s, s};
}
Field MakeField(std::string_view key, double v) {
  std::string s = std::isfinite(v) ? absl::StrCat(v) : "0";
  return Field{std::string(key), s, s};
}
Field MakeField(std::string_view key, const absl::Status& v) {
  std::string msg = v.ok() ? std::string("<nil>") : std::string(v.message());
  return Field{std::string(key), Quote(msg), JsonString(msg)};
}
Field MakeField(std::string_view key, absl::Duration v) {
  std::string s = FormatGoDuration(v);
  return Field{std::string(key), Quote(s), JsonString(s)};
}
Field MakeField(std::string_view key, const std::vector<std::string>& v) {
  std::string text = "[";
  std::string json = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) {
      text += ",";
      json += ",";
    }
    text += Quote(v[i]);
    json += JsonString(v[i]);
  }
  text += "]";
  json += "]";
  return Field{std::string(key), text, json};
}

void Emit(Severity severity, int v, const char* file, int line, std::string_view msg,
          std::vector<Field> fields) {
  State& s = GetState();
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  std::string out;
  out.reserve(128 + msg.size());
  Format format;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    format = s.format;
  }
  if (format == Format::kText) {
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    char head[64];
    std::snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06ld %7d ",
                  SeverityChar(severity), tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                  tm.tm_sec, static_cast<long>(tv.tv_usec), static_cast<int>(::getpid()));
    absl::StrAppend(&out, head, Basename(file), ":", line, "] ", Quote(msg));
    for (const Field& f : fields) absl::StrAppend(&out, " ", f.key, "=", f.text);
  } else {
    char ts[64];
    std::snprintf(ts, sizeof(ts), "%ld.%06ld", static_cast<long>(tv.tv_sec),
                  static_cast<long>(tv.tv_usec));
    absl::StrAppend(&out, "{\"ts\":", ts,
                    ",\"caller\":", JsonString(absl::StrCat(Basename(file), ":", line)),
                    ",\"msg\":", JsonString(msg));
    if (severity == Severity::kInfo || severity == Severity::kWarning) {
      absl::StrAppend(&out, ",\"v\":", v);
    }
    for (const Field& f : fields) absl::StrAppend(&out, ",", JsonString(f.key), ":", f.json);
    out += "}";
  }
  out.push_back('\n');
  std::function<void(std::string_view)> sink;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    sink = s.sink;
  }
  if (sink) {
    sink(out);
  } else {
    WriteAll(2, out);
  }
}

}  // namespace kubelet::log
