// Pod content from the cluster, on the real v1.28.7 control plane and containerd with OUR kubelet
// binary (--kubeconfig, the node's identity):
//   * a pod with the default service account (no automountServiceAccountToken: false) gets the
//     admission's kube-api-access-* projected volume: token (a JWT the API server accepts, checked
//     with a TokenReview), ca.crt (the kube-root-ca.crt configMap) and namespace;
//   * configMap (items, per-item mode) and secret (defaultMode) volumes show their files with
//     the right contents and modes, and a change of the configMap reaches the running pod;
//   * a pod referencing a missing configMap stays ContainerCreating with a FailedMount event
//     and starts once the configMap is created.
// No timing is asserted: every wait is a generous bound.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

class ClusterContentTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return "address: 127.0.0.1\n"; }

  void StartNode() {
    StartKubelet({"--kubeconfig", kubeconfig_});
    absl::Status ready = WaitNodeReady(absl::Seconds(90));
    ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  }

  // `kubectl logs` of the pod once it contains `marker` ("" when it never did).
  std::string LogsWith(const std::string& pod, const std::string& marker,
                       absl::Duration timeout = absl::Seconds(120)) {
    std::string out;
    bool got = WaitUntil(
        [&] {
          auto r = cp_->Kubectl({"logs", pod, "-n", "default"});
          if (!r.ok() || r->exit_code != 0) return false;
          out = r->out;
          return absl::StrContains(out, marker);
        },
        timeout, absl::Seconds(1));
    return got ? out : "";
  }

  // The value after "<key>=" on its own line of `logs` ("" when absent).
  static std::string Field(const std::string& logs, const std::string& key) {
    for (absl::string_view line : absl::StrSplit(logs, '\n')) {
      if (absl::StartsWith(line, key + "=")) return std::string(line.substr(key.size() + 1));
    }
    return "";
  }

  std::string Describe(const std::string& pod) {
    auto r = cp_->Kubectl({"describe", "pod", pod, "-n", "default"});
    return r.ok() ? r->out : "";
  }
};

TEST_F(ClusterContentTest, DefaultServiceAccountTokenVolume) {
  StartNode();
  const std::string name = PodName("sa");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n");
  const std::string dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  ASSERT_TRUE(Apply(BusyboxPod(name,
                               absl::StrCat("\"d=", dir,
                                            "; echo TOKEN=$(cat $d/token); "
                                            "echo NS=$(cat $d/namespace); "
                                            "echo CA_BEGIN; cat $d/ca.crt; echo CA_END; ",
                                            "trap 'exit 0' TERM; while true; do sleep 1; done\""),
                               parts))
                  .ok());
  json pod = GetPod(name);
  ASSERT_TRUE(pod.is_object());
  bool has_kaa = false;
  for (const json& v : pod["spec"].value("volumes", json::array())) {
    has_kaa |= absl::StartsWith(v.value("name", ""), "kube-api-access-");
  }
  ASSERT_TRUE(has_kaa) << pod.dump(2);

  const std::string logs = LogsWith(name, "CA_END");
  ASSERT_FALSE(logs.empty()) << Describe(name) << "\n" << kubelet_->Log();
  const std::string token = Field(logs, "TOKEN");
  std::vector<std::string> parts_of_jwt = absl::StrSplit(token, '.');
  EXPECT_EQ(parts_of_jwt.size(), 3u) << token.size();
  EXPECT_TRUE(absl::StartsWith(token, "eyJ"));
  EXPECT_EQ(Field(logs, "NS"), "default");
  // ca.crt is the kube-root-ca.crt configMap the controller manager publishes.
  json root_ca = GetJson({"get", "configmap", "kube-root-ca.crt", "-n", "default"});
  ASSERT_TRUE(root_ca.is_object());
  const std::string ca = root_ca["data"].value("ca.crt", "");
  ASSERT_TRUE(absl::StrContains(ca, "BEGIN CERTIFICATE"));
  const size_t begin = logs.find("CA_BEGIN\n") + 9;
  EXPECT_EQ(logs.substr(begin, logs.find("CA_END") - begin), ca);

  // The API server accepts the token: a TokenReview as admin authenticates it as the pod's
  // service account, bound to the pod.
  json review = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", token}}}};
  auto r = cp_->Kubectl({"create", "-f", "-", "-o", "json"}, review.dump());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->err;
  json status = json::parse(r->out, nullptr, false)["status"];
  EXPECT_TRUE(status.value("authenticated", false)) << status.dump();
  EXPECT_EQ(status["user"].value("username", ""), "system:serviceaccount:default:default");
  const json extra = status["user"].value("extra", json::object());
  ASSERT_TRUE(extra.contains("authentication.kubernetes.io/pod-name")) << status.dump();
  EXPECT_EQ(extra["authentication.kubernetes.io/pod-name"][0], name);
}

