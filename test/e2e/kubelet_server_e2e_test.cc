// The kubelet API on its secure port, through the real binary on the real containerd: HTTPS with
// the self-signed certificate generated in --cert-dir (and reused on restart), /pods with status,
// /runningpods/, /configz, /metrics in the Prometheus text format, anonymous auth on and off,
// 404 and 405. HTTPS requests go through the e2e HTTP client (the certificate is self-signed).

#include <cstdlib>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "test/e2e/http_client.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

// The secure port's answer (the certificate is self-signed: not verified).
HttpAnswer Https(int port, const std::string& path, const std::string& method = "GET",
                 int max_seconds = 30) {
  return KubeletEndpoint::Https(port).Get(
      path, HttpOptions{.method = method, .timeout = absl::Seconds(max_seconds)});
}

class KubeletServerTest : public StaticPodTest {
 protected:
  KubeletServerTest() : read_only_port_(FreePort()) {}
  std::string ExtraConfig() override {
    return absl::StrCat("address: 127.0.0.1\nreadOnlyPort: ", read_only_port_, "\n");
  }

  // Starts the kubelet with anonymous requests allowed or refused and waits until its API
  // answers on api_port_.
  void StartKubelet(bool anonymous) {
    anonymous_auth_ = anonymous;
    StaticPodTest::StartKubelet();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(kubelet_->WaitForLog("\"Starting to listen\"", absl::Seconds(60)))
        << kubelet_->Log();
    ASSERT_TRUE(
        WaitUntil([&] { return Https(api_port_, "/healthz").code != 0; }, absl::Seconds(30)))
        << kubelet_->Log();
  }

  void WritePod() {
    pod_ = PodName("web");
    // A readiness probe, so that prober_probe_total has samples.
    WriteManifest(
        "web.yaml",
        BusyboxPod("web", "\"trap 'exit 0' TERM; echo hello; while true; do sleep 1; done\"",
                   PodParts{.container = "    readinessProbe:\n      exec:\n        command: "
                                         "[\"true\"]\n      periodSeconds: 1\n"}));
  }

  std::string pod_;
  int read_only_port_;
};

