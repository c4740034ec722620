#include "config/cpuset.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"

namespace kubelet::config {
namespace {

// Ranges larger than this are refused rather than materialised (upstream would try to allocate
// them); no machine has this many CPUs.
constexpr int64_t kMaxRangeSize = 1 << 20;

// strconv.Atoi: optional sign, decimal digits, result must fit in int (64-bit in Go; we also
// require it to fit an int here).
absl::Status Atoi(std::string_view s, int* out) {
  auto syntax = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.Atoi: parsing \"", AV(s), "\": invalid syntax"));
  };
  std::string_view digits = s;
  bool neg = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    neg = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return syntax();
  int64_t v = 0;
  bool overflow = false;
  for (char c : digits) {
    if (c < '0' || c > '9') return syntax();
    if (v > (std::numeric_limits<int64_t>::max() - (c - '0')) / 10) {
      overflow = true;
    } else {
      v = v * 10 + (c - '0');
    }
  }
  if (neg) v = -v;
  if (overflow || v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strconv.Atoi: parsing \"", AV(s), "\": value out of range"));
  }
  *out = static_cast<int>(v);
  return absl::OkStatus();
}

}  // namespace

CPUSet CPUSet::Range(int n) {
  std::set<int> s;
  for (int i = 0; i < n; ++i) s.insert(i);
  return CPUSet(std::move(s));
}

absl::StatusOr<CPUSet> CPUSet::Parse(std::string_view s) {
  std::set<int> out;
  if (s.empty()) return CPUSet();
  for (absl::string_view r : absl::StrSplit(AV(s), ',')) {
    std::vector<absl::string_view> bounds = absl::StrSplit(r, absl::MaxSplits('-', 1));
    if (bounds.size() == 1) {
      int cpu = 0;
      if (absl::Status st = Atoi(SV(bounds[0]), &cpu); !st.ok()) return st;
      out.insert(cpu);
      continue;
    }
    int start = 0;
    int end = 0;
    if (absl::Status st = Atoi(SV(bounds[0]), &start); !st.ok()) return st;
    if (absl::Status st = Atoi(SV(bounds[1]), &end); !st.ok()) return st;
    if (start > end) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid range \"", r, "\" (", start, " > ", end, ")"));
    }
    if (static_cast<int64_t>(end) - start >= kMaxRangeSize) {
      return absl::InvalidArgumentError(absl::StrCat("invalid range \"", r, "\" (too large)"));
    }
    for (int64_t e = start; e <= end; ++e) out.insert(static_cast<int>(e));
  }
  return CPUSet(std::move(out));
}

bool CPUSet::IsSubsetOf(const CPUSet& other) const {
  return std::includes(other.cpus_.begin(), other.cpus_.end(), cpus_.begin(), cpus_.end());
}

CPUSet CPUSet::Union(const CPUSet& other) const {
  std::set<int> out;
  std::set_union(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(),
                 std::inserter(out, out.end()));
  return CPUSet(std::move(out));
}

CPUSet CPUSet::Intersection(const CPUSet& other) const {
  std::set<int> out;
  std::set_intersection(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(),
                        std::inserter(out, out.end()));
  return CPUSet(std::move(out));
}

CPUSet CPUSet::Difference(const CPUSet& other) const {
  std::set<int> out;
  std::set_difference(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(),
                      std::inserter(out, out.end()));
  return CPUSet(std::move(out));
}

std::string CPUSet::String() const {
  std::vector<std::string> parts;
  auto it = cpus_.begin();
  while (it != cpus_.end()) {
    int start = *it;
    int end = start;
    ++it;
    while (it != cpus_.end() && *it == end + 1) {
      end = *it;
      ++it;
    }
    parts.push_back(start == end ? absl::StrCat(start) : absl::StrCat(start, "-", end));
  }
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<CPUSet> GetReservedCPUs(std::string_view cpus, const CPUSet& online) {
  if (cpus.empty()) return CPUSet();
  absl::StatusOr<CPUSet> reserved = CPUSet::Parse(cpus);
  if (!reserved.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unable to parse reserved-cpus list: ", reserved.status().message()));
  }
  if (!reserved->IsSubsetOf(online)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reserved-cpus: ", AV(cpus), " is not a subset of online-cpus: ", online.String()));
  }
  return reserved;
}

absl::Status ValidateReservedSystemCPUs(std::string_view cpus, int num_cpus) {
  return GetReservedCPUs(cpus, CPUSet::Range(num_cpus)).status();
}

}  // namespace kubelet::config
