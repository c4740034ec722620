#include "app/hollow.h"

#include <malloc.h>
#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "apiclient/request_info.h"
#include "app/client_credentials.h"
#include "app/node_agent.h"
#include "app/process.h"
#include "app/version.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/loops.h"
#include "common/memory_trim.h"
#include "cri/sim/sim_runtime.h"
#include "kubelet/hollow/fleet.h"
#include "kubelet/hollow/machine.h"
#include "metrics/metrics.h"
#include "server/healthz.h"
#include "server/http_server.h"
#include "systemd/sd-daemon.h"

namespace kubelet::app {
namespace {

constexpr const char* kHollowHelp =
    "Runs many hollow nodes in one process, for scale tests of a control plane: each one this\n"
    "kubelet's own node agent against the API server (registration, status, Lease, pods,\n"
    "statuses, events), over an in-process simulated container runtime and machine.\n";

// One hollow node: its settings, its API clients, its simulated runtime and its agent
// (declared in that order, so the agent stops and goes first).
class HollowNode final : public hollow::FleetMember {
 public:
  Settings settings;
  ApiClients clients;
  std::unique_ptr<cri::SimRuntime> runtime;
  std::unique_ptr<NodeAgent> agent;

  void Stop() override {
    if (agent) agent->Stop();
  }
};

// A random boot id for this start of the process (the nodes' "reboot" is the process's).
std::string NewBootId() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  const uint64_t a = rng(), b = rng();
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                         b >> 48, b & 0xffffffffffffULL);
}

}  // namespace

SubCommand HollowCommand(HollowOptions* o) {
  SubCommand c;
  c.name = "hollow";
  c.help = kHollowHelp;
  c.add_flags = [o](config::FlagSet& fs) {
    fs.Int32("nodes", &o->nodes, "Number of hollow nodes to run (1-16384).");
    fs.String("name-prefix", &o->name_prefix, "Hollow node i is named <name-prefix><i>.");
    fs.String("node-cpu", &o->node_cpu, "CPU capacity each hollow node reports.");
    fs.String("node-memory", &o->node_memory, "Memory capacity each hollow node reports.");
    fs.String("node-ephemeral-storage", &o->node_ephemeral_storage,
              "Ephemeral storage capacity each hollow node reports.");
    fs.Int32("start-concurrency", &o->start_concurrency,
             "How many hollow nodes start (bootstrap, register) at once.");
    fs.Duration("runtime-start-delay", &o->runtime_start_delay,
                "How long the simulated runtime takes to start a sandbox or a container.");
    fs.Duration("runtime-pull-delay", &o->runtime_pull_delay,
                "How long the simulated runtime takes to pull an image.");
  };
  return c;
}

