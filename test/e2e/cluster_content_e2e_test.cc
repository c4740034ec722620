// Pod content from the cluster, on the real v1.28.7 control plane and containerd with OUR kubelet
// binary (--kubeconfig, the node's identity):
//   * a pod with the default service account (no automountServiceAccountToken: false) gets the
//     admission's kube-api-access-* projected volume: token (a JWT the API server accepts, checked
//     with a TokenReview), ca.crt (the kube-root-ca.crt configMap) and namespace;
//   * configMap (items, per-item mode) and secret (defaultMode) volumes show their files with
//     the right contents and modes, and a change of the configMap reaches the running pod;
//   * a pod referencing a missing configMap stays ContainerCreating with a FailedMount event
//     and starts once the configMap is created;
//   * env from configMapKeyRef / secretKeyRef and envFrom (prefix, invalid keys skipped with
//     InvalidEnvironmentVariableNames), a missing required key giving CreateContainerConfigError;
//     secret values never in the kubelet's log at --v=10 nor in events;
//   * a subPath mount of a configMap keeps its content when the configMap changes;
//   * image pull secrets against a registry with basic auth (harness/auth-registry.sh): the
//     pull fails with ErrImagePull / ImagePullBackOff without credentials and succeeds with a
//     secret given on the pod or through its ServiceAccount;
//   * the token works for a request of its own (kubectl auth whoami with only the token);
//   * 100 pods with secret, configMap and token volumes come and go: no mount of theirs remains;
//   * the Cache and Get change detection strategies deliver updates too.
// No timing is asserted: every wait is a generous bound.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  std::string ExtraConfig() override { return "address: 127.0.0.1\n" + extra_config_; }

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

  // The waiting state of the pod's first container status once its reason is one of
  // `reasons` (null when that never happened).
  json WaitWaiting(const std::string& pod, const std::set<std::string>& reasons,
                   absl::Duration timeout = absl::Seconds(120)) {
    json waiting;
    bool got = WaitUntil(
        [&] {
          json p = GetPod(pod);
          if (!p.is_object()) return false;
          for (const json& cs : p["status"].value("containerStatuses", json::array())) {
            json w = cs["state"].value("waiting", json());
            if (w.is_object() && reasons.count(w.value("reason", "")) > 0) {
              waiting = w;
              return true;
            }
          }
          return false;
        },
        timeout, absl::Seconds(1));
    return got ? waiting : json();
  }

  bool WaitRunning(const std::string& pod, absl::Duration timeout = absl::Seconds(120)) {
    return WaitUntil([&] { return GetPod(pod)["status"].value("phase", "") == "Running"; }, timeout,
                     absl::Seconds(1));
  }

  // Events of `reason` about the pod.
  std::vector<json> Events(const std::string& pod, const std::string& reason) {
    json events = GetJson({"get", "events", "-n", "default", "--field-selector",
                           "involvedObject.name=" + pod + ",reason=" + reason});
    std::vector<json> out;
    if (!events.is_object()) return out;
    for (const json& e : events.value("items", json::array())) out.push_back(e);
    return out;
  }

  // Every event message in the namespace, one a line.
  std::string AllEventMessages() {
    json events = GetJson({"get", "events", "-n", "default"});
    std::string out;
    if (!events.is_object()) return out;
    for (const json& e : events.value("items", json::array())) {
      absl::StrAppend(&out, e.value("message", ""), "\n");
    }
    return out;
  }

  // Mount points below the test's --root-dir pods folder.
  std::vector<std::string> PodMounts() {
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    const std::string prefix = dir_ + "/root/pods/";
    std::vector<std::string> out;
    while (std::getline(in, line)) {
      std::vector<std::string> f = absl::StrSplit(line, ' ');
      if (f.size() > 4 && absl::StartsWith(f[4], prefix)) out.push_back(f[4]);
    }
    return out;
  }

  std::string extra_config_;
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

  // And a client with nothing but the token is that service account (kubectl auth whoami).
  const std::string kubeconfig = dir_ + "/token.kubeconfig";
  {
    std::ofstream out(kubeconfig);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
        << cp_->server() << "\n    certificate-authority: " << cp_->ca_file()
        << "\nusers:\n- name: u\n  user:\n    token: " << token
        << "\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
           "current-context: x\n";
  }
  auto who = cp_->KubectlAs(kubeconfig, {"auth", "whoami", "-o", "json"});
  ASSERT_TRUE(who.ok()) << who.status();
  ASSERT_EQ(who->exit_code, 0) << who->err;
  json self = json::parse(who->out, nullptr, false);
  ASSERT_TRUE(self.is_object()) << who->out;
  EXPECT_EQ(self["status"]["userInfo"].value("username", ""),
            "system:serviceaccount:default:default")
      << who->out;
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
      "    - name: cfg\n      mountPath: /sub.conf\n      subPath: conf/app.conf\n"
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
  // Inside the container too; the subPath mount keeps the file it was made from (as upstream).
  std::vector<Container> running = Running("content");
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(Exec(running[0].id(), {"cat", "/cfg/conf/app.conf"}).value_or("?"), "beta");
  EXPECT_EQ(Exec(running[0].id(), {"cat", "/sub.conf"}).value_or("?"), "alpha");
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

