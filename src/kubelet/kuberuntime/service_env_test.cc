#include "kubelet/kuberuntime/service_env.h"

#include <map>
#include <string>
#include <vector>

#include "api/static_pod.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/kuberuntime/env.h"
#include "kubelet/kuberuntime/test_util.h"

namespace kubelet::kuberuntime {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeContainer;
using testing::MakePod;
using ::testing::Pair;

api::ServicePort Port(int32_t port, const std::string& name = "",
                      const std::string& protocol = "TCP") {
  api::ServicePort p;
  p.name = name;
  p.port = port;
  p.protocol = protocol;
  return p;
}

api::Service Svc(const std::string& ns, const std::string& name, const std::string& ip,
                 std::vector<api::ServicePort> ports) {
  api::Service s;
  s.metadata.namespace_ = ns;
  s.metadata.name = name;
  s.spec.cluster_ip = ip;
  s.spec.ports = std::move(ports);
  return s;
}

std::map<std::string, std::string> ToMap(const std::vector<EnvVar>& vars) {
  std::map<std::string, std::string> m;
  for (const EnvVar& v : vars) m[v.name] = v.value;
  return m;
}

TEST(ServiceEnvTest, FromServicesNamesPortsProtocols) {
  api::Service s = Svc("ns", "my-svc", "10.0.0.11",
                       {Port(8080, "http"), Port(53, "dns-udp", "UDP"), Port(9999, "", "SCTP")});
  std::vector<EnvVar> vars = FromServices({&s});
  ASSERT_GE(vars.size(), 4u);
  // Upstream's order: host, port, named ports, then the link variables.
  EXPECT_EQ(vars[0], (EnvVar{"MY_SVC_SERVICE_HOST", "10.0.0.11"}));
  EXPECT_EQ(vars[1], (EnvVar{"MY_SVC_SERVICE_PORT", "8080"}));
  EXPECT_EQ(vars[2], (EnvVar{"MY_SVC_SERVICE_PORT_HTTP", "8080"}));
  EXPECT_EQ(vars[3], (EnvVar{"MY_SVC_SERVICE_PORT_DNS_UDP", "53"}));
  EXPECT_EQ(vars[4], (EnvVar{"MY_SVC_PORT", "tcp://10.0.0.11:8080"}));
  EXPECT_EQ(vars.size(), 5u + 3 * 4);
  std::map<std::string, std::string> m = ToMap(vars);
  EXPECT_EQ(m["MY_SVC_PORT_8080_TCP"], "tcp://10.0.0.11:8080");
  EXPECT_EQ(m["MY_SVC_PORT_8080_TCP_PROTO"], "tcp");
  EXPECT_EQ(m["MY_SVC_PORT_8080_TCP_PORT"], "8080");
  EXPECT_EQ(m["MY_SVC_PORT_8080_TCP_ADDR"], "10.0.0.11");
  EXPECT_EQ(m["MY_SVC_PORT_53_UDP"], "udp://10.0.0.11:53");
  EXPECT_EQ(m["MY_SVC_PORT_53_UDP_PROTO"], "udp");
  EXPECT_EQ(m["MY_SVC_PORT_9999_SCTP"], "sctp://10.0.0.11:9999");
  EXPECT_EQ(m["MY_SVC_PORT_9999_SCTP_ADDR"], "10.0.0.11");
  EXPECT_EQ(m.count("MY_SVC_SERVICE_PORT_"), 0u);  // the unnamed port has no named variable
}

TEST(ServiceEnvTest, ProtocolDefaultsToTcp) {
  api::Service s = Svc("ns", "a", "10.0.0.1", {Port(80, "", "")});
  std::map<std::string, std::string> m = ToMap(FromServices({&s}));
  EXPECT_EQ(m["A_PORT"], "tcp://10.0.0.1:80");
  EXPECT_EQ(m["A_PORT_80_TCP_PROTO"], "tcp");
}

TEST(ServiceEnvTest, IPv6IsBracketedInUrls) {
  api::Service s = Svc("ns", "v6", "fd00:10:96::1", {Port(443, "https")});
  std::map<std::string, std::string> m = ToMap(FromServices({&s}));
  EXPECT_EQ(m["V6_SERVICE_HOST"], "fd00:10:96::1");
  EXPECT_EQ(m["V6_PORT"], "tcp://[fd00:10:96::1]:443");
  EXPECT_EQ(m["V6_PORT_443_TCP"], "tcp://[fd00:10:96::1]:443");
  EXPECT_EQ(m["V6_PORT_443_TCP_ADDR"], "fd00:10:96::1");
}

TEST(ServiceEnvTest, HeadlessAndUnsetClusterIPSkipped) {
  api::Service headless = Svc("ns", "headless", "None", {Port(80)});
  api::Service external = Svc("ns", "ext", "", {});
  external.spec.type = "ExternalName";
  external.spec.external_name = "example.com";
  EXPECT_FALSE(IsServiceIPSet(headless));
  EXPECT_FALSE(IsServiceIPSet(external));
  EXPECT_THAT(FromServices({&headless, &external}), IsEmpty());
  EXPECT_THAT(ServiceEnvVarMap({&headless, &external}, "ns", true), IsEmpty());
}

TEST(ServiceEnvTest, ProjectionOfNamespaceAndMasterService) {
  api::Service master = Svc("default", "kubernetes", "10.96.0.1", {Port(443, "https")});
  api::Service mine = Svc("ns", "web", "10.96.0.20", {Port(80)});
  api::Service other = Svc("other", "db", "10.96.0.30", {Port(5432)});
  api::Service default_web = Svc("default", "dweb", "10.96.0.40", {Port(80)});
  std::vector<const api::Service*> all = {&master, &mine, &other, &default_web};

  std::map<std::string, std::string> m = ServiceEnvVarMap(all, "ns", true);
  EXPECT_EQ(m["KUBERNETES_SERVICE_HOST"], "10.96.0.1");
  EXPECT_EQ(m["KUBERNETES_SERVICE_PORT"], "443");
  EXPECT_EQ(m["KUBERNETES_SERVICE_PORT_HTTPS"], "443");
  EXPECT_EQ(m["KUBERNETES_PORT"], "tcp://10.96.0.1:443");
  EXPECT_EQ(m["WEB_SERVICE_HOST"], "10.96.0.20");
  EXPECT_EQ(m.count("DB_SERVICE_HOST"), 0u);
  EXPECT_EQ(m.count("DWEB_SERVICE_HOST"), 0u);

  // enableServiceLinks false: only the master service.
  m = ServiceEnvVarMap(all, "ns", false);
  EXPECT_EQ(m["KUBERNETES_SERVICE_HOST"], "10.96.0.1");
  EXPECT_EQ(m.count("WEB_SERVICE_HOST"), 0u);
  for (const auto& [k, v] : m) EXPECT_EQ(k.rfind("KUBERNETES_", 0), 0u) << k;

  // A pod of "default" sees the default namespace's services.
  m = ServiceEnvVarMap(all, "default", true);
  EXPECT_EQ(m["DWEB_SERVICE_HOST"], "10.96.0.40");
  EXPECT_EQ(m["KUBERNETES_SERVICE_HOST"], "10.96.0.1");
}

TEST(ServiceEnvTest, NamespaceServiceNamedKubernetesWins) {
  api::Service master = Svc("default", "kubernetes", "10.96.0.1", {Port(443, "https")});
  api::Service shadow = Svc("ns", "kubernetes", "10.96.0.99", {Port(8443)});
  // Either order: the pod's namespace wins when links are on.
  EXPECT_EQ(ServiceEnvVarMap({&master, &shadow}, "ns", true)["KUBERNETES_SERVICE_HOST"],
            "10.96.0.99");
  EXPECT_EQ(ServiceEnvVarMap({&shadow, &master}, "ns", true)["KUBERNETES_SERVICE_HOST"],
            "10.96.0.99");
  EXPECT_EQ(ServiceEnvVarMap({&shadow, &master}, "ns", false)["KUBERNETES_SERVICE_HOST"],
            "10.96.0.1");
  // A headless shadow does not hide the master service.
  shadow.spec.cluster_ip = "None";
  EXPECT_EQ(ServiceEnvVarMap({&shadow, &master}, "ns", true)["KUBERNETES_SERVICE_HOST"],
            "10.96.0.1");
}

TEST(ServiceEnvTest, CacheSyncGateAndUpdates) {
  ServiceEnvCache cache;
  api::Pod pod = MakePod("p", {MakeContainer("app")}, {}, "ns");
  absl::StatusOr<std::map<std::string, std::string>> env = cache.EnvFor(pod);
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().message(),
            "services have not yet been read at least once, cannot construct envvars");
  // Static pods do not wait for the services.
  api::Pod static_pod = pod;
  static_pod.metadata.annotations[api::kConfigSourceAnnotationKey] = "file";
  env = cache.EnvFor(static_pod);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_THAT(*env, IsEmpty());
  // An API pod keeps waiting.
  pod.metadata.annotations[api::kConfigSourceAnnotationKey] = "api";
  EXPECT_FALSE(cache.EnvFor(pod).ok());

