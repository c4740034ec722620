// Field paths and error constructors (apimachinery util/validation/field) and the string format
// checks of apimachinery util/validation, incl. the public Is* checks and error formatting.
#include <arpa/inet.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/pod_validation.h"
#include "api/pod_validation_internal.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::api::validation_internal {
namespace {

std::string N(int64_t v) { return std::to_string(v); }

FieldError Make(FieldErrorType t, std::string field, std::string value, std::string detail) {
  FieldError e;
  e.type = t;
  e.field = std::move(field);
  e.bad_value = std::move(value);
  e.detail = std::move(detail);
  return e;
}

std::string MaxLenError(size_t n) {
  return absl::StrCat("must be no more than ", n, " characters");
}

std::string RegexError(std::string_view msg, std::string_view fmt, const Strs& examples) {
  std::string out(msg);
  if (examples.empty()) {
    return absl::StrCat(out, " (regex used for validation is '", AV(fmt), "')");
  }
  out += " (e.g. ";
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) out += " or ";
    absl::StrAppend(&out, "'", examples[i], "', ");
  }
  absl::StrAppend(&out, "regex used for validation is '", AV(fmt), "')");
  return out;
}

bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool Alnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesLabel(std::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!LowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool MatchesSubdomain(std::string_view s) {
  for (absl::string_view part : absl::StrSplit(AV(s), '.')) {
    if (!MatchesLabel(SV(part))) return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !Alnum(s.front()) || !Alnum(s.back())) return false;
  for (char c : s) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

constexpr char kDNS1123LabelFmt[] = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr char kDNS1123LabelErrMsg[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr char kDNS1123SubdomainFmt[] =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr char kDNS1123SubdomainErrMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr char kQualifiedNameFmt[] = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr char kQualifiedNameErrMsg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

Strs HasChDirPrefix(std::string_view v) {
  if (v == ".") return {"must not be '.'"};
  if (v == "..") return {"must not be '..'"};
  if (absl::StartsWith(AV(v), "..")) return {"must not start with '..'"};
  return {};
}

// apimachinery NameIsDNSSubdomain / NameIsDNSLabel with the prefix (generateName) masking.
std::string MaskTrailingDash(std::string_view name) {
  if (name.size() > 1 && name.back() == '-') {
    return absl::StrCat(AV(name.substr(0, name.size() - 2)), "a");
  }
  return std::string(name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Paths and error constructors (k8s.io/apimachinery/pkg/util/validation/field).

std::string Child(const std::string& p, std::string_view c) {
  return p.empty() ? std::string(c) : absl::StrCat(p, ".", AV(c));
}
std::string Idx(const std::string& p, size_t i) { return absl::StrCat(p, "[", i, "]"); }
std::string Key(const std::string& p, std::string_view k) {
  return absl::StrCat(p, "[", AV(k), "]");
}

std::string Q(std::string_view s) { return ::kubelet::log::Quote(s); }

FieldError Required(std::string f, std::string detail) {
  return Make(FieldErrorType::kRequired, std::move(f), "", std::move(detail));
}
FieldError Forbidden(std::string f, std::string detail) {
  return Make(FieldErrorType::kForbidden, std::move(f), "", std::move(detail));
}
FieldError Invalid(std::string f, std::string rendered, std::string detail) {
  return Make(FieldErrorType::kInvalid, std::move(f), std::move(rendered), std::move(detail));
}
FieldError InvalidS(std::string f, std::string_view v, std::string detail) {
  return Invalid(std::move(f), Q(v), std::move(detail));
}
FieldError InvalidI(std::string f, int64_t v, std::string detail) {
  return Invalid(std::move(f), N(v), std::move(detail));
}
FieldError Duplicate(std::string f, std::string rendered) {
  return Make(FieldErrorType::kDuplicate, std::move(f), std::move(rendered), "");
}
FieldError NotFound(std::string f, std::string rendered) {
  return Make(FieldErrorType::kNotFound, std::move(f), std::move(rendered), "");
}
FieldError NotSupported(std::string f, std::string rendered, const Strs& valid) {
  std::string detail;
  if (!valid.empty()) {
    Strs quoted;
    for (const auto& v : valid) quoted.push_back(Q(v));
    detail = absl::StrCat("supported values: ", absl::StrJoin(quoted, ", "));
  }
  return Make(FieldErrorType::kNotSupported, std::move(f), std::move(rendered), std::move(detail));
}
FieldError TooLong(std::string f, int64_t max) {
  return Make(FieldErrorType::kTooLong, std::move(f), "",
              absl::StrCat("must have at most ", max, " bytes"));
}

void Append(Errs* e, Errs more) {
  for (auto& x : more) e->push_back(std::move(x));
}
void Append(Strs* e, Strs more) {
  for (auto& x : more) e->push_back(std::move(x));
}

// ---------------------------------------------------------------------------------------------
// String format checks (k8s.io/apimachinery/pkg/util/validation).

Strs NameIsDNSSubdomain(std::string_view name, bool prefix) {
  return prefix ? IsDNS1123Subdomain(MaskTrailingDash(name)) : IsDNS1123Subdomain(name);
}
Strs NameIsDNSLabel(std::string_view name, bool prefix) {
  return prefix ? IsDNS1123Label(MaskTrailingDash(name)) : IsDNS1123Label(name);
}

Errs ValidateDNS1123Label(std::string_view v, const std::string& path) {
  Errs e;
  for (auto& msg : IsDNS1123Label(v)) e.push_back(InvalidS(path, v, msg));
  return e;
}
Errs ValidateDNS1123Subdomain(std::string_view v, const std::string& path) {
  Errs e;
  for (auto& msg : IsDNS1123Subdomain(v)) e.push_back(InvalidS(path, v, msg));
  return e;
}
Errs ValidateQualifiedName(std::string_view v, const std::string& path) {
  Errs e;
  for (auto& msg : IsQualifiedName(v)) e.push_back(InvalidS(path, v, msg));
  return e;
}
// A "name" check (ValidateNameFunc style) reported as Invalid(path, value, msg).
Errs NameErrs(const Strs& msgs, const std::string& path, std::string_view value) {
  Errs e;
  for (const auto& msg : msgs) e.push_back(InvalidS(path, value, msg));
  return e;
}

Strs IsValidUserID(int64_t id) {
  if (id >= 0 && id <= kMaxInt32) return {};
  return {absl::StrCat("must be between 0 and ", kMaxInt32, ", inclusive")};
}

Strs IsHTTPHeaderName(std::string_view v) {
  bool ok = !v.empty();
  for (char c : v) ok = ok && (Alnum(c) || c == '-');
  if (ok) return {};
  return {RegexError("a valid HTTP header must consist of alphanumeric characters or '-'",
                     "[-A-Za-z0-9]+", {"X-Header-Name"})};
}

bool IsAbsPath(std::string_view p) { return !p.empty() && p.front() == '/'; }

}  // namespace kubelet::api::validation_internal

namespace kubelet::api {

using validation_internal::Alnum;
using validation_internal::Append;
using validation_internal::HasChDirPrefix;
using validation_internal::kDNS1123LabelErrMsg;
using validation_internal::kDNS1123LabelFmt;
using validation_internal::kDNS1123SubdomainErrMsg;
using validation_internal::kDNS1123SubdomainFmt;
using validation_internal::kQualifiedNameErrMsg;
using validation_internal::kQualifiedNameFmt;
using validation_internal::LowerAlnum;
using validation_internal::MatchesLabel;
using validation_internal::MatchesQualifiedNamePart;
using validation_internal::MatchesSubdomain;
using validation_internal::MaxLenError;
using validation_internal::RegexError;
using validation_internal::Strs;

// ---------------------------------------------------------------------------------------------
// Public.

std::string FieldError::ToString() const {
  const char* type_str = "Invalid value";
  bool show_value = true;
  switch (type) {
    case FieldErrorType::kNotFound:
      type_str = "Not found";
      break;
    case FieldErrorType::kRequired:
      type_str = "Required value";
      show_value = false;
      break;
    case FieldErrorType::kDuplicate:
      type_str = "Duplicate value";
      break;
    case FieldErrorType::kInvalid:
      type_str = "Invalid value";
      break;
    case FieldErrorType::kNotSupported:
      type_str = "Unsupported value";
      break;
    case FieldErrorType::kForbidden:
      type_str = "Forbidden";
      show_value = false;
      break;
    case FieldErrorType::kTooLong:
      type_str = "Too long";
      show_value = false;
      break;
    case FieldErrorType::kTooMany:
      type_str = "Too many";
      break;
    case FieldErrorType::kInternal:
      type_str = "Internal error";
      show_value = false;
      break;
  }
  std::string s = absl::StrCat(field, ": ", type_str);
  if (show_value) absl::StrAppend(&s, ": ", bad_value.empty() ? "null" : bad_value);
  if (!detail.empty()) absl::StrAppend(&s, ": ", detail);
  return s;
}

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  Strs e;
  if (value.size() > 63) e.push_back(MaxLenError(63));
  if (!MatchesLabel(value)) {
    e.push_back(RegexError(kDNS1123LabelErrMsg, kDNS1123LabelFmt, {"my-name", "123-abc"}));
  }
  return e;
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  Strs e;
  if (value.size() > 253) e.push_back(MaxLenError(253));
  if (!MatchesSubdomain(value)) {
    e.push_back(RegexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return e;
}

std::vector<std::string> IsQualifiedName(std::string_view value) {
  Strs e;
  std::vector<absl::string_view> parts = absl::StrSplit(AV(value), '/');
  std::string_view name;
  if (parts.size() == 1) {
    name = SV(parts[0]);
  } else if (parts.size() == 2) {
    std::string_view prefix = SV(parts[0]);
    name = SV(parts[1]);
    if (prefix.empty()) {
      e.push_back("prefix part must be non-empty");
    } else {
      for (auto& m : IsDNS1123Subdomain(prefix)) e.push_back("prefix part " + m);
    }
  } else {
    e.push_back(
        "a qualified name " +
        RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return e;
  }
  if (name.empty()) {
    e.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    e.push_back("name part " + MaxLenError(63));
  }
  if (!MatchesQualifiedNamePart(name)) {
    e.push_back("name part " + RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                          {"MyName", "my.name", "123-abc"}));
  }
  return e;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  Strs e;
  if (value.size() > 63) e.push_back(MaxLenError(63));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    e.push_back(RegexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character",
        "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"MyValue", "my_value", "12345"}));
  }
  return e;
}

std::vector<std::string> IsEnvVarName(std::string_view value) {
  Strs e;
  bool ok = !value.empty() && !absl::ascii_isdigit(static_cast<unsigned char>(value[0]));
  for (char c : value) ok = ok && (Alnum(c) || c == '-' || c == '.' || c == '_');
  if (!ok) {
    e.push_back(RegexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', "
        "'-', or '.', and must not start with a digit",
        "[-._a-zA-Z][-._a-zA-Z0-9]*", {"my.env-name", "MY_ENV.NAME", "MyEnvName1"}));
  }
  Append(&e, HasChDirPrefix(value));
  return e;
}

std::vector<std::string> IsConfigMapKey(std::string_view value) {
  Strs e;
  if (value.size() > 253) e.push_back(MaxLenError(253));
  bool ok = !value.empty();
  for (char c : value) ok = ok && (Alnum(c) || c == '-' || c == '.' || c == '_');
  if (!ok) {
    e.push_back(
        RegexError("a valid config key must consist of alphanumeric characters, '-', '_' "
                   "or '.'",
                   "[-._a-zA-Z0-9]+", {"key.name", "KEY_NAME", "key-name"}));
  }
  Append(&e, HasChDirPrefix(value));
  return e;
}

std::vector<std::string> IsValidPortName(std::string_view port) {
  Strs e;
  if (port.size() > 15) e.push_back(MaxLenError(15));
  bool charset = !port.empty();
  bool letter = false;
  for (char c : port) {
    charset = charset && (LowerAlnum(c) || c == '-');
    letter = letter || (c >= 'a' && c <= 'z');
  }
  if (!charset) {
    e.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!letter) e.push_back("must contain at least one letter (a-z)");
  if (port.find("--") != std::string_view::npos) {
    e.push_back("must not contain consecutive hyphens");
  }
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    e.push_back("must not begin or end with a hyphen");
  }
  return e;
}

std::vector<std::string> IsValidPortNum(int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return {"must be between 1 and 65535, inclusive"};
}

std::vector<std::string> IsValidIP(std::string_view value) {
  const std::string s(value);
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return {};
  }
  return {"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"};
}

std::string AggregateErrors(const FieldErrorList& errs) {
  std::vector<std::string> msgs;
  std::set<std::string> seen;
  for (const auto& err : errs) {
    std::string m = err.ToString();
    if (seen.insert(m).second) msgs.push_back(std::move(m));
  }
  if (msgs.empty()) return "";
  if (msgs.size() == 1) return msgs[0];
  return absl::StrCat("[", absl::StrJoin(msgs, ", "), "]");
}

std::string FormatErrorListGo(const FieldErrorList& errs) {
  std::vector<std::string> msgs;
  for (const auto& err : errs) msgs.push_back(err.ToString());
  return absl::StrCat("[", absl::StrJoin(msgs, " "), "]");
}

}  // namespace kubelet::api
