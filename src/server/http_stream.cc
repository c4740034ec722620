// Streamed responses (HttpResponse::stream) of a connection (Session, see
// http_server_internal.h): the producer runs on a detached worker thread (counted in the
// server's StreamTracker, at most max_streams) and writes through a StreamWriter into the shared
// StreamState; the I/O thread flushes that to the socket (chunked, with backpressure), watches
// for the client hanging up, and closes the connection at the end.
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "server/http_server_internal.h"

namespace kubelet::server::internal {
namespace {

class StreamWriter : public ResponseStream {
 public:
  explicit StreamWriter(std::shared_ptr<StreamState> s) : s_(std::move(s)) {}

  bool Write(std::string_view data) override {
    if (data.empty()) return !Gone();
    absl::MutexLock l(&s_->mu);
    if (s_->closed || s_->gone || s_->failed || s_->finished) return false;
    QueueHead();
    std::string chunk = absl::StrCat(absl::Hex(data.size()), "\r\n");
    chunk.append(data.data(), data.size());
    chunk.append("\r\n");
    s_->backlog += chunk.size();
    s_->pending += chunk;
    s_->Kick();
    while (s_->backlog > s_->limit && !s_->closed && !s_->gone) s_->cv.Wait(&s_->mu);
    return !s_->closed && !s_->gone;
  }

  void Fail(int status, std::string message) override {
    message.push_back('\n');
    Respond(status,
            {{"Content-Type", "text/plain; charset=utf-8"}, {"X-Content-Type-Options", "nosniff"}},
            std::move(message));
  }

  bool Respond(int status, std::vector<std::pair<std::string, std::string>> headers,
               std::string body) override {
    absl::MutexLock l(&s_->mu);
    if (s_->head_queued || s_->finished) return false;
    std::string out = BuildHead(status, headers, body.size());
    out += body;
    s_->head_queued = true;
    s_->failed = true;  // complete: no chunked end follows
    s_->backlog += out.size();
    s_->pending += out;
    s_->Kick();
    return true;
  }

  bool SetHead(int status, std::vector<std::pair<std::string, std::string>> headers) override {
    absl::MutexLock l(&s_->mu);
    if (s_->head_queued || s_->finished) return false;
    s_->head = BuildHead(status, headers, std::nullopt);
    return true;
  }

  bool Gone() const override {
    absl::MutexLock l(&s_->mu);
    return s_->closed || s_->gone;
  }

  // The producer returned: end the body.
  void Finish() {
    absl::MutexLock l(&s_->mu);
    QueueHead();
    if (!s_->failed) {
      s_->pending += "0\r\n\r\n";
      s_->backlog += 5;
    }
    s_->finished = true;
    s_->Kick();
  }

 private:
  void QueueHead() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s_->mu) {
    if (s_->head_queued) return;
    s_->head_queued = true;
    s_->pending += s_->head;
    s_->backlog += s_->head.size();
  }

  std::shared_ptr<StreamState> s_;
};

}  // namespace

template <class Stream>
void Session<Stream>::Flush() {
  if (writing_ || !stream_state_) return;
  std::string out;
  bool last = false;
  {
    absl::MutexLock l(&stream_state_->mu);
    stream_state_->flush_posted = false;
    out.swap(stream_state_->pending);
    last = stream_state_->finished || stream_state_->failed;
  }
  if (out.empty()) {
    if (last) EndStream();
    return;
  }
  writing_ = true;
  Tcp().expires_after(ToChrono(impl_->options.write_timeout));
  auto buf = std::make_shared<std::string>(std::move(out));
  asio::async_write(stream_, asio::buffer(*buf),
                    [self = this->shared_from_this(), buf](beast::error_code ec, size_t) {
                      self->writing_ = false;
                      bool finished;
                      {
                        absl::MutexLock l(&self->stream_state_->mu);
                        self->stream_state_->backlog -= buf->size();
                        if (ec) self->stream_state_->gone = true;
                        finished = self->stream_state_->finished && !ec &&
                                   self->stream_state_->pending.empty();
                        self->stream_state_->cv.SignalAll();
                      }
                      if (ec || finished) {
                        self->EndStream();
                        return;
                      }
                      self->Flush();
                    });
}

