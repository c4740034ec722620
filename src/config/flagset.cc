#include "config/flagset.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/duration.h"
#include "common/strings.h"

namespace kubelet::config {
namespace {

absl::Status ParseGoBool(std::string_view v, bool* out) {
  // strconv.ParseBool's accepted spellings.
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") {
    *out = true;
  } else if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
    *out = false;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.ParseBool: parsing \"", AV(v), "\": invalid syntax"));
  }
  return absl::OkStatus();
}

template <typename Int>
absl::Status ParseInt(std::string_view v, Int* out) {
  int64_t wide;
  std::string_view digits = v;
  if (!absl::SimpleAtoi(AV(digits), &wide) || digits.empty() || digits.front() == ' ') {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.ParseInt: parsing \"", AV(v), "\": invalid syntax"));
  }
  if (wide < std::numeric_limits<Int>::min() || wide > std::numeric_limits<Int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.ParseInt: parsing \"", AV(v), "\": value out of range"));
  }
  *out = static_cast<Int>(wide);
  return absl::OkStatus();
}

std::string FormatMap(const std::map<std::string, std::string>& m) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : m) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, ",");
}

}  // namespace

FlagSet::FlagSet(std::string program_name) : program_name_(std::move(program_name)) {}

std::string FlagSet::Normalize(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

Flag& FlagSet::Add(Flag flag) {
  flag.name = Normalize(flag.name);
  auto owned = std::make_unique<Flag>(std::move(flag));
  Flag* f = owned.get();
  flags_.push_back(std::move(owned));
  by_name_[f->name] = f;
  return *f;
}

Flag& FlagSet::String(std::string_view name, std::string* target, std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "string";
  f.usage = usage;
  f.default_value = *target;
  f.target = target;
  f.set = [target](std::string_view v, bool) {
    *target = std::string(v);
    return absl::OkStatus();
  };
  return Add(std::move(f));
}

Flag& FlagSet::Bool(std::string_view name, bool* target, std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "";
  f.is_bool = true;
  f.usage = usage;
  f.default_value = *target ? "true" : "";
  f.target = target;
  f.set = [target](std::string_view v, bool) { return ParseGoBool(v, target); };
  return Add(std::move(f));
}

Flag& FlagSet::Int32(std::string_view name, int32_t* target, std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "int32";
  f.usage = usage;
  f.default_value = *target != 0 ? absl::StrCat(*target) : "";
  f.target = target;
  f.set = [target](std::string_view v, bool) { return ParseInt(v, target); };
  return Add(std::move(f));
}

Flag& FlagSet::Int64(std::string_view name, int64_t* target, std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "int";
  f.usage = usage;
  f.default_value = *target != 0 ? absl::StrCat(*target) : "";
  f.target = target;
  f.set = [target](std::string_view v, bool) { return ParseInt(v, target); };
  return Add(std::move(f));
}

Flag& FlagSet::Double(std::string_view name, double* target, std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "float";
  f.usage = usage;
  f.default_value = *target != 0 ? absl::StrCat(*target) : "";
  f.target = target;
  f.set = [target](std::string_view v, bool) {
    if (!absl::SimpleAtod(AV(v), target)) {
      return absl::InvalidArgumentError(
          absl::StrCat("strconv.ParseFloat: parsing \"", AV(v), "\": invalid syntax"));
    }
    return absl::OkStatus();
  };
  return Add(std::move(f));
}

Flag& FlagSet::Duration(std::string_view name, absl::Duration* target, std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "duration";
  f.usage = usage;
  f.default_value = FormatGoDuration(*target);
  f.target = target;
  f.set = [target](std::string_view v, bool) -> absl::Status {
    auto d = ParseGoDuration(v);
    if (!d.ok()) return d.status();
    *target = *d;
    return absl::OkStatus();
  };
  return Add(std::move(f));
}

Flag& FlagSet::StringSlice(std::string_view name, std::vector<std::string>* target,
                           std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "strings";
  f.usage = usage;
  if (!target->empty()) f.default_value = absl::StrCat("[", absl::StrJoin(*target, ","), "]");
  f.target = target;
  f.set = [target](std::string_view v, bool first) {
    if (first) target->clear();
    if (v.empty()) return absl::OkStatus();
    for (absl::string_view part : absl::StrSplit(AV(v), ',')) {
      target->push_back(std::string(absl::StripAsciiWhitespace(part)));
    }
    return absl::OkStatus();
  };
  return Add(std::move(f));
}

Flag& FlagSet::StringMap(std::string_view name, std::map<std::string, std::string>* target,
                         std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "mapStringString";
  f.usage = usage;
  f.default_value = FormatMap(*target);
  f.target = target;
  f.set = [target](std::string_view v, bool first) -> absl::Status {
    if (first) target->clear();
    for (absl::string_view part : absl::StrSplit(AV(v), ',', absl::SkipWhitespace())) {
      part = absl::StripAsciiWhitespace(part);
      std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
      if (kv.size() != 2) {
        return absl::InvalidArgumentError(absl::StrCat("malformed pair, expect string=string"));
      }
      (*target)[std::string(absl::StripAsciiWhitespace(kv[0]))] =
          std::string(absl::StripAsciiWhitespace(kv[1]));
    }
    return absl::OkStatus();
  };
  return Add(std::move(f));
}

Flag& FlagSet::BoolMap(std::string_view name, std::map<std::string, bool>* target,
                       std::string_view usage) {
  Flag f;
  f.name = name;
  f.type_name = "mapStringBool";
  f.usage = usage;
  f.target = target;
  f.set = [target](std::string_view v, bool first) -> absl::Status {
    if (first) target->clear();
    for (absl::string_view part : absl::StrSplit(AV(v), ',', absl::SkipWhitespace())) {
      part = absl::StripAsciiWhitespace(part);
      std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
      if (kv.size() != 2) {
        return absl::InvalidArgumentError(absl::StrCat("malformed pair, expect string=bool"));
      }
      bool b;
      absl::Status st = ParseGoBool(SV(absl::StripAsciiWhitespace(kv[1])), &b);
      if (!st.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid value of ", kv[0], "=", kv[1], ", err: ", st.message()));
      }
      (*target)[std::string(absl::StripAsciiWhitespace(kv[0]))] = b;
    }
    return absl::OkStatus();
  };
  return Add(std::move(f));
}

absl::Status FlagSet::SetOne(Flag& flag, std::string_view value, std::map<Flag*, bool>& seen) {
  bool first = !seen[&flag];
  seen[&flag] = true;
  absl::Status st = flag.set ? flag.set(value, first) : absl::OkStatus();
  if (!st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid argument \"", AV(value), "\" for \"",
                     flag.shorthand.empty() ? "" : "-" + flag.shorthand + ", ", "--", flag.name,
                     "\" flag: ", st.message()));
  }
  return absl::OkStatus();
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args) {
  occurrences_.clear();
  positional_.clear();
  warnings_.clear();
  std::map<Flag*, bool> seen;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional_.insert(positional_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional_.push_back(arg);
      continue;
    }
    Flag* flag = nullptr;
    std::string value;
    bool has_value = false;
    std::string shown;
    if (arg[1] == '-') {
      std::string_view body = std::string_view(arg).substr(2);
      if (body.empty() || body[0] == '-' || body[0] == '=') {
        return absl::InvalidArgumentError(absl::StrCat("bad flag syntax: ", arg));
      }
      size_t eq = body.find('=');
      std::string name = Normalize(body.substr(0, eq));
      if (eq != std::string_view::npos) {
        value = std::string(body.substr(eq + 1));
        has_value = true;
      }
      auto it = by_name_.find(name);
      if (it == by_name_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("unknown flag: --", name));
      }
      flag = it->second;
      shown = "--" + name;
    } else {
      // Shorthand: -v=4, -v 4, -v4.
      std::string_view body = std::string_view(arg).substr(1);
      std::string letter(body.substr(0, 1));
      Flag* found = nullptr;
      for (const auto& f : flags_) {
        if (f->shorthand == letter) found = f.get();
      }
      if (found == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown shorthand flag: '", letter, "' in ", arg));
      }
      flag = found;
      shown = "-" + letter;
      std::string_view rest = body.substr(1);
      if (!rest.empty()) {
        if (rest[0] == '=') rest.remove_prefix(1);
        value = std::string(rest);
        has_value = true;
      }
    }
    if (!has_value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag needs an argument: ", shown));
      }
    }
    flag->changed = true;
    if (!flag->deprecated.empty()) {
      warnings_.push_back(
          absl::StrCat("Flag --", flag->name, " has been deprecated, ", flag->deprecated));
    }
    if (absl::Status st = SetOne(*flag, value, seen); !st.ok()) return st;
    occurrences_.push_back({flag, value});
  }
  return absl::OkStatus();
}

