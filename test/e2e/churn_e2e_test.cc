// Pod churn on the real runtime: KUBELET_CHURN_CYCLES (default 1000) static pods created and
// deleted, KUBELET_CHURN_PARALLEL (default 20) at a time, through one kubelet. After a warm-up
// of a tenth of the cycles the kubelet's footprint is taken at rest; after the rest of the
// cycles, at rest again, it must not have grown: RSS by under 8 MiB (the goal is 2; see below),
// not one file descriptor or thread more (a small allowance for connections and workers that
// come and go), and nothing of
// any churned pod may remain: sandboxes (once the container GC has run), pod directories,
// mounts under the kubelet's root, pod cgroups in any hierarchy, network namespaces, log
// directories.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "test/e2e/static_pod_fixture.h"

namespace kubelet::e2e {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  int out = 0;
  return v != nullptr && absl::SimpleAtoi(v, &out) && out > 0 ? out : fallback;
}

struct Footprint {
  int64_t rss_kib = 0;
  int64_t anon_kib = 0;  // smaps_rollup Anonymous: heap, stacks; the rest is mapped files
  int fds = 0;
  int threads = 0;
  std::string String() const {
    return absl::StrCat("rss=", rss_kib, "KiB (anonymous ", anon_kib, "KiB) fds=", fds,
                        " threads=", threads);
  }
};

Footprint Measure(pid_t pid) {
  Footprint f;
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmRSS:")) {
      std::istringstream in(line.substr(6));
      in >> f.rss_kib;
    } else if (absl::StartsWith(line, "Threads:")) {
      std::istringstream in(line.substr(8));
      in >> f.threads;
    }
  }
  std::ifstream rollup(absl::StrCat("/proc/", pid, "/smaps_rollup"));
  while (std::getline(rollup, line)) {
    if (absl::StartsWith(line, "Anonymous:")) {
      std::istringstream in(line.substr(10));
      in >> f.anon_kib;
    }
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++f.fds;
  }
  return f;
}

// At rest: the smallest of samples 5 s apart over 65 s (a relist in flight holds a connection
// or a buffer for a moment; the kubelet returns free heap pages to the kernel once a minute).
Footprint AtRest(pid_t pid) {
  Footprint best = Measure(pid);
  for (int i = 0; i < 13; ++i) {
    absl::SleepFor(absl::Seconds(5));
    Footprint f = Measure(pid);
    best.rss_kib = std::min(best.rss_kib, f.rss_kib);
    best.anon_kib = std::min(best.anon_kib, f.anon_kib);
    best.fds = std::min(best.fds, f.fds);
    best.threads = std::min(best.threads, f.threads);
  }
  return best;
}

class ChurnTest : public StaticPodTest {
 protected:
  // One wave: `n` pods created at once, all running, then deleted and stopped. Records what
  // each pod had (uid, network namespace) for the leak checks.
  void Wave(int wave, int n) {
    std::vector<std::string> bases;
    for (int i = 0; i < n; ++i) {
      std::string base = absl::StrCat("churn-", wave, "-", i);
      WriteManifest(base + ".yaml",
                    BusyboxPod(base, kSleepForever, PodParts{.termination_grace_seconds = 1}));
      bases.push_back(base);
    }
    for (const std::string& base : bases) {
      ASSERT_TRUE(WaitUntil([&] { return Running(base, "main").size() == 1; }, absl::Seconds(120),
                            absl::Milliseconds(50)))
          << "wave " << wave << " pod " << base << "\n"
          << kubelet_->Log();
      ASSERT_EQ(Sandboxes(base).size(), 1u) << base;
      const PodSandbox sandbox = Sandboxes(base).front();
      uids_.insert(sandbox.metadata().uid());
      auto st = cri_->PodSandboxStatus(sandbox.id(), /*verbose=*/true);
      if (st.ok()) {
        auto info = st->info().find("info");
        if (info != st->info().end()) {
          auto j = nlohmann::json::parse(info->second, nullptr, false);
          // containerd: the sandbox's OCI spec names its network namespace.
          if (j.is_object() && j.contains("runtimeSpec")) {
            for (const auto& ns :
                 j["runtimeSpec"]["linux"].value("namespaces", nlohmann::json::array())) {
              if (ns.value("type", "") == "network" && !ns.value("path", "").empty()) {
                netns_.insert(ns.value("path", ""));
              }
            }
          }
        }
      }
    }
    for (const std::string& base : bases) {
      std::filesystem::remove(manifests_ + "/" + base + ".yaml");
    }
    for (const std::string& base : bases) {
      ASSERT_TRUE(WaitUntil([&] { return ReadySandboxes(base).empty(); }, absl::Seconds(120),
                            absl::Milliseconds(50)))
          << "wave " << wave << " pod " << base << " not stopped\n"
          << kubelet_->Log();
    }
  }

