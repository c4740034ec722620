// The kubelet API's handlers (upstream pkg/kubelet/server): the secure port (:10250) and the
// read-only port, built on HttpServer and decoupled from the kubelet by HostInterface.
//
// Contract:
// - InstallDefaultHandlers (both ports, as upstream's InstallDefaultHandlers): /healthz with
//   ping, log, syncloop; GET /pods (PodList of the pods with status); GET|POST /stats/summary
//   (?only_cpu_and_memory=true); /metrics, /metrics/probes, /metrics/resource,
//   /metrics/cadvisor (the last two scraped on a streaming worker: their collectors call the
//   runtime).
// - InstallDebuggingHandlers (secure port with enableDebuggingHandlers): GET
//   /containerLogs/{namespace}/{pod}/{container} (streamed, chunked), /configz, GET
//   /runningpods/, GET /logs/ (InstallLogsHandler). InstallDebuggingDisabledHandlers answers
//   those paths with 405 "Debug endpoints are disabled." as upstream.
// - InstallLogsHandler (upstream InstallSystemLogHandler + Kubelet.ServeLogs): with
//   enableSystemLogHandler, GET /logs/<path> serves the log directory (/var/log) as Go's
//   http.FileServer (file_server.h); without it 405 "logs endpoint is disabled.". With the
//   node log query on (the NodeLogQuery gate and enableSystemLogQuery), a request carrying query
//   parameters (nodelogs/node_log_query.h) is a query: parse errors 400, a path other than
//   /logs/ 406 "path not allowed in query mode", validation errors 406 (the aggregated field
//   errors, as http.Error), services answered from journald or their files (nodelogs/
//   node_logs.h: text/plain;charset=UTF-8, gzip when Accept-Encoding is exactly "gzip",
//   streamed as it comes), a file query served as that file by the file server. With the query
//   off, parameters are ignored and the file server answers.
// - Calls that may block (runtime, stats, logs) run on streaming workers, never on the I/O
//   thread. Errors and status codes follow upstream: containerLogs query decode errors 400
//   {"message": "Unable to decode query."}, invalid options 422 {"message": "Invalid request."},
//   unknown pod/container 404, log errors 400; stats errors 500 "Internal Error: ...".
// - KubeletServerOptions: the serving settings of both ports from the KubeletConfiguration
//   (KubeletServerOptionsFromConfig), as they are written there; the wiring checks and applies
//   them.
// Thread-safety: the host's methods are called from the I/O thread and from workers at the same
// time. Ownership: the handlers share `host` (workers may outlive the server's Stop by its
// stream stop timeout, hence shared ownership).
#ifndef KUBELET_SERVER_KUBELET_SERVER_H_
#define KUBELET_SERVER_KUBELET_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod.h"
#include "common/clock.h"
#include "config/kubelet_configuration.h"
#include "kubelet/logs/container_log_manager.h"
#include "kubelet/nodelogs/node_log_query.h"
#include "kubelet/nodelogs/node_logs.h"
#include "kubelet/stats/stats_provider.h"
#include "server/auth.h"
#include "server/http_server.h"

namespace kubelet::server {

// What the API needs from the kubelet.
// What an exec / attach session asks for (upstream remotecommand Options).
struct StreamRequest {
  std::string namespace_;
  std::string pod;
  std::string uid;  // "" when the path names none
  std::string container;
  std::vector<std::string> command;  // exec only
  bool stdin_ = false;
  bool stdout_ = false;
  bool stderr_ = false;
  bool tty = false;
};

class HostInterface {
 public:
  virtual ~HostInterface() = default;
  // The pods the kubelet manages, with their current status. Quick (in memory).
  virtual std::vector<api::Pod> GetPods() = 0;
  // The runtime's pods as upstream's ToAPIPod (name, namespace, uid; containers' name, image).
  // May block on the runtime.
  virtual absl::StatusOr<std::vector<api::Pod>> GetRunningPods() = 0;
  // Blocks; see logs::ContainerLogManager::GetContainerLogs. Unavailable without a log manager.
  virtual absl::Status GetContainerLogs(const std::string& namespace_, const std::string& pod,
                                        const std::string& container,
                                        const logs::LogOptions& options,
                                        const logs::LogSink& sink) = 0;
  // Null when no stats provider is wired.
  virtual stats::StatsProvider* GetStatsProvider() = 0;
  // Quick; for /healthz/syncloop.
  virtual absl::Status SyncLoopHealthy() = 0;
  // The /configz body.
  virtual std::string Configz() = 0;

