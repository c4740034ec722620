// Service environment variables in API-server mode, on the real v1.28.7 control plane and
// containerd with OUR kubelet binary (--kubeconfig, the node's identity), read back with
// `kubectl logs` of containers that print `env`:
//   * a pod of "default" gets the kubernetes service's KUBERNETES_SERVICE_HOST/PORT and a
//     ClusterIP service's <NAME>_SERVICE_HOST/PORT, named ports and Docker link variables; its
//     own env wins over a service variable and $(VAR) expands service variables;
//   * with enableServiceLinks: false only the KUBERNETES_* ones;
//   * a pod of another namespace gets KUBERNETES_* from default/kubernetes, not default's other
//     services.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"

namespace kubelet::e2e {
namespace {

constexpr char kService[] = "envlinks-web";
constexpr char kPrefix[] = "ENVLINKS_WEB";

class ServiceEnvTest : public ApiModeTest {
 protected:
  // kubectl logs reaches the kubelet API on loopback.
  std::string ExtraConfig() override { return "address: 127.0.0.1\n"; }

  void TearDown() override {
    if (cp_) {
      (void)cp_->Kubectl({"delete", "service", kService, "-n", "default", "--wait=false"});
      if (!namespace_.empty()) {
        (void)cp_->Kubectl({"delete", "namespace", namespace_, "--wait=false"});
      }
    }
    ApiModeTest::TearDown();
  }

  // A pod bound to this node whose container prints its environment between markers, then
  // sleeps.
  std::string EnvPod(const std::string& name, const std::string& ns, const std::string& spec,
                     const std::string& container) {
    PodParts parts;
    parts.spec =
        absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n", spec);
    parts.container = container;
    std::string pod = BusyboxPod(name,
                                 "\"echo BEGIN; env; echo END; trap 'exit 0' TERM; "
                                 "while true; do sleep 1; done\"",
                                 parts);
    return absl::StrCat(pod.substr(0, pod.find("\nspec:")), "\n  namespace: ", ns,
                        pod.substr(pod.find("\nspec:")));
  }

  // The environment the pod's container printed (through the API server), empty until it has.
  std::map<std::string, std::string> LoggedEnv(const std::string& name, const std::string& ns,
                                               std::string* raw) {
    std::map<std::string, std::string> env;
    bool got = WaitUntil(
        [&] {
          auto r = cp_->Kubectl({"logs", name, "-n", ns});
          if (!r.ok()) return false;
          *raw = r->out + r->err;
          return r->exit_code == 0 && absl::StrContains(r->out, "\nEND\n");
        },
        absl::Seconds(120), absl::Seconds(1));
    if (!got) return env;
    for (absl::string_view line : absl::StrSplit(*raw, '\n')) {
      const size_t eq = line.find('=');
      if (eq == absl::string_view::npos) continue;
      env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
    return env;
  }

  std::string namespace_;
};

TEST_F(ServiceEnvTest, ServiceLinksInPodEnvironment) {
  const std::string kube_ip = cp_->Get("KUBELET_CP_SERVICE_IP");
  ASSERT_FALSE(kube_ip.empty());
  // A ClusterIP service with a named TCP port and a named UDP port, made before the pods.
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: Service\nmetadata:\n  name: ", kService,
                                 "\n  namespace: default\nspec:\n  type: ClusterIP\n  ports:\n"
                                 "  - name: http-alt\n    port: 8080\n    targetPort: 80\n"
                                 "  - name: dns\n    port: 53\n    protocol: UDP\n"))
                  .ok());
  json svc = GetJson({"get", "service", kService, "-n", "default"});
  ASSERT_TRUE(svc.is_object());
  const std::string svc_ip = svc["spec"].value("clusterIP", "");
  ASSERT_FALSE(svc_ip.empty());

  StartKubelet({"--kubeconfig", kubeconfig_});
  ASSERT_TRUE(WaitNodeReady(absl::Seconds(90)).ok()) << kubelet_->Log();

