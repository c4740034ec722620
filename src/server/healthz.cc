#include "server/healthz.h"

#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::server {
namespace {

void Plain(HttpResponse* res, int status, std::string body) {
  res->status = status;
  res->SetHeader("Content-Type", "text/plain; charset=utf-8");
  res->SetHeader("X-Content-Type-Options", "nosniff");
  res->body = std::move(body);
}

}  // namespace

void InstallHealthz(HttpServer& server, std::vector<HealthzCheck> checks) {
  // Shared by the handlers registered below, which outlive this call.
  auto all = std::make_shared<std::vector<HealthzCheck>>();
  all->push_back({"ping", [] { return absl::OkStatus(); }});
  for (auto& c : checks) all->push_back(std::move(c));

  server.Handle("/healthz", [all](const HttpRequest& req, HttpResponse* res) {
    std::set<std::string> excluded;
    for (const std::string& v : req.QueryValues("exclude")) excluded.insert(v);
    std::string lines;
    bool failed = false;
    std::vector<std::string> failed_names;
    for (const HealthzCheck& c : *all) {
      if (excluded.count(c.name)) {
        absl::StrAppend(&lines, "[+]", c.name, " excluded: ok\n");
        continue;
      }
      absl::Status st = c.check();
      if (st.ok()) {
        absl::StrAppend(&lines, "[+]", c.name, " ok\n");
      } else {
        failed = true;
        failed_names.push_back(c.name);
        absl::StrAppend(&lines, "[-]", c.name, " failed: reason withheld\n");
        KLOG_V(2, "healthz check failed", "check", c.name, "err", st);
      }
    }
    if (failed) {
      Plain(res, 500, absl::StrCat(lines, "healthz check failed\n"));
      KLOG_V(2, "healthz check failed", "statuses", failed_names);
      return;
    }
    if (req.HasQuery("verbose")) {
      Plain(res, 200, absl::StrCat(lines, "healthz check passed\n"));
    } else {
      Plain(res, 200, "ok");
    }
  });
  for (const HealthzCheck& c : *all) {
    auto check = c.check;
    server.Handle("/healthz/" + c.name, [check](const HttpRequest&, HttpResponse* res) {
      absl::Status st = check();
      if (st.ok()) {
        Plain(res, 200, "ok");
      } else {
        Plain(res, 500, absl::StrCat("internal server error: ", std::string(st.message()), "\n"));
      }
    });
  }
}

}  // namespace kubelet::server
