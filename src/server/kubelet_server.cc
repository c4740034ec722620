#include "server/kubelet_server.h"

#include <cctype>
#include <cstdint>
#include <functional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "api/pod_codec.h"
#include "common/log.h"
#include "common/strings.h"
#include "metrics/metrics.h"
#include "server/healthz.h"

namespace kubelet::server {
namespace {

// Go's strconv.ParseInt(s, 10, 32), with its error text.
absl::StatusOr<int> ParseGoInt32(const std::string& s) {
  const std::string quoted = absl::StrCat("strconv.ParseInt: parsing ", log::Quote(s), ": ");
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return absl::InvalidArgumentError(quoted + "invalid syntax");
  int64_t v = 0;
  bool range = false;
  for (; i < s.size(); ++i) {
    if (s[i] == '_' || s[i] < '0' || s[i] > '9') {
      return absl::InvalidArgumentError(quoted + "invalid syntax");
    }
    if (!range) v = v * 10 + (s[i] - '0');
    if (v > (int64_t{1} << 31)) range = true;
  }
  if (negative) v = -v;
  if (range || v > INT32_MAX || v < INT32_MIN) {
    return absl::OutOfRangeError(quoted + "value out of range");
  }
  return static_cast<int>(v);
}

constexpr char kJson[] = "application/json";

void WriteJson(HttpResponse* res, std::string body) {
  res->status = 200;
  res->SetHeader("Content-Type", kJson);
  res->body = std::move(body);
}

// go-restful's WriteError: the text as it is, no newline.
void RestfulError(HttpResponse* res, int status, std::string text) {
  res->status = status;
  res->SetHeader("Content-Type", "text/plain; charset=utf-8");
  res->body = std::move(text);
}

std::optional<std::string> First(const HttpRequest& req, const std::string& key) {
  auto it = req.query.find(key);
  if (it == req.query.end()) return std::nullopt;
  return it->second;
}

// "1" is true for the remotecommand options (what the API server sends).
bool QueryTrue(const HttpRequest& req, const std::string& key) {
  std::optional<std::string> v = First(req, key);
  return v.has_value() && *v == "1";
}

// upstream streaming.WriteError: NotFound -> 404, ResourceExhausted -> 429, else 500; the
// error's text as the body.
void StreamingError(HttpResponse* res, const absl::Status& st) {
  int code = 500;
  if (absl::IsNotFound(st)) code = 404;
  if (absl::IsResourceExhausted(st)) code = 429;
  RestfulError(res, code, std::string(st.message()));
}

bool IsUpgradeRequest(const HttpRequest& req) {
  if (req.Header("upgrade").empty()) return false;
  for (const auto& [k, v] : req.headers) {
    if (k != "connection") continue;
    for (absl::string_view token : absl::StrSplit(AV(v), ',')) {
      if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(token), "upgrade")) return true;
    }
  }
  return false;
}

// "http://127.0.0.1:35215/exec/abc?x" -> the tunnel's target; an error for anything else.
absl::StatusOr<TunnelTarget> ParseStreamingUrl(const std::string& url) {
  absl::string_view rest = AV(url);
  if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InternalError(absl::StrCat("unsupported streaming URL ", url));
  }
  const size_t slash = rest.find('/');
  absl::string_view hostport = rest.substr(0, slash);
  TunnelTarget t;
  t.target = slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  size_t colon = hostport.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InternalError(absl::StrCat("streaming URL without a port: ", url));
  }
  absl::string_view host = hostport.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  uint32_t port = 0;
  if (!absl::SimpleAtoi(hostport.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return absl::InternalError(absl::StrCat("bad port in streaming URL ", url));
  }
  t.host = std::string(host);
  t.port = static_cast<uint16_t>(port);
  return t;
}

// The path's segments after `prefix` ("/exec/"); empty segments are refused.
std::optional<std::vector<std::string>> Segments(const std::string& path,
                                                 absl::string_view prefix) {
  absl::string_view rest = AV(path);
  if (!absl::ConsumePrefix(&rest, prefix)) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(rest, '/');
  for (const std::string& p : parts) {
    if (p.empty()) return std::nullopt;
  }
  return parts;
}

