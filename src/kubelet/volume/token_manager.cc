#include "kubelet/volume/token_manager.h"

#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"

namespace kubelet::volume {
namespace {

double RandomFraction() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
}

absl::Time ToAbsl(const api::Time& t) {
  return absl::FromUnixSeconds(t.seconds) + absl::Nanoseconds(t.nanos);
}

}  // namespace

TokenManager::TokenManager(TokenClient* client, const Clock& clock, std::function<double()> rand01)
    : client_(client),
      clock_(clock),
      rand01_(rand01 ? std::move(rand01) : std::function<double()>(RandomFraction)) {}

std::string TokenManager::KeyFunc(const std::string& name, const std::string& ns,
                                  const api::TokenRequest& tr) {
  const int64_t exp = tr.spec.expiration_seconds.value_or(0);
  api::BoundObjectReference ref;
  if (tr.spec.bound_object_ref.has_value()) ref = *tr.spec.bound_object_ref;
  return absl::StrCat(log::Quote(name), "/", log::Quote(ns), "/[",
                      absl::StrJoin(tr.spec.audiences, ","), "]/", exp, "/{", ref.kind, ",",
                      ref.api_version, ",", ref.name, ",", ref.uid, "}");
}

bool TokenManager::Expired(const api::TokenRequest& tr) const {
  return clock_.Now() > ToAbsl(tr.status.expiration_timestamp);
}

bool TokenManager::RequiresRefresh(const api::TokenRequest& tr) const {
  if (!tr.spec.expiration_seconds.has_value()) {
    KLOG_ERROR(absl::InvalidArgumentError("expirationSeconds unset"),
               "Expiration seconds was nil for token request");
    return false;
  }
  const absl::Time now = clock_.Now();
  const absl::Time exp = ToAbsl(tr.status.expiration_timestamp);
  const int64_t ttl = *tr.spec.expiration_seconds;
  const absl::Time iat = exp - absl::Seconds(ttl);
  // Whole seconds, as upstream's time.Duration(rand*10)*time.Second.
  const absl::Duration jitter =
      absl::Seconds(static_cast<int64_t>(rand01_() * absl::ToDoubleSeconds(kTokenMaxJitter)));
  if (now > iat + kTokenMaxTTL - jitter) return true;
  // Within 20% of the TTL (plus the jitter) of the expiration.
  return now > exp - absl::Seconds(ttl * 20 / 100) - jitter;
}

absl::StatusOr<api::TokenRequest> TokenManager::GetServiceAccountToken(
    const std::string& ns, const std::string& name, const api::TokenRequest& request) {
  const std::string key = KeyFunc(name, ns, request);
  std::optional<api::TokenRequest> cached;
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) cached = it->second;
  }
  if (cached.has_value() && !RequiresRefresh(*cached)) return *cached;

  absl::StatusOr<api::TokenRequest> fresh =
      client_ == nullptr
          ? absl::StatusOr<api::TokenRequest>(absl::FailedPreconditionError(kStandaloneTokenError))
          : client_->CreateToken(ns, name, request);
  if (!fresh.ok()) {
    if (!cached.has_value()) {
      return absl::Status(fresh.status().code(),
                          absl::StrCat("failed to fetch token: ", fresh.status().message()));
    }
    if (Expired(*cached)) {
      return absl::Status(
          fresh.status().code(),
          absl::StrCat("token ", key, " expired and refresh failed: ", fresh.status().message()));
    }
    KLOG_ERROR(fresh.status(), "Couldn't update token", "cacheKey", key);
    return *cached;
  }
  // The answer's spec is what the API server granted; keep the request's when it says nothing
  // (a fake or an old server), so RequiresRefresh has a TTL.
  if (!fresh->spec.expiration_seconds.has_value()) {
    fresh->spec.expiration_seconds = request.spec.expiration_seconds;
  }
  if (!fresh->spec.bound_object_ref.has_value()) {
    fresh->spec.bound_object_ref = request.spec.bound_object_ref;
  }
  absl::MutexLock lock(&mu_);
  cache_[key] = *fresh;
  return *std::move(fresh);
}

void TokenManager::DeleteServiceAccountToken(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  for (auto it = cache_.begin(); it != cache_.end();) {
    const auto& ref = it->second.spec.bound_object_ref;
    it = ref.has_value() && ref->uid == pod_uid ? cache_.erase(it) : std::next(it);
  }
}

void TokenManager::Cleanup() {
  absl::MutexLock lock(&mu_);
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = Expired(it->second) ? cache_.erase(it) : std::next(it);
  }
}

size_t TokenManager::size() const {
  absl::MutexLock lock(&mu_);
  return cache_.size();
}

}  // namespace kubelet::volume
