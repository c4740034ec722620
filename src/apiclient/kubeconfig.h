// Client configuration: the in-process RestConfig (client-go's rest.Config subset the kubelet
// uses) and a kubeconfig file loader producing one (client-go's clientcmd).
//
// Contract:
// - LoadKubeconfig reads a kubeconfig file (YAML or JSON): clusters, users (client-go calls them
//   AuthInfos), contexts and current-context. Base64 `*-data` fields are decoded into PEM text.
//   Relative file references (certificate-authority, client-certificate, client-key, tokenFile)
//   are resolved against the kubeconfig's directory, as clientcmd's ResolveLocalPaths does.
// - ToRestConfig picks a context (the explicit one, else current-context) and builds a
//   RestConfig, validating as clientcmd does: the context, its cluster and its user must exist,
//   the cluster needs a server, `*-data` and the matching file may not both be set, a client
//   certificate needs a key (and the reverse), and insecure-skip-tls-verify excludes a CA.
// - Every error is an absl::Status whose message names the file and the field.
// - Files referenced by the kubeconfig are not read here: the REST client reads them (so a
//   rotated client certificate is picked up by new connections).
// Pure functions, thread-compatible; yaml-cpp exceptions never escape.
#ifndef KUBELET_APICLIENT_KUBECONFIG_H_
#define KUBELET_APICLIENT_KUBECONFIG_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubelet::apiclient {

// A client certificate that can change while a client runs (client-go's
// transport.Config.TLS.GetCert): each call returns the pair to present on a new connection, with
// a generation that changes whenever the pair does. An empty pair: no client certificate (yet).
// Must be thread-safe and cheap.
struct ClientCertificate {
  std::string cert_pem;
  std::string key_pem;
  uint64_t generation = 0;
};
using ClientCertificateSource = std::function<ClientCertificate()>;

// How to reach and authenticate to the API server. Either the *_pem field or the *_file field
// of a pair is used; the PEM text wins when both are set.
struct RestConfig {
  // Base URL, "https://host:port" optionally followed by a path prefix ("/k8s"); request paths
  // are appended to it.
  std::string host;
  std::string ca_pem;  // trust anchors; both empty: the system's default bundle
  std::string ca_file;
  std::string client_cert_pem;  // certificate (and chain) presented to the server
  std::string client_cert_file;
  std::string client_key_pem;
  std::string client_key_file;
  // When set, wins over the client_cert_* / client_key_* fields: a connection opened after the
  // pair's generation changed presents the new pair, and idle connections made with an older
  // one are closed rather than reused. Requests running (a watch) keep their connection.
  ClientCertificateSource client_certificate_source;
  std::string bearer_token;       // "Authorization: Bearer <token>"
  std::string bearer_token_file;  // re-read at most once a minute; wins over bearer_token
  bool insecure = false;          // skip server certificate verification (tests only)
  std::string tls_server_name;    // SNI and the name verified instead of the URL's host
  // Client-side rate limit: the kubelet's kubeAPIQPS / kubeAPIBurst defaults. qps <= 0 turns
  // the limiter off.
  double qps = 50;
  int burst = 100;
  std::string user_agent;  // e.g. "kubelet/v1.28.15 (linux/amd64) kubernetes/<commit>"
  // Default per-request timeout of unary calls; zero: none (client-go's rest.Config.Timeout).
  absl::Duration timeout = absl::ZeroDuration();
  std::string content_type = "application/json";  // of request bodies unless a call says
};

struct KubeconfigCluster {
  std::string server;
  std::string certificate_authority;       // absolute path
  std::string certificate_authority_data;  // decoded PEM
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
};

struct KubeconfigUser {
  std::string client_certificate;  // absolute path
  std::string client_certificate_data;
  std::string client_key;  // absolute path
  std::string client_key_data;
  std::string token;
  std::string token_file;  // absolute path
};

struct KubeconfigContext {
  std::string cluster;
  std::string user;
  std::string namespace_;
};

struct Kubeconfig {
  std::string path;  // the file it was read from (for error messages)
  std::map<std::string, KubeconfigCluster> clusters;
  std::map<std::string, KubeconfigUser> users;
  std::map<std::string, KubeconfigContext> contexts;
  std::string current_context;
};

// Reads and parses `path`.
absl::StatusOr<Kubeconfig> LoadKubeconfig(const std::string& path);
// Parses kubeconfig text; `path` names it in errors and its directory anchors relative paths.
absl::StatusOr<Kubeconfig> ParseKubeconfig(std::string_view text, const std::string& path);

// The RestConfig of `context` (empty: current-context). qps, burst, user agent, timeout and
// content type keep RestConfig's defaults.
absl::StatusOr<RestConfig> ToRestConfig(const Kubeconfig& kubeconfig,
                                        std::string_view context = "");

// LoadKubeconfig + ToRestConfig.
absl::StatusOr<RestConfig> LoadRestConfig(const std::string& path, std::string_view context = "");

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_KUBECONFIG_H_
