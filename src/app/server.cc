#include "app/server.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "apiclient/kubeconfig.h"
#include "apiclient/rest_client.h"
#include "app/client_credentials.h"
#include "app/node_agent.h"
#include "app/process.h"
#include "app/serving_certificate.h"
#include "app/version.h"
#include "app/wiring.h"
#include "common/clock.h"
#include "common/flock.h"
#include "common/guarded.h"
#include "common/log.h"
#include "config/kubelet_configuration.h"
#include "cri/remote/remote_runtime.h"
#include "kubelet/certificate/bootstrap.h"
#include "kubelet/clustercontent/api_content.h"
#include "kubelet/cm/container_manager.h"
#include "kubelet/cpumanager/cpu_manager.h"
#include "kubelet/eviction/eviction.h"
#include "kubelet/images/image_gc_manager.h"
#include "kubelet/kubelet.h"
#include "kubelet/kuberuntime/instrumented_services.h"
#include "kubelet/kuberuntime/kuberuntime_manager.h"
#include "kubelet/kuberuntime/options.h"
#include "kubelet/logs/container_log_manager_impl.h"
#include "kubelet/memorymanager/memory_manager.h"
#include "kubelet/nodeshutdown/nodeshutdown_manager.h"
#include "kubelet/nodestatus/node_status.h"
#include "kubelet/stats/cri_stats_provider.h"
#include "kubelet/topologymanager/options.h"
#include "metrics/metrics.h"
#include "server/configz.h"
#include "server/healthz.h"
#include "server/http_server.h"
#include "server/kubelet_server.h"
#include "systemd/sd-daemon.h"

namespace kubelet::app {
namespace {

// Connects to the CRI runtime. Like upstream's gRPC dial, an unreachable socket is retried with
// back-off (100 ms doubling to 3 s) until the runtime request timeout runs out; then the error
// names the endpoint.
template <typename Service, typename Factory>
absl::StatusOr<std::unique_ptr<Service>> ConnectWithRetry(const std::string& what,
                                                          const std::string& endpoint,
                                                          absl::Duration timeout, Factory factory) {
  absl::Time deadline = absl::Now() + timeout;
  absl::Duration backoff = absl::Milliseconds(100);
  for (int attempt = 1;; ++attempt) {
    auto svc = factory();
    if (svc.ok()) return svc;
    bool retryable = svc.status().code() == absl::StatusCode::kUnavailable ||
                     svc.status().code() == absl::StatusCode::kDeadlineExceeded;
    if (!retryable || absl::Now() + backoff > deadline) {
      return absl::Status(svc.status().code(),
                          absl::StrCat("validate service connection: validate CRI v1 ", what,
                                       " API for endpoint \"", endpoint,
                                       "\": ", std::string(svc.status().message())));
    }
    KLOG_INFO("Waiting for the container runtime", "endpoint", endpoint, "attempt", attempt, "err",
              svc.status());
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(3));
  }
}

// The node's primary IP (upstream nodeutil.GetNodeHostIPs without a cloud provider): --node-ip
// when given, else the host name's first non-loopback IPv4 address, else the address of the
// interface holding the default route, else the first non-loopback IPv4 of an interface that is
// up.
std::string DetectNodeIP(const std::string& node_ip_flag, const std::string& hostname) {
  if (!node_ip_flag.empty()) {
    std::string first = node_ip_flag.substr(0, node_ip_flag.find(','));
    return first;
  }
  struct addrinfo hints {};
  hints.ai_family = AF_INET;
  struct addrinfo* res = nullptr;
  if (::getaddrinfo(hostname.c_str(), nullptr, &hints, &res) == 0) {
    for (auto* ai = res; ai != nullptr; ai = ai->ai_next) {
      auto* sin = reinterpret_cast<sockaddr_in*>(ai->ai_addr);
      char buf[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
      if (std::string(buf).rfind("127.", 0) != 0) {
        ::freeaddrinfo(res);
        return buf;
      }
    }
    ::freeaddrinfo(res);
  }
  std::string default_if;
  std::ifstream routes("/proc/net/route");
  std::string line;
  std::getline(routes, line);  // header
  while (std::getline(routes, line)) {
    std::istringstream is(line);
    std::string iface, dest;
    is >> iface >> dest;
    if (dest == "00000000") {
      default_if = iface;
      break;
    }
  }
  std::string fallback;
  struct ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) == 0) {
    for (auto* i = ifs; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
      char buf[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf,
                  sizeof(buf));
      if (default_if == i->ifa_name) {
        fallback = buf;
        break;
      }
      if (fallback.empty()) fallback = buf;
    }
    ::freeifaddrs(ifs);
  }
  return fallback;
}

}  // namespace

