// What managed and cloud nodes turn on, on the real v1.28.7 control plane and containerd with
// OUR kubelet binary (--kubeconfig, the node's identity):
//   * image credential provider plugins (--image-credential-provider-config / -bin-dir) against a
//     registry with basic auth (harness/auth-registry.sh), with the tests' own plugin
//     (test_credential_provider): a plugin that writes garbage fails that pull only (401, the
//     other pods run, the kubelet stays up); a plugin that answers makes two pods of the image
//     pull with one plugin run (cacheKeyType Registry); no credential in the kubelet's log;
//   * graceful node shutdown on a private D-Bus bus with the tests' logind stand-in
//     (test_logind): the kubelet holds a delay inhibitor lock; logind's PrepareForShutdown(true),
//     sent with dbus-send as upstream's node e2e sends it, makes the Node NotReady ("node is
//     shutting down"), kills the regular pod then the critical one (Failed, reason Terminated,
//     DisruptionTarget), rejects new pods (NodeShutdown) and releases the lock;
//     PrepareForShutdown(false) takes the lock again and the node admits pods again;
//   * --config-dir drop-ins (KUBELET_CONFIG_DROPIN_DIR_ALPHA) merged in lexical order over
//     --config, flags on top, as /configz shows; and with a drop-in's NodeLogQuery gate and
//     enableSystemLogQuery, the node log query through the API server's node proxy (`kubectl get
//     --raw /api/v1/nodes/<node>/proxy/logs/?query=...`, a file under /var/log; the node's name
//     resolved to the machine's own address, as the proxy refuses loopback), bad input refused
//     with 406, and the /logs/ file server.
// No timing is asserted: every wait is a generous bound.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kubelet/nodeshutdown/testing/private_bus.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/http_client.h"
#include "test/e2e/kubelet_process.h"

namespace kubelet::e2e {
namespace {

class ManagedNodeTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return "address: " + address_ + "\n" + extra_config_; }

  // The machine's address toward its default route ("" when it has none).
  static std::string HostAddress() {
    auto r = RunCommand({"ip", "-4", "-o", "route", "get", "192.0.2.123"}, {}, absl::Seconds(10));
    if (!r.ok() || r->exit_code != 0) return "";
    std::vector<std::string> f = absl::StrSplit(r->out, ' ', absl::SkipEmpty());
    for (size_t i = 0; i + 1 < f.size(); ++i) {
      if (f[i] == "src" && !absl::StartsWith(f[i + 1], "127.")) return f[i + 1];
    }
    return "";
  }

  // Makes the node's name resolve to `ip` for the API server instead of 127.0.0.1 (the harness's
  // /etc/hosts line for it, rewritten in place; the harness removes it with the control plane).
  // The API server's node proxy refuses loopback addresses.
  bool ResolveNodeTo(const std::string& ip) {
    std::ifstream in("/etc/hosts");
    std::string out, line;
    bool found = false;
    while (std::getline(in, line)) {
      const std::string prefix = "127.0.0.1 " + node_ + " ";
      if (absl::StartsWith(line, prefix)) {
        line = ip + " " + line.substr(std::string("127.0.0.1 ").size());
        found = true;
      }
      absl::StrAppend(&out, line, "\n");
    }
    in.close();
    if (!found) return false;
    std::ofstream f("/etc/hosts", std::ios::trunc);  // in place: it may be a bind mount
    f << out;
    return f.good();
  }

  void StartNode(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--kubeconfig", kubeconfig_};
    args.insert(args.end(), extra.begin(), extra.end());
    StartKubelet(args);
    absl::Status ready = WaitNodeReady(absl::Seconds(90));
    ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  }

  std::string Phase(const std::string& pod, const std::string& ns = "default") {
    return GetPod(pod, ns)["status"].value("phase", "");
  }
  bool WaitPhase(const std::string& pod, const std::string& phase,
                 const std::string& ns = "default", absl::Duration timeout = absl::Seconds(120)) {
    return WaitUntil([&] { return Phase(pod, ns) == phase; }, timeout, absl::Seconds(1));
  }