TEST_F(KubeletServerTest, ServesTheApiOverTlsWithAGeneratedCertificate) {
  StartKubelet(/*anonymous=*/true);
  WritePod();
  std::string log = kubelet_->Log();
  EXPECT_NE(
      log.find("\"Starting to listen\" address=\"127.0.0.1\" port=" + std::to_string(api_port_)),
      std::string::npos)
      << log;

  // /pods: the static pod with its status once the container runs.
  HttpAnswer pods;
  ASSERT_TRUE(WaitUntil(
      [&] {
        pods = Https(api_port_, "/pods");
        return pods.body.find("\"running\":{") != std::string::npos;
      },
      absl::Seconds(90)))
      << pods.code << " " << pods.body << "\n"
      << kubelet_->Log();
  EXPECT_EQ(pods.code, 200);
  EXPECT_EQ(
      pods.body.rfind("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[", 0),
      0u)
      << pods.body;
  EXPECT_NE(pods.body.find("\"name\":\"" + pod_ + "\""), std::string::npos);
  EXPECT_NE(pods.body.find("\"phase\":\"Running\""), std::string::npos) << pods.body;

  // /runningpods/: the runtime's view.
  HttpAnswer running = Https(api_port_, "/runningpods/");
  EXPECT_EQ(running.code, 200);
  EXPECT_NE(running.body.find("\"name\":\"" + pod_ + "\""), std::string::npos) << running.body;
  EXPECT_NE(running.body.find("\"name\":\"main\""), std::string::npos) << running.body;

  // /configz.
  HttpAnswer configz = Https(api_port_, "/configz");
  EXPECT_EQ(configz.code, 200);
  EXPECT_EQ(configz.body.rfind("{\"kubeletconfig\":{", 0), 0u) << configz.body;
  EXPECT_NE(configz.body.find("\"port\":" + std::to_string(api_port_)), std::string::npos);

  // /healthz on the secure port.
  EXPECT_EQ(Https(api_port_, "/healthz?verbose").body,
            "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n");

  // /metrics: every sample line follows the text exposition grammar.
  HttpAnswer metrics = Https(api_port_, "/metrics");
  EXPECT_EQ(metrics.code, 200);
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? )"
      R"(([-+]?[0-9.eE+-]+|NaN|[-+]Inf)( -?[0-9]+)?$)");
  const std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]*( .*)?$)");
  // Names from samples (a histogram's _bucket/_sum/_count folded to the family) and from TYPE
  // lines. A labelled family with no child yet is not exposed at all, as with upstream's client
  // (kubelet_runtime_operations_errors_total, kubelet_restarted_pods_total before any error or
  // static pod restart).
  auto family_names = [&](const std::string& body) {
    std::set<std::string> names;
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      std::string l(line);
      if (l.empty()) continue;
      if (l[0] == '#') {
        EXPECT_TRUE(std::regex_match(l, comment)) << l;
        if (l.rfind("# TYPE ", 0) == 0) names.insert(l.substr(7, l.find(' ', 7) - 7));
        continue;
      }
      EXPECT_TRUE(std::regex_match(l, sample)) << l;
      std::string name = l.substr(0, l.find_first_of("{ "));
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix) && names.count(name.substr(0, name.size() - strlen(suffix)))) {
          name = name.substr(0, name.size() - strlen(suffix));
        }
      }
      names.insert(name);
    }
    return names;
  };
  std::set<std::string> names = family_names(metrics.body);
  for (const char* want :
       {"kubelet_running_pods", "kubelet_running_containers", "kubelet_node_name",
        "kubelet_pod_start_duration_seconds", "kubelet_pod_worker_duration_seconds",
        "kubelet_pleg_relist_duration_seconds", "kubelet_pleg_relist_interval_seconds",
        "kubelet_runtime_operations_total", "kubelet_runtime_operations_duration_seconds",
        "kubelet_started_pods_total", "kubelet_started_containers_total",
        "process_resident_memory_bytes", "process_cpu_seconds_total",
        "process_start_time_seconds"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
  // Samples that this pod's start must have produced.
  for (const char* want :
       {"kubelet_running_pods ", "kubelet_running_containers{container_state=\"running\"} ",
        "kubelet_pod_start_duration_seconds_count ", "kubelet_started_pods_total ",
        "kubelet_runtime_operations_total{operation_type=\"run_podsandbox\"} ",
        "kubelet_pleg_relist_duration_seconds_count "}) {
    EXPECT_NE(metrics.body.find(std::string("\n") + want), std::string::npos) << want << "\n"
                                                                              << metrics.body;
  }
  HttpAnswer probes;
  ASSERT_TRUE(WaitUntil(
      [&] {
        probes = Https(api_port_, "/metrics/probes");
        return probes.body.find("prober_probe_total{") != std::string::npos;
      },
      absl::Seconds(30)))
      << probes.code << probes.body;
  EXPECT_EQ(probes.code, 200);
  EXPECT_TRUE(family_names(probes.body).count("prober_probe_total"));
  EXPECT_NE(probes.body.find("probe_type=\"Readiness\""), std::string::npos) << probes.body;
  EXPECT_NE(probes.body.find("result=\"successful\""), std::string::npos) << probes.body;
  EXPECT_NE(probes.body.find("pod=\"" + pod_ + "\""), std::string::npos) << probes.body;
  HttpAnswer resource = Https(api_port_, "/metrics/resource");
  EXPECT_EQ(resource.code, 200);
  EXPECT_TRUE(family_names(resource.body).count("node_cpu_usage_seconds_total")) << resource.body;

  // The read-only port: the default endpoints over plain HTTP, debugging endpoints disabled.
  HttpResult ro = HttpGet(read_only_port_, "/pods");
  EXPECT_EQ(ro.status, 200);
  EXPECT_NE(ro.body.find("\"name\":\"" + pod_ + "\""), std::string::npos);
  ro = HttpGet(read_only_port_, "/containerLogs/default/" + pod_ + "/main");
  EXPECT_EQ(ro.status, 405);
  EXPECT_EQ(ro.body, "Debug endpoints are disabled.\n");
  EXPECT_EQ(HttpGet(read_only_port_, "/configz").status, 405);

  // 404 / 405.
  EXPECT_EQ(Https(api_port_, "/no-such-endpoint").code, 404);
  HttpAnswer post = Https(api_port_, "/pods", "POST");
  EXPECT_EQ(post.code, 405);
  EXPECT_EQ(post.body, "405: Method Not Allowed");

  // The generated certificate: leaf + CA in kubelet.crt, kept across a restart.
  std::string crt = ReadFile(dir_ + "/pki/kubelet.crt");
  std::string key = ReadFile(dir_ + "/pki/kubelet.key");
  size_t certs = 0;
  for (size_t p = 0; (p = crt.find("BEGIN CERTIFICATE", p)) != std::string::npos; ++p) ++certs;
  EXPECT_EQ(certs, 2u);
  ASSERT_FALSE(key.empty());
  StopKubelet();
  StartKubelet(/*anonymous=*/true);
  EXPECT_EQ(ReadFile(dir_ + "/pki/kubelet.crt"), crt);
  EXPECT_EQ(ReadFile(dir_ + "/pki/kubelet.key"), key);
  EXPECT_EQ(Https(api_port_, "/pods").code, 200);
}

TEST_F(KubeletServerTest, ContainerLogsHonoursTailTimestampsPreviousAndFollow) {
  StartKubelet(/*anonymous=*/true);
  // Prints numbered lines, then exits a moment later; every restart prints them again.
  WriteManifest("logs.yaml", BusyboxPod("logs",
                                        "\"for i in 1 2 3 4 5; do echo line-$i; done; "
                                        "sleep 3; exit 1\""));
  const std::string base = "/containerLogs/default/" + PodName("logs") + "/main";
  HttpAnswer r;
  ASSERT_TRUE(WaitUntil(
      [&] {
        r = Https(api_port_, base);
        return r.code == 200 && r.body.find("line-5") != std::string::npos;
      },
      absl::Seconds(60)))
      << r.code << " " << r.body << kubelet_->Log();
  EXPECT_EQ(r.body.rfind("line-1\nline-2\n", 0), 0u) << r.body;

  r = Https(api_port_, base + "?tailLines=2");
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.body, "line-4\nline-5\n");

  r = Https(api_port_, base + "?tailLines=1&timestamps=true");
  EXPECT_EQ(r.code, 200);
  // "<RFC3339Nano> line-5"
  ASSERT_NE(r.body.find(" line-5\n"), std::string::npos) << r.body;
  EXPECT_EQ(r.body[4], '-') << r.body;
  EXPECT_NE(r.body.find('T'), std::string::npos) << r.body;

  r = Https(api_port_, base + "?limitBytes=7");
  EXPECT_EQ(r.body, "line-1\n");

  // Once restarted, the previous instance's log is there too.
  ASSERT_TRUE(WaitUntil([&] { return Containers("logs", "main").size() >= 2; }, absl::Seconds(90)))
      << kubelet_->Log();
  ASSERT_TRUE(WaitUntil(
      [&] {
        r = Https(api_port_, base + "?previous=true");
        return r.code == 200 && r.body.find("line-5") != std::string::npos;
      },
      absl::Seconds(30)))
      << r.code << " " << r.body;

  // Bad parameters and unknown containers, as upstream answers them.
  EXPECT_EQ(Https(api_port_, base + "?tailLines=abc").code, 400);
  EXPECT_EQ(Https(api_port_, "/containerLogs/default/" + PodName("logs") + "/nope").code, 404);
}