absl::StatusOr<std::string> GetHostname(const std::string& hostname_override) {
  std::string name(absl::StripAsciiWhitespace(hostname_override));
  if (name.empty()) {
    char buf[256] = {0};
    if (::gethostname(buf, sizeof(buf) - 1) != 0) {
      return absl::UnavailableError(
          absl::StrCat("couldn't determine hostname: ", std::strerror(errno)));
    }
    name = std::string(absl::StripAsciiWhitespace(buf));
  }
  absl::AsciiStrToLower(&name);
  if (name.empty()) return absl::InvalidArgumentError("empty hostname is invalid");
  return name;
}

namespace {

// Start-up phases of RunUnguarded, in upstream's order.

void ReportUnimplemented(const Settings& s) {
  for (const std::string& field : UnimplementedFields(s.file_fields)) {
    KLOG_WARNING("Configuration field is accepted but not implemented yet", "field", field);
  }
  for (const std::string& field : UnimplementedFields(s.changed_flags)) {
    if (std::find(s.file_fields.begin(), s.file_fields.end(), field) != s.file_fields.end()) {
      continue;  // reported above
    }
    KLOG_WARNING("Configuration flag is accepted but not implemented yet", "field", field);
  }
}

// The lock file; the inotify descriptor watching it for contention, or -1.
absl::StatusOr<int> AcquireLockFile(const Settings& s) {
  if (s.flags.exit_on_lock_contention && s.flags.lock_file_path.empty()) {
    return absl::InvalidArgumentError(
        "cannot exit on lock file contention: no lock file specified");
  }
  if (s.flags.lock_file_path.empty()) return -1;
  KLOG_INFO("Acquiring file lock", "path", s.flags.lock_file_path);
  auto lock = AcquireFileLock(s.flags.lock_file_path);
  if (!lock.ok()) {
    return absl::UnavailableError(absl::StrCat("unable to acquire file lock on \"",
                                               s.flags.lock_file_path,
                                               "\": ", std::string(lock.status().message())));
  }
  if (!s.flags.exit_on_lock_contention) return -1;
  KLOG_INFO("Watching for inotify events", "path", s.flags.lock_file_path);
  return WatchForLockContention(s.flags.lock_file_path);
}

// The CRI runtime and image services (retried until runtimeRequestTimeout), wrapped so that
// every call is counted in kubelet_runtime_operations_*.
struct CriServices {
  // Declared first, destroyed last: the instrumented services wrap them.
  std::unique_ptr<cri::RuntimeService> remote_runtime;
  std::unique_ptr<cri::ImageManagerService> remote_images;
  std::unique_ptr<cri::RuntimeService> runtime;
  std::unique_ptr<cri::ImageManagerService> images;
};

// What ConnectCri reads.
constexpr std::string_view kCriConfigFields[] = {"containerRuntimeEndpoint", "imageServiceEndpoint",
                                                 "runtimeRequestTimeout"};

absl::StatusOr<CriServices> ConnectCri(const config::KubeletConfiguration& cfg) {
  const std::string runtime_endpoint = cfg.container_runtime_endpoint;
  const std::string image_endpoint =
      cfg.image_service_endpoint.empty() ? runtime_endpoint : cfg.image_service_endpoint;
  KLOG_INFO("Connecting to the container runtime", "endpoint", runtime_endpoint);
  auto runtime = ConnectWithRetry<cri::RuntimeService>(
      "runtime", runtime_endpoint, cfg.runtime_request_timeout,
      [&] { return cri::NewRemoteRuntimeService(runtime_endpoint, cfg.runtime_request_timeout); });
  if (!runtime.ok()) return runtime.status();
  auto images = ConnectWithRetry<cri::ImageManagerService>(
      "image", image_endpoint, cfg.runtime_request_timeout,
      [&] { return cri::NewRemoteImageService(image_endpoint, cfg.runtime_request_timeout); });
  if (!images.ok()) return images.status();
  CriServices out;
  out.remote_runtime = *std::move(runtime);
  out.remote_images = *std::move(images);
  out.runtime = kuberuntime::NewInstrumentedRuntimeService(*out.remote_runtime);
  out.images = kuberuntime::NewInstrumentedImageService(*out.remote_images);
  auto version = out.runtime->Version("v1");
  if (version.ok()) {
    KLOG_INFO("Container runtime initialized", "containerRuntime", version->runtime_name(),
              "version", version->runtime_version(), "apiVersion", version->runtime_api_version());
  }
  return out;
}

// What StartHealthz reads.
constexpr std::string_view kHealthzConfigFields[] = {"healthzPort", "healthzBindAddress"};

// The healthz server, or null when it is off or cannot start (logged). Beyond upstream's ping: a
// stalled sync loop or PLEG (no relist for 3 min) fails healthz, so a supervisor probing this
// port restarts a wedged kubelet.
std::unique_ptr<server::HttpServer> StartHealthz(const config::KubeletConfiguration& cfg,
                                                 Kubelet& kubelet) {
  if (cfg.healthz_port <= 0) return nullptr;
  auto healthz = std::make_unique<server::HttpServer>(server::HttpServerOptions{
      .name = "healthz", .address = cfg.healthz_bind_address, .port = cfg.healthz_port});
  server::InstallHealthz(*healthz, {{"syncloop", [&kubelet] { return kubelet.SyncLoopHealthy(); }},
                                    {"pleg", [&kubelet] { return kubelet.PLEGHealthy(); }}});
  if (absl::Status st = healthz->Start(); !st.ok()) {
    KLOG_ERROR(st, "Failed to start healthz server");
    return nullptr;
  }
  KLOG_INFO("Started healthz server", "address",
            absl::StrCat(cfg.healthz_bind_address, ":", cfg.healthz_port));
  return healthz;
}

int RunUnguarded(Settings& s) {
  DisableLockOrderChecks();
  int signal_fd = BlockShutdownSignals();
  const config::KubeletConfiguration& cfg = s.config;
  auto fail = [](const absl::Status& st) {
    KLOG_ERROR(st, "command failed");
    return 1;
  };

  KLOG_INFO("Kubelet version", "kubeletVersion", VersionString());
  ReportUnimplemented(s);
  absl::StatusOr<int> lock_watch_fd = AcquireLockFile(s);
  if (!lock_watch_fd.ok()) return fail(lock_watch_fd.status());

  server::Configz configz;
  if (absl::Status st = configz.Register("kubeletconfig", config::KubeletConfigurationToJson(cfg));
      !st.ok()) {
    return fail(st);
  }

  auto hostname = GetHostname(s.flags.hostname_override);
  if (!hostname.ok()) return fail(hostname.status());
  const std::string node_name = *hostname;
  KLOG_INFO("Node name", "node", node_name);
  ApiClients clients;
  if (absl::Status st = MakeApiClients(s, node_name, &clients); !st.ok()) return fail(st);

  if (::geteuid() != 0) {
    KLOG_ERROR(absl::PermissionDeniedError(absl::StrCat(
                   "kubelet needs to run as uid `0`. It is being run as ", ::geteuid())),
               "kubelet running with insufficient permissions");
  }
  if (absl::Status st = ApplyOOMScoreAdj(cfg.oom_score_adj); !st.ok()) {
    KLOG_INFO("Failed to ApplyOOMScoreAdj", "err", st);
  }
  absl::StatusOr<CriServices> cri = ConnectCri(cfg);
  if (!cri.ok()) return fail(cri.status());

  // RunKubelet.
  if (absl::Status st = SetMaxOpenFiles(cfg.max_open_files); !st.ok()) {
    KLOG_WARNING("Failed to set the open files limit", "err", st);
  }
  const std::string node_ip = DetectNodeIP(s.flags.node_ip, node_name);
  KLOG_INFO("Node IP", "nodeIP", node_ip);
  RealClock clock;
  metrics::Init(node_name, VersionString(), BuildId());
  absl::StatusOr<std::unique_ptr<NodeAgent>> agent =
      NodeAgent::Start(NodeAgentConfig{.settings = &s,
                                       .node_name = node_name,
                                       .node_ip = node_ip,
                                       .api = clients.api,
                                       .events = clients.events,
                                       .runtime = cri->runtime.get(),
                                       .images = cri->images.get(),
                                       .clock = &clock,
                                       .configz = &configz});
  if (!agent.ok()) return fail(agent.status());
  Kubelet& kubelet = (*agent)->kubelet();
  std::unique_ptr<server::HttpServer> healthz = StartHealthz(cfg, kubelet);
  // Tell systemd we are up (a no-op without NOTIFY_SOCKET).
  if (int rc = sd_notify(0, "READY=1"); rc < 0) {
    KLOG_WARNING("Failed to notify systemd", "err", absl::UnavailableError(std::strerror(-rc)));
  }

  WaitForShutdown(signal_fd, *lock_watch_fd, s.flags.lock_file_path);
  if (healthz) healthz->Stop();
  (*agent)->Stop();
  KLOG_INFO("Kubelet stopped");
  return 0;
}

// What each function from the configuration reads: the components' (next to their options) and
// the app's own. Their union is what this kubelet acts on.
constexpr std::span<const std::string_view> kConfigFieldLists[] = {
    kuberuntime::kRuntimeConfigFields,
    kKubeletConfigFields,
    cm::kNodeConfigFields,
    cm::kReservationConfigFields,
    topologymanager::kTopologyManagerConfigFields,
    cpumanager::kCPUManagerConfigFields,
    memorymanager::kMemoryManagerConfigFields,
    clustercontent::kObjectSourceConfigFields,
    logs::kContainerLogManagerConfigFields,
    images::kImageGCConfigFields,
    stats::kCRIStatsProviderConfigFields,
    eviction::kManagerConfigFields,
    nodeshutdown::kManagerConfigFields,
    server::kKubeletServerConfigFields,
    nodestatus::kNodeStatusConfigFields,
    kHttpServerWiringConfigFields,
    kCommandLineConfigFields,
    kClientCredentialsConfigFields,
    kServingCertificateConfigFields,
    kApiClientConfigFields,
    kCriConfigFields,
    kProcessConfigFields,
    kHealthzConfigFields,
};

}  // namespace

