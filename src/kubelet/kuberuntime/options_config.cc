#include "kubelet/kuberuntime/options.h"

namespace kubelet::kuberuntime {

Options RuntimeOptionsFromConfig(const config::KubeletConfiguration& c,
                                 const config::FeatureGate& gates) {
  Options o;
  o.cluster_dns = c.cluster_dns;
  o.cluster_domain = c.cluster_domain;
  o.resolv_conf = c.resolv_conf;
  o.cpu_cfs_quota = c.cpu_cfs_quota;
  // Upstream keeps 100ms unless the gate lets cpuCFSQuotaPeriod through.
  if (gates.Enabled("CustomCPUCFSQuotaPeriod")) o.cpu_cfs_quota_period = c.cpu_cfs_quota_period;
  o.in_place_pod_vertical_scaling = gates.Enabled("InPlacePodVerticalScaling");
  o.seccomp_default = c.seccomp_default;
  o.serialize_image_pulls = c.serialize_image_pulls;
  o.max_parallel_image_pulls = c.max_parallel_image_pulls;
  o.registry_pull_qps = c.registry_pull_qps;
  o.registry_burst = c.registry_burst;
  return o;
}

}  // namespace kubelet::kuberuntime