TEST_F(KubeletServerTest, ContainerLogsFollowStreamsUntilTheContainerExits) {
  StartKubelet(/*anonymous=*/true);
  // Ticks for about 15 s, then exits (and is restarted after a back-off).
  WriteManifest("ticker.yaml",
                BusyboxPod("ticker",
                           "\"trap 'exit 0' TERM; i=0; while [ $i -lt 15 ]; do i=$((i+1)); "
                           "echo tick-$i; sleep 1; done\""));
  const std::string base = "/containerLogs/default/" + PodName("ticker") + "/main";
  HttpAnswer r;
  ASSERT_TRUE(WaitUntil(
      [&] {
        r = Https(api_port_, base);
        return r.code == 200 && r.body.find("tick-1\n") != std::string::npos;
      },
      absl::Seconds(60)))
      << r.code << " " << r.body << kubelet_->Log();
  bool finished_before = r.body.find("tick-15\n") != std::string::npos;
  // The stream must end by itself when the container exits: curl's own limit is far beyond the
  // container's life, and reaching it (exit 28) fails the test.
  r = Https(api_port_, base + "?follow=true", "GET", /*max_seconds=*/120);
  EXPECT_EQ(r.curl_exit, 0) << r.body;
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.body.rfind("tick-1\n", 0), 0u) << r.body;
  EXPECT_NE(r.body.find("tick-15\n"), std::string::npos) << r.body;
  if (finished_before) {
    GTEST_LOG_(WARNING) << "the container had finished before the follow request; streaming "
                           "was not exercised";
  }
}

TEST_F(KubeletServerTest, AnonymousDisabledRefusesUnauthenticatedRequests) {
  StartKubelet(/*anonymous=*/false);
  HttpAnswer r = Https(api_port_, "/pods");
  EXPECT_EQ(r.code, 401) << kubelet_->Log();
  EXPECT_EQ(r.body, "Unauthorized");
  EXPECT_EQ(Https(api_port_, "/metrics").code, 401);
  EXPECT_EQ(Https(api_port_, "/healthz").code, 401);
}

TEST_F(KubeletServerTest, WebhookAuthWithoutKubeconfigRefusesToStart) {
  // Not the standalone serving configuration: authentication keeps its webhook default.
  WriteFile(config_path_, absl::StrCat("apiVersion: kubelet.config.k8s.io/v1beta1\n"
                                       "kind: KubeletConfiguration\n"
                                       "containerRuntimeEndpoint: ",
                                       endpoint_, "\nhealthzPort: ", healthz_port_,
                                       "\nport: ", api_port_, "\nfailSwapOn: false\n"));
  auto p = KubeletProcess::Start(KubeletBinary(), KubeletArgs(), {}, dir_ + "/kubelet.log");
  ASSERT_TRUE(p.ok());
  std::optional<int> code = (*p)->Wait(absl::Seconds(60));
  ASSERT_TRUE(code.has_value()) << (*p)->Log();
  EXPECT_NE(*code, 0);
  EXPECT_NE((*p)->Log().find("no client provided, cannot use webhook authentication"),
            std::string::npos)
      << (*p)->Log();
}

}  // namespace
}  // namespace kubelet::e2e