int RunHollow(Settings& s, const HollowOptions& h) {
  DisableLockOrderChecks();
  int signal_fd = BlockShutdownSignals();
  auto fail = [](const absl::Status& st) {
    KLOG_ERROR(st, "command failed");
    return 1;
  };
  KLOG_INFO("Kubelet version", "kubeletVersion", VersionString(), "mode", "hollow");
  if (h.nodes < 1 || h.nodes > hollow::kMaxNodes) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--nodes must be between 1 and ", hollow::kMaxNodes, ", not ", h.nodes)));
  }
  if (s.flags.kube_config.empty() && s.flags.bootstrap_kubeconfig.empty()) {
    return fail(absl::InvalidArgumentError(
        "hollow nodes run in API-server mode: --kubeconfig or --bootstrap-kubeconfig is "
        "required"));
  }
  hollow::MachineSpec spec;
  spec.cpu = h.node_cpu;
  spec.memory = h.node_memory;
  spec.ephemeral_storage = h.node_ephemeral_storage;
  spec.max_pods = s.config.max_pods;
  spec.kube_reserved = s.config.kube_reserved;
  spec.system_reserved = s.config.system_reserved;
  const std::string boot_id = NewBootId();
  if (absl::Status st = hollow::SimulatedMachine(spec, h.name_prefix, boot_id).status(); !st.ok()) {
    return fail(st);
  }
  cri::SimRuntimeOptions sim;
  sim.start_delay = h.runtime_start_delay;
  sim.pull_delay = h.runtime_pull_delay;
  if (absl::Status st = cri::ValidateSimRuntimeOptions(sim); !st.ok()) return fail(st);

  LimitMallocArenas(2);
  if (absl::Status st = SetMaxOpenFiles(s.config.max_open_files); !st.ok()) {
    KLOG_WARNING("Failed to set the open files limit", "err", st);
  }
  std::error_code ec;
  std::filesystem::create_directories(s.flags.root_directory, ec);
  if (ec) {
    return fail(absl::UnavailableError(
        absl::StrCat("creating the root directory ", s.flags.root_directory, ": ", ec.message())));
  }
  RealClock clock;
  // Every node's loops (sync, housekeeping, runtime health, PLEG, pod status sync, node status
  // and Lease) on one timer thread and a pool: a node holds no thread between its rounds. Made
  // before the fleet, so it outlives every node.
  std::unique_ptr<Loops> loops = NewSharedLoops(clock);
  metrics::Init(h.name_prefix, VersionString(), BuildId());

  // One services watch for every node (the first node to start opens it with its client): the
  // same cluster-wide list, read once instead of once per node.
  struct SharedServices {
    absl::Mutex mu;
    std::shared_ptr<ServiceWatch> watch ABSL_GUARDED_BY(mu);
  };
  auto services = std::make_shared<SharedServices>();
  // Every node's runtime, for the process's metrics (set once a node has started).
  auto runtimes = std::make_shared<std::vector<std::atomic<cri::SimRuntime*>>>(h.nodes);
  const bool bootstrap = !s.flags.bootstrap_kubeconfig.empty();
  // Every node's API requests, by the API server's verb and resource.
  prometheus::Family<prometheus::Counter>& api_requests =
      prometheus::BuildCounter()
          .Name("kubelet_hollow_api_requests_total")
          .Help(
              "API requests of every hollow node of this process, by the API server's verb, "
              "resource and subresource.")
          .Register(metrics::KubeletRegistry());
  auto count_request = [&api_requests](const apiclient::Request& r, int) {
    std::optional<apiclient::RequestInfo> info = apiclient::ParseRequestPath(r.path);
    if (!info) return;
    api_requests
        .Add({{"verb", apiclient::RequestVerb(r.method, *info)},
              {"resource", info->resource},
              {"subresource", info->subresource}})
        .Increment();
  };
  hollow::Fleet fleet(
      hollow::FleetOptions{.nodes = h.nodes, .start_concurrency = h.start_concurrency},
      [&](int i) -> absl::StatusOr<std::unique_ptr<hollow::FleetMember>> {
        const hollow::HollowNodeIdentity id = hollow::HollowNode(h.name_prefix, i);
        auto node = std::make_unique<HollowNode>();
        node->settings = s;
        config::KubeletFlags& f = node->settings.flags;
        f.root_directory = absl::StrCat(s.flags.root_directory, "/", id.name);
        f.hostname_override = id.name;
        f.node_ip = id.node_ip;
        if (bootstrap) {
          f.kube_config = f.root_directory + "/kubelet.conf";
          f.cert_directory = f.root_directory + "/pki";
        }
        std::error_code dir_ec;
        std::filesystem::create_directories(f.root_directory, dir_ec);
        if (dir_ec) {
          return absl::UnavailableError(
              absl::StrCat("creating ", f.root_directory, ": ", dir_ec.message()));
        }
        // The client's idle connections (up to 4) stay for the next burst, as a kubelet's do: a
        // node starting pods sends events, status patches and pod reads at once, and a connection
        // closed after each would cost a TLS handshake on both sides the next time. Those idle
        // for over 90 s close, so a node at rest keeps about one.
        apiclient::RestClientOptions transport;
        transport.on_request = count_request;
        if (absl::Status st = MakeApiClients(node->settings, id.name, &node->clients, transport);
            !st.ok()) {
          return st;
        }
        std::shared_ptr<ServiceWatch> service_watch;
        {
          absl::MutexLock lock(&services->mu);
          if (services->watch == nullptr) {
            services->watch = StartServiceWatch(
                node->clients.api, s.flags.root_directory + "/services-checkpoint.json", clock,
                loops.get());
          }
          service_watch = services->watch;
        }
        cri::SimRuntimeOptions ro = sim;
        ro.pod_cidr = id.pod_cidr;
        node->runtime = std::make_unique<cri::SimRuntime>(std::move(ro));
        absl::StatusOr<nodestatus::MachineFacts> machine =
            hollow::SimulatedMachine(spec, id.name, boot_id);
        if (!machine.ok()) return machine.status();
        absl::StatusOr<std::unique_ptr<NodeAgent>> agent =
            NodeAgent::Start(NodeAgentConfig{.settings = &node->settings,
                                             .node_name = id.name,
                                             .node_ip = id.node_ip,
                                             .api = node->clients.api,
                                             // Events share the node's connections: a
                                             // hollow node's descriptors are what limits N.
                                             .events = node->clients.api,
                                             .runtime = node->runtime.get(),
                                             .images = node->runtime.get(),
                                             .clock = &clock,
                                             .simulated = *std::move(machine),
                                             .shared_services = std::move(service_watch),
                                             .loops = loops.get()});
        if (!agent.ok()) return agent.status();
        node->agent = *std::move(agent);
        (*runtimes)[static_cast<size_t>(i)].store(node->runtime.get());
        KLOG_INFO("Hollow node started", "node", id.name);
        return node;
      },
      clock);

  metrics::AddGaugeFunc(metrics::KubeletRegistry(), "kubelet_hollow_nodes",
                        "Hollow nodes of this process: the number asked for.",
                        [n = h.nodes] { return static_cast<double>(n); });
  metrics::AddGaugeFunc(metrics::KubeletRegistry(), "kubelet_hollow_nodes_started",
                        "Hollow nodes of this process that have started.",
                        [&fleet] { return static_cast<double>(fleet.started()); });
  metrics::AddGaugeFunc(metrics::KubeletRegistry(), "kubelet_hollow_running_containers",
                        "Running containers in the simulated runtimes of every hollow node.",
                        [runtimes] {
                          int64_t n = 0;
                          for (auto& r : *runtimes) {
                            if (cri::SimRuntime* rt = r.load())
                              n += rt->Counts().running_containers;
                          }
                          return static_cast<double>(n);
                        });

  metrics::AddGaugeFunc(
      metrics::KubeletRegistry(), "kubelet_hollow_heap_bytes_per_node",
      "The process's heap in use (malloc) divided by the hollow nodes started.", [&fleet] {
        const struct mallinfo2 m = mallinfo2();
        const int started = fleet.started();
        return started > 0 ? static_cast<double>(m.uordblks + m.hblkhd) / started : 0.0;
      });

  std::unique_ptr<server::HttpServer> http;
  if (s.config.healthz_port > 0) {
    http = std::make_unique<server::HttpServer>(server::HttpServerOptions{
        .name = "hollow", .address = s.config.healthz_bind_address, .port = s.config.healthz_port});
    server::InstallHealthz(*http, {});
    http->Handle("/metrics", [](const server::HttpRequest&, server::HttpResponse* res) {
      res->status = 200;
      res->SetHeader("Content-Type", metrics::kTextContentType);
      res->body = metrics::Serialize(metrics::KubeletRegistry());
    });
    if (absl::Status st = http->Start(); !st.ok()) return fail(st);
    KLOG_INFO("Started healthz and metrics server", "address",
              absl::StrCat(s.config.healthz_bind_address, ":", s.config.healthz_port));
  }
  MemoryTrimmer trimmer(clock);
  fleet.Start();
  KLOG_INFO("Starting hollow nodes", "nodes", h.nodes, "prefix", h.name_prefix, "concurrency",
            h.start_concurrency);
  if (int rc = sd_notify(0, "READY=1"); rc < 0) {
    KLOG_WARNING("Failed to notify systemd", "err", absl::UnavailableError(std::strerror(-rc)));
  }
  WaitForShutdown(signal_fd, -1, "");
  if (http) http->Stop();
  fleet.Stop();
  for (auto& r : *runtimes) r.store(nullptr);
  {
    absl::MutexLock lock(&services->mu);
    if (services->watch != nullptr) StopServiceWatch(*services->watch);
  }
  KLOG_INFO("Hollow nodes stopped", "nodes", h.nodes);
  return 0;
}

}  // namespace kubelet::app
