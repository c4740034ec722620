#include "server/auth.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace kubelet::server {
namespace {

bool IsSubpath(const std::string& p, const std::string& path) {
  return p == path ||
         (p.size() > path.size() && p.compare(0, path.size(), path) == 0 && p[path.size()] == '/');
}

}  // namespace

RequestAttributes GetRequestAttributes(const std::string& node_name, const HttpRequest& req) {
  RequestAttributes a;
  a.name = node_name;
  a.path = req.path;
  if (req.method == "POST") {
    a.verb = "create";
  } else if (req.method == "GET") {
    a.verb = "get";
  } else if (req.method == "PUT") {
    a.verb = "update";
  } else if (req.method == "PATCH") {
    a.verb = "patch";
  } else if (req.method == "DELETE") {
    a.verb = "delete";
  }
  if (IsSubpath(req.path, "/stats")) {
    a.subresource = "stats";
  } else if (IsSubpath(req.path, "/metrics")) {
    a.subresource = "metrics";
  } else if (IsSubpath(req.path, "/logs")) {
    a.subresource = "log";
  } else if (IsSubpath(req.path, "/checkpoint")) {
    a.subresource = "checkpoint";
  } else {
    a.subresource = "proxy";
  }
  return a;
}

absl::StatusOr<std::optional<UserInfo>> Authenticate(const AuthOptions& options,
                                                     const HttpRequest& req) {
  if (options.x509 && req.peer.presented) {
    if (!req.peer.verified) {
      return absl::UnauthenticatedError(
          absl::StrCat("verifying certificate failed: x509: ", req.peer.verify_error));
    }
    if (!req.peer.common_name.empty()) {
      UserInfo u;
      u.name = req.peer.common_name;
      u.groups = req.peer.organizations;
      u.groups.push_back("system:authenticated");
      return std::optional<UserInfo>(std::move(u));
    }
  }
  if (options.anonymous) {
    return std::optional<UserInfo>(UserInfo{"system:anonymous", {"system:unauthenticated"}});
  }
  return std::optional<UserInfo>();
}

HttpFilter MakeAuthFilter(AuthOptions options) {
  return [options = std::move(options)](HttpRequest* req, HttpResponse* res) {
    auto user = Authenticate(options, *req);
    if (!user.ok()) {
      KLOG_ERROR(user.status(), "Unable to authenticate the request due to an error");
    }
    if (!user.ok() || !user->has_value()) {
      res->status = 401;
      res->SetHeader("Content-Type", "text/plain; charset=utf-8");
      res->body = "Unauthorized";
      return false;
    }
    req->user = std::move(**user);
    RequestAttributes attrs = GetRequestAttributes(options.node_name, *req);
    KLOG_V(2, "Node request attributes", "user", req->user.name, "verb", attrs.verb, "resource",
           attrs.resource, "subresource", attrs.subresource);
    AuthzDecision d =
        options.authorizer ? options.authorizer(req->user, attrs) : AuthzDecision{true, ""};
    if (!d.allowed) {
      std::string msg =
          absl::StrCat("Forbidden (user=", req->user.name, ", verb=", attrs.verb,
                       ", resource=", attrs.resource, ", subresource=", attrs.subresource, ")");
      KLOG_V(2, msg, "reason", d.reason);
      res->status = 403;
      res->SetHeader("Content-Type", "text/plain; charset=utf-8");
      res->body = msg;
      return false;
    }
    return true;
  };
}

}  // namespace kubelet::server
