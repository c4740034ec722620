// PodBuilder: the unit tests' one way to make a pod. Starts from a pod named `name` in namespace
// "default" with UID "uid-<name>" and no containers; each call sets one thing and returns the
// builder, Build() (or the conversion) yields the pod:
//
//   api::Pod p = testing::PodBuilder("web").Uid("u1").Container("main", "busybox")
//                    .Requests("100m", "64Mi").Static();
//
// Requests / Limits / Port / Mount apply to the last container added (Container() adds one named
// "main" when there is none yet). Quantities that do not parse abort the test program: they are
// the test's own constants.
#ifndef KUBELET_API_TESTING_POD_BUILDER_H_
#define KUBELET_API_TESTING_POD_BUILDER_H_

#include <cstdlib>
#include <string>
#include <utility>

#include "api/pod.h"
#include "api/pod_defaults.h"
#include "api/quantity.h"
#include "api/static_pod.h"

namespace kubelet::api::testing {

class PodBuilder {
 public:
  explicit PodBuilder(std::string name) {
    pod_.metadata.uid = "uid-" + name;
    pod_.metadata.name = std::move(name);
    pod_.metadata.namespace_ = "default";
  }

  PodBuilder& Name(std::string name) {
    pod_.metadata.name = std::move(name);
    return *this;
  }
  PodBuilder& Namespace(std::string ns) {
    pod_.metadata.namespace_ = std::move(ns);
    return *this;
  }
  PodBuilder& Uid(std::string uid) {
    pod_.metadata.uid = std::move(uid);
    return *this;
  }
  PodBuilder& Node(std::string node) {
    pod_.spec.node_name = std::move(node);
    return *this;
  }
  PodBuilder& Label(const std::string& key, std::string value) {
    pod_.metadata.labels[key] = std::move(value);
    return *this;
  }
  PodBuilder& Annotation(const std::string& key, std::string value) {
    pod_.metadata.annotations[key] = std::move(value);
    return *this;
  }
  // A static pod of `source` ("file" or "http"), as the kubelet's sources mark them.
  PodBuilder& Static(std::string source = "file") {
    return Annotation(kConfigSourceAnnotationKey, std::move(source));
  }
  PodBuilder& RestartPolicy(std::string policy) {
    pod_.spec.restart_policy = std::move(policy);
    return *this;
  }
  PodBuilder& ServiceAccount(std::string name) {
    pod_.spec.service_account_name = std::move(name);
    return *this;
  }
  PodBuilder& Container(api::Container c) {
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& Container(std::string name, std::string image = "busybox") {
    api::Container c;
    c.name = std::move(name);
    c.image = std::move(image);
    return Container(std::move(c));
  }
  PodBuilder& InitContainer(api::Container c) {
    pod_.spec.init_containers.push_back(std::move(c));
    return *this;
  }
  // Resource requests and limits of the last container; "" leaves a resource out.
  PodBuilder& Requests(const std::string& cpu, const std::string& memory) {
    Set(&Last().resources.requests, cpu, memory);
    return *this;
  }
  PodBuilder& Limits(const std::string& cpu, const std::string& memory) {
    Set(&Last().resources.limits, cpu, memory);
    return *this;
  }
  PodBuilder& Resources(api::ResourceList requests, api::ResourceList limits) {
    Last().resources.requests = std::move(requests);
    Last().resources.limits = std::move(limits);
    return *this;
  }
  PodBuilder& Volume(api::Volume v) {
    pod_.spec.volumes.push_back(std::move(v));
    return *this;
  }
  // Applies the API server's defaults (api::SetDefaultsPod).
  PodBuilder& Defaulted() {
    SetDefaultsPod(&pod_);
    return *this;
  }

  api::Pod Build() const { return pod_; }
  operator api::Pod() const { return pod_; }  // NOLINT: a builder converts implicitly

 private:
  api::Container& Last() {
    if (pod_.spec.containers.empty()) Container("main", "");
    return pod_.spec.containers.back();
  }
  static void Set(api::ResourceList* list, const std::string& cpu, const std::string& memory) {
    if (!cpu.empty()) (*list)[kResourceCPU] = Parse(cpu);
    if (!memory.empty()) (*list)[kResourceMemory] = Parse(memory);
  }
  static api::Quantity Parse(const std::string& text) {
    absl::StatusOr<api::Quantity> q = api::Quantity::Parse(text);
    if (!q.ok()) std::abort();
    return *q;
  }

  api::Pod pod_;
};

}  // namespace kubelet::api::testing

#endif  // KUBELET_API_TESTING_POD_BUILDER_H_
