// List-and-watch of one resource collection (client-go's Reflector), delivering to a handler,
// and a Store that keeps the latest copy of every object.
//
// Contract of Reflector:
// - Start() runs one loop (common/loops.h: on options.loops, else a thread of its own). It LISTs
//   the collection (resourceVersion "0" at first, so the API
//   server may answer from its watch cache; paged with limit/continue), hands the complete
//   result to Replace(objects, rv), then WATCHes from the list's resourceVersion with
//   allowWatchBookmarks=true and a random timeoutSeconds in [min_watch_timeout,
//   2*min_watch_timeout) (client-go: 5-10 min). Events go to Add/Update/Delete; BOOKMARK
//   events only move the resourceVersion (Bookmark()).
// - A watch that ends (server timeout, dropped connection) is re-opened from the last
//   resourceVersion seen, at once. A resourceVersion that is too old (410 Gone / Expired, as
//   an HTTP answer or as an ERROR event) leads to a fresh LIST with resourceVersion "" (a
//   consistent read) and a new Replace (after a back-off step when the previous LIST is
//   under a second old, so a server that keeps refusing cannot cause a relist loop). Transport
//   errors, 429 and 5xx answers to a watch are retried (re-watch) after a back-off; other failures
//   (list errors, ERROR events) after a back-off followed by a re-list. A watch that ends within a
//   second with no event counts as an error. Back-off: exponential from backoff_initial to
//   backoff_max with up to 100% jitter, starting over once nothing failed for backoff_reset
//   (client-go: 800 ms, 30 s, 2 min). Errors are logged at -v=2, expiry and re-watches at -v=4: a
//   flapping API server does not flood logs.
// - The watch runs in the background (RestClient::StartWatch): its events are queued and the
//   loop delivers them, so between events and while backing off the reflector holds no thread
//   (the Beast client reads the stream on its I/O threads).
// - The handler's methods run in the reflector's loop, one at a time, never under a lock of the
//   reflector; they must not call Stop().
// - Stop() (any thread but the handler's, several at once too) cancels the call in flight, ends
//   the watch and waits for the loop. The destructor stops.
// Ownership: `client` and `handler` are borrowed and must outlive the reflector.
//
// Contract of Store: a thread-safe ResourceEventHandler that keeps the latest object per key
// ("<namespace>/<name>", or "<name>" for cluster-scoped objects, client-go's
// MetaNamespaceKeyFunc) and the last resourceVersion; readers get copies. `on_change` (optional)
// runs after every change, on the caller's thread (the reflector's), with no lock held.
#ifndef KUBELET_APICLIENT_REFLECTOR_H_
#define KUBELET_APICLIENT_REFLECTOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/rest_client.h"
#include "common/cancellation.h"
#include "common/clock.h"
#include "common/loops.h"
#include "nlohmann/json.hpp"

namespace kubelet::apiclient {

class ResourceEventHandler {
 public:
  virtual ~ResourceEventHandler() = default;
  // The complete current state after a LIST: objects absent from it are gone.
  virtual void Replace(std::vector<nlohmann::json> objects,
                       const std::string& resource_version) = 0;
  virtual void Add(const nlohmann::json& object) = 0;
  virtual void Update(const nlohmann::json& object) = 0;
  virtual void Delete(const nlohmann::json& object) = 0;
  // A BOOKMARK moved the resourceVersion (no object changed).
  virtual void Bookmark(const std::string& resource_version) {}
};

// Feeds a reflector's calls to a `T` that knows nothing of the API client but has the handler's
// shape: Replace(std::vector<nlohmann::json>), Add / Update / Delete(const nlohmann::json&).
// Bookmarks are dropped. `target` is borrowed.
template <typename T>
class HandlerFor final : public ResourceEventHandler {
 public:
  explicit HandlerFor(T& target) : target_(target) {}
  void Replace(std::vector<nlohmann::json> objects, const std::string&) override {
    target_.Replace(std::move(objects));
  }
  void Add(const nlohmann::json& object) override { target_.Add(object); }
  void Update(const nlohmann::json& object) override { target_.Update(object); }
  void Delete(const nlohmann::json& object) override { target_.Delete(object); }

