#include "apiclient/reflector.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/loops.h"
#include "common/object_key.h"
#include "common/strings.h"

namespace kubelet::apiclient {
namespace {

std::string ObjectResourceVersion(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  auto rv = md->find("resourceVersion");
  return rv != md->end() && rv->is_string() ? rv->get<std::string>() : "";
}

bool Retryable(int code) { return code == 429 || code >= 500; }

// Member `key` of `object` when it is a string, else "" (json::value() would throw).
std::string StringMember(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

Reflector::Reflector(RestClient& client, ResourceEventHandler& handler, ReflectorOptions options,
                     Clock& clock)
    : client_(client), handler_(handler), options_(std::move(options)), clock_(clock) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  absl::MutexLock lock(&stop_mu_);
  if (loop_ || Stopping()) return;
  Loops& loops = LoopsOrOwn(options_.loops, own_loops_, real_clock_);
  loop_ = loops.Start(absl::StrCat("reflector ", options_.name), absl::InfinitePast(),
                      [this](bool) { return TurnGuarded(); });
}

void Reflector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cancel_->Cancel();
  // Several threads may stop the same reflector; one stops the loop, the others wait for it.
  absl::MutexLock lock(&stop_mu_);
  if (loop_) loop_->Stop();
  // No turn runs any more: the watch is ours to end.
  if (watch_) watch_->Stop();
  watch_.reset();
}

bool Reflector::Stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool Reflector::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

std::string Reflector::LastSyncResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return rv_;
}

void Reflector::SetResourceVersion(const std::string& rv) {
  if (rv.empty()) return;
  absl::MutexLock lock(&mu_);
  rv_ = rv;
}

std::string Reflector::Query(
    std::initializer_list<std::pair<std::string, std::string>> extra) const {
  std::string q;
  auto add = [&q](const std::string& k, const std::string& v) {
    absl::StrAppend(&q, q.empty() ? "?" : "&", AV(k), "=", AV(EscapeQuery(v)));
  };
  if (!options_.label_selector.empty()) add("labelSelector", options_.label_selector);
  if (!options_.field_selector.empty()) add("fieldSelector", options_.field_selector);
  for (const auto& [k, v] : extra) add(k, v);
  return q;
}

absl::Time Reflector::Backoff() {
  absl::Time now = clock_.Now();
  if (backoff_ == absl::ZeroDuration() || now - last_backoff_ > options_.backoff_reset) {
    backoff_ = options_.backoff_initial;
  } else {
    backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  }
  last_backoff_ = now;
  absl::BitGen gen;
  absl::Duration sleep = backoff_ + backoff_ * (options_.jitter * absl::Uniform(gen, 0.0, 1.0));
  wait_until_ = absl::Now() + sleep;
  return wait_until_;
}

absl::Status Reflector::List(const std::string& resource_version, bool* expired) {
  *expired = false;
  std::vector<nlohmann::json> items;
  std::string cont;
  std::string list_rv;
  do {
    Request req;
    std::string query;
    if (cont.empty()) {
      // An empty resourceVersion (a consistent read) is left out of the query, as client-go.
      if (resource_version.empty()) {
        query = options_.page_size > 0 ? Query({{"limit", std::to_string(options_.page_size)}})
                                       : Query({});
      } else {
        query = options_.page_size > 0 ? Query({{"limit", std::to_string(options_.page_size)},
                                                {"resourceVersion", resource_version}})
                                       : Query({{"resourceVersion", resource_version}});
      }
    } else {
      query = Query({{"limit", std::to_string(options_.page_size)}, {"continue", cont}});
    }
    req.path = options_.path + query;
    absl::StatusOr<Response> resp = client_.Do(req);
    if (!resp.ok()) return resp.status();
    if (!resp->ok()) {
      ApiError e = DecodeApiError(*resp);
      *expired = IsResourceExpired(e);
      return ResponseStatus(*resp);
    }
    nlohmann::json list = ParseBoundedJson(resp->body);
    if (!list.is_object() ||
        (list.contains("items") && !list["items"].is_array() && !list["items"].is_null())) {
      return absl::DataLossError(absl::StrCat("list of ", AV(options_.path), " is not a list"));
    }
    if (auto it = list.find("items"); it != list.end() && it->is_array()) {
      for (nlohmann::json& item : *it) items.push_back(std::move(item));
    }
    cont.clear();
    if (auto md = list.find("metadata"); md != list.end() && md->is_object()) {
      if (auto c = md->find("continue"); c != md->end() && c->is_string()) {
        cont = c->get<std::string>();
      }
      if (auto rv = md->find("resourceVersion"); rv != md->end() && rv->is_string()) {
        list_rv = rv->get<std::string>();
      }
    }
  } while (!cont.empty() && options_.page_size > 0);
  SetResourceVersion(list_rv);
  handler_.Replace(std::move(items), list_rv);
  {
    absl::MutexLock lock(&mu_);
    synced_ = true;
  }
  return absl::OkStatus();
}

