#include <map>
#include <string>

#include "api/quantity.h"
#include "kubelet/kubelet.h"

namespace kubelet {
namespace {

// Sum of a reservation map's cpu (millicores) and memory (bytes); unparsable values were
// rejected by validation, so they count as zero here.
void AddReserved(const std::map<std::string, std::string>& reserved, int64_t* milli_cpu,
                 int64_t* memory) {
  auto cpu = reserved.find("cpu");
  if (cpu != reserved.end()) {
    auto q = api::Quantity::Parse(cpu->second);
    if (q.ok()) *milli_cpu += q->MilliValue();
  }
  auto mem = reserved.find("memory");
  if (mem != reserved.end()) {
    auto q = api::Quantity::Parse(mem->second);
    if (q.ok()) *memory += q->Value();
  }
}

}  // namespace

absl::StatusOr<KubeletOptions> KubeletOptionsFromConfig(const config::KubeletConfiguration& c,
                                                        std::string_view kernel_release) {
  KubeletOptions ko;
  ko.static_pod_path = c.static_pod_path;
  ko.file_check_frequency = c.file_check_frequency;
  ko.static_pod_url = c.static_pod_url;
  ko.static_pod_url_header = c.static_pod_url_header;
  ko.http_check_frequency = c.http_check_frequency;
  ko.sync_frequency = c.sync_frequency;
  int64_t reserved_cpu = 0, reserved_mem = 0;
  AddReserved(c.system_reserved, &reserved_cpu, &reserved_mem);
  AddReserved(c.kube_reserved, &reserved_cpu, &reserved_mem);
  ko.allocatable = MachineAllocatable(c.max_pods, reserved_cpu, reserved_mem);
  // Safe sysctls can always be used; allowedUnsafeSysctls adds to them.
  absl::StatusOr<SysctlAllowlist> sysctls =
      SysctlAllowlist::Create(kernel_release, c.allowed_unsafe_sysctls);
  if (!sysctls.ok()) return sysctls.status();
  ko.sysctls = *std::move(sysctls);
  return ko;
}

}  // namespace kubelet
