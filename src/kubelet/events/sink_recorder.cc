// The API-server mode event recorder (see sink_recorder.h).
#include "kubelet/events/sink_recorder.h"

#include <deque>
#include <random>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/cancellation.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::events {
namespace {

// Drops are logged on the first and then on every kDropLogEvery-th one.
constexpr uint64_t kDropLogEvery = 100;

std::string Describe(const api::Event& e) {
  return absl::StrCat(e.metadata.namespace_, "/", e.metadata.name, " ", e.involved_object.kind, " ",
                      e.involved_object.name, " ", e.reason);
}

// Failures where no (final) answer was had: the write may succeed later.
bool Retryable(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kUnavailable:        // transport failure, 5xx
    case absl::StatusCode::kDeadlineExceeded:   // timeout, 504
    case absl::StatusCode::kResourceExhausted:  // 429
    case absl::StatusCode::kCancelled:          // stopping (the loop ends)
    case absl::StatusCode::kInternal:           // an answer that did not decode
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

class Recorder final : public SinkRecorder {
 public:
  Recorder(std::shared_ptr<EventSink> sink, Clock& clock, SinkRecorderOptions options)
      : sink_(std::move(sink)),
        clock_(clock),
        o_(std::move(options)),
        correlator_(clock, o_.correlator),
        cancel_(std::make_shared<Cancellation>()) {}

  ~Recorder() override { Stop(); }

  void Record(const ObjectReference& object, std::string_view type, std::string_view reason,
              std::string_view message) override {
    if (type != kNormal && type != kWarning) {
      KLOG_ERROR(absl::InvalidArgumentError(absl::StrCat("unsupported event type ", AV(type))),
                 "Unsupported event type", "eventType", std::string(type));
      return;
    }
    LogEvent(o_.log_verbosity, object, type, reason, message);
    api::Event event =
        MakeEvent(object, type, reason, message, o_.component, o_.host, clock_.Now());
    uint64_t dropped = 0;
    bool start = false;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (queue_.size() < o_.queue_size) {
        queue_.push_back(std::move(event));
        start = !sender_running_;
        sender_running_ = true;
      } else {
        dropped = ++dropped_;
      }
    }
    if (start) StartSender();
    if (dropped == 0) return;
    if (dropped == 1 || dropped % kDropLogEvery == 0) {
      KLOG_WARNING("Unable to record event: too many queued events, dropped event", "event",
                   Describe(event), "dropped", dropped);
    }
  }

  void Stop() override {
    {
      absl::MutexLock lock(&mu_);
      if (!stopping_) {
        stopping_ = true;
        // Let the sender flush what is queued, one try each.
        auto idle = [this]()
                        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !sending_; };
        mu_.AwaitWithTimeout(absl::Condition(&idle), o_.flush_timeout);
        if (!queue_.empty()) {
          KLOG_WARNING("Dropping queued events at shutdown", "events", queue_.size());
          dropped_ += queue_.size();
          queue_.clear();
        }
      }
    }
    cancel_->Cancel();
    absl::MutexLock join_lock(&join_mu_);
    joined_ = true;
    if (thread_.joinable()) thread_.join();
  }

  uint64_t Dropped() const override {
    absl::MutexLock lock(&mu_);
    return dropped_;
  }

