#include "kubelet/podsource/http_source.h"

#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/static_pod.h"
#include "common/guarded.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::podsource {

HttpSource::HttpSource(HttpSourceOptions options, PodConfig& config, Clock& clock)
    : options_(std::move(options)), config_(config), clock_(clock) {
  config_.AddSource(kHTTPSource);
}

HttpSource::~HttpSource() { Stop(); }

absl::Status HttpSource::Start() {
  if (started_ || stopping_.load()) {
    return absl::FailedPreconditionError("http source already started or stopped");
  }
  started_ = true;
  KLOG_V(1, "Watching URL", "URL", options_.url);
  // Each poll is guarded too (Run below); this only covers the rest.
  thread_ = GuardedThread("URL source", [this] { Run(); });
  return absl::OkStatus();
}

void HttpSource::Stop() {
  if (!started_) return;
  stopping_.store(true);
  fetcher_.Cancel();
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
  started_ = false;
}

void HttpSource::Run() {
  while (!stopping_.load()) {
    // The thread's boundary: nothing a server sends may end it, so an exception that escaped a
    // poll (out of memory, a library throwing on hostile input) is logged and polling goes on.
    RunGuarded(absl::StrCat("URL source poll of ", options_.url), [this] { Poll(); });
    if (stop_.WaitForNotificationWithTimeout(options_.check_frequency)) break;
  }
}

void HttpSource::Poll() {
  absl::Status err = ExtractFromURL();
  polls_.fetch_add(1);
  if (stopping_.load()) return;
  if (!err.ok()) {
    // Don't log this multiple times per minute; the first few entries get the point across.
    if (failure_logs_ < 3) {
      KLOG_INFO("Failed to read pods from URL", "err", err);
    } else if (failure_logs_ == 3) {
      KLOG_INFO("Failed to read pods from URL. Dropping verbosity of this message to V(4)", "err",
                err);
    } else {
      KLOG_V(4, "Failed to read pods from URL", "err", err);
    }
    ++failure_logs_;
  } else if (failure_logs_ > 0) {
    KLOG_INFO("Successfully read pods from URL");
    failure_logs_ = 0;
  }
}

absl::Status HttpSource::ExtractFromURL() {
  HttpFetchOptions fetch_options;
  fetch_options.timeout = options_.timeout;
  fetch_options.max_body_bytes = options_.max_body_bytes;
  auto resp = fetcher_.Get(options_.url, options_.header, fetch_options);
  if (!resp.ok()) return resp.status();
  if (resp->status_code != 200) {
    return absl::UnavailableError(absl::StrCat(options_.url, ": ", resp->status));
  }
  if (resp->body.empty()) {
    // An empty snapshot lets the http source count as seen.
    last_data_.reset();
    config_.SetSource(kHTTPSource, {}, &stopping_);
    return absl::NotFoundError(absl::StrCat("zero-length data received from ", options_.url));
  }
  // Short circuit if the data has not changed since the last time it was read.
  if (last_data_.has_value() && *last_data_ == resp->body) return absl::OkStatus();
  last_data_ = resp->body;

  absl::StatusOr<std::vector<api::Pod>> pods;
  try {
    pods = api::DecodeStaticPodsHTTP(resp->body, options_.node_name, options_.url, clock_.Now());
  } catch (const std::exception& e) {
    pods = absl::InternalError(absl::StrCat(options_.url, ": ", e.what()));
  } catch (...) {
    pods = absl::InternalError(absl::StrCat(options_.url, ": unexpected decode failure"));
  }
  if (!pods.ok()) return pods.status();
  std::vector<api::PodPtr> shared;
  shared.reserve(pods->size());
  for (api::Pod& pod : *pods) shared.push_back(std::make_shared<const api::Pod>(std::move(pod)));
  if (!config_.SetSource(kHTTPSource, std::move(shared), &stopping_)) {
    last_data_.reset();  // not delivered: deliver again on the next poll
  }
  return absl::OkStatus();
}

}  // namespace kubelet::podsource
