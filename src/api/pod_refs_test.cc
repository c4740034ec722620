#include "api/pod_refs.h"

#include "api/pod_codec.h"
#include "gtest/gtest.h"

namespace kubelet::api {
namespace {

TEST(PodRefs, EveryPlaceAPodNamesAConfigMapOrSecret) {
  absl::StatusOr<Pod> pod = DecodePod(R"({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
    "spec": {
      "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
      "initContainers": [{"name": "i", "image": "x",
        "envFrom": [{"secretRef": {"name": "init-sec"}}, {"configMapRef": {"name": "init-cm"}}]}],
      "containers": [{"name": "c", "image": "x", "env": [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "env-cm", "key": "k"}}},
        {"name": "B", "valueFrom": {"secretKeyRef": {"name": "env-sec", "key": "k"}}},
        {"name": "C", "value": "plain"}]}],
      "ephemeralContainers": [{"name": "e", "image": "x",
        "envFrom": [{"configMapRef": {"name": "eph-cm"}}]}],
      "volumes": [
        {"name": "v1", "configMap": {"name": "vol-cm"}},
        {"name": "v2", "secret": {"secretName": "vol-sec"}},
        {"name": "v3", "projected": {"sources": [
          {"configMap": {"name": "proj-cm"}}, {"secret": {"name": "proj-sec"}},
          {"serviceAccountToken": {"path": "token"}}]}},
        {"name": "v4", "emptyDir": {}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(PodSecretNames(*pod),
            (std::set<std::string>{"", "env-sec", "init-sec", "proj-sec", "pull", "vol-sec"}));
  EXPECT_EQ(PodConfigMapNames(*pod),
            (std::set<std::string>{"env-cm", "eph-cm", "init-cm", "proj-cm", "vol-cm"}));
}

}  // namespace
}  // namespace kubelet::api
