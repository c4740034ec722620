// Mirror pods on the real control plane and containerd: OUR kubelet binary, started with
// --kubeconfig (the node's identity, so NodeRestriction applies) and a static pod manifest,
// makes the static pod visible in the API as its mirror pod `<name>-<node>` (config.mirror
// annotation, owner reference to the Node, the container's real status); `kubectl delete pod`
// of the mirror brings it back (a new UID) without restarting the static pod's container; a
// changed manifest replaces the mirror (new hash); a removed manifest removes it.
//
// The kubelet registers the Node itself here (no precreated Node): the mirror pod's owner
// reference must carry the uid of the Node it registered.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/e2e_env.h"

namespace kubelet::e2e {
namespace {

class MirrorPodsTest : public ApiModeTest {
 protected:
  static std::string Annotation(const json& pod, const std::string& key) {
    if (!pod.is_object() || !pod.contains("metadata")) return "";
    const json& a = pod["metadata"].value("annotations", json::object());
    return a.value(key, "");
  }
  static std::string Uid(const json& pod) {
    return pod.is_object() ? pod["metadata"].value("uid", "") : "";
  }
  // The mirror pod once it reports the running container `container_id`.
  json WaitMirrorRunning(const std::string& name, const std::string& container_id) {
    json pod;
    WaitUntil(
        [&] {
          pod = GetPod(name);
          if (!pod.is_object() || pod["metadata"].contains("deletionTimestamp")) return false;
          const json& st = pod["status"];
          if (st.value("phase", "") != "Running") return false;
          json cs = st.value("containerStatuses", json::array());
          return cs.size() == 1 &&
                 cs[0].value("containerID", "") == CriRuntimeName() + "://" + container_id &&
                 cs[0].contains("state") && cs[0]["state"].contains("running");
        },
        absl::Seconds(90), absl::Milliseconds(500));
    return pod;
  }
};

TEST_F(MirrorPodsTest, MirrorPodFollowsTheStaticPod) {
  WriteManifest("web.yaml", BusyboxPod("web", kSleepForever));
  StartKubelet({"--kubeconfig", kubeconfig_});
  const std::string name = PodName("web");

  ASSERT_TRUE(WaitUntil([&] { return !Running("web", "main").empty(); }, absl::Seconds(120)))
      << kubelet_->Log();
  const std::string container_id = Running("web", "main")[0].id();
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();
  const std::string node_uid = Uid(GetNode());
  ASSERT_FALSE(node_uid.empty());

  // The mirror pod: the static pod's hash, owned by the Node, the container's real status.
  json mirror = WaitMirrorRunning(name, container_id);
  ASSERT_TRUE(mirror.is_object()) << kubelet_->Log();
  ASSERT_EQ(mirror["status"].value("phase", ""), "Running") << mirror.dump(2) << kubelet_->Log();
  const std::string hash = Annotation(mirror, "kubernetes.io/config.hash");
  EXPECT_FALSE(hash.empty());
  EXPECT_EQ(Annotation(mirror, "kubernetes.io/config.mirror"), hash);
  EXPECT_EQ(hash, PodUID("web"));  // the static pod's UID, as the sandbox carries it
  EXPECT_NE(Uid(mirror), hash);
  EXPECT_EQ(mirror["spec"].value("nodeName", ""), node_);
  json owners = mirror["metadata"].value("ownerReferences", json::array());
  ASSERT_EQ(owners.size(), 1u) << mirror.dump(2);
  EXPECT_EQ(owners[0].value("apiVersion", ""), "v1");
  EXPECT_EQ(owners[0].value("kind", ""), "Node");
  EXPECT_EQ(owners[0].value("name", ""), node_);
  EXPECT_EQ(owners[0].value("uid", ""), node_uid);
  EXPECT_TRUE(owners[0].value("controller", false));
  EXPECT_TRUE(ConditionTrue(mirror, "Ready"));
  const json& cs = mirror["status"]["containerStatuses"][0];
  EXPECT_EQ(cs.value("name", ""), "main");
  EXPECT_TRUE(cs.value("ready", false));
  EXPECT_FALSE(cs.value("imageID", "").empty());

  // kubectl delete of the mirror pod: it comes back with a new UID; the static pod's
  // container was never touched.
  const std::string first_uid = Uid(mirror);
  auto del = cp_->Kubectl({"delete", "pod", name, "-n", "default", "--wait=false"});
  ASSERT_TRUE(del.ok()) << del.status();
  ASSERT_EQ(del->exit_code, 0) << del->err;
  json recreated;
  ASSERT_TRUE(WaitUntil(
      [&] {
        recreated = GetPod(name);
        return recreated.is_object() && Uid(recreated) != first_uid &&
               !recreated["metadata"].contains("deletionTimestamp");
      },
      absl::Seconds(90), absl::Milliseconds(500)))
      << recreated.dump(2) << kubelet_->Log();
  EXPECT_EQ(Annotation(recreated, "kubernetes.io/config.mirror"), hash);
  // Its status is pushed again, from the same running container.
  recreated = WaitMirrorRunning(name, container_id);
  EXPECT_EQ(recreated["status"].value("phase", ""), "Running") << recreated.dump(2);
  std::vector<Container> containers = Containers("web", "main");
  ASSERT_EQ(containers.size(), 1u);
  EXPECT_EQ(containers[0].id(), container_id);
  EXPECT_EQ(containers[0].state(), runtime::v1::CONTAINER_RUNNING);
  // The mirror pods never ran: the only sandbox is the static pod's.
  std::vector<PodSandbox> sandboxes = Sandboxes("web");
  ASSERT_EQ(sandboxes.size(), 1u);
  EXPECT_EQ(sandboxes[0].metadata().uid(), hash);

  // A changed manifest: a new static pod (new hash), and its mirror replaces the old one.
  PodParts parts;
  parts.termination_grace_seconds = 7;
  WriteManifest("web.yaml", BusyboxPod("web", kSleepForever, parts));
  json replaced;
  ASSERT_TRUE(WaitUntil(
      [&] {
        replaced = GetPod(name);
        std::string h = Annotation(replaced, "kubernetes.io/config.mirror");
        return !h.empty() && h != hash && h == Annotation(replaced, "kubernetes.io/config.hash") &&
               replaced["spec"].value("terminationGracePeriodSeconds", 0) == 7;
      },
      absl::Seconds(120), absl::Milliseconds(500)))
      << replaced.dump(2) << kubelet_->Log();
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Running("web", "main");
        return r.size() == 1 && r[0].id() != container_id;
      },
      absl::Seconds(120)))
      << kubelet_->Log();
  const std::string new_container = Running("web", "main")[0].id();
  EXPECT_EQ(PodUID("web").empty(), false);
  json running = WaitMirrorRunning(name, new_container);
  EXPECT_EQ(running["status"].value("phase", ""), "Running") << running.dump(2);

  // The manifest removed: the pod stops and its mirror pod leaves the API.
  std::filesystem::remove(manifests_ + "/web.yaml");
  ASSERT_TRUE(WaitUntil([&] { return Running("web").empty(); }, absl::Seconds(60)))
      << kubelet_->Log();
  ASSERT_TRUE(WaitUntil([&] { return PodGone(name); }, absl::Seconds(60), absl::Milliseconds(500)))
      << kubelet_->Log();
}

}  // namespace
}  // namespace kubelet::e2e
