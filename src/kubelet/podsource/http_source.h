// The static pod URL source (upstream pkg/kubelet/config/http.go): polls
// KubeletConfiguration.staticPodURL (--manifest-url) every httpCheckFrequency, sending
// staticPodURLHeader (--manifest-url-header), and delivers full snapshots to
// PodConfig::SetSource("http", ...).
//
// Per poll, as upstream's extractFromURL:
//   * transport error, body over 10 MiB, or a status other than 200 ("<url>: 500 Internal
//     Server Error"): an error, nothing delivered (the previous pods stay);
//   * an empty body: an empty snapshot is delivered (the source counts as seen; its pods are
//     removed) and "zero-length data received from <url>" is reported;
//   * a body identical to the last one decoded: nothing to do;
//   * otherwise the body is decoded as a Pod, else as a PodList (YAML or JSON), each pod
//     defaulted and validated with static pod defaults for source "http"
//     (api::DecodeStaticPodsHTTP); any failure is an error and nothing is delivered.
// Errors are logged as upstream: "Failed to read pods from URL" err=... for the first three
// consecutive failures, then once "Failed to read pods from URL. Dropping verbosity of this
// message to V(4)", then at V(4); "Successfully read pods from URL" after a failure streak.
// One deliberate difference: upstream keeps the last body after an empty response, so the same
// body coming back is ignored and its pods stay removed; here it is decoded and delivered again.
// See http_fetch.h for the HTTP client's behaviour (https, redirects, timeouts).
//
// Threading: Start() spawns one polling thread (first poll at once, then `check_frequency` after
// each poll ends, like wait.Until). The thread catches any exception at its boundary (logged
// with the URL) and keeps polling: no response can end it. Stop() interrupts an in-flight request,
// a wait on a full PodConfig queue or the sleep, and joins promptly. Ownership: PodConfig and Clock
// are borrowed and must outlive the HttpSource.
#ifndef KUBELET_KUBELET_PODSOURCE_HTTP_SOURCE_H_
#define KUBELET_KUBELET_PODSOURCE_HTTP_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "kubelet/podsource/http_fetch.h"
#include "kubelet/podsource/pod_config.h"

namespace kubelet::podsource {

struct HttpSourceOptions {
  std::string url;    // staticPodURL
  HttpHeader header;  // staticPodURLHeader
  std::string node_name;
  absl::Duration check_frequency = absl::Seconds(20);  // httpCheckFrequency
  absl::Duration timeout = absl::Seconds(10);          // upstream's http.Client timeout
  size_t max_body_bytes = 10 << 20;                    // upstream maxConfigLength
};

class HttpSource {
 public:
  // Registers the "http" source with `config`.
  HttpSource(HttpSourceOptions options, PodConfig& config, Clock& clock);
  ~HttpSource();
  HttpSource(const HttpSource&) = delete;
  HttpSource& operator=(const HttpSource&) = delete;

  absl::Status Start();
  void Stop();  // idempotent and final (no restart)

  // One poll (upstream extractFromURL); exposed for tests. Not to be called concurrently with
  // the polling thread.
  absl::Status ExtractFromURL();
  // Number of completed polls.
  uint64_t polls() const { return polls_.load(); }

 private:
  void Run();
  void Poll();

  const HttpSourceOptions options_;
  PodConfig& config_;
  Clock& clock_;
  HttpFetcher fetcher_;
  std::optional<std::string> last_data_;  // body last decoded
  int failure_logs_ = 0;
  std::atomic<bool> stopping_{false};
  absl::Notification stop_;
  std::thread thread_;
  bool started_ = false;
  std::atomic<uint64_t> polls_{0};
};

}  // namespace kubelet::podsource

#endif  // KUBELET_KUBELET_PODSOURCE_HTTP_SOURCE_H_
