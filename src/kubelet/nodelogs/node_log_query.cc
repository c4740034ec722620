#include "kubelet/nodelogs/node_log_query.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/go_compat.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/nodelogs/go_regexp.h"
#include "kubelet/nodelogs/secure_join.h"

namespace kubelet::nodelogs {
namespace {

using api::FieldError;
using api::FieldErrorList;
using api::FieldErrorType;

FieldError Invalid(std::string field, std::string rendered_value, std::string detail) {
  return FieldError{FieldErrorType::kInvalid, std::move(field), std::move(rendered_value),
                    std::move(detail)};
}

// Go's %#v of a []string: []string{"a", "b"}.
std::string GoSliceLiteral(const std::vector<std::string>& v) {
  std::vector<std::string> quoted;
  quoted.reserve(v.size());
  for (const std::string& s : v) quoted.push_back(log::Quote(s));
  return absl::StrCat("[]string{", absl::StrJoin(quoted, ", "), "}");
}

std::optional<std::string> First(const QueryParams& params, const std::string& key) {
  auto it = params.find(key);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

// strconv.Atoi on a 64-bit platform, with its error text.
bool Atoi(const std::string& s, int64_t* out, std::string* err) {
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  const std::string prefix = absl::StrCat("strconv.Atoi: parsing ", log::Quote(s), ": ");
  if (digits.empty()) {
    *err = prefix + "invalid syntax";
    return false;
  }
  uint64_t v = 0;
  bool range = false;
  for (char c : digits) {
    if (c < '0' || c > '9') {
      *err = prefix + "invalid syntax";
      return false;
    }
    if (v > (UINT64_MAX - 9) / 10) range = true;
    if (!range) v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (range || v > limit) {
    *err = prefix + "value out of range";
    return false;
  }
  *out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

int DaysIn(int month, int year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0))) return 29;
  return kDays[month - 1];
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// The local zone's abbreviation at `t` when its offset there is `offset`, as Go's Local.
std::string LocalZoneName(absl::Time t, int offset) {
  std::time_t secs = absl::ToTimeT(t);
  std::tm tm{};
  if (::localtime_r(&secs, &tm) == nullptr) return "";
  if (tm.tm_gmtoff != offset || tm.tm_zone == nullptr) return "";
  return tm.tm_zone;
}

std::string OffsetText(int offset) {
  const char sign = offset < 0 ? '-' : '+';
  const int minutes = (offset < 0 ? -offset : offset) / 60;
  return absl::StrFormat("%c%02d%02d", sign, minutes / 60, minutes % 60);
}

absl::CivilSecond Civil(const GoTime& t) {
  return absl::ToCivilSecond(t.time, absl::FixedTimeZone(t.offset_seconds));
}

}  // namespace

std::optional<GoTime> ParseRFC3339(std::string_view s) {
  // 2006-01-02T15:04:05[.frac]Z07:00; Go's parser also takes a one-digit hour and a comma
  // before the fraction.
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(s, 0, 4, &year) || s.size() < 5 || s[4] != '-' || !Digits(s, 5, 2, &month) ||
      s.size() < 8 || s[7] != '-' || !Digits(s, 8, 2, &day) || s.size() < 11 || s[10] != 'T') {
    return std::nullopt;
  }
  size_t pos = 11;
  if (Digits(s, pos, 2, &hour)) {
    pos += 2;
  } else if (Digits(s, pos, 1, &hour)) {
    pos += 1;
  } else {
    return std::nullopt;
  }
  if (pos >= s.size() || s[pos] != ':' || !Digits(s, pos + 1, 2, &minute)) return std::nullopt;
  pos += 3;
  if (pos >= s.size() || s[pos] != ':' || !Digits(s, pos + 1, 2, &second)) return std::nullopt;
  pos += 3;
  if (month < 1 || month > 12 || day < 1 || day > DaysIn(month, year) || hour > 23 || minute > 59 ||
      second > 59) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  if (pos + 1 < s.size() && (s[pos] == '.' || s[pos] == ',') && s[pos + 1] >= '0' &&
      s[pos + 1] <= '9') {
    ++pos;
    int scale = 100000000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      nanos += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  GoTime out;
  std::string_view zone = s.substr(pos);
  if (zone == "Z") {
    out.zone = "UTC";
  } else {
    int zh = 0, zm = 0;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || !Digits(zone, 1, 2, &zh) ||
        zone[3] != ':' || !Digits(zone, 4, 2, &zm) || zh > 23 || zm > 59) {
      return std::nullopt;
    }
    out.offset_seconds = (zh * 60 + zm) * 60 * (zone[0] == '-' ? -1 : 1);
  }
  const absl::CivilSecond civil(year, month, day, hour, minute, second);
  out.time = absl::FromCivil(civil, absl::UTCTimeZone()) - absl::Seconds(out.offset_seconds) +
             absl::Nanoseconds(nanos);
  if (out.zone.empty()) out.zone = LocalZoneName(out.time, out.offset_seconds);
  return out;
}

std::string GoTimeString(const GoTime& t) {
  const absl::CivilSecond c = Civil(t);
  std::string out = absl::StrFormat("%04d-%02d-%02d %02d:%02d:%02d", c.year(), c.month(), c.day(),
                                    c.hour(), c.minute(), c.second());
  const absl::Time whole = absl::FromUnixSeconds(absl::ToUnixSeconds(t.time));
  int64_t nanos = absl::ToInt64Nanoseconds(t.time - whole);
  if (nanos < 0) nanos += 1000000000;
  if (nanos > 0) {
    std::string frac = absl::StrFormat("%09d", nanos);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    absl::StrAppend(&out, ".", frac);
  }
  const std::string offset = OffsetText(t.offset_seconds);
  absl::StrAppend(&out, " ", offset, " ", t.zone.empty() ? offset : t.zone);
  return out;
}

std::string JournalTime(const GoTime& t) {
  const absl::CivilSecond c = Civil(t);
  return absl::StrFormat("%04d-%d-%d %d:%d:%d", c.year(), c.month(), c.day(), c.hour(), c.minute(),
                         c.second());
}

std::string GoStringList(const std::vector<std::string>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
}

ParsedQuery ParseNodeLogQuery(const QueryParams& params) {
  ParsedQuery out;
  NodeLogQuery q;
  std::vector<std::string> queries;
  for (auto [it, end] = params.equal_range("query"); it != end; ++it) {
    queries.push_back(it->second);
  }
  for (const std::string& v : queries) {
    // A '/' or '\' marks a file; a name without one is a service (foo.log too: the file
    // heuristics find it).
    if (v.find_first_of("/\\") != std::string::npos) {
      q.files.push_back(v);
    } else if (!absl::StripAsciiWhitespace(AV(v)).empty()) {
      q.services.push_back(v);
    }
  }
  if (params.count("query") > 0 && q.files.empty() && q.services.empty()) {
    out.errors.push_back(Invalid("query", GoSliceLiteral(queries), "query cannot be empty"));
  }
  for (const char* key : {"sinceTime", "untilTime"}) {
    std::optional<std::string> v = First(params, key);
    if (!v || v->empty()) continue;
    std::optional<GoTime> t = ParseRFC3339(*v);
    if (!t) {
      out.errors.push_back(Invalid(key, log::Quote(*v), "invalid time format"));
      continue;
    }
    (std::string_view(key) == "sinceTime" ? q.options.since_time : q.options.until_time) = *t;
  }
  for (const char* key : {"boot", "tailLines"}) {
    std::optional<std::string> v = First(params, key);
    if (!v || v->empty()) continue;
    int64_t n = 0;
    std::string err;
    if (!Atoi(*v, &n, &err)) {
      out.errors.push_back(Invalid(key, log::Quote(*v), err));
      continue;
    }
    (std::string_view(key) == "boot" ? q.options.boot : q.options.tail_lines) = n;
  }
  q.options.pattern = First(params, "pattern").value_or("");
  if (!out.errors.empty()) return out;
  if (q == NodeLogQuery{}) return out;
  out.query = std::move(q);
  return out;
}

FieldErrorList ValidateNodeLogQuery(const NodeLogQuery& q, const std::string& log_dir) {
  FieldErrorList errs;
  for (const std::string& s : q.services) {
    if (s.size() > kMaxServiceLength) {
      // Upstream's text, whatever the limit.
      errs.push_back(Invalid("query", log::Quote(s), "length must be less than 100"));
      continue;
    }
    for (char c : s) {
      const bool ok =
          absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '@';
      if (!ok) {
        errs.push_back(Invalid("query", log::Quote(s), "input contains unsupported characters"));
        break;
      }
    }
  }
  if (q.services.size() > kMaxServices) {
    errs.push_back(FieldError{FieldErrorType::kTooMany, "query", std::to_string(q.services.size()),
                              absl::StrCat("must have at most ", kMaxServices, " items")});
  }
  if (q.files.empty() && q.services.empty()) {
    errs.push_back(
        FieldError{FieldErrorType::kRequired, "query", "", "cannot be empty with options"});
  } else if (!q.files.empty() && !q.services.empty()) {
    errs.push_back(Invalid(
        "query", log::Quote(absl::StrCat(GoStringList(q.files), ", ", GoStringList(q.services))),
        "cannot specify a file and service"));
  } else if (q.files.size() > 1) {
    errs.push_back(Invalid("query", GoSliceLiteral(q.files), "cannot specify more than one file"));
  } else if (q.files.size() == 1 && !q.options.empty()) {
    errs.push_back(Invalid("query", GoSliceLiteral(q.files), "cannot specify file with options"));
  } else if (q.files.size() == 1) {
    absl::StatusOr<std::string> full = SecureJoin(log_dir, q.files[0]);
    struct stat st;
    if (!full.ok()) {
      errs.push_back(
          Invalid("query", GoSliceLiteral(q.files), std::string(full.status().message())));
    } else if (::stat(full->c_str(), &st) != 0) {
      errs.push_back(Invalid("query", GoSliceLiteral(q.files),
                             absl::StrCat("stat ", *full, ": ", GoErrnoText(errno))));
    }
  }
  if (q.options.since_time && q.options.until_time &&
      q.options.since_time->time > q.options.until_time->time) {
    errs.push_back(
        Invalid("untilTime", GoTimeString(*q.options.until_time), "must be after `sinceTime`"));
  }
  if (q.options.boot && *q.options.boot > 0) {
    errs.push_back(Invalid("boot", std::to_string(*q.options.boot), "must be less than 1"));
  }
  if (q.options.tail_lines &&
      (*q.options.tail_lines < 0 || *q.options.tail_lines > kMaxTailLines)) {
    errs.push_back(Invalid("tailLines", std::to_string(*q.options.tail_lines),
                           absl::StrCat("must be between 0 and ", kMaxTailLines, ", inclusive")));
  }
  if (std::string err = GoRegexpSyntaxError(q.options.pattern); !err.empty()) {
    errs.push_back(Invalid("pattern", log::Quote(q.options.pattern), err));
  }
  return errs;
}

std::vector<std::string> JournalctlArgs(const NodeLogQuery& q,
                                        const std::vector<std::string>& services) {
  std::vector<std::string> args = {"--utc", "--no-pager", "--output=short-precise"};
  if (q.options.since_time) {
    args.push_back(absl::StrCat("--since=", JournalTime(*q.options.since_time)));
  }
  if (q.options.until_time) {
    args.push_back(absl::StrCat("--until=", JournalTime(*q.options.until_time)));
  }
  if (q.options.tail_lines) {
    args.push_back("--pager-end");
    args.push_back(absl::StrCat("--lines=", *q.options.tail_lines));
  }
  for (const std::string& s : services) {
    if (!s.empty()) args.push_back(absl::StrCat("--unit=", s));
  }
  if (!q.options.pattern.empty()) args.push_back(absl::StrCat("--grep=", q.options.pattern));
  if (q.options.boot) {
    args.push_back("--boot");
    args.push_back(std::to_string(*q.options.boot));
  }
  return args;
}

}  // namespace kubelet::nodelogs