  cache.Replace({Svc("default", "kubernetes", "10.96.0.1", {Port(443, "https")}),
                 Svc("ns", "web", "10.96.0.20", {Port(80, "http")}),
                 Svc("other", "db", "10.96.0.30", {Port(5432)})});
  EXPECT_TRUE(cache.HasSynced());
  EXPECT_EQ(cache.size(), 3u);
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("KUBERNETES_SERVICE_HOST"), "10.96.0.1");
  EXPECT_EQ(env->at("WEB_SERVICE_PORT_HTTP"), "80");
  EXPECT_EQ(env->count("DB_SERVICE_HOST"), 0u);

  cache.Upsert(Svc("ns", "web", "10.96.0.21", {Port(81, "http")}));
  cache.Upsert(Svc("ns", "cache", "10.96.0.22", {Port(6379)}));
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("WEB_SERVICE_HOST"), "10.96.0.21");
  EXPECT_EQ(env->at("CACHE_PORT"), "tcp://10.96.0.22:6379");

  cache.Remove("ns", "web");
  cache.Remove("ns", "nope");
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->count("WEB_SERVICE_HOST"), 0u);
  EXPECT_EQ(env->count("CACHE_SERVICE_HOST"), 1u);

  pod.spec.enable_service_links = false;
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->count("CACHE_SERVICE_HOST"), 0u);
  EXPECT_EQ(env->at("KUBERNETES_SERVICE_PORT"), "443");

  // A relist drops what is gone.
  cache.Replace(std::vector<api::Service>{});
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_THAT(*env, IsEmpty());
}