  // The waiting reason of the pod's first container ("" when not waiting).
  std::string WaitingReason(const std::string& pod) {
    json p = GetPod(pod);
    if (!p.is_object()) return "";
    for (const json& cs : p["status"].value("containerStatuses", json::array())) {
      json w = cs["state"].value("waiting", json());
      if (w.is_object()) return w.value("reason", "");
    }
    return "";
  }

  std::vector<json> Events(const std::string& pod, const std::string& reason) {
    json events = GetJson({"get", "events", "-n", "default", "--field-selector",
                           "involvedObject.name=" + pod + ",reason=" + reason});
    std::vector<json> out;
    if (!events.is_object()) return out;
    for (const json& e : events.value("items", json::array())) out.push_back(e);
    return out;
  }

  // GET of `path` on the kubelet's secure port (anonymous, AlwaysAllow). The API server's node
  // proxy refuses loopback addresses ("address not allowed"), and the harness's kubelets are
  // reached on 127.0.0.1.
  HttpAnswer KubeletGet(const std::string& path) {
    return HttpRequest(absl::StrCat("https://127.0.0.1:", api_port_, path));
  }

  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  static size_t Lines(const std::string& path) {
    size_t n = 0;
    for (absl::string_view l : absl::StrSplit(ReadAll(path), '\n')) {
      if (!l.empty()) ++n;
    }
    return n;
  }

  bool KubeletAlive() { return kubelet_ && !kubelet_->Wait(absl::ZeroDuration()).has_value(); }

  std::string extra_config_;
  std::string address_ = "127.0.0.1";  // the kubelet API's listening address
};

// The registry with basic auth of harness/auth-registry.sh, up for the test's lifetime.
struct AuthRegistry {
  std::map<std::string, std::string> env;
  std::vector<std::string> down;
  ~AuthRegistry() {
    if (!down.empty()) (void)RunCommand(down, {}, absl::Seconds(60));
  }
};

