#include "server/webhook_auth.h"

#include <openssl/evp.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/authentication.h"
#include "api/codec.h"
#include "common/log.h"
#include "common/openssl.h"
#include "common/strings.h"

namespace kubelet::server {
namespace {

// upstream's webhook retry: connection resets and timeouts, 429 and 5xx answers.
bool Retriable(const absl::StatusOr<apiclient::Response>& r) {
  if (!r.ok()) {
    return absl::IsUnavailable(r.status()) || absl::IsDeadlineExceeded(r.status()) ||
           absl::IsAborted(r.status());
  }
  return r->code == 429 || r->code >= 500;
}

// POSTs `body` to `path`, retrying transport errors, 429 and 5xx with upstream's webhook
// back-off; the last answer's error otherwise.
absl::StatusOr<std::string> PostWithRetry(apiclient::RestClient& client, const std::string& path,
                                          std::string body, const WebhookRetry& retry) {
  apiclient::Request req;
  req.method = "POST";
  req.path = path;
  req.body = std::move(body);
  req.content_type = apiclient::kJsonContentType;
  req.timeout = retry.call_timeout;
  absl::Duration delay = retry.initial;
  absl::StatusOr<apiclient::Response> resp;
  for (int attempt = 1;; ++attempt) {
    resp = client.Do(req);
    if (!Retriable(resp) || attempt >= retry.tries) break;
    absl::SleepFor(delay);
    delay = delay * retry.factor;
  }
  if (!resp.ok()) return resp.status();
  if (!resp->ok()) return apiclient::ResponseStatus(*resp);
  return std::move(resp->body);
}

// Keeps a cache (entries with an `expires` time) under upstream's 8192 entries: at the bound,
// expired entries go, and everything if that is not enough.
template <class Cache>
void MakeRoom(Cache& cache, absl::Time now) {
  constexpr size_t kMaxEntries = 8192;
  if (cache.size() < kMaxEntries) return;
  std::erase_if(cache, [now](const auto& kv) { return now >= kv.second.expires; });
  if (cache.size() >= kMaxEntries) cache.clear();
}

}  // namespace

WebhookTokenAuthenticator::WebhookTokenAuthenticator(std::shared_ptr<apiclient::RestClient> client,
                                                     Clock& clock, absl::Duration cache_ttl,
                                                     WebhookRetry retry)
    : client_(std::move(client)), clock_(clock), ttl_(cache_ttl), retry_(retry) {}

absl::StatusOr<std::optional<server::UserInfo>> WebhookTokenAuthenticator::Authenticate(
    const std::string& token) {
  const std::string key = ossl::Sha256Hex(token);
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      if (now < it->second.expires) return it->second.user;
      cache_.erase(it);
    }
  }
  api::TokenReview review;
  review.spec.token = token;
  absl::StatusOr<std::string> body = PostWithRetry(
      *client_, "/apis/authentication.k8s.io/v1/tokenreviews", api::Encode(review), retry_);
  if (!body.ok()) {
    KLOG_ERROR(body.status(), "Failed to make webhook authenticator request");
    return body.status();
  }
  absl::StatusOr<api::TokenReview> got = api::Decode<api::TokenReview>(*body);
  if (!got.ok()) return got.status();
  std::optional<server::UserInfo> user;
  if (got->status.authenticated) {
    user.emplace();
    user->name = got->status.user.username;
    user->uid = got->status.user.uid;
    user->groups = got->status.user.groups;
    user->extra = got->status.user.extra;
  } else if (!got->status.error.empty()) {
    // Not cached, as upstream's (errors are kept for an instant only).
    return absl::UnauthenticatedError(got->status.error);
  }
  absl::MutexLock lock(&mu_);
  MakeRoom(cache_, now);
  cache_[key] = Entry{user, now + ttl_};
  return user;
}

WebhookAuthorizer::WebhookAuthorizer(std::shared_ptr<apiclient::RestClient> client, Clock& clock,
                                     absl::Duration authorized_ttl, absl::Duration unauthorized_ttl,
                                     WebhookRetry retry)
    : client_(std::move(client)),
      clock_(clock),
      authorized_ttl_(authorized_ttl),
      unauthorized_ttl_(unauthorized_ttl),
      retry_(retry) {}

absl::StatusOr<server::AuthzDecision> WebhookAuthorizer::Authorize(
    const server::UserInfo& user, const server::RequestAttributes& attrs) {
  api::SubjectAccessReview review;
  review.spec.user = user.name;
  review.spec.uid = user.uid;
  review.spec.groups = user.groups;
  review.spec.extra = user.extra;
  api::ResourceAttributes& ra = review.spec.resource_attributes.emplace();
  ra.verb = attrs.verb;
  ra.version = "v1";
  ra.resource = attrs.resource;
  ra.subresource = attrs.subresource;
  ra.name = attrs.name;
  const std::string key = api::Encode(review.spec);
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      if (now < it->second.expires) return it->second.decision;
      cache_.erase(it);
    }
  }
  absl::StatusOr<std::string> body = PostWithRetry(
      *client_, "/apis/authorization.k8s.io/v1/subjectaccessreviews", api::Encode(review), retry_);
  if (!body.ok()) {
    KLOG_ERROR(body.status(), "Failed to make webhook authorizer request");
    return body.status();
  }
  absl::StatusOr<api::SubjectAccessReview> got = api::Decode<api::SubjectAccessReview>(*body);
  if (!got.ok()) return got.status();
  if (got->status.allowed && got->status.denied) {
    return absl::InternalError(
        "webhook subject access review returned both allow and deny response");
  }
  server::AuthzDecision d{got->status.allowed, got->status.reason};
  // Large attribute sets are not cached (upstream's 10000-byte bound).
  if (key.size() < 10000) {
    absl::MutexLock lock(&mu_);
    MakeRoom(cache_, now);
    cache_[key] = Entry{d, now + (d.allowed ? authorized_ttl_ : unauthorized_ttl_)};
  }
  return d;
}

}  // namespace kubelet::server