// {ns}/{pod}/{container} or {ns}/{pod}/{uid}/{container} after `prefix`.
std::optional<StreamRequest> ContainerPath(const std::string& path, absl::string_view prefix) {
  std::optional<std::vector<std::string>> parts = Segments(path, prefix);
  if (!parts.has_value() || parts->size() < 3 || parts->size() > 4) return std::nullopt;
  StreamRequest r;
  r.namespace_ = (*parts)[0];
  r.pod = (*parts)[1];
  if (parts->size() == 4) r.uid = (*parts)[2];
  r.container = parts->back();
  return r;
}

// Proxies the request to the URL `get` returns (on the tunnel's worker), as upstream's
// proxyStream with upgradeRequired.
void ProxyStream(const HttpRequest& req, HttpResponse* res,
                 std::function<absl::StatusOr<std::string>()> get) {
  const bool upgrade = IsUpgradeRequest(req);
  res->tunnel = [get = std::move(get),
                 upgrade](HttpResponse* error) -> std::optional<TunnelTarget> {
    absl::StatusOr<std::string> url = get();
    if (!url.ok()) {
      StreamingError(error, url.status());
      return std::nullopt;
    }
    if (!upgrade) {
      error->Error(500, "Upgrade request required");
      return std::nullopt;
    }
    absl::StatusOr<TunnelTarget> target = ParseStreamingUrl(*url);
    if (!target.ok()) {
      error->Error(500, std::string(target.status().message()));
      return std::nullopt;
    }
    return *std::move(target);
  };
}

// metav1's Convert_Slice_string_To_bool: absent, "false" or "0" are false; anything else true.
bool QueryBool(const HttpRequest& req, const std::string& key) {
  auto v = First(req, key);
  if (!v) return false;
  std::string lower = *v;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !(lower == "false" || lower == "0");
}

// strconv.ParseInt(s, 10, 64).
bool ParseInt64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!(std::isdigit(static_cast<unsigned char>(c)) || (i == 0 && (c == '+' || c == '-')))) {
      return false;
    }
  }
  return absl::SimpleAtoi(AV(s), out);
}

void RunDeferred(HttpResponse* res, std::function<void(ResponseStream&)> fn) {
  res->stream = std::move(fn);
}

// `blocking`: the registry's scrape-time collectors call the runtime or walk the disk, so the
// scrape runs on a streaming worker instead of the I/O thread.
void MetricsHandler(HttpServer& server, const std::string& path,
                    prometheus::Registry& (*registry)(), bool blocking) {
  server.Handle(path, [registry, blocking](const HttpRequest&, HttpResponse* res) {
    res->status = 200;
    res->SetHeader("Content-Type", metrics::kTextContentType);
    if (!blocking) {
      res->body = metrics::Serialize(registry());
      return;
    }
    RunDeferred(res,
                [registry](ResponseStream& out) { out.Write(metrics::Serialize(registry())); });
  });
}

