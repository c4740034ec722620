#include "test/e2e/http_client.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "test/e2e/controlplane.h"

namespace kubelet::e2e {

HttpAnswer HttpRequest(const std::string& url, const HttpOptions& o) {
  std::vector<std::string> argv = {
      "curl",       "-s",
      "-X",         o.method,
      "--max-time", std::to_string(std::max<int64_t>(1, absl::ToInt64Seconds(o.timeout))),
      "-w",         "\n%{http_code}"};
  if (o.ca_file.empty()) {
    argv.push_back("-k");
  } else {
    argv.insert(argv.end(), {"--cacert", o.ca_file});
  }
  if (!o.bearer_token.empty()) {
    argv.insert(argv.end(), {"-H", "Authorization: Bearer " + o.bearer_token});
  }
  if (!o.cert_file.empty()) argv.insert(argv.end(), {"--cert", o.cert_file, "--key", o.key_file});
  if (!o.connect_to.empty()) argv.insert(argv.end(), {"--connect-to", o.connect_to});
  argv.push_back(url);
  HttpAnswer a;
  absl::StatusOr<CommandResult> r = RunCommand(argv, {}, o.timeout + absl::Seconds(10));
  if (!r.ok()) return a;
  a.curl_exit = r->exit_code;
  const size_t nl = r->out.rfind('\n');
  if (nl == std::string::npos) return a;
  a.code = std::atoi(r->out.c_str() + nl + 1);
  a.body = r->out.substr(0, nl);
  return a;
}

std::string KubeletEndpoint::Url(const std::string& path) const {
  return absl::StrCat("https://127.0.0.1:", port_, path);
}

HttpAnswer KubeletEndpoint::Get(const std::string& path, const HttpOptions& options) const {
  return HttpRequest(Url(path), options);
}

nlohmann::json KubeletEndpoint::GetJson(const std::string& path, const HttpOptions& options) const {
  HttpAnswer a = Get(path, options);
  if (a.code != 200) return nullptr;
  nlohmann::json j = nlohmann::json::parse(a.body, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

}  // namespace kubelet::e2e
