// Webhook authentication and authorization of the kubelet API on the API client (upstream
// authenticatorfactory / authorizerfactory delegating configs as the kubelet builds them):
//
//   WebhookTokenAuthenticator  authentication.webhook.enabled: POST
//     /apis/authentication.k8s.io/v1/tokenreviews with spec.token (no audiences). authenticated
//     -> the reviewed user (username, uid, groups, extra); not authenticated -> not accepted
//     (nullopt), or an error carrying status.error when the API server gave one. Accepted and
//     refused answers are cached for authentication.webhook.cacheTTL (default 2m) by the
//     token's SHA-256; errors are not cached.
//   WebhookAuthorizer  authorization.mode Webhook: POST
//     /apis/authorization.k8s.io/v1/subjectaccessreviews with the user and
//     resourceAttributes {verb, version v1, resource, subresource, name}. allowed and denied
//     together are an error; allowed -> allow; anything else -> deny with status.reason.
//     Allowed answers are cached for cacheAuthorizedTTL (default 5m), others for
//     cacheUnauthorizedTTL (default 30s), errors not at all; at most 8192 entries.
// Calls that fail on the transport (unavailable, timed out) or with a 429 / 5xx are retried with
// upstream's back-off (500 ms, x1.5, 5 tries); each try is bounded by `call_timeout`; any other
// failure is the call's error.
//
// Thread-safety: thread-safe; concurrent requests for the same key may each call the API.
// Ownership: each keeps the shared RestClient; the clock is borrowed.
#ifndef KUBELET_SERVER_WEBHOOK_AUTH_H_
#define KUBELET_SERVER_WEBHOOK_AUTH_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "server/auth.h"

namespace kubelet::server {

struct WebhookRetry {
  int tries = 5;
  absl::Duration initial = absl::Milliseconds(500);
  double factor = 1.5;
  absl::Duration call_timeout = absl::Seconds(10);
};

class WebhookTokenAuthenticator {
 public:
  WebhookTokenAuthenticator(std::shared_ptr<apiclient::RestClient> client, Clock& clock,
                            absl::Duration cache_ttl, WebhookRetry retry = {});

  absl::StatusOr<std::optional<server::UserInfo>> Authenticate(const std::string& token);

 private:
  struct Entry {
    std::optional<server::UserInfo> user;
    absl::Time expires;
  };
  const std::shared_ptr<apiclient::RestClient> client_;
  Clock& clock_;
  const absl::Duration ttl_;
  const WebhookRetry retry_;
  absl::Mutex mu_;
  std::map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);  // by SHA-256 of the token
};

class WebhookAuthorizer {
 public:
  WebhookAuthorizer(std::shared_ptr<apiclient::RestClient> client, Clock& clock,
                    absl::Duration authorized_ttl, absl::Duration unauthorized_ttl,
                    WebhookRetry retry = {});

  absl::StatusOr<server::AuthzDecision> Authorize(const server::UserInfo& user,
                                                  const server::RequestAttributes& attrs);

 private:
  struct Entry {
    server::AuthzDecision decision;
    absl::Time expires;
  };
  const std::shared_ptr<apiclient::RestClient> client_;
  Clock& clock_;
  const absl::Duration authorized_ttl_;
  const absl::Duration unauthorized_ttl_;
  const WebhookRetry retry_;
  absl::Mutex mu_;
  std::map<std::string, Entry> cache_ ABSL_GUARDED_BY(mu_);  // by the review's spec JSON
};

}  // namespace kubelet::server

#endif  // KUBELET_SERVER_WEBHOOK_AUTH_H_