bool HasContainer(const api::Pod& pod, const std::string& name) {
  for (const auto& c : pod.spec.containers) {
    if (c.name == name) return true;
  }
  for (const auto& c : pod.spec.init_containers) {
    if (c.name == name) return true;
  }
  for (const auto& c : pod.spec.ephemeral_containers) {
    if (c.common.name == name) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<logs::LogOptions> ParseContainerLogOptions(const HttpRequest& req,
                                                          int* http_status) {
  auto decode_error = [http_status] {
    *http_status = 400;
    return absl::InvalidArgumentError("{\"message\": \"Unable to decode query.\"}");
  };
  logs::LogOptions o;
  o.follow = QueryBool(req, "follow");
  o.previous = QueryBool(req, "previous");
  o.timestamps = QueryBool(req, "timestamps");
  std::optional<std::string> tail = First(req, "tailLines");
  // Backwards compatibility: "tail" overrides tailLines; "all" means no limit.
  if (auto legacy = First(req, "tail"); legacy && !legacy->empty()) {
    tail = *legacy == "all" ? std::nullopt : legacy;
  }
  int64_t v = 0;
  if (tail) {
    if (!ParseInt64(*tail, &v)) return decode_error();
    o.tail_lines = v;
  }
  if (auto s = First(req, "limitBytes")) {
    if (!ParseInt64(*s, &v)) return decode_error();
    o.limit_bytes = v;
  }
  if (auto s = First(req, "sinceSeconds")) {
    if (!ParseInt64(*s, &v)) return decode_error();
    o.since_seconds = v;
  }
  if (auto s = First(req, "sinceTime"); s && !s->empty() && *s != "null") {
    absl::Time t;
    std::string err;
    if (!absl::ParseTime(absl::RFC3339_full, AV(*s), &t, &err)) return decode_error();
    o.since_time = t;
  }
  bool invalid = (o.tail_lines && *o.tail_lines < 0) || (o.limit_bytes && *o.limit_bytes < 1) ||
                 (o.since_seconds && o.since_time) || (o.since_seconds && *o.since_seconds < 1);
  if (invalid) {
    *http_status = 422;
    return absl::InvalidArgumentError("{\"message\": \"Invalid request.\"}");
  }
  return o;
}

void InstallDefaultHandlers(HttpServer& server, std::shared_ptr<HostInterface> host) {
  InstallHealthz(server, {{"log", [] { return absl::OkStatus(); }},
                          {"syncloop", [host] { return host->SyncLoopHealthy(); }}});

  server.Handle("/pods",
                [host](const HttpRequest&, HttpResponse* res) {
                  WriteJson(res, api::EncodePodListJson(host->GetPods()));
                },
                {"GET"});

  server.Handle("/stats/summary",
                [host](const HttpRequest& req, HttpResponse* res) {
                  std::vector<std::string> only = req.QueryValues("only_cpu_and_memory");
                  bool only_cpu_and_memory = only.size() == 1 && only[0] == "true";
                  res->SetHeader("Content-Type", kJson);
                  RunDeferred(res, [host, only_cpu_and_memory](ResponseStream& out) {
                    stats::StatsProvider* provider = host->GetStatsProvider();
                    if (provider == nullptr) {
                      out.Fail(503, "stats provider not available");
                      return;
                    }
                    absl::StatusOr<std::string> summary =
                        provider->SummaryJson(only_cpu_and_memory);
                    if (!summary.ok()) {
                      KLOG_ERROR(summary.status(), "HTTP InternalServerError serving", "request",
                                 "/stats/summary");
                      out.Fail(500, absl::StrCat("Internal Error: ", summary.status().message()));
                      return;
                    }
                    out.Write(*summary);
                  });
                },
                {"GET", "POST"});

  MetricsHandler(server, "/metrics", &metrics::KubeletRegistry, /*blocking=*/false);
  MetricsHandler(server, "/metrics/probes", &metrics::ProbesRegistry, /*blocking=*/false);
  MetricsHandler(server, "/metrics/resource", &metrics::ResourceRegistry, /*blocking=*/true);
  MetricsHandler(server, "/metrics/cadvisor", &metrics::CadvisorRegistry, /*blocking=*/true);
}

void InstallDebuggingHandlers(HttpServer& server, std::shared_ptr<HostInterface> host,
                              NodeLogsOptions logs) {
  // As upstream, logs are served only with the debugging handlers.
  InstallLogsHandler(server, std::move(logs));
  // exec / attach: {ns}/{pod}/{container} or {ns}/{pod}/{uid}/{container}.
  for (const char* kind : {"exec", "attach"}) {
    const std::string prefix = absl::StrCat("/", kind, "/");
    const bool exec = std::string_view(kind) == "exec";
    server.Handle(
        prefix,
        [host, prefix, exec](const HttpRequest& req, HttpResponse* res) {
          std::optional<StreamRequest> path = ContainerPath(req.path, prefix);
          if (!path.has_value()) return RestfulError(res, 404, "404: Page Not Found");
          StreamRequest r = *std::move(path);
          r.command = req.QueryValues("command");
          r.tty = QueryTrue(req, "tty");
          // The API server's names (core/v1 ExecStdinParam, ...).
          r.stdin_ = QueryTrue(req, "input");
          r.stdout_ = QueryTrue(req, "output");
          r.stderr_ = QueryTrue(req, "error");
          // upstream: a TTY has no separate stderr.
          if (r.tty) r.stderr_ = false;
          if (!r.stdin_ && !r.stdout_ && !r.stderr_) {
            return RestfulError(res, 400, "you must specify at least 1 of stdin, stdout, stderr");
          }
          ProxyStream(req, res,
                      [host, r, exec] { return exec ? host->GetExec(r) : host->GetAttach(r); });
        },
        {"GET", "POST"});
  }
  server.Handle(
      "/portForward/",
      [host](const HttpRequest& req, HttpResponse* res) {
        std::optional<std::vector<std::string>> parts = Segments(req.path, "/portForward/");
        if (!parts.has_value() || parts->size() < 2 || parts->size() > 3) {
          return RestfulError(res, 404, "404: Page Not Found");
        }
        std::vector<int32_t> ports;
        for (const std::string& v : req.QueryValues("ports")) {
          for (absl::string_view p : absl::StrSplit(AV(v), ',')) {
            uint32_t port = 0;
            if (!absl::SimpleAtoi(p, &port) || port == 0 || port > 65535) {
              return RestfulError(res, 400, absl::StrCat("unable to parse \"", p, "\" as a port"));
            }
            ports.push_back(static_cast<int32_t>(port));
          }
        }
        const std::string ns = (*parts)[0], pod = (*parts)[1];
        const std::string uid = parts->size() == 3 ? (*parts)[2] : "";
        ProxyStream(req, res, [host, ns, pod, uid, ports] {
          return host->GetPortForward(ns, pod, uid, ports);
        });
      },
      {"GET", "POST"});
  // run: POST {ns}/{pod}[/{uid}]/{container}?cmd=... -> the output.
  server.Handle("/run/",
                [host](const HttpRequest& req, HttpResponse* res) {
                  std::optional<StreamRequest> path = ContainerPath(req.path, "/run/");
                  if (!path.has_value()) return RestfulError(res, 404, "404: Page Not Found");
                  StreamRequest r = *std::move(path);
                  r.command =
                      absl::StrSplit(AV(First(req, "cmd").value_or("")), ' ', absl::SkipEmpty());
                  RunDeferred(res, [host, r](ResponseStream& out) {
                    absl::StatusOr<std::string> output = host->RunInContainer(r);
                    if (!output.ok()) {
                      out.Fail(absl::IsNotFound(output.status()) ? 404 : 500,
                               std::string(output.status().message()));
                      return;
                    }
                    out.Write(*output);
                  });
                },
                {"POST"});
  // upstream routes.StringFlagPutHandler(logs.GlogSetter): PUT the new verbosity as the body.
  server.Handle(
      "/debug/flags/v",
      [](const HttpRequest& req, HttpResponse* res) {
        res->SetHeader("Content-Type", "text/plain");
        res->SetHeader("X-Content-Type-Options", "nosniff");
        if (req.method != "PUT") {
          res->status = 406;
          res->body = "unsupported http method\n";
          return;
        }
        absl::StatusOr<int> level = ParseGoInt32(req.body);
        if (!level.ok()) {
          res->status = 400;
          res->body = absl::StrCat("failed set klog.logging.verbosity ", req.body, ": ",
                                   level.status().message(), "\n");
          return;
        }
        log::SetVerbosity(*level);
        KLOG_INFO("Changed the log verbosity", "verbosity", *level);
        res->body = absl::StrCat("successfully set klog.logging.verbosity to ", req.body, "\n");
      },
      {}, /*max_body_bytes=*/64);
  server.Handle(
      "/containerLogs/",
      [host](const HttpRequest& req, HttpResponse* res) {
        absl::string_view rest = AV(req.path);
        if (!absl::ConsumePrefix(&rest, "/containerLogs/")) {
          return RestfulError(res, 404, "404: Page Not Found");
        }
        std::vector<std::string> parts = absl::StrSplit(rest, '/');
        if (parts.size() != 3) {
          RestfulError(res, 404, "404: Page Not Found");
          return;
        }
        const std::string &ns = parts[0], &pod_name = parts[1], &container = parts[2];
        if (pod_name.empty()) return RestfulError(res, 400, "{\"message\": \"Missing podID.\"}");
        if (container.empty()) {
          return RestfulError(res, 400, "{\"message\": \"Missing container name.\"}");
        }
        if (ns.empty()) return RestfulError(res, 400, "{\"message\": \"Missing podNamespace.\"}");
        int code = 400;
        absl::StatusOr<logs::LogOptions> opts = ParseContainerLogOptions(req, &code);
        if (!opts.ok()) return RestfulError(res, code, std::string(opts.status().message()));
        const api::Pod* pod = nullptr;
        std::vector<api::Pod> pods = host->GetPods();
        for (const api::Pod& p : pods) {
          if (p.metadata.namespace_ == ns && p.metadata.name == pod_name) pod = &p;
        }
        if (pod == nullptr) {
          return RestfulError(res, 404, absl::StrCat("pod \"", pod_name, "\" does not exist"));
        }
        if (!HasContainer(*pod, container)) {
          return RestfulError(
              res, 404,
              absl::StrCat("container \"", container, "\" not found in pod \"", pod_name, "\""));
        }
        RunDeferred(res, [host, ns, pod_name, container, o = *opts](ResponseStream& out) {
          absl::Status st =
              host->GetContainerLogs(ns, pod_name, container, o,
                                     [&out](std::string_view data) { return out.Write(data); });
          if (!st.ok()) {
            KLOG_V(2, "Failed to serve container logs", "pod", absl::StrCat(ns, "/", pod_name),
                   "container", container, "err", st);
            out.Fail(400, std::string(st.message()));
          }
        });
      },
      {"GET"});

  server.Handle("/configz",
                [host](const HttpRequest&, HttpResponse* res) { WriteJson(res, host->Configz()); });

  server.Handle("/runningpods/",
                [host](const HttpRequest&, HttpResponse* res) {
                  res->SetHeader("Content-Type", kJson);
                  RunDeferred(res, [host](ResponseStream& out) {
                    absl::StatusOr<std::vector<api::Pod>> pods = host->GetRunningPods();
                    if (!pods.ok()) {
                      out.Fail(500, std::string(pods.status().message()));
                      return;
                    }
                    out.Write(api::EncodePodListJson(*pods));
                  });
                },
                {"GET"});
}

absl::StatusOr<std::string> HostInterface::GetExec(const StreamRequest&) {
  return absl::UnimplementedError("exec is not supported");
}
absl::StatusOr<std::string> HostInterface::GetAttach(const StreamRequest&) {
  return absl::UnimplementedError("attach is not supported");
}
absl::StatusOr<std::string> HostInterface::GetPortForward(const std::string&, const std::string&,
                                                          const std::string&,
                                                          const std::vector<int32_t>&) {
  return absl::UnimplementedError("port forwarding is not supported");
}
absl::StatusOr<std::string> HostInterface::RunInContainer(const StreamRequest&) {
  return absl::UnimplementedError("run is not supported");
}

void InstallDebuggingDisabledHandlers(HttpServer& server) {
  for (const char* path : {"/run/", "/exec/", "/attach/", "/portForward/", "/containerLogs/",
                           "/runningpods/", "/debug/pprof/", "/logs/", "/configz"}) {
    server.Handle(path, [](const HttpRequest&, HttpResponse* res) {
      res->Error(405, "Debug endpoints are disabled.");
    });
  }
}

}  // namespace kubelet::server
