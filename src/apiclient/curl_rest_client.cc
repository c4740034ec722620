// The libcurl implementation of RestClient (rest_client.h).
//
// Design: every call runs on the caller's thread. A call borrows a connection slot (an easy
// handle inside its own multi handle: the multi owns the slot's connection cache, so a live
// keep-alive connection, HTTP/2 or HTTP/1.1, survives between calls) from a small idle pool and
// drives it with curl_multi_poll, which a cancellation wakes at once with curl_multi_wakeup.
// DNS answers and TLS sessions are shared between slots through a share handle, so a new slot's
// handshake resumes the session. Concurrent calls use separate connections (multiplexing one
// HTTP/2 connection across threads would need one I/O thread owning every transfer; the kubelet's
// few concurrent calls do not justify it yet).
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "apiclient/rate_limiter.h"
#include "apiclient/rest_client.h"
#include "common/cancellation.h"
#include "common/log.h"
#include "common/strings.h"
#include "metrics/metrics.h"

namespace kubelet::apiclient {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// client-go's metrics as the kubelet registers them (component-base restclient adapters).
struct ClientMetrics {
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& latency;
};

ClientMetrics& Metrics() {
  static ClientMetrics* m = [] {
    prometheus::Registry& r = metrics::KubeletRegistry();
    return new ClientMetrics{
        prometheus::BuildCounter()
            .Name("rest_client_requests_total")
            .Help("[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.")
            .Register(r),
        prometheus::BuildHistogram()
            .Name("rest_client_request_duration_seconds")
            .Help("[ALPHA] Request latency in seconds. Broken down by verb, and host.")
            .Register(r)};
  }();
  return *m;
}

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {0.005, 0.025, 0.1, 0.25, 0.5,  1.0,
                                                            2.0,   4.0,   8.0, 15.0, 30.0, 60.0};
  return b;
}

absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view field) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return absl::NotFoundError(absl::StrCat(AV(field), ": cannot read \"", AV(path), "\""));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The pieces of "scheme://host[:port][/prefix]".
struct ParsedHost {
  std::string scheme;
  std::string authority;  // as written: Go's URL.Host, the metrics' host label
  std::string host;       // without port; brackets kept for IPv6
  std::string port;
  std::string prefix;  // "" or "/..." without a trailing slash
};

absl::StatusOr<ParsedHost> ParseHost(std::string_view url) {
  ParsedHost p;
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("host: \"", AV(url), "\" is not a URL"));
  }
  p.scheme = absl::AsciiStrToLower(AV(url.substr(0, sep)));
  if (p.scheme != "https" && p.scheme != "http") {
    return absl::InvalidArgumentError(
        absl::StrCat("host: \"", AV(url), "\": scheme must be http or https"));
  }
  std::string_view rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  p.authority = std::string(authority);
  if (slash != std::string_view::npos) {
    p.prefix = std::string(rest.substr(slash));
    while (!p.prefix.empty() && p.prefix.back() == '/') p.prefix.pop_back();
  }
  size_t colon = authority.rfind(':');
  size_t bracket = authority.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    p.host = std::string(authority.substr(0, colon));
    p.port = std::string(authority.substr(colon + 1));
  } else {
    p.host = std::string(authority);
    p.port = p.scheme == "https" ? "443" : "80";
  }
  if (p.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("host: \"", AV(url), "\" has no host"));
  }
  return p;
}

// One connection slot: the multi handle keeps the slot's connection cache alive between calls.
struct Slot {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
  uint64_t cert_generation = 0;  // of the dynamic client certificate its connection presents
  ~Slot() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }
};

// State of one transfer, touched only by the calling thread (curl callbacks run inside
// curl_multi_perform on it).
struct Transfer {
  CURL* easy = nullptr;
  Response response;
  bool watch = false;
  size_t max_body = 0;
  size_t max_frame = 0;
  const WatchEventFn* on_event = nullptr;
  std::string frame;  // a watch's undelivered bytes
  long code = 0;      // NOLINT(runtime/int): curl's type
  absl::Status error;
  bool stopped = false;  // on_event asked to stop

