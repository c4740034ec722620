// CgroupName: a driver-neutral cgroup name (a list of path components, outermost first) and its
// two on-disk spellings, as upstream pkg/kubelet/cm names cgroups:
//   cgroupfs  {"kubepods", "burstable", "pod1234-ab"} <-> "/kubepods/burstable/pod1234-ab"
//   systemd   same name <-> "/kubepods.slice/kubepods-burstable.slice/
//                            kubepods-burstable-pod1234_ab.slice"
// (systemd spelling: each component has '-' escaped to '_', the components are joined with '-'
// and the slice is expanded into its ancestors' directories.)
//
// Value type; thread-compatible. Pure functions.
#ifndef KUBELET_KUBELET_CM_CGROUP_NAME_H_
#define KUBELET_KUBELET_CM_CGROUP_NAME_H_

#include <string>
#include <string_view>
#include <vector>

namespace kubelet::cm {

using CgroupName = std::vector<std::string>;

// The root cgroup: no components.
inline CgroupName RootCgroupName() { return {}; }
// `base` with `components` appended.
CgroupName NewCgroupName(const CgroupName& base, const std::vector<std::string>& components);

// "/a/b" -> {"a", "b"}; "/" and "" -> {}.
CgroupName ParseCgroupfsToCgroupName(std::string_view path);
// {"a", "b"} -> "/a/b"; {} -> "/".
std::string ToCgroupfs(const CgroupName& name);
// {"a", "b-c"} -> "/a.slice/a-b_c.slice"; {} -> "/".
std::string ToSystemd(const CgroupName& name);
// Base name of a systemd slice path -> name ("/x/a-b_c.slice" -> {"a", "b-c"}).
CgroupName ParseSystemdToCgroupName(std::string_view path);
// The slice unit's own name ({"a", "b"} -> "a-b.slice"); "-.slice" for the root.
std::string SystemdSliceName(const CgroupName& name);

}  // namespace kubelet::cm

#endif  // KUBELET_KUBELET_CM_CGROUP_NAME_H_
