// The Kubelet as the kubelet API's host (server::HostInterface; upstream's Kubelet methods
// GetRunningPods, GetContainerLogs, GetExec, GetAttach, GetPortForward, RunInContainer).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kubelet/kubelet.h"

namespace kubelet {

void Kubelet::SetApiParts(std::shared_ptr<logs::ContainerLogManager> logs,
                          std::shared_ptr<stats::StatsProvider> stats,
                          std::function<std::string()> configz) {
  absl::MutexLock lock(&api_parts_mu_);
  container_logs_ = std::move(logs);
  stats_provider_ = std::move(stats);
  configz_ = std::move(configz);
}

absl::StatusOr<std::vector<api::Pod>> Kubelet::GetRunningPods() {
  auto pods = runtime_.GetPods(false);
  if (!pods.ok()) return pods.status();
  // Upstream's ToAPIPod: name, namespace, uid; the containers' name and image.
  std::vector<api::Pod> out;
  out.reserve(pods->size());
  for (const container::Pod& p : *pods) {
    api::Pod pod;
    pod.metadata.uid = p.id;
    pod.metadata.name = p.name;
    pod.metadata.namespace_ = p.namespace_;
    for (const container::Container& c : p.containers) {
      api::Container ac;
      ac.name = c.name;
      ac.image = c.image;
      pod.spec.containers.push_back(std::move(ac));
    }
    out.push_back(std::move(pod));
  }
  return out;
}

absl::Status Kubelet::GetContainerLogs(const std::string& namespace_, const std::string& pod,
                                       const std::string& container,
                                       const logs::LogOptions& options, const logs::LogSink& sink) {
  std::shared_ptr<logs::ContainerLogManager> logs;
  {
    absl::MutexLock lock(&api_parts_mu_);
    logs = container_logs_;
  }
  if (logs == nullptr) return absl::UnavailableError("container logs are not available");
  return logs->GetContainerLogs(namespace_, pod, container, options, sink);
}

stats::StatsProvider* Kubelet::GetStatsProvider() {
  absl::MutexLock lock(&api_parts_mu_);
  return stats_provider_.get();
}

std::string Kubelet::Configz() {
  std::function<std::string()> render;
  {
    absl::MutexLock lock(&api_parts_mu_);
    render = configz_;
  }
  return render ? render() : "{}";
}

absl::StatusOr<container::Pod> Kubelet::RunningPod(const std::string& ns, const std::string& name,
                                                   const std::string& uid, LookupError* error) {
  const std::string full_name = absl::StrCat(name, "_", ns);
  *error = LookupError::kUnknownPod;
  if (pod_manager_.GetPodByFullName(full_name) == nullptr) {
    return absl::NotFoundError("pod does not exist");
  }
  *error = LookupError::kNotRunning;
  absl::StatusOr<std::vector<container::Pod>> pods = runtime_.GetPods(false);
  if (!pods.ok()) return pods.status();
  for (container::Pod& p : *pods) {
    if (p.name == name && p.namespace_ == ns && (uid.empty() || p.id == uid)) {
      *error = LookupError::kNone;
      return std::move(p);
    }
  }
  return absl::NotFoundError(absl::StrCat("pod not found (\"", full_name, "\")"));
}

absl::StatusOr<std::string> Kubelet::RunningContainer(const server::StreamRequest& r) {
  LookupError error;
  absl::StatusOr<container::Pod> pod = RunningPod(r.namespace_, r.pod, r.uid, &error);
  if (!pod.ok()) {
    if (error == LookupError::kUnknownPod) return pod.status();
    // Upstream findContainer: no running pod means no container.
    return absl::UnknownError(absl::StrCat("container not found (\"", r.container, "\")"));
  }
  for (const container::Container& c : pod->containers) {
    if (c.name == r.container && c.state == container::State::kRunning) return c.id.id;
  }
  return absl::UnknownError(absl::StrCat("container not found (\"", r.container, "\")"));
}

absl::StatusOr<std::string> Kubelet::GetExec(const server::StreamRequest& r) {
  absl::StatusOr<std::string> id = RunningContainer(r);
  if (!id.ok()) return id.status();
  runtime::v1::ExecRequest req;
  req.set_container_id(*id);
  for (const std::string& c : r.command) req.add_cmd(c);
  req.set_tty(r.tty);
  req.set_stdin(r.stdin_);
  req.set_stdout(r.stdout_);
  req.set_stderr(r.stderr_);
  absl::StatusOr<runtime::v1::ExecResponse> resp = cri_runtime_.Exec(req);
  if (!resp.ok()) return resp.status();
  return resp->url();
}

absl::StatusOr<std::string> Kubelet::GetAttach(const server::StreamRequest& r) {
  absl::StatusOr<std::string> id = RunningContainer(r);
  if (!id.ok()) return id.status();
  runtime::v1::AttachRequest req;
  req.set_container_id(*id);
  req.set_tty(r.tty);
  req.set_stdin(r.stdin_);
  req.set_stdout(r.stdout_);
  req.set_stderr(r.stderr_);
  absl::StatusOr<runtime::v1::AttachResponse> resp = cri_runtime_.Attach(req);
  if (!resp.ok()) return resp.status();
  return resp->url();
}

absl::StatusOr<std::string> Kubelet::GetPortForward(const std::string& ns, const std::string& name,
                                                    const std::string& uid,
                                                    const std::vector<int32_t>& ports) {
  LookupError error;
  absl::StatusOr<container::Pod> pod = RunningPod(ns, name, uid, &error);
  if (!pod.ok()) return pod.status();
  std::string sandbox;
  for (const container::Container& s : pod->sandboxes) {
    if (s.state == container::State::kRunning) sandbox = s.id.id;
  }
  if (sandbox.empty()) {
    return absl::NotFoundError(absl::StrCat("pod not found (\"", name, "_", ns, "\")"));
  }
  runtime::v1::PortForwardRequest req;
  req.set_pod_sandbox_id(sandbox);
  for (int32_t p : ports) req.add_port(p);
  absl::StatusOr<runtime::v1::PortForwardResponse> resp = cri_runtime_.PortForward(req);
  if (!resp.ok()) return resp.status();
  return resp->url();
}

absl::StatusOr<std::string> Kubelet::RunInContainer(const server::StreamRequest& r) {
  absl::StatusOr<std::string> id = RunningContainer(r);
  if (!id.ok()) return id.status();
  absl::StatusOr<runtime::v1::ExecSyncResponse> resp =
      cri_runtime_.ExecSync(*id, r.command, absl::ZeroDuration());
  if (!resp.ok()) return resp.status();
  // Upstream RunInContainer: stdout then stderr, and the exit code as an error.
  std::string out = resp->stdout() + resp->stderr();
  if (resp->exit_code() != 0) {
    return absl::InternalError(absl::StrCat("command '", absl::StrJoin(r.command, " "),
                                            "' exited with ", resp->exit_code(), ": ", out));
  }
  return out;
}

}  // namespace kubelet
