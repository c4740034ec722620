#include "kubelet/lifecycle/handler_runner.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/lifecycle/probe_executors.h"

namespace kubelet::lifecycle {

namespace {

std::string KObj(const api::Pod& pod) {
  return pod.metadata.namespace_.empty() ? pod.metadata.name
                                         : pod.metadata.namespace_ + "/" + pod.metadata.name;
}

// Go's %v of a []string: "[a b c]".
std::string GoList(const std::vector<std::string>& v) {
  return absl::StrCat("[", absl::StrJoin(v, " "), "]");
}

}  // namespace

std::string FormatPodForHook(const api::Pod& pod) {
  return absl::StrCat(pod.metadata.name, "_", pod.metadata.namespace_, "(", pod.metadata.uid, ")");
}

HandlerRunner::HandlerRunner(cri::RuntimeService& runtime, Options options)
    : runtime_(runtime), options_(std::move(options)) {}

absl::Status HandlerRunner::Run(const container::ContainerID& id, const api::Pod& pod,
                                const api::Container& container,
                                const api::LifecycleHandler& handler, absl::Duration timeout) {
  if (handler.exec.has_value()) {
    const std::vector<std::string>& cmd = handler.exec->command;
    const absl::Duration exec_timeout =
        timeout == absl::InfiniteDuration() ? absl::ZeroDuration() : timeout;
    auto resp = runtime_.ExecSync(id.id, cmd, exec_timeout);
    std::string err, output;
    if (!resp.ok()) {
      err = resp.status().code() == absl::StatusCode::kDeadlineExceeded
                ? absl::StrCat("command ", log::Quote(absl::StrJoin(cmd, " ")), " timed out")
                : std::string(resp.status().message());
    } else {
      output = resp->stdout() + resp->stderr();
      if (resp->exit_code() != 0) {
        err = absl::StrCat("command '", absl::StrJoin(cmd, " "), "' exited with ",
                           resp->exit_code(), ": ", resp->stderr());
      }
    }
    if (err.empty()) return absl::OkStatus();
    KLOG_V(1, "Exec lifecycle hook for Container in Pod failed", "err", err, "execCommand", cmd,
           "containerName", container.name, "pod", KObj(pod), "message", output);
    return absl::UnknownError(
        absl::StrCat("Exec lifecycle hook (", GoList(cmd), ") for Container ",
                     log::Quote(container.name), " in Pod ", log::Quote(FormatPodForHook(pod)),
                     " failed - error: ", err, ", message: ", log::Quote(output)));
  }
  if (handler.http_get.has_value()) {
    absl::Status s = RunHttp(pod, container, *handler.http_get, timeout);
    if (s.ok()) return s;
    KLOG_V(1, "HTTP lifecycle hook for Container in Pod failed", "err", s, "path",
           handler.http_get->path, "containerName", container.name, "pod", KObj(pod));
    return absl::UnknownError(absl::StrCat("HTTP lifecycle hook (", handler.http_get->path,
                                           ") for Container ", log::Quote(container.name),
                                           " in Pod ", log::Quote(FormatPodForHook(pod)),
                                           " failed - error: ", s.message()));
  }
  // tcpSocket (accepted by the API but never implemented for hooks) and empty handlers.
  const std::string what =
      handler.tcp_socket.has_value()
          ? absl::StrCat("tcpSocket:{port:", handler.tcp_socket->port.ToString(),
                         " host:", handler.tcp_socket->host, "}")
          : "{}";
  absl::Status err = absl::InvalidArgumentError(absl::StrCat("invalid handler: ", what));
  KLOG_ERROR(err, "Cannot run handler", "pod", KObj(pod), "containerName", container.name);
  return absl::InvalidArgumentError(absl::StrCat("Cannot run handler: ", err.message()));
}

absl::StatusOr<std::string> HandlerRunner::PodIP(const api::Pod& pod) {
  if (options_.pod_ip) return options_.pod_ip(pod);
  runtime::v1::PodSandboxFilter filter;
  filter.mutable_state()->set_state(runtime::v1::SANDBOX_READY);
  (*filter.mutable_label_selector())["io.kubernetes.pod.uid"] = pod.metadata.uid;
  auto sandboxes = runtime_.ListPodSandbox(&filter);
  if (!sandboxes.ok()) return sandboxes.status();
  for (const runtime::v1::PodSandbox& sb : *sandboxes) {
    auto st = runtime_.PodSandboxStatus(sb.id(), false);
    if (!st.ok()) continue;
    if (!st->status().network().ip().empty()) return st->status().network().ip();
  }
  if (pod.spec.host_network && !options_.node_ips.empty()) return options_.node_ips.front();
  return absl::NotFoundError(
      absl::StrCat("failed to find networking container: pod ", KObj(pod), " has no IP"));
}

absl::Status HandlerRunner::RunHttp(const api::Pod& pod, const api::Container& container,
                                    const api::HTTPGetAction& action, absl::Duration timeout) {
  HttpGetRequest req;
  req.host = action.host;
  if (req.host.empty()) {
    auto ip = PodIP(pod);
    if (!ip.ok()) return ip.status();
    req.host = *ip;
  }
  auto port = ResolveContainerPort(action.port, container);
  if (!port.ok()) return port.status();
  req.port = *port;
  req.scheme = action.scheme.empty() ? "http" : absl::AsciiStrToLower(AV(action.scheme));
  req.path = action.path;
  req.headers = action.http_headers;
  req.user_agent = DefaultUserAgent("lifecycle");
  bool tls_got_http = false;
  auto res = HttpGet(req, timeout, &tls_got_http);
  if (!res.ok() && tls_got_http) {
    KLOG_V(1, "HTTPS request to lifecycle hook got HTTP response, retrying with HTTP.", "err",
           res.status(), "pod", KObj(pod), "host", req.host);
    req.scheme = "http";
    std::vector<api::HTTPHeader> headers;
    for (const api::HTTPHeader& h : req.headers) {
      if (absl::AsciiStrToLower(AV(h.name)) != "authorization") headers.push_back(h);
    }
    req.headers = std::move(headers);
    res = HttpGet(req, timeout);
  }
  if (!res.ok()) return res.status();
  return absl::OkStatus();
}

}  // namespace kubelet::lifecycle
