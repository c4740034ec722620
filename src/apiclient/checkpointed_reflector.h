// A Reflector whose collection is checkpointed to a file and restored from it when the API
// server does not answer at start-up: offline autonomy for a client that must keep working with
// the last state it saw (the kubelet's pods and services).
//
// Contract:
// - Every call of the reflector reaches `handler` unchanged, on the reflector's thread.
// - After the first Replace (a LIST), the objects are kept less `strip` (top-level members, e.g.
//   "status"), metadata.resourceVersion and metadata.managedFields, and written to `path` as
//   {"apiVersion":"v1","kind":<list_kind>,"items":[...]} (atomically, 0600) whenever that text
//   changes; a change of stripped fields alone writes nothing. Only changed objects are encoded
//   again. A failed write is logged and retried with the next change; the checkpoint on disk
//   stays whole.
// - When no LIST has arrived `restore_after` (on `clock`) after Start(), the checkpointed
//   objects go to handler.Replace(objects, "") once, on a thread of this class, logged as
//   "Restored <name> from the checkpoint while the API server is unreachable". A LIST that comes
//   later replaces them as usual. An unreadable checkpoint is logged and ignored; a missing one
//   restores nothing. A bare JSON array of objects is read as items too.
// - Stop() (any thread but the handler's) stops the reflector and the restore; the destructor
//   stops. Empty `path`: a plain Reflector.
// Ownership: `client` and `handler` are borrowed and must outlive this object.
#ifndef KUBELET_APICLIENT_CHECKPOINTED_REFLECTOR_H_
#define KUBELET_APICLIENT_CHECKPOINTED_REFLECTOR_H_

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apiclient/reflector.h"
#include "common/clock.h"
#include "nlohmann/json.hpp"

namespace kubelet::apiclient {

struct CheckpointOptions {
  std::string path;  // empty: no checkpoint
  std::string list_kind = "List";
  std::vector<std::string> strip;  // top-level members left out, e.g. {"status"}
  absl::Duration restore_after = absl::Seconds(5);
};

class CheckpointedReflector {
 public:
  CheckpointedReflector(RestClient& client, ResourceEventHandler& handler, ReflectorOptions options,
                        CheckpointOptions checkpoint, Clock& clock);
  ~CheckpointedReflector();
  CheckpointedReflector(const CheckpointedReflector&) = delete;
  CheckpointedReflector& operator=(const CheckpointedReflector&) = delete;

  void Start();
  void Stop();
  bool HasSynced() const { return reflector_.HasSynced(); }

 private:
  // Sits between the reflector and the handler.
  class Recorder final : public ResourceEventHandler {
   public:
    explicit Recorder(CheckpointedReflector& owner) : owner_(owner) {}
    void Replace(std::vector<nlohmann::json> objects, const std::string& rv) override;
    void Add(const nlohmann::json& object) override;
    void Update(const nlohmann::json& object) override;
    void Delete(const nlohmann::json& object) override;
    void Bookmark(const std::string& rv) override { owner_.handler_.Bookmark(rv); }

   private:
    CheckpointedReflector& owner_;
  };

  void Put(const nlohmann::json& object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Put and Write under the lock (an added or updated object).
  void Record(const nlohmann::json& object) ABSL_LOCKS_EXCLUDED(mu_);
  void Write() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Restore();

  ResourceEventHandler& handler_;
  const std::string name_;
  const CheckpointOptions checkpoint_;
  Clock& clock_;
  Recorder recorder_{*this};
  Reflector reflector_;
  std::thread restorer_;

  // Serializes the calls into the handler, so a restore never overtakes a LIST; never held by
  // Stop(), which the handler's owner may need to unblock a call first.
  absl::Mutex deliver_mu_;
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(deliver_mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool listed_ ABSL_GUARDED_BY(mu_) = false;
  // Each object's checkpoint item, encoded, by key.
  std::map<std::string, std::string> items_ ABSL_GUARDED_BY(mu_);
  std::string written_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_CHECKPOINTED_REFLECTOR_H_