 private:
  T& target_;
};

struct ReflectorOptions {
  std::string name;            // for log lines, e.g. "pods"
  std::string path;            // the collection, e.g. "/api/v1/pods" (no query)
  std::string label_selector;  // unescaped, e.g. "app=a"
  std::string field_selector;  // unescaped, e.g. "spec.nodeName=node-1"
  int64_t page_size = 500;     // LIST limit; 0: no paging
  absl::Duration min_watch_timeout = absl::Minutes(5);
  absl::Duration backoff_initial = absl::Milliseconds(800);
  absl::Duration backoff_max = absl::Seconds(30);
  absl::Duration backoff_reset = absl::Minutes(2);
  double jitter = 1.0;  // a back-off of d sleeps d + rand[0,1)*jitter*d
  // The runner of the reflector's loop; null: a thread of its own. Must outlive the reflector.
  Loops* loops = nullptr;
};

class Reflector {
 public:
  // `clock` times the back-off's reset window; back-off waits are in real time.
  Reflector(RestClient& client, ResourceEventHandler& handler, ReflectorOptions options,
            Clock& clock);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();
  void Stop();

  // True once the first LIST was delivered.
  bool HasSynced() const;
  // The resourceVersion of the last list, event or bookmark delivered.
  std::string LastSyncResourceVersion() const;

 private:
  enum class WatchEnd { kStopped, kClosed, kExpired, kRetryWatch, kRelist };

  // The loop's body (guarded: a throw starts over from a list after a back-off).
  absl::Time Turn();
  absl::Time TurnGuarded();
  absl::Status List(const std::string& resource_version, bool* expired);
  // Starts the background watch from the last resourceVersion.
  void StartWatch();
  // One queued event of the watch to the handler.
  void Deliver(WatchEvent& event);
  // How the watch that ended with `result` ended.
  WatchEnd Ended(const absl::StatusOr<Response>& result);
  // When the next back-off step ends (real time).
  absl::Time Backoff();
  std::string Query(std::initializer_list<std::pair<std::string, std::string>> extra) const;
  void SetResourceVersion(const std::string& rv);
  bool Stopping() const;

  RestClient& client_;
  ResourceEventHandler& handler_;
  const ReflectorOptions options_;
  Clock& clock_;
  // Cancels the call in flight on Stop(); installed in each turn of the loop.
  std::shared_ptr<Cancellation> cancel_ = std::make_shared<Cancellation>();
  RealClock real_clock_;  // the own runner's: back-off waits are in real time
  std::unique_ptr<Loops> own_loops_;
  std::unique_ptr<Loop> loop_;  // set by Start(), before any watch
  absl::Mutex stop_mu_;         // serializes Start() and Stop()

  // The loop only.
  absl::Duration backoff_ = absl::ZeroDuration();
  absl::Time last_backoff_ = absl::InfinitePast();
  bool need_list_ = true;
  bool rv_unavailable_ = false;
  absl::Time last_list_ = absl::InfinitePast();
  absl::Time wait_until_ = absl::InfinitePast();  // backing off until then (real time)
  std::unique_ptr<BackgroundWatch> watch_;
  absl::Time watch_start_;
  int watch_events_ = 0;
  WatchEnd watch_end_ = WatchEnd::kClosed;  // what an ERROR event said

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  std::string rv_ ABSL_GUARDED_BY(mu_);
  // What the watch's callbacks left for the loop.
  std::deque<WatchEvent> queued_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<Response>> ended_ ABSL_GUARDED_BY(mu_);
};

class Store final : public ResourceEventHandler {
 public:
  using Items = std::map<std::string, nlohmann::json>;

  explicit Store(std::function<void()> on_change = nullptr);

  // "<namespace>/<name>" or "<name>"; "" when the object has no metadata.name.
  static std::string KeyOf(const nlohmann::json& object);

  std::optional<nlohmann::json> Get(const std::string& key) const;
  std::vector<nlohmann::json> List() const;
  std::vector<std::string> Keys() const;
  size_t size() const;
  std::string ResourceVersion() const;
  bool HasSynced() const;  // a Replace happened

  // Blocks until `pred(items, resource_version)` holds (evaluated under the store's lock after
  // each change: it must not call the store) or `timeout` passes; returns whether it held.
  bool WaitFor(const std::function<bool(const Items&, const std::string&)>& pred,
               absl::Duration timeout) const;

  void Replace(std::vector<nlohmann::json> objects, const std::string& resource_version) override;
  void Add(const nlohmann::json& object) override;
  void Update(const nlohmann::json& object) override;
  void Delete(const nlohmann::json& object) override;
  void Bookmark(const std::string& resource_version) override;

 private:
  void Put(const nlohmann::json& object);

  const std::function<void()> on_change_;
  mutable absl::Mutex mu_;
  Items items_ ABSL_GUARDED_BY(mu_);
  std::string rv_ ABSL_GUARDED_BY(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_REFLECTOR_H_