TEST_F(ClusterContentTest, ConfigMapAndSecretVolumesAndUpdates) {
  StartNode();
  const std::string cm = PodName("cfg");
  const std::string secret = PodName("creds");
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", cm,
                                 "\n  namespace: default\ndata:\n  app.conf: alpha\n"
                                 "  unused: x\nbinaryData:\n  blob: aGVsbG8=\n"))
                  .ok());
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: Secret\nmetadata:\n  name: ", secret,
                                 "\n  namespace: default\nstringData:\n  password: s3cret\n"))
                  .ok());
  const std::string name = PodName("content");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_,
                            "\n  automountServiceAccountToken: false\n"
                            "  volumes:\n"
                            "  - name: cfg\n    configMap:\n      name: ",
                            cm,
                            "\n      items:\n      - key: app.conf\n        path: conf/app.conf\n"
                            "        mode: 0600\n      - key: blob\n        path: blob\n"
                            "  - name: sec\n    secret:\n      secretName: ",
                            secret, "\n      defaultMode: 0400\n");
  parts.container =
      "    volumeMounts:\n    - name: cfg\n      mountPath: /cfg\n"
      "    - name: sec\n      mountPath: /sec\n";
  ASSERT_TRUE(
      Apply(BusyboxPod(name,
                       "\"echo MODE_APP=$(stat -L -c %a /cfg/conf/app.conf); "
                       "echo MODE_BLOB=$(stat -L -c %a /cfg/blob); "
                       "echo MODE_PW=$(stat -L -c %a /sec/password); "
                       "echo BLOB=$(cat /cfg/blob); echo PW=$(cat /sec/password); "
                       "echo UNUSED=$(ls /cfg/unused 2>/dev/null || echo absent); "
                       "trap 'exit 0' TERM; last=; while true; do v=$(cat /cfg/conf/app.conf); "
                       "if [ \\\"$v\\\" != \\\"$last\\\" ]; then echo APP=$v; last=$v; fi; "
                       "sleep 1; done\"",
                       parts))
          .ok());
  const std::string logs = LogsWith(name, "APP=alpha");
  ASSERT_FALSE(logs.empty()) << Describe(name) << "\n" << kubelet_->Log();
  EXPECT_EQ(Field(logs, "MODE_APP"), "600");
  EXPECT_EQ(Field(logs, "MODE_BLOB"), "644");
  EXPECT_EQ(Field(logs, "MODE_PW"), "400");
  EXPECT_EQ(Field(logs, "BLOB"), "hello");
  EXPECT_EQ(Field(logs, "PW"), "s3cret");
  EXPECT_EQ(Field(logs, "UNUSED"), "absent");

  // The change reaches the running pod's volume (within the pod's resync period, as upstream).
  // Read on the host, in the directory the container bind-mounts: /var/log/pods is shared with
  // whatever else runs on the machine, so the container's log is not a reliable witness here.
  const std::string uid = GetPod(name)["metadata"].value("uid", "");
  const std::string app_conf =
      absl::StrCat(dir_, "/root/pods/", uid, "/volumes/kubernetes.io~configmap/cfg/conf/app.conf");
  auto read = [&] {
    std::ifstream in(app_conf);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  ASSERT_EQ(read(), "alpha");
  auto patch = cp_->Kubectl({"patch", "configmap", cm, "-n", "default", "--type=merge", "-p",
                             R"({"data":{"app.conf":"beta"}})"});
  ASSERT_TRUE(patch.ok()) << patch.status();
  ASSERT_EQ(patch->exit_code, 0) << patch->err;
  EXPECT_TRUE(WaitUntil([&] { return read() == "beta"; }, absl::Seconds(240), absl::Seconds(1)))
      << read() << "\n"
      << kubelet_->Log();
  (void)cp_->Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
  (void)cp_->Kubectl({"delete", "secret", secret, "-n", "default", "--wait=false"});
}

TEST_F(ClusterContentTest, MissingConfigMapHoldsThePodUntilCreated) {
  StartNode();
  const std::string cm = PodName("late");
  const std::string name = PodName("waiter");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_,
                            "\n  automountServiceAccountToken: false\n"
                            "  volumes:\n  - name: cfg\n    configMap:\n      name: ",
                            cm, "\n");
  parts.container = "    volumeMounts:\n    - name: cfg\n      mountPath: /cfg\n";
  ASSERT_TRUE(Apply(BusyboxPod(name,
                               "\"echo GOT=$(cat /cfg/k); trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  const std::string want = absl::StrCat(
      "MountVolume.SetUp failed for volume \"cfg\" : configmap \"", cm, "\" not found");
  json events;
  bool failed_mount = WaitUntil(
      [&] {
        events = GetJson({"get", "events", "-n", "default", "--field-selector",
                          "involvedObject.name=" + name + ",reason=FailedMount"});
        if (!events.is_object()) return false;
        for (const json& e : events.value("items", json::array())) {
          if (e.value("message", "") == want && e.value("type", "") == "Warning") return true;
        }
        return false;
      },
      absl::Seconds(120), absl::Seconds(1));
  ASSERT_TRUE(failed_mount) << events.dump(2) << "\n" << kubelet_->Log();
  json pod = GetPod(name);
  ASSERT_TRUE(pod.is_object());
  EXPECT_EQ(pod["status"].value("phase", ""), "Pending");
  for (const json& cs : pod["status"].value("containerStatuses", json::array())) {
    EXPECT_EQ(cs["state"]["waiting"].value("reason", ""), "ContainerCreating") << cs.dump();
  }

  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", cm,
                                 "\n  namespace: default\ndata:\n  k: here\n"))
                  .ok());
  const std::string logs = LogsWith(name, "GOT=", absl::Seconds(300));
  ASSERT_FALSE(logs.empty()) << Describe(name) << "\n" << kubelet_->Log();
  EXPECT_EQ(Field(logs, "GOT"), "here");
  EXPECT_TRUE(WaitUntil([&] { return GetPod(name)["status"].value("phase", "") == "Running"; },
                        absl::Seconds(60), absl::Seconds(1)));
  (void)cp_->Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
}

}  // namespace
}  // namespace kubelet::e2e