TEST_F(ManagedNodeTest, CredentialProviderPlugin) {
  const char* env_file = std::getenv("KUBELET_E2E_ENV_FILE");
  const char* harness = std::getenv("KUBELET_E2E_HARNESS");
  const char* plugin = std::getenv("KUBELET_TEST_CREDENTIAL_PROVIDER");
  ASSERT_TRUE(env_file != nullptr && harness != nullptr && plugin != nullptr)
      << "KUBELET_E2E_ENV_FILE, KUBELET_E2E_HARNESS and KUBELET_TEST_CREDENTIAL_PROVIDER must be "
         "set by CTest";
  const std::string script = absl::StrCat(harness, "/auth-registry.sh");
  const std::string reg_dir = dir_ + "/auth-registry";
  auto up = RunCommand({"bash", script, "up", reg_dir, env_file}, {}, absl::Seconds(120));
  ASSERT_TRUE(up.ok()) << up.status();
  ASSERT_EQ(up->exit_code, 0) << up->err;
  AuthRegistry reg;
  reg.down = {"bash", script, "down", reg_dir, env_file};
  for (absl::string_view line : absl::StrSplit(up->out, '\n')) {
    std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.size() == 2) reg.env[kv[0]] = kv[1];
  }
  const std::string registry = reg.env["AUTH_REGISTRY"];
  const std::string image = reg.env["AUTH_REGISTRY_IMAGE"];
  const std::string user = reg.env["AUTH_REGISTRY_USER"];
  const std::string password = reg.env["AUTH_REGISTRY_PASSWORD"];
  ASSERT_FALSE(image.empty()) << up->out;

  // The plugin under its provider name in the bin dir; it records every request's image.
  const std::string bin_dir = dir_ + "/credential-providers";
  std::filesystem::create_directories(bin_dir);
  std::filesystem::copy_file(plugin, bin_dir + "/e2e-registry-login",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string record = dir_ + "/plugin-requests";
  const std::string provider_config = dir_ + "/credential-provider.yaml";
  auto write_config = [&](const std::string& mode) {
    WriteFile(provider_config,
              absl::StrCat("apiVersion: kubelet.config.k8s.io/v1\n"
                           "kind: CredentialProviderConfig\n"
                           "providers:\n"
                           "- name: e2e-registry-login\n"
                           "  matchImages: [\"",
                           registry,
                           "\"]\n"
                           "  defaultCacheDuration: 1m\n"
                           "  apiVersion: credentialprovider.kubelet.k8s.io/v1\n"
                           "  env:\n"
                           "  - {name: TEST_CRED_USERNAME, value: \"",
                           user, "\"}\n  - {name: TEST_CRED_PASSWORD, value: \"", password,
                           "\"}\n"
                           "  - {name: TEST_CRED_CACHE_KEY_TYPE, value: Registry}\n"
                           "  - {name: TEST_CRED_CACHE_DURATION, value: 10m}\n"
                           "  - {name: TEST_CRED_RECORD_FILE, value: \"",
                           record, "\"}\n  - {name: TEST_CRED_MODE, value: \"", mode, "\"}\n"));
  };
  const std::vector<std::string> flags = {"--image-credential-provider-config", provider_config,
                                          "--image-credential-provider-bin-dir", bin_dir};
  auto private_pod = [&](const std::string& name) {
    return absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
                        "\nspec:\n  nodeName: ", node_,
                        "\n  automountServiceAccountToken: false\n"
                        "  terminationGracePeriodSeconds: 2\n"
                        "  containers:\n  - name: main\n    image: ",
                        image,
                        "\n    imagePullPolicy: Always\n"
                        "    command: [\"sh\", \"-c\", \"echo PULLED; trap 'exit 0' TERM; "
                        "while true; do sleep 1; done\"]\n");
  };
  verbosity_ = 10;  // credentials must stay out of the log at any verbosity

  // A plugin that writes garbage: that pull fails (the registry wants credentials), the other
  // pods run and the kubelet stays up.
  write_config("garbage");
  StartNode(flags);
  const std::string garbled = PodName("garbled");
  ASSERT_TRUE(Apply(private_pod(garbled)).ok());
  const std::string public_pod = PodName("public");
  ASSERT_TRUE(Apply(BusyboxPod(public_pod, kSleepForever,
                               absl::StrCat("  nodeName: ", node_,
                                            "\n  automountServiceAccountToken: false\n")))
                  .ok());
  EXPECT_TRUE(WaitUntil(
      [&] {
        const std::string r = WaitingReason(garbled);
        return r == "ErrImagePull" || r == "ImagePullBackOff";
      },
      absl::Seconds(120), absl::Seconds(1)))
      << GetPod(garbled).dump(2) << "\n"
      << kubelet_->Log();
  std::vector<json> failed;
  EXPECT_TRUE(WaitUntil(
      [&] {
        failed = Events(garbled, "Failed");
        return !failed.empty();
      },
      absl::Seconds(60), absl::Seconds(1)));
  ASSERT_FALSE(failed.empty());
  EXPECT_TRUE(absl::StrContains(failed[0].value("message", ""), "401 Unauthorized"))
      << failed[0].dump(2);
  EXPECT_TRUE(WaitPhase(public_pod, "Running")) << GetPod(public_pod).dump(2);
  EXPECT_GE(Lines(record), 1u) << "the plugin was never run";
  EXPECT_TRUE(absl::StrContains(kubelet_->Log(),
                                "Failed getting credential from external "
                                "registry credential provider"))
      << kubelet_->Log();
  EXPECT_TRUE(KubeletAlive());
  (void)cp_->Kubectl({"delete", "pod", garbled, "-n", "default", "--grace-period=0", "--force"});
  StopKubelet();

  // A plugin that answers: two pods of the private image pull with its credentials, through
  // one plugin run (the answer is cached for the registry for 10 minutes).
  std::filesystem::remove(record);
  write_config("");
  StartNode(flags);
  const std::string first = PodName("plugin-a");
  const std::string second = PodName("plugin-b");
  ASSERT_TRUE(Apply(private_pod(first)).ok());
  EXPECT_TRUE(WaitPhase(first, "Running")) << GetPod(first).dump(2) << "\n" << kubelet_->Log();
  ASSERT_TRUE(Apply(private_pod(second)).ok());
  EXPECT_TRUE(WaitPhase(second, "Running")) << GetPod(second).dump(2);
  EXPECT_EQ(Lines(record), 1u) << ReadAll(record);
  EXPECT_TRUE(absl::StrContains(ReadAll(record), registry)) << ReadAll(record);
  EXPECT_TRUE(WaitPhase(public_pod, "Running"));
  const std::string log = kubelet_->Log();
  EXPECT_FALSE(absl::StrContains(log, password));
}