  // Streaming (upstream GetExec / GetAttach / GetPortForward / RunInContainer). Block on the
  // runtime. NotFound "pod does not exist" when the kubelet has no such pod; an error naming
  // the container when it does not run; else the runtime's streaming URL (CRI Exec, Attach,
  // PortForward) or, for Run, the command's combined output. Unimplemented by default.
  virtual absl::StatusOr<std::string> GetExec(const StreamRequest& request);
  virtual absl::StatusOr<std::string> GetAttach(const StreamRequest& request);
  virtual absl::StatusOr<std::string> GetPortForward(const std::string& namespace_,
                                                     const std::string& pod, const std::string& uid,
                                                     const std::vector<int32_t>& ports);
  virtual absl::StatusOr<std::string> RunInContainer(const StreamRequest& request);
};

void InstallDefaultHandlers(HttpServer& server, std::shared_ptr<HostInterface> host);

// The kubelet API's serving settings (upstream KubeletServer's), unchecked.
struct KubeletServerOptions {
  std::string address;     // of both ports, as configured ("" listens on 0.0.0.0)
  int port = 10250;        // the secure port
  int read_only_port = 0;  // 0: no read-only server
  // The serving pair; both set: used as they are, else the self-signed pair in --cert-dir.
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string tls_min_version;                 // TlsVersionFromName
  std::vector<std::string> tls_cipher_suites;  // CipherSuitesToOpenSsl
  std::string client_ca_file;                  // authentication.x509.clientCAFile
  // anonymous, and x509 when a client CA is set; the wiring adds the webhooks and the node name.
  AuthOptions auth;
  bool webhook_authentication = false;  // TokenReview on the API server
  absl::Duration webhook_cache_ttl = absl::Minutes(2);
  std::string authorization_mode = "AlwaysAllow";  // or "Webhook": SubjectAccessReview
  absl::Duration webhook_cache_authorized_ttl = absl::Minutes(5);
  absl::Duration webhook_cache_unauthorized_ttl = absl::Seconds(30);
  absl::Duration tunnel_idle_timeout = absl::Hours(4);  // exec / attach / port-forward tunnels
  bool enable_debugging_handlers = true;
  bool enable_system_log_handler = true;  // enableSystemLogHandler
  bool enable_system_log_query = false;   // enableSystemLogQuery
  bool node_log_query_gate = false;       // the NodeLogQuery feature gate (set by the wiring)
};

// Reads the ports and address, TLS, authentication, authorization, the streaming idle timeout
// (zero keeps 4h), enableDebuggingHandlers, enableSystemLogHandler and enableSystemLogQuery.
KubeletServerOptions KubeletServerOptionsFromConfig(const config::KubeletConfiguration& c);
inline constexpr std::string_view kKubeletServerConfigFields[] = {
    "address",
    "port",
    "readOnlyPort",
    "tlsCertFile",
    "tlsPrivateKeyFile",
    "tlsMinVersion",
    "tlsCipherSuites",
    "authentication",
    "authorization",
    "streamingConnectionIdleTimeout",
    "enableDebuggingHandlers",
    "enableSystemLogHandler",
    "enableSystemLogQuery",
};
// With the debugging handlers: /exec/, /attach/, /portForward/ (GET or POST with an upgrade,
// proxied to the runtime's streaming server through HttpResponse::tunnel, as upstream since
// 1.20) and /run/ (POST, the command's output).
// /logs/ (see the contract above).
struct NodeLogsOptions {
  bool enable_system_log_handler = true;
  bool enable_query = false;  // the NodeLogQuery gate and enableSystemLogQuery both on
  std::string log_dir = nodelogs::kNodeLogDir;
  std::string journalctl = nodelogs::kJournalctl;
  std::shared_ptr<const Clock> clock;               // null: the real clock
  std::shared_ptr<nodelogs::CommandRunner> runner;  // null: a nodelogs::ProcessRunner
};
// The logs options of `o` (query on only when the gate and the field are).
NodeLogsOptions NodeLogsOptionsFrom(const KubeletServerOptions& o);
void InstallLogsHandler(HttpServer& server, NodeLogsOptions options);

void InstallDebuggingHandlers(HttpServer& server, std::shared_ptr<HostInterface> host,
                              NodeLogsOptions logs = {});
void InstallDebuggingDisabledHandlers(HttpServer& server);

// Decodes and validates /containerLogs query parameters as upstream (v1.PodLogOptions through
// the parameter codec, "tail" as a legacy alias of tailLines). On error `*http_status` is 400
// (undecodable) or 422 (invalid) and the message is the body upstream sends.
absl::StatusOr<logs::LogOptions> ParseContainerLogOptions(const HttpRequest& req, int* http_status);

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_KUBELET_SERVER_H_