  // Delivers the complete lines buffered in `frame`; false on a bad frame.
  bool DeliverFrames(bool at_end) {
    size_t start = 0;
    while (true) {
      size_t nl = frame.find('\n', start);
      std::string_view line;
      if (nl == std::string::npos) {
        if (!at_end) break;
        line = std::string_view(frame).substr(start);
        start = frame.size();
      } else {
        line = std::string_view(frame).substr(start, nl - start);
        start = nl + 1;
      }
      line = SV(absl::StripAsciiWhitespace(AV(line)));
      if (!line.empty()) {
        absl::StatusOr<WatchEvent> ev = DecodeWatchFrame(line);
        if (!ev.ok()) {
          error = ev.status();
          return false;
        }
        if (!(*on_event)(*std::move(ev))) {
          stopped = true;
          return false;
        }
      }
      if (nl == std::string::npos) break;
    }
    frame.erase(0, start);
    if (frame.size() > max_frame) {
      error = absl::ResourceExhaustedError(
          absl::StrCat("watch frame larger than ", max_frame, " bytes"));
      return false;
    }
    return true;
  }

  static size_t OnWrite(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    size_t len = size * n;
    if (t->watch) {
      if (t->code == 0) curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->code);
      if (t->code == 200) {
        t->frame.append(data, len);
        return t->DeliverFrames(/*at_end=*/false) ? len : 0;
      }
    }
    if (t->response.body.size() + len > t->max_body) {
      t->error = absl::ResourceExhaustedError(
          absl::StrCat("response body larger than ", t->max_body, " bytes"));
      return 0;
    }
    t->response.body.append(data, len);
    return len;
  }

  static size_t OnHeader(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    size_t len = size * n;
    std::string_view line(data, len);
    if (line.rfind("HTTP/", 0) == 0) {
      t->response.headers.clear();  // a new response (after 100 Continue)
      return len;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return len;
    std::string name = absl::AsciiStrToLower(AV(line.substr(0, colon)));
    std::string value(absl::StripAsciiWhitespace(AV(line.substr(colon + 1))));
    t->response.headers.emplace(std::move(name), std::move(value));
    return len;
  }
};

class CurlRestClient final : public RestClient {
 public:
  CurlRestClient(RestConfig config, RestClientOptions options, ParsedHost host,
                 std::unique_ptr<Clock> own_clock)
      : config_(std::move(config)),
        options_(options),
        own_clock_(std::move(own_clock)),
        limiter_(options_.clock != nullptr ? *options_.clock : *own_clock_, config_.qps,
                 config_.burst) {
    host_label_ = host.authority;
    std::string url_host = host.host;
    if (!config_.tls_server_name.empty() && host.scheme == "https") {
      // Verify and send SNI for tls_server_name while connecting to the real host: the URL
      // names the server name, CONNECT_TO maps it to the address, Host keeps the real one.
      url_host = config_.tls_server_name;
      connect_to_ = curl_slist_append(nullptr, absl::StrCat(AV(url_host), ":", AV(host.port), ":",
                                                            AV(host.host), ":", AV(host.port))
                                                   .c_str());
      host_header_ = absl::StrCat("Host: ", AV(host_label_));
    }
    base_url_ =
        absl::StrCat(AV(host.scheme), "://", AV(url_host), ":", AV(host.port), AV(host.prefix));
    share_ = curl_share_init();
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &CurlRestClient::Lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &CurlRestClient::Unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }

  ~CurlRestClient() override {
    {
      absl::MutexLock lock(&pool_mu_);
      idle_.clear();  // slots reference the share handle
    }
    curl_share_cleanup(share_);
    if (connect_to_ != nullptr) curl_slist_free_all(connect_to_);
  }

  absl::StatusOr<Response> Do(const Request& request) override { return Call(request, nullptr); }

  absl::StatusOr<Response> Watch(const Request& request, const WatchEventFn& on_event) override {
    return Call(request, &on_event);
  }

