// The kubelet killed with SIGKILL while 110 static pods run (upstream's default maxPods), then
// started again, on the real runtime with OUR kubelet binary: no container is restarted or
// recreated, no sandbox is duplicated, the readiness probes of the probed pods run again (the
// pods report Ready from the restarted kubelet, which starts them unready as upstream), and
// container logs keep being served with lines written after the restart.
// No timing is asserted: every wait is a generous bound.
#include <signal.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/controlplane.h"
#include "test/e2e/http_client.h"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

using json = nlohmann::json;

constexpr int kPods = 110;
constexpr int kProbed = 10;  // p0..p9 carry an exec readiness probe

class KubeletKillTest : public StaticPodTest {
 protected:
  // GET https://127.0.0.1:<port><path> on the kubelet API (anonymous, AlwaysAllow here).
  std::string ApiGet(const std::string& path) {
    return KubeletEndpoint::Https(api_port_).Get(path).body;
  }

  // Names of the pods /pods reports Ready=True.
  std::set<std::string> ReadyPods() {
    std::set<std::string> out;
    json pods = json::parse(ApiGet("/pods"), nullptr, false);
    if (!pods.is_object()) return out;
    for (const json& p : pods.value("items", json::array())) {
      for (const json& c : p["status"].value("conditions", json::array())) {
        if (c.value("type", "") == "Ready" && c.value("status", "") == "True") {
          out.insert(p["metadata"].value("name", ""));
        }
      }
    }
    return out;
  }

  // The last "tick-N" number in the container's log through the kubelet API (-1 when none).
  int LastTick(const std::string& pod) {
    int last = -1;
    for (absl::string_view line :
         absl::StrSplit(ApiGet("/containerLogs/default/" + pod + "/main?tailLines=3"), '\n')) {
      int n = 0;
      if (absl::ConsumePrefix(&line, "tick-") && absl::SimpleAtoi(line, &n)) last = n;
    }
    return last;
  }

  bool AllProbedReady() {
    std::set<std::string> ready = ReadyPods();
    for (int i = 0; i < kProbed; ++i) {
      if (ready.count(PodName(absl::StrCat("p", i))) == 0) return false;
    }
    return true;
  }
};

TEST_F(KubeletKillTest, SigkillWith110PodsRestartsNothing) {
  StartKubelet();
  const std::string staging = dir_ + "/staging";
  std::filesystem::create_directories(staging);
  for (int i = 0; i < kPods; ++i) {
    PodParts parts;
    parts.termination_grace_seconds = 2;
    if (i < kProbed) {
      parts.container =
          "    readinessProbe:\n      exec:\n        command: [\"true\"]\n"
          "      periodSeconds: 5\n";
    }
    WriteFile(absl::StrCat(staging, "/p", i, ".yaml"),
              BusyboxPod(absl::StrCat("p", i),
                         "\"trap 'exit 0' TERM; i=0; while true; do echo tick-$i; i=$((i+1)); "
                         "sleep 2; done\"",
                         parts));
  }
  for (int i = 0; i < kPods; ++i) {
    std::filesystem::rename(absl::StrCat(staging, "/p", i, ".yaml"),
                            absl::StrCat(manifests_, "/p", i, ".yaml"));
  }
  ASSERT_TRUE(WaitUntil([&] { return Running("").size() == static_cast<size_t>(kPods); },
                        absl::Seconds(600), absl::Seconds(2)))
      << Running("").size() << " running\n"
      << kubelet_->Log();
  ASSERT_TRUE(WaitUntil([&] { return AllProbedReady(); }, absl::Seconds(120), absl::Seconds(2)));

  std::set<std::string> containers_before, sandboxes_before;
  for (const auto& c : Containers("")) containers_before.insert(c.id());
  for (const auto& s : Sandboxes("")) sandboxes_before.insert(s.id());
  ASSERT_EQ(containers_before.size(), static_cast<size_t>(kPods));
  ASSERT_EQ(sandboxes_before.size(), static_cast<size_t>(kPods));
  const int tick_before = LastTick(PodName("p0"));
  ASSERT_GE(tick_before, 0);

  kubelet_->Signal(SIGKILL);
  ASSERT_TRUE(kubelet_->Wait(absl::Seconds(30)).has_value());
  kubelet_.reset();
  StartKubelet();

  // Probes run again: the restarted kubelet reports the probed pods Ready.
  EXPECT_TRUE(WaitUntil([&] { return AllProbedReady(); }, absl::Seconds(180), absl::Seconds(2)))
      << kubelet_->Log();
  // Logs are served, with lines written after the restart.
  EXPECT_TRUE(WaitUntil([&] { return LastTick(PodName("p0")) > tick_before + 2; },
                        absl::Seconds(60), absl::Seconds(1)));
  // A few sync rounds later, nothing was recreated or restarted.
  absl::SleepFor(absl::Seconds(10));
  std::set<std::string> containers_after, sandboxes_after;
  int restarted = 0;
  for (const auto& c : Containers("")) {
    containers_after.insert(c.id());
    if (c.metadata().attempt() != 0) ++restarted;
  }
  for (const auto& s : Sandboxes("")) sandboxes_after.insert(s.id());
  EXPECT_EQ(restarted, 0);
  EXPECT_EQ(containers_after, containers_before);
  EXPECT_EQ(sandboxes_after, sandboxes_before);
  EXPECT_EQ(Running("").size(), static_cast<size_t>(kPods));
}

}  // namespace
}  // namespace kubelet::e2e