TEST_F(ManagedNodeTest, GracefulShutdown) {
  const char* logind_bin = std::getenv("KUBELET_TEST_LOGIND");
  ASSERT_NE(logind_bin, nullptr) << "KUBELET_TEST_LOGIND must be set by CTest";
  const std::string bus_dir = dir_ + "/bus";
  std::filesystem::create_directories(bus_dir);
  absl::StatusOr<std::unique_ptr<nodeshutdown::testing::PrivateBus>> bus =
      nodeshutdown::testing::PrivateBus::Start(bus_dir);
  ASSERT_TRUE(bus.ok()) << bus.status();
  const std::string address = (*bus)->address();
  // logind allows a delay of 30 s, more than the kubelet asks for: no drop-in to write.
  auto logind = KubeletProcess::Start(
      logind_bin,
      {"--inhibit-delay-max=30s", "--bus-address=" + address, "--config-dir=" + dir_ + "/logind"},
      {}, dir_ + "/logind.log");
  ASSERT_TRUE(logind.ok()) << logind.status();
  ASSERT_TRUE((*logind)->WaitForLog("test_logind ready", absl::Seconds(20))) << (*logind)->Log();
  auto send = [&](bool shutdown) {
    auto r = RunCommand(
        {"env", "DBUS_SYSTEM_BUS_ADDRESS=" + address, "dbus-send", "--system", "--type=signal",
         "/org/freedesktop/login1", "org.freedesktop.login1.Manager.PrepareForShutdown",
         shutdown ? "boolean:true" : "boolean:false"},
        {}, absl::Seconds(20));
    ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : r.status().ToString());
  };

  kubelet_env_["DBUS_SYSTEM_BUS_ADDRESS"] = address;
  extra_config_ = "shutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 10s\n";
  StartNode();
  EXPECT_TRUE(kubelet_->WaitForLog("Creating node shutdown manager", absl::Seconds(10)));
  ASSERT_TRUE((*logind)->WaitForLog("inhibitors: kubelet shutdown delay", absl::Seconds(30)))
      << (*logind)->Log() << "\n"
      << kubelet_->Log();

  const std::string spec =
      absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  const std::string regular = PodName("regular");
  ASSERT_TRUE(Apply(BusyboxPod(regular, kSleepForever, spec)).ok());
  const std::string critical = PodName("critical");
  auto crit =
      cp_->Kubectl({"apply", "-n", "kube-system", "-f", "-"},
                   BusyboxPod(critical, kSleepForever,
                              absl::StrCat(spec, "  priorityClassName: system-node-critical\n")));
  ASSERT_TRUE(crit.ok() && crit->exit_code == 0) << (crit.ok() ? crit->err : "");
  ASSERT_TRUE(WaitPhase(regular, "Running")) << GetPod(regular).dump(2);
  ASSERT_TRUE(WaitPhase(critical, "Running", "kube-system")) << GetPod(critical, "kube-system");

  send(true);
  EXPECT_TRUE(WaitUntil(
      [&] {
        json ready = Condition(GetNode(), "Ready");
        return ready.value("status", "") == "False" &&
               ready.value("reason", "") == "KubeletNotReady" &&
               ready.value("message", "") == "node is shutting down";
      },
      absl::Seconds(60), absl::Seconds(1)))
      << Condition(GetNode(), "Ready").dump(2) << "\n"
      << kubelet_->Log();
  for (const auto& [name, ns] : std::vector<std::pair<std::string, std::string>>{
           {regular, "default"}, {critical, "kube-system"}}) {
    ASSERT_TRUE(WaitPhase(name, "Failed", ns, absl::Seconds(90)))
        << GetPod(name, ns).dump(2) << "\n"
        << kubelet_->Log();
    json pod = GetPod(name, ns);
    EXPECT_EQ(pod["status"].value("reason", ""), "Terminated");
    EXPECT_EQ(pod["status"].value("message", ""),
              "Pod was terminated in response to imminent node shutdown.");
    json target = Condition(pod, "DisruptionTarget");
    EXPECT_EQ(target.value("status", ""), "True") << pod.dump(2);
    EXPECT_EQ(target.value("reason", ""), "TerminationByKubelet") << pod.dump(2);
  }
  // The regular pod went first: its DisruptionTarget is not later than the critical one's.
  EXPECT_LE(Condition(GetPod(regular), "DisruptionTarget").value("lastTransitionTime", ""),
            Condition(GetPod(critical, "kube-system"), "DisruptionTarget")
                .value("lastTransitionTime", ""));
  // New pods are rejected while the node shuts down.
  const std::string late = PodName("late");
  ASSERT_TRUE(Apply(BusyboxPod(late, kSleepForever, spec)).ok());
  ASSERT_TRUE(WaitPhase(late, "Failed")) << GetPod(late).dump(2);
  EXPECT_EQ(GetPod(late)["status"].value("reason", ""), "NodeShutdown");
  EXPECT_EQ(GetPod(late)["status"].value("message", ""),
            "Pod was rejected: Pod was rejected as the node is shutting down.");
  // Every pod is down: the lock is released so the shutdown can go on.
  EXPECT_TRUE(WaitUntil([&] { return absl::EndsWith((*logind)->Log(), "inhibitors: \n"); },
                        absl::Seconds(60), absl::Seconds(1)))
      << (*logind)->Log();
  EXPECT_TRUE(KubeletAlive());

  // The shutdown is cancelled: the lock is taken again, the node is Ready and admits pods.
  send(false);
  EXPECT_TRUE(WaitUntil(
      [&] {
        return absl::EndsWith((*logind)->Log(), "inhibitors: kubelet shutdown delay pid " +
                                                    std::to_string(kubelet_->pid()) + "\n");
      },
      absl::Seconds(60), absl::Seconds(1)))
      << (*logind)->Log();
  EXPECT_TRUE(WaitNodeReady(absl::Seconds(60)).ok());
  const std::string after = PodName("after");
  ASSERT_TRUE(Apply(BusyboxPod(after, kSleepForever, spec)).ok());
  EXPECT_TRUE(WaitPhase(after, "Running")) << GetPod(after).dump(2);
  (void)cp_->Kubectl({"delete", "pod", critical, "-n", "kube-system", "--grace-period=0", "--force",
                      "--wait=false"});
}