TEST_F(ClusterContentTest, EnvFromConfigMapsAndSecrets) {
  verbosity_ = 10;  // secret values must stay out of the log even at the highest verbosity
  StartNode();
  const std::string cm = PodName("envcm");
  const std::string secret = PodName("envsec");
  const std::string secret_value = absl::StrCat("tok-", absl::ToUnixNanos(absl::Now()), "-zq");
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", cm,
                                 "\n  namespace: default\ndata:\n  greeting: hello\n"
                                 "  good_key: g\n"))
                  .ok());
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: Secret\nmetadata:\n  name: ", secret,
                                 "\n  namespace: default\nstringData:\n  token: ", secret_value,
                                 "\n  user: someone\n  1bad: x\n"))
                  .ok());
  const std::string name = PodName("envpod");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  parts.container = absl::StrCat(
      "    env:\n"
      "    - name: GREETING\n      valueFrom:\n        configMapKeyRef: {name: ",
      cm,
      ", key: greeting}\n"
      "    - name: TOKEN\n      valueFrom:\n        secretKeyRef: {name: ",
      secret,
      ", key: token}\n"
      "    - name: OPT_KEY\n      valueFrom:\n        configMapKeyRef: {name: ",
      cm,
      ", key: nokey, optional: true}\n"
      "    - name: OPT_OBJ\n      valueFrom:\n        secretKeyRef: {name: ",
      PodName("nosuch"),
      ", key: k, optional: true}\n"
      "    envFrom:\n"
      "    - prefix: CM_\n      configMapRef: {name: ",
      cm,
      "}\n"
      "    - secretRef: {name: ",
      secret, "}\n");
  ASSERT_TRUE(
      Apply(BusyboxPod(name,
                       absl::StrCat("\"echo GREETING=$GREETING; echo CM_greeting=$CM_greeting; "
                                    "echo CM_good_key=$CM_good_key; echo USER=$user; "
                                    "echo TOKEN_OK=$([ \\\"$TOKEN\\\" = ",
                                    secret_value,
                                    " ] && echo yes || echo no); "
                                    "echo OPT_KEY=${OPT_KEY-unset}; echo OPT_OBJ=${OPT_OBJ-unset}; "
                                    "echo DONE; ",
                                    "trap 'exit 0' TERM; while true; do sleep 1; done\""),
                       parts))
          .ok());
  const std::string logs = LogsWith(name, "DONE");
  ASSERT_FALSE(logs.empty()) << Describe(name) << "\n" << kubelet_->Log();
  EXPECT_EQ(Field(logs, "GREETING"), "hello");
  EXPECT_EQ(Field(logs, "CM_greeting"), "hello");
  EXPECT_EQ(Field(logs, "CM_good_key"), "g");
  EXPECT_EQ(Field(logs, "USER"), "someone");
  EXPECT_EQ(Field(logs, "TOKEN_OK"), "yes");
  EXPECT_EQ(Field(logs, "OPT_KEY"), "unset");
  EXPECT_EQ(Field(logs, "OPT_OBJ"), "unset");

  // The secret's key that is no environment variable name was skipped, with upstream's event.
  const std::string want = absl::StrCat("Keys [1bad] from the EnvFrom secret default/", secret,
                                        " were skipped since they are considered invalid "
                                        "environment variable names.");
  std::vector<json> invalid;
  EXPECT_TRUE(WaitUntil(
      [&] {
        invalid = Events(name, "InvalidEnvironmentVariableNames");
        return !invalid.empty();
      },
      absl::Seconds(60), absl::Seconds(1)));
  ASSERT_FALSE(invalid.empty());
  EXPECT_EQ(invalid[0].value("message", ""), want);
  EXPECT_EQ(invalid[0].value("type", ""), "Warning");

  // The secret's value is nowhere in the kubelet's log (at --v=10) nor in any event.
  EXPECT_FALSE(absl::StrContains(kubelet_->Log(), secret_value));
  EXPECT_FALSE(absl::StrContains(AllEventMessages(), secret_value));
  (void)cp_->Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
  (void)cp_->Kubectl({"delete", "secret", secret, "-n", "default", "--wait=false"});
}

