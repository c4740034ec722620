// The kubelet's start-up and run sequence, in upstream order (cmd/kubelet/app/server.go run()):
// report not-yet-implemented configuration, lock file, configz registration, standalone vs API
// mode, node name, permission check, OOM score of our own process, CRI runtime connection,
// RunKubelet (open-files limit, Kubelet start), healthz server, sd_notify READY=1, then wait for
// SIGTERM/SIGINT (or lock contention) and shut down cleanly.
// Called once from main; blocks until shutdown. Returns the process exit code.
#ifndef KUBELET_APP_SERVER_H_
#define KUBELET_APP_SERVER_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "app/options.h"

namespace kubelet::app {

// Exit code: 0 on a clean shutdown, 1 when start-up fails (the error is logged as
// `"command failed" err="..."`).
int Run(Settings& settings);

// upstream nodeutil.GetHostname: the override (trimmed, lower-cased) or the OS host name.
absl::StatusOr<std::string> GetHostname(const std::string& hostname_override);

// The configuration fields this kubelet acts on: "apiVersion", "kind" and the union of what the
// functions from the configuration read (the components' k*ConfigFields, the app's own lists).
const std::set<std::string>& ImplementedFields();

// The fields of the configuration file this kubelet parses but does not act on yet: those not in
// ImplementedFields, nor below an object there (except "logging", whose members count alone).
std::vector<std::string> UnimplementedFields(const std::vector<std::string>& file_fields);

}  // namespace kubelet::app

#endif  // KUBELET_APP_SERVER_H_
