// The kubelet API's /logs/ endpoint (upstream v1.28 server.go InstallSystemLogHandler and
// kubelet.go's logServer): Go's file server over the log directory, and with the node log query
// on, queries answered from journald or the services' files.
#include <zlib.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/pod_validation.h"
#include "server/file_server.h"
#include "server/kubelet_server.h"

namespace kubelet::server {
namespace {

constexpr std::string_view kPrefix = "/logs/";

// gzip.NewWriterLevel(w, gzip.BestSpeed) over the response: compressed as data comes, the end
// written by Close.
class GzipWriter {
 public:
  explicit GzipWriter(ResponseStream& out) : out_(out) {
    ok_ = ::deflateInit2(&z_, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~GzipWriter() {
    if (ok_) ::deflateEnd(&z_);
  }
  GzipWriter(const GzipWriter&) = delete;
  GzipWriter& operator=(const GzipWriter&) = delete;

  bool ok() const { return ok_; }
  bool Write(std::string_view data) { return Deflate(data, Z_NO_FLUSH); }
  bool Close() { return Deflate({}, Z_FINISH); }

 private:
  bool Deflate(std::string_view data, int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z_.avail_in = static_cast<uInt>(data.size());
    char buf[32 << 10];
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(buf);
      z_.avail_out = sizeof(buf);
      const int rc = ::deflate(&z_, flush);
      const size_t produced = sizeof(buf) - z_.avail_out;
      if (produced > 0 && !out_.Write(std::string_view(buf, produced))) return false;
      if (rc == Z_STREAM_END || rc == Z_STREAM_ERROR) return rc != Z_STREAM_ERROR;
      if (rc == Z_BUF_ERROR && produced == 0) return true;  // nothing more to do for now
      if (z_.avail_in == 0 && z_.avail_out != 0 && flush == Z_NO_FLUSH) return true;
    }
  }

  ResponseStream& out_;
  z_stream z_{};
  bool ok_ = false;
};

struct LogsState {
  NodeLogsOptions options;
  std::shared_ptr<const Clock> clock;
  std::shared_ptr<nodelogs::CommandRunner> runner;
};

// journalServer.ServeHTTP for a validated query with services.
void ServeJournal(const LogsState& state, const nodelogs::NodeLogQuery& query,
                  const std::string& accept_encoding, ResponseStream& out) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/plain;charset=UTF-8"}};
  const bool gzip = accept_encoding == "gzip";
  if (gzip) headers.emplace_back("Content-Encoding", "gzip");
  out.SetHead(200, std::move(headers));
  nodelogs::CopyOptions copy;
  copy.log_dir = state.options.log_dir;
  copy.journalctl = state.options.journalctl;
  if (!gzip) {
    nodelogs::CopyNodeLogs(query, copy, *state.runner, *state.clock,
                           [&out](std::string_view data) { return out.Write(data); });
    return;
  }
  GzipWriter gz(out);
  if (!gz.ok()) {
    out.Write("\nfailed to get gzip writer: zlib initialisation failed\n");
    return;
  }
  nodelogs::CopyNodeLogs(query, copy, *state.runner, *state.clock,
                         [&gz](std::string_view data) { return gz.Write(data); });
  gz.Close();
}

}  // namespace

NodeLogsOptions NodeLogsOptionsFrom(const KubeletServerOptions& o) {
  NodeLogsOptions logs;
  logs.enable_system_log_handler = o.enable_system_log_handler;
  logs.enable_query = o.node_log_query_gate && o.enable_system_log_query;
  return logs;
}

void InstallLogsHandler(HttpServer& server, NodeLogsOptions options) {
  if (!options.enable_system_log_handler) {
    server.Handle(std::string(kPrefix), [](const HttpRequest&, HttpResponse* res) {
      res->Error(405, "logs endpoint is disabled.");
    });
    return;
  }
  auto state = std::make_shared<LogsState>();
  state->clock = options.clock ? options.clock : std::make_shared<const RealClock>();
  state->runner =
      options.runner ? options.runner : std::make_shared<nodelogs::ProcessRunner>(*state->clock);
  state->options = std::move(options);
  server.Handle(
      std::string(kPrefix),
      [state](const HttpRequest& req, HttpResponse* res) {
        // http.StripPrefix("/logs/", ...): the file server sees the rest.
        std::string path = req.path.substr(kPrefix.size());
        if (!state->options.enable_query) {
          res->stream = [state, req, path](ResponseStream& out) {
            ServeDirectoryFile(state->options.log_dir, path, req, out);
          };
          return;
        }
        nodelogs::ParsedQuery parsed = nodelogs::ParseNodeLogQuery(req.query);
        if (!parsed.errors.empty()) {
          res->Error(400, api::AggregateErrors(parsed.errors));
          return;
        }
        if (!parsed.query) {
          res->stream = [state, req, path](ResponseStream& out) {
            ServeDirectoryFile(state->options.log_dir, path, req, out);
          };
          return;
        }
        if (!path.empty() && path != "/") {
          res->Error(406, "path not allowed in query mode");
          return;
        }
        // Validation looks at the disk (a file query must exist): on the worker too.
        res->stream = [state, req, query = *std::move(parsed.query)](ResponseStream& out) {
          api::FieldErrorList errs = nodelogs::ValidateNodeLogQuery(query, state->options.log_dir);
          if (!errs.empty()) {
            out.Fail(406, api::AggregateErrors(errs));
            return;
          }
          if (!query.services.empty()) {
            ServeJournal(*state, query, req.Header("accept-encoding"), out);
            return;
          }
          // One file (validation saw to it): served as that path.
          ServeDirectoryFile(state->options.log_dir, query.files.front(), req, out);
        };
      },
      {"GET"});
}

}  // namespace kubelet::server
