// Helpers for the unit tests that run a Kubelet on fakes (kubelet_test).
#ifndef KUBELET_KUBELET_TESTING_KUBELET_TEST_UTIL_H_
#define KUBELET_KUBELET_TESTING_KUBELET_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "api/pod.h"
#include "common/testing/eventually.h"
#include "cri/proto/api.pb.h"
#include "kubelet/container/runtime.h"

namespace kubelet::testing {

// A CRI Status answer with the RuntimeReady and NetworkReady conditions.
inline runtime::v1::StatusResponse RuntimeStatus(bool runtime_ready = true,
                                                 bool network_ready = true) {
  runtime::v1::StatusResponse resp;
  auto* rc = resp.mutable_status()->add_conditions();
  rc->set_type("RuntimeReady");
  rc->set_status(runtime_ready);
  auto* nc = resp.mutable_status()->add_conditions();
  nc->set_type("NetworkReady");
  nc->set_status(network_ready);
  if (!network_ready) nc->set_reason("NetworkPluginNotReady");
  return resp;
}

// Pods as a source hands them to PodConfig: one shared object each.
inline std::vector<api::PodPtr> SharedPods(std::vector<api::Pod> pods) {
  std::vector<api::PodPtr> out;
  out.reserve(pods.size());
  for (api::Pod& p : pods) out.push_back(std::make_shared<const api::Pod>(std::move(p)));
  return out;
}

// A pod the runtime lists (a container::Runtime's GetPods) with one container "main" of id
// `container_id` in `state`; and the status the runtime answers for it, the container in
// `status_state`.
inline container::Pod RuntimePod(const std::string& uid, const std::string& name,
                                 const std::string& container_id, container::State state) {
  container::Pod p;
  p.id = uid;
  p.name = name;
  p.namespace_ = "default";
  container::Container c;
  c.id = {"fake", container_id};
  c.name = "main";
  c.state = state;
  p.containers.push_back(c);
  return p;
}
inline container::PodStatus RuntimePodStatus(const container::Pod& pod,
                                             container::State status_state) {
  container::PodStatus s;
  s.id = pod.id;
  s.name = pod.name;
  s.namespace_ = pod.namespace_;
  for (const container::Container& c : pod.containers) {
    container::ContainerStatus cs;
    cs.id = c.id;
    cs.name = c.name;
    cs.state = status_state;
    s.container_statuses.push_back(cs);
  }
  return s;
}

}  // namespace kubelet::testing

#endif  // KUBELET_KUBELET_TESTING_KUBELET_TEST_UTIL_H_
