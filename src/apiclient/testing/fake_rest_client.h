// An in-process RestClient for unit tests of API consumers: an in-memory object store keyed by
// resource collection, with the API server's semantics that consumers rely on.
//
// Contract:
// - Paths as the API server's: /api/v1/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
//   and /apis/<group>/<version>/... . A collection ("/api/v1/pods") holds the objects of every
//   namespace; a namespaced path sees its namespace only.
// - One resourceVersion counter for everything (as etcd's revision): every write stamps the
//   object's metadata.resourceVersion with the next value.
// - GET item (404 NotFound), GET list (labelSelector with =, ==, !=, key, !key; fieldSelector
//   with =, ==, != on dotted paths such as spec.nodeName; limit/continue paging; the list's
//   metadata.resourceVersion is the current one), POST (201; 409 AlreadyExists; generateName;
//   a uid is assigned), PUT (404; 409 Conflict when metadata.resourceVersion is set and stale;
//   the "status" subresource replaces only .status, the main resource keeps the stored
//   .status, as for resources with a status subresource), PATCH (merge patch; strategic merge patch
//   is approximated by a merge patch; JSON patch; 415 otherwise; the "status" subresource keeps
//   only the patch's status changes), DELETE (the deleted object; 404; 409 on a stale
//   preconditions.resourceVersion).
// - Watch streams, on the caller's thread, the changes after its resourceVersion (for "" or "0":
//   ADDED for every current object first), filtered by namespace and selectors (an object
//   leaving the selection is DELETED, entering it ADDED), until timeoutSeconds / the request's
//   timeout, DropWatches(), the callback returning false, or the calling thread's Cancellation.
//   A resourceVersion older than the compacted history gets an ERROR event with a 410 Expired
//   Status, as the API server sends.
// - Hooks: InjectFault (an HTTP answer or a transport error for the next matching calls),
//   CompactHistory, DropWatches, SendBookmarks, WaitForWatches, and the request log.
// Thread-safety: everything is thread-safe; watch callbacks run with no lock held.
#ifndef KUBELET_APICLIENT_TESTING_FAKE_REST_CLIENT_H_
#define KUBELET_APICLIENT_TESTING_FAKE_REST_CLIENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/rest_client.h"
#include "nlohmann/json.hpp"

namespace kubelet::apiclient::testing {

class FakeRestClient final : public RestClient {
 public:
  FakeRestClient() = default;
  FakeRestClient(const FakeRestClient&) = delete;
  FakeRestClient& operator=(const FakeRestClient&) = delete;

  absl::StatusOr<Response> Do(const Request& request) override;
  absl::StatusOr<Response> Watch(const Request& request, const WatchEventFn& on_event) override;

  // Direct access, bypassing faults (watchers see the changes). `collection` is the
  // namespace-less collection path ("/api/v1/pods"); the object's metadata.namespace places it.
  // Upsert creates or replaces and returns the stored object.
  nlohmann::json Upsert(const std::string& collection, nlohmann::json object);
  bool Remove(const std::string& collection, const std::string& ns, const std::string& name);
  std::optional<nlohmann::json> Get(const std::string& collection, const std::string& ns,
                                    const std::string& name) const;
  int64_t CurrentResourceVersion() const;

  struct Fault {
    std::string method;         // "GET", "POST", ..., "WATCH" for Watch(); empty: any
    std::string path_contains;  // empty: any path
    int code = 0;               // > 0: answer with this code and a Status body
    std::string reason;         // the Status reason (empty: derived from the code)
    absl::Status error = absl::UnavailableError("injected transport error");  // when code == 0
    int times = 1;
  };
  void InjectFault(Fault fault);

  // Forgets the history up to now: a watch from an older resourceVersion gets 410 Expired.
  void CompactHistory();
  // Ends every open watch as if the connection closed.
  void DropWatches();
  // Sends a BOOKMARK at the current resourceVersion to each open watch that allowed them.
  void SendBookmarks();
  // Waits until at least `n` watches are open.
  bool WaitForWatches(int n, absl::Duration timeout) const;
  int open_watches() const;

  struct RecordedRequest {
    std::string method;  // "WATCH" for Watch()
    std::string path;    // with the query
    std::string body;
  };
  std::vector<RecordedRequest> requests() const;
  void ClearRequests();

 private:
  struct Event {
    std::string collection;
    std::string type;  // ADDED, MODIFIED, DELETED
    nlohmann::json object;
    nlohmann::json old;  // the previous object for MODIFIED
    int64_t rv = 0;
  };
  using Objects = std::map<std::string, nlohmann::json>;  // "<ns>/<name>"

  std::optional<Response> TakeFault(const std::string& method, const std::string& path,
                                    absl::Status* error) ABSL_LOCKS_EXCLUDED(mu_);
  nlohmann::json StampLocked(nlohmann::json object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordLocked(const std::string& collection, const std::string& type,
                    const nlohmann::json& object, const nlohmann::json& old)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  int64_t rv_ ABSL_GUARDED_BY(mu_) = 1000;
  int64_t uid_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Objects> collections_ ABSL_GUARDED_BY(mu_);
  std::vector<Event> history_ ABSL_GUARDED_BY(mu_);
  int64_t compacted_rv_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t drop_gen_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bookmark_gen_ ABSL_GUARDED_BY(mu_) = 0;
  int open_watches_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Fault> faults_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

// A RestClient that hands every call to another one it borrows (e.g. a FakeRestClient a test
// owns, given to code that wants to own its client).
class ForwardingRestClient final : public RestClient {
 public:
  explicit ForwardingRestClient(RestClient* to) : to_(to) {}
  absl::StatusOr<Response> Do(const Request& request) override { return to_->Do(request); }
  absl::StatusOr<Response> Watch(const Request& request, const WatchEventFn& on_event) override {
    return to_->Watch(request, on_event);
  }
  std::unique_ptr<BackgroundWatch> StartWatch(const Request& request, WatchEventFn on_event,
                                              WatchEndFn on_end) override {
    return to_->StartWatch(request, std::move(on_event), std::move(on_end));
  }

 private:
  RestClient* to_;
};

}  // namespace kubelet::apiclient::testing

#endif  // KUBELET_APICLIENT_TESTING_FAKE_REST_CLIENT_H_