TEST_F(ClusterContentTest, MissingRequiredKeyIsCreateContainerConfigError) {
  StartNode();
  const std::string cm = PodName("keys");
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", cm,
                                 "\n  namespace: default\ndata:\n  other: x\n"))
                  .ok());
  const std::string name = PodName("needkey");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  parts.container = absl::StrCat(
      "    env:\n    - name: NEEDED\n      valueFrom:\n        configMapKeyRef: {name: ", cm,
      ", key: needed}\n");
  ASSERT_TRUE(Apply(BusyboxPod(name,
                               "\"echo NEEDED=$NEEDED; trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  json waiting = WaitWaiting(name, {"CreateContainerConfigError"});
  ASSERT_TRUE(waiting.is_object()) << Describe(name) << "\n" << kubelet_->Log();
  EXPECT_EQ(waiting.value("message", ""),
            absl::StrCat("couldn't find key needed in ConfigMap default/", cm));
  // Once the key exists the next attempt starts the container.
  auto patch = cp_->Kubectl({"patch", "configmap", cm, "-n", "default", "--type=merge", "-p",
                             R"({"data":{"needed":"now"}})"});
  ASSERT_TRUE(patch.ok() && patch->exit_code == 0);
  const std::string logs = LogsWith(name, "NEEDED=", absl::Seconds(180));
  ASSERT_FALSE(logs.empty()) << Describe(name) << "\n" << kubelet_->Log();
  EXPECT_EQ(Field(logs, "NEEDED"), "now");
  (void)cp_->Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
}

TEST_F(ClusterContentTest, ImagePullSecrets) {
  const char* env_file = std::getenv("KUBELET_E2E_ENV_FILE");
  const char* harness = std::getenv("KUBELET_E2E_HARNESS");
  ASSERT_TRUE(env_file != nullptr && harness != nullptr)
      << "KUBELET_E2E_ENV_FILE and KUBELET_E2E_HARNESS must be set by CTest";
  const std::string script = absl::StrCat(harness, "/auth-registry.sh");
  const std::string reg_dir = dir_ + "/auth-registry";
  auto up = RunCommand({"bash", script, "up", reg_dir, env_file}, {}, absl::Seconds(120));
  ASSERT_TRUE(up.ok()) << up.status();
  ASSERT_EQ(up->exit_code, 0) << up->err;
  struct Down {
    std::vector<std::string> argv;
    ~Down() { (void)RunCommand(argv, {}, absl::Seconds(60)); }
  } down{{"bash", script, "down", reg_dir, env_file}};
  std::map<std::string, std::string> reg;
  for (absl::string_view line : absl::StrSplit(up->out, '\n')) {
    std::vector<std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.size() == 2) reg[kv[0]] = kv[1];
  }
  const std::string registry = reg["AUTH_REGISTRY"];
  const std::string image = reg["AUTH_REGISTRY_IMAGE"];
  const std::string password = reg["AUTH_REGISTRY_PASSWORD"];
  ASSERT_FALSE(image.empty()) << up->out;

  verbosity_ = 10;  // credentials must stay out of the log at any verbosity
  StartNode();
  auto pod_yaml = [&](const std::string& name, const std::string& spec_extra) {
    return absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ", name,
                        "\nspec:\n  nodeName: ", node_,
                        "\n  automountServiceAccountToken: false\n"
                        "  terminationGracePeriodSeconds: 2\n",
                        spec_extra, "  containers:\n  - name: main\n    image: ", image,
                        "\n    imagePullPolicy: Always\n"
                        "    command: [\"sh\", \"-c\", \"echo PULLED; trap 'exit 0' TERM; "
                        "while true; do sleep 1; done\"]\n");
  };

  // Without credentials the registry refuses the pull.
  const std::string anon = PodName("anon");
  ASSERT_TRUE(Apply(pod_yaml(anon, "")).ok());
  json waiting = WaitWaiting(anon, {"ErrImagePull", "ImagePullBackOff"});
  ASSERT_TRUE(waiting.is_object()) << Describe(anon) << "\n" << kubelet_->Log();
  std::vector<json> failed;
  EXPECT_TRUE(WaitUntil(
      [&] {
        failed = Events(anon, "Failed");
        return !failed.empty();
      },
      absl::Seconds(60), absl::Seconds(1)));
  ASSERT_FALSE(failed.empty());
  const std::string failed_msg = failed[0].value("message", "");
  EXPECT_TRUE(absl::StartsWith(failed_msg, absl::StrCat("Failed to pull image \"", image, "\": ")))
      << failed_msg;
  EXPECT_TRUE(absl::StrContains(failed_msg, "401 Unauthorized")) << failed_msg;

  // A dockerconfigjson secret on the pod.
  const std::string regcred = PodName("regcred");
  auto created =
      cp_->Kubectl({"create", "secret", "docker-registry", regcred, "-n", "default",
                    "--docker-server=" + registry, "--docker-username=" + reg["AUTH_REGISTRY_USER"],
                    "--docker-password=" + password});
  ASSERT_TRUE(created.ok() && created->exit_code == 0) << (created.ok() ? created->err : "");
  const std::string with_secret = PodName("withsecret");
  ASSERT_TRUE(
      Apply(pod_yaml(with_secret, absl::StrCat("  imagePullSecrets:\n  - name: ", regcred, "\n")))
          .ok());
  EXPECT_FALSE(LogsWith(with_secret, "PULLED").empty()) << Describe(with_secret) << "\n"
                                                        << kubelet_->Log();

  // A legacy .dockercfg secret, given through the pod's ServiceAccount (the admission copies
  // its imagePullSecrets into the pod).
  const std::string legacy = PodName("legacycfg");
  const std::string auth = absl::StrCat(reg["AUTH_REGISTRY_USER"], ":", password);  // base64 below
  auto b64 = RunCommand({"base64", "-w0"}, auth);
  ASSERT_TRUE(b64.ok() && b64->exit_code == 0);
  json dockercfg = {{registry, {{"auth", b64->out}}}};
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: Secret\nmetadata:\n  name: ", legacy,
                                 "\n  namespace: default\ntype: kubernetes.io/dockercfg\n"
                                 "stringData:\n  .dockercfg: '",
                                 dockercfg.dump(), "'\n"))
                  .ok());
  const std::string sa = PodName("puller");
  ASSERT_TRUE(
      Apply(absl::StrCat("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ", sa,
                         "\n  namespace: default\nimagePullSecrets:\n- name: ", legacy, "\n"))
          .ok());
  const std::string via_sa = PodName("viasa");
  ASSERT_TRUE(Apply(pod_yaml(via_sa, absl::StrCat("  serviceAccountName: ", sa, "\n"))).ok());
  json pod = GetPod(via_sa);
  ASSERT_TRUE(pod.is_object());
  ASSERT_EQ(pod["spec"].value("imagePullSecrets", json::array()).size(), 1u) << pod.dump(2);
  EXPECT_FALSE(LogsWith(via_sa, "PULLED").empty()) << Describe(via_sa) << "\n" << kubelet_->Log();

  // The anonymous pod is still refused, and the password never reached the log.
  EXPECT_NE(GetPod(anon)["status"].value("phase", ""), "Running");
  const std::string log = kubelet_->Log();
  EXPECT_FALSE(absl::StrContains(log, password));
  EXPECT_FALSE(absl::StrContains(log, b64->out));  // the auth field of both secrets
  for (const std::string& n : {regcred, legacy}) {
    (void)cp_->Kubectl({"delete", "secret", n, "-n", "default", "--wait=false"});
  }
  (void)cp_->Kubectl({"delete", "serviceaccount", sa, "-n", "default", "--wait=false"});
}