const std::set<std::string>& ImplementedFields() {
  static const std::set<std::string>* fields = [] {
    auto* out = new std::set<std::string>{"apiVersion", "kind"};
    for (std::span<const std::string_view> list : kConfigFieldLists) {
      out->insert(list.begin(), list.end());
    }
    return out;
  }();
  return *fields;
}

std::vector<std::string> UnimplementedFields(const std::vector<std::string>& file_fields) {
  std::vector<std::string> out;
  for (const std::string& f : file_fields) {
    if (ImplementedFields().count(f)) continue;
    // A nested field counts as implemented when its parent object is.
    size_t dot = f.find('.');
    if (dot != std::string::npos && ImplementedFields().count(f.substr(0, dot)) &&
        f.substr(0, dot) != "logging") {
      continue;
    }
    out.push_back(f);
  }
  return out;
}

int Run(Settings& s) {
  // The main thread's boundary: an exception that gets this far ends the kubelet with an error
  // logged like any other failure, after unwinding stopped what was started.
  int rc = 1;
  std::string thrown;
  if (!RunGuarded(
          "kubelet main", [&] { rc = RunUnguarded(s); }, &thrown)) {
    KLOG_ERROR(absl::InternalError(thrown), "command failed");
    return 1;
  }
  return rc;
}

}  // namespace kubelet::app
