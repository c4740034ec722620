// Linux CPU list sets ("0-3,7"), as k8s.io/utils/cpuset parses and prints them.
//
// Parse accepts a comma-separated list of CPU ids and inclusive ranges "a-b" (a <= b); the empty
// string is the empty set. Errors use the Go wording the kubelet prints, e.g.
// `strconv.Atoi: parsing "x": invalid syntax` or `invalid range "5-3" (5 > 3)`.
// String() renders the canonical form: sorted, contiguous runs collapsed ("0-3,7,9-10").
//
// Also the --reserved-cpus checks the kubelet performs at start-up (server.go getReservedCPUs).
// CPUSet is an immutable value type; thread-compatible.
#ifndef KUBELET_CONFIG_CPUSET_H_
#define KUBELET_CONFIG_CPUSET_H_

#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kubelet::config {

class CPUSet {
 public:
  CPUSet() = default;
  CPUSet(std::initializer_list<int> cpus) : cpus_(cpus) {}
  explicit CPUSet(std::set<int> cpus) : cpus_(std::move(cpus)) {}
  // CPUs 0..n-1.
  static CPUSet Range(int n);

  static absl::StatusOr<CPUSet> Parse(std::string_view s);

  int Size() const { return static_cast<int>(cpus_.size()); }
  bool IsEmpty() const { return cpus_.empty(); }
  bool Contains(int cpu) const { return cpus_.count(cpu) > 0; }
  bool IsSubsetOf(const CPUSet& other) const;
  CPUSet Union(const CPUSet& other) const;
  CPUSet Intersection(const CPUSet& other) const;
  CPUSet Difference(const CPUSet& other) const;
  // Sorted ascending.
  std::vector<int> List() const { return std::vector<int>(cpus_.begin(), cpus_.end()); }

  std::string String() const;

  bool operator==(const CPUSet& o) const { return cpus_ == o.cpus_; }

 private:
  std::set<int> cpus_;
};

// Parses --reserved-cpus and checks it against the online CPUs, as the kubelet does before
// starting the container manager. Empty `cpus` yields the empty set. Errors:
//   "unable to parse reserved-cpus list: <parse error>"
//   "reserved-cpus: <cpus> is not a subset of online-cpus: <online>"
absl::StatusOr<CPUSet> GetReservedCPUs(std::string_view cpus, const CPUSet& online);

// Same check with the machine's CPUs taken as 0..num_cpus-1.
absl::Status ValidateReservedSystemCPUs(std::string_view cpus, int num_cpus);

}  // namespace kubelet::config

#endif  // KUBELET_CONFIG_CPUSET_H_