TEST_F(ClusterContentTest, HundredPodsLeaveNoMounts) {
  StartNode();
  const std::string cm = PodName("churn");
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", cm,
                                 "\n  namespace: default\ndata:\n  k: v\n---\n"
                                 "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ",
                                 cm, "\n  namespace: default\nstringData:\n  k: v\n"))
                  .ok());
  // Two waves of 50: each pod has the default token volume, a secret and a configMap volume.
  constexpr int kWaves = 2;
  constexpr int kPerWave = 50;
  for (int wave = 0; wave < kWaves; ++wave) {
    std::string manifests;
    std::vector<std::string> names;
    for (int i = 0; i < kPerWave; ++i) {
      const std::string name = PodName(absl::StrCat("churn", wave, "-", i));
      names.push_back(name);
      PodParts parts;
      parts.termination_grace_seconds = 2;
      parts.spec = absl::StrCat("  nodeName: ", node_,
                                "\n  volumes:\n  - name: c\n    configMap:\n      name: ", cm,
                                "\n  - name: s\n    secret:\n      secretName: ", cm, "\n");
      parts.container =
          "    volumeMounts:\n    - {name: c, mountPath: /c}\n    - {name: s, mountPath: /s}\n";
      absl::StrAppend(&manifests, BusyboxPod(name, kSleepForever, parts), "---\n");
    }
    ASSERT_TRUE(Apply(manifests).ok());
    for (const std::string& name : names) {
      ASSERT_TRUE(WaitRunning(name, absl::Seconds(300))) << Describe(name);
    }
    // While they run, their secret and token volumes are tmpfs mounts of their own.
    EXPECT_GE(PodMounts().size(), static_cast<size_t>(2 * kPerWave));
    std::vector<std::string> del = {"delete", "pod", "-n", "default", "--wait=false"};
    del.insert(del.end(), names.begin(), names.end());
    auto r = cp_->Kubectl(del, {}, absl::Seconds(120));
    ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : r.status().ToString());
    for (const std::string& name : names) {
      ASSERT_TRUE(WaitUntil([&] { return PodGone(name); }, absl::Seconds(300), absl::Seconds(1)))
          << Describe(name);
    }
  }
  // Every pod's mounts went with it (the kubelet removes a deleted pod from the API only after
  // its volumes are torn down; orphaned pod dirs go at housekeeping).
  std::vector<std::string> left;
  EXPECT_TRUE(WaitUntil(
      [&] {
        left = PodMounts();
        return left.empty();
      },
      absl::Seconds(60), absl::Seconds(1)))
      << absl::StrJoin(left, "\n");
  (void)cp_->Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
  (void)cp_->Kubectl({"delete", "secret", cm, "-n", "default", "--wait=false"});
}