// The API server's objects, as a reflector hands them over: decoded once, one that cannot be
// read left out (the others still count), deletions by namespace/name.
TEST(ServiceEnvTest, CacheFedWithTheApiServersObjects) {
  auto svc = [](const std::string& ns, const std::string& name, const std::string& ip) {
    return nlohmann::json{{"metadata", {{"namespace", ns}, {"name", name}}},
                          {"spec", {{"clusterIP", ip}, {"ports", {{{"port", 80}}}}}}};
  };
  ServiceEnvCache cache;
  nlohmann::json broken = svc("ns", "broken", "10.0.0.9");
  broken["spec"]["ports"] = "eighty";
  cache.Replace(std::vector<nlohmann::json>{svc("default", "kubernetes", "10.96.0.1"),
                                            svc("ns", "web", "10.0.0.5"), broken});
  EXPECT_TRUE(cache.HasSynced());
  EXPECT_EQ(cache.size(), 2u);
  api::Pod pod = MakePod("p", {MakeContainer("app")}, {}, "ns");
  auto env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("WEB_SERVICE_HOST"), "10.0.0.5");
  cache.Update(svc("ns", "web", "10.0.0.6"));
  cache.Add(svc("ns", "cache", "10.0.0.7"));
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("WEB_SERVICE_HOST"), "10.0.0.6");
  EXPECT_EQ(env->at("CACHE_SERVICE_HOST"), "10.0.0.7");
  cache.Delete(svc("ns", "web", ""));
  cache.Delete(nlohmann::json{{"metadata", 5}});  // not an object's metadata: ignored
  env = cache.EnvFor(pod);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->count("WEB_SERVICE_HOST"), 0u);
  EXPECT_EQ(cache.size(), 2u);
}