 private:
  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<CurlRestClient*>(user)->share_mu_[data % kShareLocks].Lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<CurlRestClient*>(user)->share_mu_[data % kShareLocks].Unlock();
  }

  // A slot whose connection presents `generation`'s client certificate (or a new one); idle
  // slots of older generations are closed.
  std::unique_ptr<Slot> Acquire(uint64_t generation) {
    std::vector<std::unique_ptr<Slot>> stale;
    {
      absl::MutexLock lock(&pool_mu_);
      while (!idle_.empty()) {
        std::unique_ptr<Slot> s = std::move(idle_.back());
        idle_.pop_back();
        if (s->cert_generation == generation) return s;
        stale.push_back(std::move(s));
      }
    }
    auto s = std::make_unique<Slot>();
    s->easy = curl_easy_init();
    s->multi = curl_multi_init();
    if (s->easy == nullptr || s->multi == nullptr) return nullptr;
    s->cert_generation = generation;
    return s;
  }

  void Release(std::unique_ptr<Slot> s) {
    absl::MutexLock lock(&pool_mu_);
    if (static_cast<int>(idle_.size()) < options_.max_idle_connections) {
      idle_.push_back(std::move(s));
    }
  }

  // The bearer token, from the file (re-read at most once a minute, as client-go's cached file
  // token source) or the config.
  std::string Token() {
    if (config_.bearer_token_file.empty()) return config_.bearer_token;
    absl::MutexLock lock(&token_mu_);
    absl::Time now = absl::Now();
    if (token_read_ == absl::InfinitePast() || now - token_read_ > absl::Minutes(1)) {
      absl::StatusOr<std::string> t = ReadFile(config_.bearer_token_file, "bearer_token_file");
      if (t.ok()) {
        token_ = std::string(absl::StripAsciiWhitespace(AV(*t)));
        token_read_ = now;
      } else {
        KLOG_WARNING("Failed to read the bearer token file, using the last token", "err",
                     t.status());
        if (token_.empty()) token_ = config_.bearer_token;
      }
    }
    return token_;
  }

  absl::StatusOr<Response> Call(const Request& request, const WatchEventFn* on_event) {
    if (request.path.empty() || request.path[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("request path \"", AV(request.path), "\" must start with /"));
    }
    static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
    if (std::find(std::begin(kMethods), std::end(kMethods), request.method) == std::end(kMethods)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported method \"", AV(request.method), "\""));
    }
    const absl::Time start = absl::Now();
    absl::Duration waited;
    if (absl::Status s = limiter_.Wait(); !s.ok()) return s;
    waited = absl::Now() - start;
    if (waited > absl::Milliseconds(50)) {
      KLOG_V(3, "Waited before sending request due to client-side throttling", "delay", waited,
             "verb", request.method, "path", request.path);
    }

    ClientCertificate dynamic_cert;
    if (config_.client_certificate_source) dynamic_cert = config_.client_certificate_source();
    std::unique_ptr<Slot> slot = Acquire(dynamic_cert.generation);
    if (slot == nullptr) return absl::ResourceExhaustedError("cannot create a curl handle");
    Transfer t;
    t.easy = slot->easy;
    t.watch = on_event != nullptr;
    t.on_event = on_event;
    t.max_body = options_.max_body_bytes;
    t.max_frame = options_.max_frame_bytes;
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    absl::Status setup = Setup(slot->easy, request, dynamic_cert, &t, errbuf, &headers);
    absl::StatusOr<Response> result = setup.ok() ? Run(*slot, &t, errbuf) : setup;
    curl_easy_setopt(slot->easy, CURLOPT_HTTPHEADER, nullptr);
    curl_slist_free_all(headers);

    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    ClientMetrics& m = Metrics();
    // As client-go: a watch counts as a request, but its (stream) duration is not a latency.
    if (!t.watch) {
      m.latency.Add({{"host", host_label_}, {"verb", request.method}}, LatencyBuckets())
          .Observe(seconds);
    }
    m.requests
        .Add({{"code", result.ok() ? std::to_string(result->code) : std::string("<error>")},
              {"host", host_label_},
              {"method", request.method}})
        .Increment();
    Release(std::move(slot));
    return result;
  }

  absl::Status Setup(CURL* e, const Request& r, const ClientCertificate& dynamic_cert, Transfer* t,
                     char* errbuf, curl_slist** headers) {
    curl_easy_reset(e);
    std::string url = base_url_ + r.path;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());  // curl copies strings
    curl_easy_setopt(e, CURLOPT_SHARE, share_);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     options_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(absl::ToInt64Milliseconds(options_.connect_timeout)));
    absl::Duration timeout = r.timeout;
    if (timeout <= absl::ZeroDuration() && !t->watch) timeout = config_.timeout;
    if (timeout > absl::ZeroDuration()) {
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                       static_cast<long>(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout))));
    }
    // A silently dead connection under a watch is found by TCP keep-alive probes (client-go
    // uses HTTP/2 pings after 30 s idle): 30 s idle, then a probe every 15 s.
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 15L);
    if (!t->watch) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    if (connect_to_ != nullptr) curl_easy_setopt(e, CURLOPT_CONNECT_TO, connect_to_);

    // TLS.
    if (config_.insecure) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!config_.ca_pem.empty()) {
      curl_blob blob{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(),
                     CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    } else if (!config_.ca_file.empty()) {
      curl_easy_setopt(e, CURLOPT_CAINFO, config_.ca_file.c_str());
    }
    if (config_.client_certificate_source) {
      if (!dynamic_cert.cert_pem.empty() && !dynamic_cert.key_pem.empty()) {
        curl_blob cert{const_cast<char*>(dynamic_cert.cert_pem.data()),
                       dynamic_cert.cert_pem.size(), CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        curl_blob key{const_cast<char*>(dynamic_cert.key_pem.data()), dynamic_cert.key_pem.size(),
                      CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
      }
    } else if (!config_.client_cert_pem.empty()) {
      curl_blob blob{const_cast<char*>(config_.client_cert_pem.data()),
                     config_.client_cert_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!config_.client_cert_file.empty()) {
      curl_easy_setopt(e, CURLOPT_SSLCERT, config_.client_cert_file.c_str());
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (config_.client_certificate_source) {
      // set above with the certificate
    } else if (!config_.client_key_pem.empty()) {
      curl_blob blob{const_cast<char*>(config_.client_key_pem.data()),
                     config_.client_key_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!config_.client_key_file.empty()) {
      curl_easy_setopt(e, CURLOPT_SSLKEY, config_.client_key_file.c_str());
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }

    // Headers.
    curl_slist* h = nullptr;
    h = curl_slist_append(h, "Accept: application/json, */*");
    h = curl_slist_append(h, "Expect:");  // no 100-continue round trip for bodies
    if (!host_header_.empty()) h = curl_slist_append(h, host_header_.c_str());
    std::string token = Token();
    if (!token.empty())
      h = curl_slist_append(h, absl::StrCat("Authorization: Bearer ", AV(token)).c_str());
    const bool has_body = r.method != "GET" && r.method != "DELETE" ? true : !r.body.empty();
    if (has_body) {
      const std::string& ct = r.content_type.empty() ? config_.content_type : r.content_type;
      h = curl_slist_append(h, absl::StrCat("Content-Type: ", AV(ct)).c_str());
    }
    for (const auto& [name, value] : r.headers) {
      h = curl_slist_append(h, absl::StrCat(AV(name), ": ", AV(value)).c_str());
    }
    *headers = h;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    if (!config_.user_agent.empty())
      curl_easy_setopt(e, CURLOPT_USERAGENT, config_.user_agent.c_str());

    // Method and body.
    if (r.method == "GET" && r.body.empty()) {
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else if (r.method == "GET" || r.method == "POST" || r.method == "PUT" ||
               r.method == "PATCH" || r.method == "DELETE") {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
      if (has_body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());  // not copied: lives past Run
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unsupported method \"", AV(r.method), "\""));
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::OnWrite);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
    return absl::OkStatus();
  }

  absl::StatusOr<Response> Run(Slot& slot, Transfer* t, const char* errbuf) {
    curl_multi_add_handle(slot.multi, slot.easy);
    std::atomic<bool> cancelled{false};
    CURLcode result = CURLE_OK;
    bool done = false;
    {
      CURLM* multi = slot.multi;
      OnCancel on_cancel([&cancelled, multi] {
        cancelled.store(true, std::memory_order_release);
        curl_multi_wakeup(multi);
      });
      if (on_cancel.cancelled()) cancelled.store(true);
      while (!cancelled.load(std::memory_order_acquire)) {
        int running = 0;
        CURLMcode mc = curl_multi_perform(slot.multi, &running);
        if (mc != CURLM_OK) {
          curl_multi_remove_handle(slot.multi, slot.easy);
          return absl::InternalError(absl::StrCat("curl: ", curl_multi_strerror(mc)));
        }
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(slot.multi, &queued)) {
          if (msg->msg == CURLMSG_DONE) {
            result = msg->data.result;
            done = true;
          }
        }
        if (done) break;
        curl_multi_poll(slot.multi, nullptr, 0, 1000, nullptr);
      }
    }
    curl_multi_remove_handle(slot.multi, slot.easy);
    if (!done) return absl::CancelledError("request cancelled");

    long code = 0;  // NOLINT(runtime/int)
    curl_easy_getinfo(slot.easy, CURLINFO_RESPONSE_CODE, &code);
    t->response.code = static_cast<int>(code);
    if (t->watch && code == 200) {
      if (result == CURLE_OK) {
        if (!t->DeliverFrames(/*at_end=*/true) && !t->stopped) return t->error;
        return std::move(t->response);
      }
      if (t->stopped) return std::move(t->response);
      if (!t->error.ok()) return t->error;
      // The stream was cut (timeout, reset, HTTP/2 stream error): the watch ended.
      KLOG_V(4, "Watch stream ended", "reason",
             std::string(errbuf[0] ? errbuf : curl_easy_strerror(result)));
      return std::move(t->response);
    }
    if (result == CURLE_OK) return std::move(t->response);
    if (!t->error.ok()) return t->error;
    std::string detail = absl::StrCat(curl_easy_strerror(result),
                                      errbuf[0] ? absl::StrCat(": ", errbuf) : std::string());
    if (result == CURLE_OPERATION_TIMEDOUT) {
      return absl::DeadlineExceededError(absl::StrCat("request timed out: ", AV(detail)));
    }
    return absl::UnavailableError(absl::StrCat(AV(base_url_), ": ", AV(detail)));
  }

  static constexpr int kShareLocks = CURL_LOCK_DATA_LAST;

  const RestConfig config_;
  const RestClientOptions options_;
  std::unique_ptr<Clock> own_clock_;
  TokenBucket limiter_;
  std::string base_url_;
  std::string host_label_;
  std::string host_header_;
  curl_slist* connect_to_ = nullptr;
  CURLSH* share_ = nullptr;
  absl::Mutex share_mu_[kShareLocks];

  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<Slot>> idle_ ABSL_GUARDED_BY(pool_mu_);

  absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
  absl::Time token_read_ ABSL_GUARDED_BY(token_mu_) = absl::InfinitePast();
};

}  // namespace

absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(const RestConfig& given,
                                                          RestClientOptions options) {
  GlobalInit();
  absl::StatusOr<ParsedHost> host = ParseHost(given.host);
  if (!host.ok()) return host.status();
  RestConfig config = given;
  if (config.client_certificate_source) {
    // The source replaces the static pair (whose files may not exist yet).
    config.client_cert_pem.clear();
    config.client_cert_file.clear();
    config.client_key_pem.clear();
    config.client_key_file.clear();
  }
  // Fail early, naming the file, rather than on the first request.
  const std::pair<const std::string*, const char*> files[] = {
      {&config.ca_file, "ca_file"},
      {&config.client_cert_file, "client_cert_file"},
      {&config.client_key_file, "client_key_file"},
      {&config.bearer_token_file, "bearer_token_file"}};
  for (const auto& [path, field] : files) {
    if (path->empty()) continue;
    if (absl::StatusOr<std::string> s = ReadFile(*path, field); !s.ok()) return s.status();
  }
  const bool has_cert = !config.client_cert_pem.empty() || !config.client_cert_file.empty();
  const bool has_key = !config.client_key_pem.empty() || !config.client_key_file.empty();
  if (has_cert != has_key) {
    return absl::InvalidArgumentError(
        "client_cert and client_key: a client certificate needs its key and the reverse");
  }
  std::unique_ptr<Clock> own_clock;
  if (options.clock == nullptr) own_clock = std::make_unique<RealClock>();
  return std::make_unique<CurlRestClient>(std::move(config), options, *std::move(host),
                                          std::move(own_clock));
}

}  // namespace kubelet::apiclient
