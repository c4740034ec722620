#include "server/kubelet_server.h"

#include <cctype>
#include <cstdint>
#include <utility>

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

void InstallDebuggingHandlers(HttpServer& server, std::shared_ptr<HostInterface> host) {
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

void InstallDebuggingDisabledHandlers(HttpServer& server) {
  for (const char* path : {"/run/", "/exec/", "/attach/", "/portForward/", "/containerLogs/",
                           "/runningpods/", "/debug/pprof/", "/logs/", "/configz"}) {
    server.Handle(path, [](const HttpRequest&, HttpResponse* res) {
      res->Error(405, "Debug endpoints are disabled.");
    });
  }
}

}  // namespace kubelet::server