  // Waits for the kubelet to have removed every churned pod: sandboxes (container GC), pod
  // directories (housekeeping).
  bool Settled() {
    return WaitUntil(
        [&] {
          for (const PodSandbox& s : Sandboxes("")) {
            if (absl::StartsWith(s.metadata().name(), "churn-")) return false;
          }
          for (const std::string& uid : uids_) {
            if (std::filesystem::exists(dir_ + "/root/pods/" + uid)) return false;
          }
          return true;
        },
        absl::Minutes(4), absl::Seconds(2));
  }

  std::set<std::string> uids_;
  std::set<std::string> netns_;
};

TEST_F(ChurnTest, CreateDeleteCyclesLeakNothing) {
  if (RuntimeName() != "containerd") GTEST_SKIP() << "containerd only";
  const int cycles = EnvInt("KUBELET_CHURN_CYCLES", 1000);
  const int parallel = std::min(EnvInt("KUBELET_CHURN_PARALLEL", 20), cycles);
  const int waves = (cycles + parallel - 1) / parallel;
  const int warmup = std::max(1, waves / 10);
  // The container GC (every minute) removes the dead sandboxes and containers of deleted pods.
  StartKubelet();
  const pid_t pid = kubelet_->pid();

  const absl::Time start = absl::Now();
  for (int w = 0; w < warmup; ++w) {
    Wave(w, parallel);
    if (HasFatalFailure()) return;
  }
  ASSERT_TRUE(Settled()) << "warm-up pods not cleaned up\n" << kubelet_->Log();
  const Footprint before = AtRest(pid);
  for (int w = warmup; w < waves; ++w) {
    Wave(w, parallel);
    if (HasFatalFailure()) return;
    if ((w + 1) % 10 == 0) {
      std::printf("churn: after %d cycles: %s\n", (w + 1) * parallel,
                  Measure(pid).String().c_str());
      std::fflush(stdout);
    }
  }
  ASSERT_TRUE(Settled()) << "churned pods not cleaned up\n" << kubelet_->Log();
  const Footprint after = AtRest(pid);
  std::printf("churn: %d cycles (%d at a time) in %.0f s; after the warm-up: %s; at the end: %s\n",
              waves * parallel, parallel, absl::ToDoubleSeconds(absl::Now() - start),
              before.String().c_str(), after.String().c_str());

  // The goal is under 2 MiB and is not met yet: 2.5 MiB over 360 cycles, 3.4 MiB over 540, all
  // of it anonymous memory while the live heap stays near 2 MiB (heap profile), so not yet
  // explained. The bound catches anything worse than that (a leak of ~9 KiB a pod).
  EXPECT_LT(after.rss_kib - before.rss_kib, 8 * 1024)
      << before.String() << " -> " << after.String();
  EXPECT_LE(after.fds, before.fds + 2) << before.String() << " -> " << after.String();
  EXPECT_LE(after.threads, before.threads + 2) << before.String() << " -> " << after.String();

  // Nothing of any churned pod remains.
  {
    std::ifstream mounts("/proc/self/mountinfo");
    std::string line;
    int under_root = 0;
    while (std::getline(mounts, line)) {
      if (absl::StrContains(line, dir_ + "/root/")) ++under_root;
    }
    EXPECT_EQ(under_root, 0) << "mounts left under the kubelet's root dir";
  }
  int cgroups_left = 0;
  std::error_code ec;
  for (const auto& h : std::filesystem::directory_iterator("/sys/fs/cgroup", ec)) {
    for (const std::string& uid : uids_) {
      for (const char* qos : {"", "/besteffort", "/burstable"}) {
        for (const char* root : {"/kubepods", "/kubepods.slice"}) {
          if (std::filesystem::exists(absl::StrCat(h.path().string(), root, qos, "/pod", uid))) {
            ++cgroups_left;
          }
        }
      }
    }
  }
  EXPECT_EQ(cgroups_left, 0) << "pod cgroups left";
  int netns_left = 0;
  for (const std::string& ns : netns_) netns_left += std::filesystem::exists(ns) ? 1 : 0;
  EXPECT_EQ(netns_left, 0) << "network namespaces left (of " << netns_.size() << ")";
  EXPECT_EQ(netns_.size(), uids_.size());
  int log_dirs_left = 0;
  for (const auto& d : std::filesystem::directory_iterator("/var/log/pods", ec)) {
    for (const std::string& uid : uids_) {
      if (absl::EndsWith(d.path().filename().string(), "_" + uid)) ++log_dirs_left;
    }
  }
  EXPECT_EQ(log_dirs_left, 0) << "pod log directories left";
  EXPECT_EQ(static_cast<int>(uids_.size()), waves * parallel);
}

}  // namespace
}  // namespace kubelet::e2e
