// A command-line flag set with pflag semantics, as the upstream kubelet parses its flags.
//
// Accepted forms: --flag=value, --flag value, -v=4, -v 4, -v4 (shorthand), --bool,
// --bool=false. Underscores in flag names are normalised to dashes (--max_pods == --max-pods).
// "--" ends flag parsing; remaining words are positional arguments.
//
// Two-phase use, matching the upstream kubelet's flag precedence rules:
//   1. Parse(argv): checks every flag name and records the occurrences in order; each value is
//      also applied once, so a malformed value fails here with a message naming the flag.
//   2. Apply(): replays every recorded occurrence, in order, onto the bound targets. The kubelet
//      calls it after loading --config so that command-line values win over the file.
// Slice and map flags follow pflag: the first occurrence in a replay replaces the default, later
// occurrences append/merge.
//
// Bound targets are borrowed; they must outlive the FlagSet. Not thread-safe.
#ifndef KUBELET_CONFIG_FLAGSET_H_
#define KUBELET_CONFIG_FLAGSET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kubelet::config {

// Sets a bound target from a flag value. `first` is true for the first occurrence of this flag
// within a Parse or Apply pass (slices/maps reset their default then).
using FlagSetter = std::function<absl::Status(std::string_view value, bool first)>;

struct Flag {
  std::string name;       // without dashes, dash-separated words
  std::string shorthand;  // one letter or empty; may be set on the Flag& after registration
  std::string type_name;  // shown in --help: string, int32, duration, mapStringString, ...
  std::string usage;
  std::string default_value;  // shown in --help when non-empty
  std::string deprecated;     // non-empty: warn "Flag --x has been deprecated, <msg>" on use
  bool hidden = false;        // not listed in --help
  bool is_bool = false;       // may appear without a value
  FlagSetter set;
  const void* target = nullptr;  // what `set` writes (the configuration field a flag stands for)
  bool changed = false;          // appeared on the command line
};

class FlagSet {
 public:
  explicit FlagSet(std::string program_name);

  // Registers a flag. The typed helpers below bind a target and format the default from it.
  Flag& Add(Flag flag);

  Flag& String(std::string_view name, std::string* target, std::string_view usage);
  Flag& Bool(std::string_view name, bool* target, std::string_view usage);
  Flag& Int32(std::string_view name, int32_t* target, std::string_view usage);
  Flag& Int64(std::string_view name, int64_t* target, std::string_view usage);
  Flag& Double(std::string_view name, double* target, std::string_view usage);
  Flag& Duration(std::string_view name, absl::Duration* target, std::string_view usage);
  // Comma-separated list; repeated flags append.
  Flag& StringSlice(std::string_view name, std::vector<std::string>* target,
                    std::string_view usage);
  // "k1=v1,k2=v2"; repeated flags merge (cliflag.MapStringString).
  Flag& StringMap(std::string_view name, std::map<std::string, std::string>* target,
                  std::string_view usage);
  // "A=true,B=false" (cliflag.MapStringBool), as --feature-gates.
  Flag& BoolMap(std::string_view name, std::map<std::string, bool>* target, std::string_view usage);

  // Parses argv[1..]. On error returns InvalidArgument whose message is what pflag prints, e.g.
  // "unknown flag: --foo", "flag needs an argument: --root-dir",
  // `invalid argument "x" for "--max-pods" flag: ...`.
  absl::Status Parse(const std::vector<std::string>& args);
  // Replays the recorded occurrences onto the targets (see the class comment).
  absl::Status Apply();

  const Flag* Lookup(std::string_view name) const;
  // Every registered flag, in registration order.
  std::vector<const Flag*> Flags() const;
  bool Changed(std::string_view name) const;
  // Names of the flags given on the command line, in first-use order.
  std::vector<std::string> ChangedFlags() const;
  const std::vector<std::string>& Args() const { return positional_; }
  // Warnings for deprecated flags that were used, in command-line order.
  const std::vector<std::string>& Warnings() const { return warnings_; }

  // The flag listing for --help: one entry per visible flag, sorted by name, pflag layout.
  std::string Usages() const;

  static std::string Normalize(std::string_view name);

 private:
  struct Occurrence {
    Flag* flag;
    std::string value;
  };
  absl::Status SetOne(Flag& flag, std::string_view value, std::map<Flag*, bool>& seen);

  std::string program_name_;
  std::vector<std::unique_ptr<Flag>> flags_;
  std::map<std::string, Flag*, std::less<>> by_name_;
  std::vector<Occurrence> occurrences_;
  std::vector<std::string> positional_;
  std::vector<std::string> warnings_;
};

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_FLAGSET_H_