absl::Status FlagSet::Apply() {
  std::map<Flag*, bool> seen;
  for (const Occurrence& o : occurrences_) {
    if (absl::Status st = SetOne(*o.flag, o.value, seen); !st.ok()) return st;
  }
  return absl::OkStatus();
}

const Flag* FlagSet::Lookup(std::string_view name) const {
  auto it = by_name_.find(Normalize(name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<const Flag*> FlagSet::Flags() const {
  std::vector<const Flag*> out;
  out.reserve(flags_.size());
  for (const auto& f : flags_) out.push_back(f.get());
  return out;
}

bool FlagSet::Changed(std::string_view name) const {
  const Flag* f = Lookup(name);
  return f != nullptr && f->changed;
}

std::vector<std::string> FlagSet::ChangedFlags() const {
  std::vector<std::string> out;
  for (const Occurrence& o : occurrences_) {
    if (std::find(out.begin(), out.end(), o.flag->name) == out.end()) out.push_back(o.flag->name);
  }
  return out;
}

std::string FlagSet::Usages() const {
  std::vector<const Flag*> visible;
  for (const auto& f : flags_) {
    if (!f->hidden) visible.push_back(f.get());
  }
  std::sort(visible.begin(), visible.end(),
            [](const Flag* a, const Flag* b) { return a->name < b->name; });
  // pflag layout: "  -v, --v Level   usage (default 0)", usage column aligned.
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const Flag* f : visible) {
    std::string left =
        f->shorthand.empty() ? "      --" + f->name : "  -" + f->shorthand + ", --" + f->name;
    if (!f->type_name.empty()) left += " " + f->type_name;
    std::string right = f->usage;
    if (!f->default_value.empty()) {
      if (f->type_name == "string") {
        absl::StrAppend(&right, " (default \"", f->default_value, "\")");
      } else {
        absl::StrAppend(&right, " (default ", f->default_value, ")");
      }
    }
    if (!f->deprecated.empty()) absl::StrAppend(&right, " (DEPRECATED: ", f->deprecated, ")");
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), std::move(right));
  }
  std::string out;
  for (auto& [left, right] : rows) {
    absl::StrAppend(&out, left, std::string(width - left.size() + 3, ' '), right, "\n");
  }
  return out;
}

}  // namespace kubelet::config