// The container's environment with the service variables (upstream makeEnvironmentVariables).
TEST(ServiceEnvTest, PrecedenceAndExpansionInContainerEnv) {
  api::Container c = MakeContainer("app");
  auto env = [](const std::string& n, const std::string& v) {
    api::EnvVar e;
    e.name = n;
    e.value = v;
    return e;
  };
  c.env = {env("WEB_SERVICE_HOST", "mine"),
           env("URL", "http://$(WEB_SERVICE_HOST):$(WEB_SERVICE_PORT)"),
           env("MASTER", "$(KUBERNETES_SERVICE_HOST)"), env("FROM_CM", "$(CM_KEY)")};
  api::EnvFromSource from;
  from.config_map_ref = api::ConfigMapEnvSource{"cm", std::nullopt};
  c.env_from = {from};
  c.command = {"sh", "-c", "echo $(KUBERNETES_PORT) $(WEB_PORT)"};
  c.args = {"$(WEB_SERVICE_PORT_HTTP)"};
  api::Pod pod = MakePod("p", {c}, {}, "ns");

  ServiceEnvCache cache;
  cache.Replace({Svc("default", "kubernetes", "10.96.0.1", {Port(443, "https")}),
                 Svc("ns", "web", "10.96.0.20", {Port(80, "http")}),
                 Svc("ns", "cm-svc", "10.96.0.30", {Port(90)})});
  EnvContext ctx;
  ctx.service_env = [&cache](const api::Pod& p) { return cache.EnvFor(p); };
  ctx.get_config_map =
      [](const std::string&,
         const std::string&) -> absl::StatusOr<std::map<std::string, std::string>> {
    // envFrom defines a service variable name too: the container's own value wins.
    return std::map<std::string, std::string>{{"CM_KEY", "cmv"}, {"CM_SVC_SERVICE_HOST", "fromcm"}};
  };
  absl::StatusOr<std::vector<EnvVar>> vars =
      MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx);
  ASSERT_TRUE(vars.ok()) << vars.status();
  std::map<std::string, std::string> m = ToMap(*vars);
  EXPECT_EQ(m["WEB_SERVICE_HOST"], "mine");
  // Expansion sees the container's own definition first, then the service variables.
  EXPECT_EQ(m["URL"], "http://mine:80");
  EXPECT_EQ(m["MASTER"], "10.96.0.1");
  EXPECT_EQ(m["FROM_CM"], "cmv");
  EXPECT_EQ(m["CM_SVC_SERVICE_HOST"], "fromcm");
  EXPECT_EQ(m["KUBERNETES_SERVICE_PORT"], "443");
  EXPECT_EQ(m["WEB_PORT_80_TCP_ADDR"], "10.96.0.20");
  // Each name once; the container's variables first, then the service ones.
  std::map<std::string, int> seen;
  for (const EnvVar& v : *vars) ++seen[v.name];
  for (const auto& [k, n] : seen) EXPECT_EQ(n, 1) << k;
  EXPECT_EQ((*vars)[0].name, "CM_KEY");
  EXPECT_EQ((*vars)[1].name, "CM_SVC_SERVICE_HOST");
  EXPECT_EQ((*vars)[2].name, "WEB_SERVICE_HOST");
  EXPECT_EQ((*vars)[5].name, "FROM_CM");
  EXPECT_EQ((*vars)[6].name, "CM_SVC_PORT");  // then sorted service variables

  auto [command, args] = ExpandContainerCommandAndArgs(pod.spec.containers[0], *vars);
  EXPECT_THAT(command, ElementsAre("sh", "-c", "echo tcp://10.96.0.1:443 tcp://10.96.0.20:80"));
  EXPECT_THAT(args, ElementsAre("80"));

  // Not synced: the whole environment fails with upstream's message.
  ServiceEnvCache empty;
  ctx.service_env = [&empty](const api::Pod& p) { return empty.EnvFor(p); };
  vars = MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx);
  ASSERT_FALSE(vars.ok());
  EXPECT_EQ(vars.status().message(),
            "services have not yet been read at least once, cannot construct envvars");

  // Without the hook (standalone): no service variables, references stay verbatim.
  ctx.service_env = nullptr;
  vars = MakeEnvironmentVariables(pod, pod.spec.containers[0], {}, ctx);
  ASSERT_TRUE(vars.ok());
  m = ToMap(*vars);
  EXPECT_EQ(m["MASTER"], "$(KUBERNETES_SERVICE_HOST)");
  EXPECT_EQ(vars->size(), 6u);
}

// Through the runtime manager: an unsynced cache is CreateContainerConfigError, then the retry
// starts the container with the variables.
TEST(ServiceEnvTest, ManagerStartFailsUntilSynced) {
  auto cache = std::make_shared<ServiceEnvCache>();
  Options opts;
  opts.service_env = [cache](const api::Pod& p) { return cache->EnvFor(p); };
  testing::ManagerFixture f(opts);
  api::Pod pod = MakePod("p", {MakeContainer("app")});
  pod.metadata.annotations[api::kConfigSourceAnnotationKey] = "api";
  container::PodSyncResult r = f.Sync(pod);
  const container::SyncResult* s = nullptr;
  for (const container::SyncResult& res : r.results) {
    if (res.action == container::SyncResult::Action::kStartContainer) s = &res;
  }
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->reason, kErrCreateContainerConfig);
  EXPECT_EQ(s->message, "services have not yet been read at least once, cannot construct envvars");

  cache->Replace({Svc("default", "kubernetes", "10.96.0.1", {Port(443, "https")})});
  f.clock.Advance(absl::Seconds(1));
  r = f.Sync(pod);
  ASSERT_TRUE(r.Error().ok()) << r.Error();
  bool found = false;
  for (const std::string& id : f.fake.container_ids()) {
    std::optional<runtime::v1::ContainerConfig> cfg = f.fake.GetContainerConfig(id);
    if (!cfg.has_value()) continue;
    for (const auto& kv : cfg->envs()) {
      if (kv.key() == "KUBERNETES_SERVICE_HOST") {
        found = true;
        EXPECT_EQ(kv.value(), "10.96.0.1");
      }
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace kubelet::kuberuntime