  // Links on (the default); the container's own value wins, $(VAR) sees service variables.
  const std::string linked = PodName("linked");
  ASSERT_TRUE(Apply(EnvPod(linked, "default", "",
                           absl::StrCat("    env:\n    - name: ", kPrefix,
                                        "_SERVICE_PORT\n      value: \"mine\"\n"
                                        "    - name: API_URL\n      value: "
                                        "\"https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_"
                                        "SERVICE_PORT)\"\n")))
                  .ok());
  // Links off.
  const std::string unlinked = PodName("unlinked");
  ASSERT_TRUE(Apply(EnvPod(unlinked, "default", "  enableServiceLinks: false\n", "")).ok());

  std::string raw;
  std::map<std::string, std::string> env = LoggedEnv(linked, "default", &raw);
  ASSERT_FALSE(env.empty()) << raw << "\n" << kubelet_->Log();
  const std::string p = kPrefix;
  EXPECT_EQ(env["KUBERNETES_SERVICE_HOST"], kube_ip) << raw;
  EXPECT_EQ(env["KUBERNETES_SERVICE_PORT"], "443");
  EXPECT_EQ(env["KUBERNETES_SERVICE_PORT_HTTPS"], "443");
  EXPECT_EQ(env["KUBERNETES_PORT"], absl::StrCat("tcp://", kube_ip, ":443"));
  EXPECT_EQ(env["KUBERNETES_PORT_443_TCP_ADDR"], kube_ip);
  EXPECT_EQ(env["API_URL"], absl::StrCat("https://", kube_ip, ":443"));
  EXPECT_EQ(env[p + "_SERVICE_HOST"], svc_ip) << raw;
  EXPECT_EQ(env[p + "_SERVICE_PORT"], "mine");  // the pod's env wins
  EXPECT_EQ(env[p + "_SERVICE_PORT_HTTP_ALT"], "8080");
  EXPECT_EQ(env[p + "_SERVICE_PORT_DNS"], "53");
  EXPECT_EQ(env[p + "_PORT"], absl::StrCat("tcp://", svc_ip, ":8080"));
  EXPECT_EQ(env[p + "_PORT_8080_TCP"], absl::StrCat("tcp://", svc_ip, ":8080"));
  EXPECT_EQ(env[p + "_PORT_8080_TCP_PROTO"], "tcp");
  EXPECT_EQ(env[p + "_PORT_8080_TCP_PORT"], "8080");
  EXPECT_EQ(env[p + "_PORT_8080_TCP_ADDR"], svc_ip);
  EXPECT_EQ(env[p + "_PORT_53_UDP"], absl::StrCat("udp://", svc_ip, ":53"));
  EXPECT_EQ(env[p + "_PORT_53_UDP_PROTO"], "udp");

  env = LoggedEnv(unlinked, "default", &raw);
  ASSERT_FALSE(env.empty()) << raw << "\n" << kubelet_->Log();
  EXPECT_EQ(env["KUBERNETES_SERVICE_HOST"], kube_ip) << raw;
  EXPECT_EQ(env["KUBERNETES_SERVICE_PORT"], "443");
  for (const auto& [k, v] : env) {
    EXPECT_FALSE(absl::StartsWith(k, p)) << k << "=" << v;
  }

  // Another namespace: the master service from default, none of default's other services.
  namespace_ = PodName("ns");
  auto ns = cp_->Kubectl({"create", "namespace", namespace_});
  ASSERT_TRUE(ns.ok()) << ns.status();
  ASSERT_EQ(ns->exit_code, 0) << ns->err;
  const std::string other = PodName("other");
  // The controller manager makes the namespace's default ServiceAccount the pod needs.
  absl::Status applied;
  EXPECT_TRUE(WaitUntil(
      [&] {
        applied = Apply(EnvPod(other, namespace_, "", ""));
        return applied.ok();
      },
      absl::Seconds(60), absl::Seconds(1)));
  ASSERT_TRUE(applied.ok()) << applied;
  env = LoggedEnv(other, namespace_, &raw);
  ASSERT_FALSE(env.empty()) << raw << "\n" << kubelet_->Log();
  EXPECT_EQ(env["KUBERNETES_SERVICE_HOST"], kube_ip) << raw;
  EXPECT_EQ(env["KUBERNETES_PORT_443_TCP"], absl::StrCat("tcp://", kube_ip, ":443"));
  for (const auto& [k, v] : env) {
    EXPECT_FALSE(absl::StartsWith(k, p)) << k << "=" << v;
  }
}

}  // namespace
}  // namespace kubelet::e2e