void Reflector::StartWatch() {
  absl::BitGen gen;
  const int64_t min_s = std::max<int64_t>(1, absl::ToInt64Seconds(options_.min_watch_timeout));
  const int64_t timeout_s = absl::Uniform<int64_t>(gen, min_s, 2 * min_s);
  Request req;
  req.path = options_.path + Query({{"allowWatchBookmarks", "true"},
                                    {"resourceVersion", LastSyncResourceVersion()},
                                    {"timeoutSeconds", std::to_string(timeout_s)},
                                    {"watch", "true"}});
  // A guard against a server that never ends the stream.
  req.timeout = absl::Seconds(timeout_s) + absl::Seconds(30);
  watch_events_ = 0;
  watch_end_ = WatchEnd::kClosed;
  watch_start_ = absl::Now();
  // The callbacks only queue and wake the loop (they run on the client's threads); an ERROR or
  // unknown event ends the stream, as the loop will see when it delivers it.
  watch_ = client_.StartWatch(
      req,
      [this](WatchEvent ev) {
        const bool go_on = ev.type == "ADDED" || ev.type == "MODIFIED" || ev.type == "DELETED" ||
                           ev.type == "BOOKMARK";
        {
          absl::MutexLock lock(&mu_);
          queued_.push_back(std::move(ev));
        }
        loop_->Wake();
        return go_on;
      },
      [this](absl::StatusOr<Response> result) {
        {
          absl::MutexLock lock(&mu_);
          ended_ = std::move(result);
        }
        loop_->Wake();
      });
}

void Reflector::Deliver(WatchEvent& ev) {
  ++watch_events_;
  if (ev.type == "ADDED" || ev.type == "MODIFIED" || ev.type == "DELETED") {
    // The version moves first: whoever sees the handler's effect sees the reflector there.
    SetResourceVersion(ObjectResourceVersion(ev.object));
    if (ev.type == "ADDED") {
      handler_.Add(ev.object);
    } else if (ev.type == "MODIFIED") {
      handler_.Update(ev.object);
    } else {
      handler_.Delete(ev.object);
    }
    return;
  }
  if (ev.type == "BOOKMARK") {
    std::string rv = ObjectResourceVersion(ev.object);
    SetResourceVersion(rv);
    if (!rv.empty()) handler_.Bookmark(rv);
    return;
  }
  if (ev.type == "ERROR") {
    ApiError e = DecodeApiError(ev.object);
    if (IsResourceExpired(e)) {
      KLOG_V(4, "Watch closed: resource version too old", "reflector", options_.name, "message",
             e.message);
      watch_end_ = WatchEnd::kExpired;
    } else {
      KLOG_V(2, "Watch ended with an error", "reflector", options_.name, "code", e.code, "reason",
             e.reason, "message", e.message);
      watch_end_ = WatchEnd::kRelist;
    }
    return;
  }
  KLOG_V(2, "Unexpected watch event type", "reflector", options_.name, "type", ev.type);
  watch_end_ = WatchEnd::kRelist;
}

Reflector::WatchEnd Reflector::Ended(const absl::StatusOr<Response>& resp) {
  if (Stopping()) return WatchEnd::kStopped;
  if (!resp.ok()) {
    if (resp.status().code() == absl::StatusCode::kCancelled) return WatchEnd::kStopped;
    KLOG_V(2, "Watch failed", "reflector", options_.name, "err", resp.status());
    return resp.status().code() == absl::StatusCode::kUnavailable ? WatchEnd::kRetryWatch
                                                                  : WatchEnd::kRelist;
  }
  if (resp->code != 200) {
    ApiError e = DecodeApiError(*resp);
    if (IsResourceExpired(e)) {
      KLOG_V(4, "Watch refused: resource version too old", "reflector", options_.name);
      return WatchEnd::kExpired;
    }
    KLOG_V(2, "Watch refused", "reflector", options_.name, "code", resp->code, "reason", e.reason,
           "message", e.message);
    return Retryable(resp->code) ? WatchEnd::kRetryWatch : WatchEnd::kRelist;
  }
  if (watch_end_ == WatchEnd::kClosed && watch_events_ == 0 &&
      absl::Now() - watch_start_ < absl::Seconds(1)) {
    KLOG_V(2, "Very short watch", "reflector", options_.name);
    return WatchEnd::kRetryWatch;
  }
  if (watch_end_ == WatchEnd::kClosed) {
    KLOG_V(4, "Watch closed, watching again", "reflector", options_.name, "events", watch_events_);
  }
  return watch_end_;
}