template <class Stream>
void Session<Stream>::StartStream(HttpResponse out) {
  std::shared_ptr<StreamTracker> tracker = impl_->streams;
  auto state = std::make_shared<StreamState>();
  {
    absl::MutexLock l(&tracker->mu);
    if (tracker->active >= impl_->options.max_streams) {
      state.reset();
    } else {
      ++tracker->active;
      std::erase_if(tracker->live, [](const auto& w) { return w.expired(); });
      tracker->live.push_back(state);
    }
  }
  if (!state) {
    std::string body = "too many streaming requests\n";
    auto buf = std::make_shared<std::string>(
        BuildHead(503, {{"X-Content-Type-Options", "nosniff"}}, body.size()) + body);
    Tcp().expires_after(ToChrono(impl_->options.write_timeout));
    asio::async_write(
        stream_, asio::buffer(*buf),
        [self = this->shared_from_this(), buf](beast::error_code, size_t) { self->Close(); });
    return;
  }
  {
    absl::MutexLock l(&state->mu);
    state->head = BuildHead(out.status, out.headers, std::nullopt);
  }
  state->limit = impl_->options.stream_buffer_bytes;
  state->executor = stream_.get_executor();
  state->sink = std::static_pointer_cast<StreamSink>(this->shared_from_this());
  stream_state_ = state;
  try {
    std::thread([state, tracker, fn = std::move(out.stream), name = impl_->options.name,
                 path = request_.path] {
      StreamWriter writer(state);
      try {
        fn(writer);
      } catch (const std::exception& e) {
        KLOG_ERROR(absl::InternalError(e.what()), "HTTP streaming handler failed", "server", name,
                   "path", path);
        writer.Fail(500, "Internal Server Error");
      } catch (...) {
        KLOG_ERROR(absl::InternalError("unknown exception"), "HTTP streaming handler failed",
                   "server", name, "path", path);
        writer.Fail(500, "Internal Server Error");
      }
      writer.Finish();
      absl::MutexLock l(&tracker->mu);
      --tracker->active;
    }).detach();
  } catch (const std::system_error& e) {
    // No thread could be made (resource limits): answer 503 instead of dying.
    KLOG_ERROR(absl::ResourceExhaustedError(e.what()), "Cannot start a streaming worker", "server",
               impl_->options.name);
    {
      absl::MutexLock l(&tracker->mu);
      --tracker->active;
    }
    stream_state_.reset();
    HttpResponse busy;
    busy.Error(503, "too many streaming requests");
    Respond(std::move(busy), /*keep_alive=*/false);
    return;
  }
  WatchForHangUp();
}

template <class Stream>
void Session<Stream>::WatchForHangUp() {
  Tcp().expires_never();
  stream_.async_read_some(asio::buffer(hangup_buf_),
                          [self = this->shared_from_this()](beast::error_code ec, size_t) {
                            if (!ec) {
                              self->WatchForHangUp();  // pipelined bytes: ignored
                              return;
                            }
                            {
                              absl::MutexLock l(&self->stream_state_->mu);
                              self->stream_state_->gone = true;
                              self->stream_state_->cv.SignalAll();
                            }
                            if (!self->writing_) self->Close();
                          });
}

template <class Stream>
void Session<Stream>::EndStream() {
  {
    absl::MutexLock l(&stream_state_->mu);
    stream_state_->gone = true;
    stream_state_->cv.SignalAll();
  }
  Close();
}

// The members defined here, for both kinds of connection (see http_server_internal.h).
template void Session<PlainStream>::Flush();
template void Session<PlainStream>::StartStream(HttpResponse);
template void Session<PlainStream>::WatchForHangUp();
template void Session<PlainStream>::EndStream();
template void Session<TlsStream>::Flush();
template void Session<TlsStream>::StartStream(HttpResponse);
template void Session<TlsStream>::WatchForHangUp();
template void Session<TlsStream>::EndStream();

}  // namespace kubelet::server::internal