TEST_F(ManagedNodeTest, ConfigDropInsAndNodeLogQuery) {
  const std::string dropins = dir_ + "/kubelet.conf.d";
  std::filesystem::create_directories(dropins);
  const std::string kind =
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
  WriteFile(dropins + "/10-pods.conf", kind + "maxPods: 77\nregistryPullQPS: 3\n");
  WriteFile(
      dropins + "/20-pods.conf",
      kind + "maxPods: 88\nenableSystemLogQuery: true\nfeatureGates:\n  NodeLogQuery: true\n");
  WriteFile(dropins + "/30-ignored.yaml", "this is not read: [\n");
  kubelet_env_["KUBELET_CONFIG_DROPIN_DIR_ALPHA"] = "on";
  // The API server reaches this kubelet on the machine's own address, so its node proxy serves
  // `kubectl get --raw /api/v1/nodes/<node>/proxy/...` as on a real node.
  const std::string host_ip = HostAddress();
  const bool via_proxy = !host_ip.empty() && ResolveNodeTo(host_ip);
  if (via_proxy) {
    address_ = "0.0.0.0";
  } else {
    std::printf(
        "no non-loopback address: the kubelet's port is read directly, not through the "
        "API server's node proxy\n");
  }
  StartNode({"--config-dir", dropins, "--registry-qps", "9"});
  // Reads as users do: `kubectl get --raw` through the API server's node proxy when it can
  // reach the kubelet (else the kubelet's port directly). 200 and the body, or the error.
  auto get = [&](const std::string& path) -> HttpAnswer {
    if (!via_proxy) return KubeletGet(path);
    auto r = cp_->Kubectl({"get", "--raw", "/api/v1/nodes/" + node_ + "/proxy" + path});
    HttpAnswer a;
    if (!r.ok()) {
      a.body = r.status().ToString();
    } else {
      a.code = r->exit_code == 0 ? 200 : 0;
      a.body = r->exit_code == 0 ? r->out : r->err;
    }
    return a;
  };

  // The drop-ins in lexical order over --config, the flag on top.
  json node = GetNode();
  EXPECT_EQ(node["status"]["capacity"].value("pods", ""), "88") << node["status"].dump(2);
  HttpAnswer configz = get("/configz");
  ASSERT_EQ(configz.code, 200) << configz.body;
  json cz = json::parse(configz.body, nullptr, false);
  ASSERT_TRUE(cz.is_object()) << configz.body;
  const json& kc = cz["kubeletconfig"];
  EXPECT_EQ(kc.value("maxPods", 0), 88) << kc.dump(2);
  EXPECT_EQ(kc.value("registryPullQPS", 0), 9) << kc.dump(2);
  EXPECT_EQ(kc.value("enableSystemLogQuery", false), true) << kc.dump(2);

  // The node log query of a file below /var/log, through the API server's node proxy.
  const std::string service = "kubelet-e2e-" + std::to_string(::getpid());
  const std::string file = "/var/log/" + service + ".log";
  WriteFile(file, "first line\nmarker one\nmiddle\nmarker two\n");
  struct Remove {
    std::string path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{file};
  HttpAnswer all = get("/logs/?query=" + service);
  ASSERT_EQ(all.code, 200) << all.body << "\n" << kubelet_->Log();
  EXPECT_TRUE(absl::StrContains(all.body, "first line")) << all.body;
  EXPECT_TRUE(absl::StrContains(all.body, "marker two")) << all.body;
  // Bad input is refused with upstream's validation (406), and the kubelet goes on.
  HttpAnswer bad = KubeletGet("/logs/?query=" + service + "&tailLines=-3");
  EXPECT_EQ(bad.code, 406) << bad.body;
  EXPECT_TRUE(absl::StrContains(bad.body, "tailLines")) << bad.body;
  HttpAnswer bad_name = KubeletGet("/logs/?query=no%20spaces");
  EXPECT_EQ(bad_name.code, 406) << bad_name.body;
  // The plain file server lists /var/log.
  HttpAnswer listing = get("/logs/");
  ASSERT_EQ(listing.code, 200) << listing.body;
  EXPECT_TRUE(absl::StrContains(listing.body, service + ".log")) << listing.body;
  HttpAnswer served = get("/logs/" + service + ".log");
  EXPECT_EQ(served.code, 200);
  EXPECT_EQ(served.body, "first line\nmarker one\nmiddle\nmarker two\n");
  EXPECT_TRUE(KubeletAlive());
}

}  // namespace
}  // namespace kubelet::e2e