  bool WaitIdle(absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.empty() && !sending_; };
    return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
  }

  bool SenderRunning() const override {
    absl::MutexLock lock(&mu_);
    return sender_running_;
  }

 private:
  // A sender for the queue (sender_running_ was set by the caller): the previous one, which
  // has left or is leaving, is joined first. None once Stop() joined.
  void StartSender() {
    absl::MutexLock join_lock(&join_mu_);
    if (joined_) return;
    if (thread_.joinable()) thread_.join();
    thread_ = GuardedThread("event sender", [this] {
      ScopedCancellation scope(cancel_);
      Loop();
    });
  }

  void Loop() {
    for (;;) {
      api::Event event;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !queue_.empty() || stopping_;
        };
        mu_.AwaitWithTimeout(absl::Condition(&ready), o_.sender_idle_timeout);
        if (queue_.empty()) {  // idle for long enough, or stopping with nothing left
          sender_running_ = false;
          return;
        }
        event = std::move(queue_.front());
        queue_.pop_front();
        sending_ = true;
      }
      RunGuarded("event sender", [&] { Send(std::move(event)); });
      absl::MutexLock lock(&mu_);
      sending_ = false;
    }
  }

  bool Stopping() const {
    absl::MutexLock lock(&mu_);
    return stopping_;
  }

  // False when stopping began before `d` passed.
  bool Sleep(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    return !mu_.AwaitWithTimeout(absl::Condition(&stopping), d);
  }

  // recordToSink: correlate, then up to max_tries writes.
  void Send(api::Event event) {
    CorrelateResult r = correlator_.Correlate(std::move(event));
    if (r.skip) {
      KLOG_V(4, "Event filtered as spam", "event", Describe(r.event));
      return;
    }
    for (int tries = 1;; ++tries) {
      if (WriteEvent(*sink_, r.event, r.patch, correlator_)) return;
      if (tries >= o_.max_tries) {
        KLOG_ERROR(absl::UnavailableError("retry limit exceeded"),
                   "Unable to write event (retry limit exceeded!)", "event", Describe(r.event));
        return;
      }
      // The first sleep is randomised so that clients do not all come back at once.
      absl::Duration delay = o_.retry_sleep;
      if (tries == 1) delay = delay * std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
      if (Stopping() || !Sleep(delay)) {
        KLOG_ERROR(absl::CancelledError("shut down"),
                   "Unable to write event (broadcaster is shut down)", "event", Describe(r.event));
        return;
      }
    }
  }

  const std::shared_ptr<EventSink> sink_;
  Clock& clock_;
  const SinkRecorderOptions o_;
  // Used by the sender thread only.
  EventCorrelator correlator_;
  std::mt19937_64 rng_{std::random_device{}()};

  mutable absl::Mutex mu_;
  std::deque<api::Event> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool sending_ ABSL_GUARDED_BY(mu_) = false;
  bool sender_running_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;

  const std::shared_ptr<Cancellation> cancel_;
  absl::Mutex join_mu_;
  bool joined_ ABSL_GUARDED_BY(join_mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(join_mu_);
};

}  // namespace

bool WriteEvent(EventSink& sink, api::Event& event, std::string_view patch,
                EventCorrelator& correlator) {
  absl::StatusOr<api::Event> written = absl::UnknownError("not sent");
  const bool update = event.count > 1 && !patch.empty();
  if (update) written = sink.Patch(event, patch);
  // The event may have been deleted meanwhile (events expire after an hour): create it again.
  if (!update || absl::IsNotFound(written.status())) {
    event.metadata.resource_version.clear();
    written = sink.Create(event);
  }
  if (written.ok()) {
    correlator.UpdateState(*written);
    return true;
  }
  const absl::Status& st = written.status();
  if (Retryable(st)) {
    KLOG_ERROR(st, "Unable to write event (may retry after sleeping)", "event", Describe(event));
    return false;
  }
  if (absl::IsAlreadyExists(st) ||
      (absl::IsPermissionDenied(st) &&
       absl::StrContains(st.message(), "because it is being terminated"))) {
    KLOG_V(5, "Server rejected event (will not retry!)", "event", Describe(event), "err", st);
  } else {
    KLOG_ERROR(st, "Server rejected event (will not retry!)", "event", Describe(event));
  }
  return true;
}

std::unique_ptr<SinkRecorder> NewSinkRecorder(std::shared_ptr<EventSink> sink, Clock& clock,
                                              SinkRecorderOptions options) {
  return std::make_unique<Recorder>(std::move(sink), clock, std::move(options));
}

}  // namespace kubelet::events
