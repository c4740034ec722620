#include "server/auth.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::server {
namespace {

bool IsSubpath(const std::string& p, const std::string& path) {
  return p == path ||
         (p.size() > path.size() && p.compare(0, path.size(), path) == 0 && p[path.size()] == '/');
}

// upstream's AuthenticatedGroupAdder.
void AddAuthenticatedGroup(UserInfo& u) {
  for (const std::string& g : u.groups) {
    if (g == "system:authenticated" || g == "system:unauthenticated") return;
  }
  u.groups.push_back("system:authenticated");
}

// The token of "Authorization: Bearer <token>" (upstream bearertoken: trimmed, split on spaces,
// the scheme in any case); "" when there is none.
std::string BearerToken(const HttpRequest& req) {
  const std::string h = req.Header("authorization");
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t b = 0, e = h.size();
  while (b < e && space(h[b])) ++b;
  while (e > b && space(h[e - 1])) --e;
  const std::string_view v(h.data() + b, e - b);
  const size_t sp = v.find(' ');
  if (sp == std::string_view::npos) return "";
  const std::string_view scheme = v.substr(0, sp);
  std::string_view rest = v.substr(sp + 1);
  rest = rest.substr(0, rest.find(' '));
  if (scheme.size() != 6 || !absl::EqualsIgnoreCase(AV(scheme), "bearer")) return "";
  return std::string(rest);
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
  // upstream's union: a failing authenticator does not stop the next one; if none succeeds,
  // their errors together are the answer (and anonymous is not tried).
  std::vector<std::string> errors;
  if (options.x509 && req.peer.presented) {
    if (!req.peer.verified) {
      errors.push_back(absl::StrCat("verifying certificate failed: x509: ", req.peer.verify_error));
    } else if (!req.peer.common_name.empty()) {
      UserInfo u;
      u.name = req.peer.common_name;
      u.groups = req.peer.organizations;
      AddAuthenticatedGroup(u);
      return std::optional<UserInfo>(std::move(u));
    }
  }
  if (options.token_authenticator) {
    if (std::string token = BearerToken(req); !token.empty()) {
      absl::StatusOr<std::optional<UserInfo>> u = options.token_authenticator(token);
      if (u.ok() && u->has_value()) {
        AddAuthenticatedGroup(**u);
        return u;
      }
      errors.push_back(u.ok() ? "invalid bearer token" : std::string(u.status().message()));
    }
  }
  if (errors.size() == 1) return absl::UnauthenticatedError(errors[0]);
  if (!errors.empty()) {
    return absl::UnauthenticatedError(absl::StrCat("[", absl::StrJoin(errors, ", "), "]"));
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
    KLOG_V(5, "Node request attributes", "user", req->user.name, "verb", attrs.verb, "resource",
           attrs.resource, "subresource", attrs.subresource);
    absl::StatusOr<AuthzDecision> d =
        options.authorizer ? options.authorizer(req->user, attrs) : AuthzDecision{true, ""};
    const std::string who =
        absl::StrCat("(user=", req->user.name, ", verb=", attrs.verb, ", resource=", attrs.resource,
                     ", subresource=", attrs.subresource, ")");
    if (!d.ok()) {
      KLOG_ERROR(d.status(), "Authorization error", "user", req->user.name, "verb", attrs.verb,
                 "resource", attrs.resource, "subresource", attrs.subresource);
      res->status = 500;
      res->SetHeader("Content-Type", "text/plain; charset=utf-8");
      res->body = absl::StrCat("Authorization error ", who);
      return false;
    }
    if (!d->allowed) {
      std::string msg = absl::StrCat("Forbidden ", who);
      KLOG_V(2, "Forbidden", "user", req->user.name, "verb", attrs.verb, "resource", attrs.resource,
             "subresource", attrs.subresource, "reason", d->reason);
      res->status = 403;
      res->SetHeader("Content-Type", "text/plain; charset=utf-8");
      res->body = msg;
      return false;
    }
    return true;
  };
}

}  // namespace kubelet::server
