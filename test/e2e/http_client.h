// The end-to-end suites' one HTTP client for the kubelet's endpoints (the secure API, the
// read-only port, healthz) and the control plane's: curl underneath, as a user would reach them.
//
// HttpRequest(url, options) never fails: an answer with code 0 means no HTTP answer came
// (connection refused, TLS handshake refused, timeout: see curl_exit). Without `ca_file` the
// server's certificate is not verified (-k: the kubelet's is self-signed).
#ifndef KUBELET_TEST_E2E_HTTP_CLIENT_H_
#define KUBELET_TEST_E2E_HTTP_CLIENT_H_

#include <string>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace kubelet::e2e {

struct HttpAnswer {
  int code = 0;  // the HTTP status; 0: no answer
  std::string body;
  int curl_exit = -1;  // 0: the transfer ended normally; 28: curl's time limit ran out
};

struct HttpOptions {
  std::string method = "GET";
  std::string bearer_token;
  std::string cert_file;  // client certificate and key
  std::string key_file;
  std::string ca_file;     // verify the server with this CA; empty: no verification
  std::string connect_to;  // curl --connect-to HOST:PORT:ADDRESS:PORT
  absl::Duration timeout = absl::Seconds(30);
};

HttpAnswer HttpRequest(const std::string& url, const HttpOptions& options = {});

// The kubelet's secure port on 127.0.0.1:<port>. (The plain-HTTP read-only and healthz ports
// are read with HttpGet of kubelet_process.h.)
class KubeletEndpoint {
 public:
  static KubeletEndpoint Https(int port) { return KubeletEndpoint(port); }

  HttpAnswer Get(const std::string& path, const HttpOptions& options = {}) const;
  // The body parsed as JSON; null unless the answer is 200 with a JSON body.
  nlohmann::json GetJson(const std::string& path, const HttpOptions& options = {}) const;
  std::string Url(const std::string& path) const;

 private:
  explicit KubeletEndpoint(int port) : port_(port) {}
  int port_;
};

}  // namespace kubelet::e2e

#endif  // KUBELET_TEST_E2E_HTTP_CLIENT_H_