absl::Time Reflector::TurnGuarded() {
  absl::Time next = absl::InfiniteFuture();
  // A throw (a handler's bug, a library throwing on odd input) ends that turn: it is logged,
  // and after a back-off the reflector starts over from a fresh list instead of leaving the
  // resource unwatched or ending the process.
  if (RunGuarded(absl::StrCat("reflector ", options_.name), [&] { next = Turn(); })) return next;
  if (watch_) watch_->Stop();
  watch_.reset();
  {
    absl::MutexLock lock(&mu_);
    queued_.clear();
    ended_.reset();
  }
  need_list_ = true;
  return Stopping() ? absl::InfiniteFuture() : Backoff();
}

absl::Time Reflector::Turn() {
  if (Stopping()) return absl::InfiniteFuture();
  ScopedCancellation scope(cancel_);
  // What the watch queued: its events first, then its end.
  std::deque<WatchEvent> events;
  std::optional<absl::StatusOr<Response>> ended;
  {
    absl::MutexLock lock(&mu_);
    events.swap(queued_);
    ended.swap(ended_);
  }
  for (WatchEvent& ev : events) Deliver(ev);
  if (ended) {
    watch_.reset();  // over: its callbacks are done
    switch (Ended(*ended)) {
      case WatchEnd::kStopped:
        return absl::InfiniteFuture();
      case WatchEnd::kClosed:
        break;
      case WatchEnd::kExpired:
        rv_unavailable_ = true;
        need_list_ = true;
        // A version that expires right after a fresh list means the server keeps refusing it:
        // back off instead of relisting in a tight loop.
        if (absl::Now() - last_list_ < absl::Seconds(1)) return Backoff();
        break;
      case WatchEnd::kRetryWatch:
        return Backoff();
      case WatchEnd::kRelist:
        need_list_ = true;
        return Backoff();
    }
  }
  if (watch_) return absl::InfiniteFuture();  // watching: its callbacks wake the loop
  if (absl::Now() < wait_until_) return wait_until_;
  if (need_list_) {
    // First list from the watch cache ("0"); after an expiry a consistent read (""); other
    // relists from the last version seen, as client-go does.
    std::string rv = rv_unavailable_ ? "" : LastSyncResourceVersion();
    if (rv.empty() && !rv_unavailable_) rv = "0";
    bool expired = false;
    absl::Status s = List(rv, &expired);
    if (!s.ok()) {
      if (Stopping() || s.code() == absl::StatusCode::kCancelled) return absl::InfiniteFuture();
      if (expired) rv_unavailable_ = true;
      KLOG_V(2, "Failed to list", "reflector", options_.name, "err", s);
      return Backoff();
    }
    rv_unavailable_ = false;
    need_list_ = false;
    last_list_ = absl::Now();
  }
  if (Stopping()) return absl::InfiniteFuture();
  StartWatch();
  return absl::InfiniteFuture();
}

// Store.

Store::Store(std::function<void()> on_change) : on_change_(std::move(on_change)) {}

std::string MetadataString(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  return StringMember(*md, key);
}

std::string Store::KeyOf(const nlohmann::json& object) { return ObjectKey(object); }

std::optional<nlohmann::json> Store::Get(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return it->second;
}

std::vector<nlohmann::json> Store::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<nlohmann::json> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v);
  return out;
}

std::vector<std::string> Store::Keys() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [k, v] : items_) out.push_back(k);
  return out;
}

size_t Store::size() const {
  absl::MutexLock lock(&mu_);
  return items_.size();
}

std::string Store::ResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return rv_;
}

bool Store::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

bool Store::WaitFor(const std::function<bool(const Items&, const std::string&)>& pred,
                    absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto cond = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pred(items_, rv_); };
  return mu_.AwaitWithTimeout(absl::Condition(&cond), timeout);
}

void Store::Replace(std::vector<nlohmann::json> objects, const std::string& resource_version) {
  {
    absl::MutexLock lock(&mu_);
    items_.clear();
    for (nlohmann::json& o : objects) {
      std::string key = KeyOf(o);
      if (!key.empty()) items_[key] = std::move(o);
    }
    if (!resource_version.empty()) rv_ = resource_version;
    synced_ = true;
  }
  if (on_change_) on_change_();
}

void Store::Put(const nlohmann::json& object) {
  std::string key = KeyOf(object);
  {
    absl::MutexLock lock(&mu_);
    if (!key.empty()) items_[key] = object;
    std::string rv = ObjectResourceVersion(object);
    if (!rv.empty()) rv_ = rv;
  }
  if (on_change_) on_change_();
}

void Store::Add(const nlohmann::json& object) { Put(object); }
void Store::Update(const nlohmann::json& object) { Put(object); }

void Store::Delete(const nlohmann::json& object) {
  std::string key = KeyOf(object);
  {
    absl::MutexLock lock(&mu_);
    items_.erase(key);
    std::string rv = ObjectResourceVersion(object);
    if (!rv.empty()) rv_ = rv;
  }
  if (on_change_) on_change_();
}

void Store::Bookmark(const std::string& resource_version) {
  {
    absl::MutexLock lock(&mu_);
    rv_ = resource_version;
  }
  if (on_change_) on_change_();
}

}  // namespace kubelet::apiclient