// configMapAndSecretChangeDetectionStrategy Cache and Get: an update reaches the volume at the
// pod's next sync (syncFrequency shortened to keep the test short).
class ChangeDetectionTest : public ClusterContentTest {
 protected:
  void UpdateReachesTheVolume(const std::string& strategy);
};

void ChangeDetectionTest::UpdateReachesTheVolume(const std::string& strategy) {
  extra_config_ = absl::StrCat("configMapAndSecretChangeDetectionStrategy: ", strategy,
                               "\nsyncFrequency: 10s\n");
  StartNode();
  if (HasFatalFailure()) return;
  const std::string cm = PodName(absl::StrCat("strategy-", absl::AsciiStrToLower(strategy)));
  ASSERT_TRUE(Apply(absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", cm,
                                 "\n  namespace: default\ndata:\n  k: one\n"))
                  .ok());
  const std::string name = PodName("strategy");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_,
                            "\n  automountServiceAccountToken: false\n"
                            "  volumes:\n  - name: cfg\n    configMap:\n      name: ",
                            cm, "\n");
  parts.container = "    volumeMounts:\n    - name: cfg\n      mountPath: /cfg\n";
  ASSERT_TRUE(Apply(BusyboxPod(name, kSleepForever, parts)).ok());
  ASSERT_TRUE(WaitRunning(name)) << Describe(name) << "\n" << kubelet_->Log();
  const std::string uid = GetPod(name)["metadata"].value("uid", "");
  const std::string file =
      absl::StrCat(dir_, "/root/pods/", uid, "/volumes/kubernetes.io~configmap/cfg/k");
  auto read = [&] {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  ASSERT_EQ(read(), "one");
  auto patch = cp_->Kubectl(
      {"patch", "configmap", cm, "-n", "default", "--type=merge", "-p", R"({"data":{"k":"two"}})"});
  ASSERT_TRUE(patch.ok() && patch->exit_code == 0);
  EXPECT_TRUE(WaitUntil([&] { return read() == "two"; }, absl::Seconds(180), absl::Seconds(1)))
      << read() << "\n"
      << kubelet_->Log();
  (void)cp_->Kubectl({"delete", "configmap", cm, "-n", "default", "--wait=false"});
}

TEST_F(ChangeDetectionTest, CacheStrategy) { UpdateReachesTheVolume("Cache"); }
TEST_F(ChangeDetectionTest, GetStrategy) { UpdateReachesTheVolume("Get"); }

}  // namespace
}  // namespace kubelet::e2e
