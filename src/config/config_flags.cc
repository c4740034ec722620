#include "config/config_flags.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/quantity.h"
#include "common/duration.h"
#include "common/strings.h"
#include "config/feature_gates.h"
#include "config/kubelet_configuration_fields.h"
#include "config/validation.h"

namespace kubelet::config {
namespace {

// --------------------------------------------------------------------------------------------
// Value parsers with Go's error wording.

absl::Status GoSyntaxError(std::string_view fn, std::string_view v) {
  return absl::InvalidArgumentError(
      absl::StrCat("strconv.", AV(fn), ": parsing \"", AV(v), "\": invalid syntax"));
}

absl::Status GoRangeError(std::string_view fn, std::string_view v) {
  return absl::InvalidArgumentError(
      absl::StrCat("strconv.", AV(fn), ": parsing \"", AV(v), "\": value out of range"));
}

// strconv.ParseUint(v, 10, bits).
absl::Status ParseGoUint(std::string_view v, int bits, uint64_t* out) {
  if (v.empty()) return GoSyntaxError("ParseUint", v);
  uint64_t n = 0;
  bool overflow = false;
  for (char c : v) {
    if (c < '0' || c > '9') return GoSyntaxError("ParseUint", v);
    if (n > (std::numeric_limits<uint64_t>::max() - (c - '0')) / 10) overflow = true;
    if (!overflow) n = n * 10 + (c - '0');
  }
  uint64_t max = bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  if (overflow || n > max) return GoRangeError("ParseUint", v);
  *out = n;
  return absl::OkStatus();
}

// strconv.Atoi for values that must fit an int32.
absl::Status ParseGoAtoi(std::string_view v, int32_t* out) {
  std::string_view digits = v;
  bool neg = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    neg = digits[0] == '-';
    digits.remove_prefix(1);
  }
  uint64_t n = 0;
  if (absl::Status st = ParseGoUint(digits, 63, &n); !st.ok()) {
    return absl::IsOutOfRange(st) || absl::StrContains(st.message(), "out of range")
               ? GoRangeError("Atoi", v)
               : GoSyntaxError("Atoi", v);
  }
  int64_t s = neg ? -static_cast<int64_t>(n) : static_cast<int64_t>(n);
  if (s < std::numeric_limits<int32_t>::min() || s > std::numeric_limits<int32_t>::max()) {
    return GoRangeError("Atoi", v);
  }
  *out = static_cast<int32_t>(s);
  return absl::OkStatus();
}

bool ParseGoBool(std::string_view v, bool* out) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") {
    *out = true;
    return true;
  }
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
    *out = false;
    return true;
  }
  return false;
}

// netutils.ParseIPSloppy: IPv4 dotted quad (leading zeros allowed, read as decimal) or IPv6.
bool IsIPSloppy(std::string_view s) {
  if (s.find(':') != std::string_view::npos) {
    std::string z(s);
    in6_addr a6;
    return inet_pton(AF_INET6, z.c_str(), &a6) == 1;
  }
  std::vector<absl::string_view> octets = absl::StrSplit(AV(s), '.');
  if (octets.size() != 4) return false;
  for (absl::string_view o : octets) {
    if (o.empty() || o.size() > 3) return false;
    int n = 0;
    for (char c : o) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + (c - '0');
    }
    if (n > 255) return false;
  }
  return true;
}

// --------------------------------------------------------------------------------------------
// Flag builders for upstream's custom pflag.Value types.

std::string JoinMap(const std::map<std::string, std::string>& m, std::string_view sep) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : m) parts.push_back(absl::StrCat(k, AV(sep), v));
  return absl::StrJoin(parts, ",");
}

// utilflag.IPVar.
Flag IPFlag(std::string_view name, std::string* target, std::string_view usage) {
  Flag f;
  f.name = std::string(name);
  f.type_name = "ip";
  f.usage = std::string(usage);
  f.default_value = *target;
  f.target = target;
  f.set = [target](std::string_view v, bool) {
    if (v.empty()) return absl::OkStatus();
    if (!IsIPSloppy(v)) {
      return absl::InvalidArgumentError(absl::StrCat("\"", AV(v), "\" is not a valid IP address"));
    }
    *target = std::string(v);
    return absl::OkStatus();
  };
  return f;
}

// cliflag.LangleSeparatedMapStringString.
Flag LangleMapFlag(std::string_view name, std::map<std::string, std::string>* target,
                   std::string_view usage) {
  Flag f;
  f.name = std::string(name);
  f.type_name = "mapStringString";
  f.usage = std::string(usage);
  f.default_value = JoinMap(*target, "<");
  f.target = target;
  f.set = [target](std::string_view v, bool first) {
    if (first) target->clear();
    for (absl::string_view item : absl::StrSplit(AV(v), ',')) {
      if (item.empty()) continue;
      std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('<', 1));
      if (kv.size() != 2) {
        return absl::InvalidArgumentError("malformed pair, expect string<string");
      }
      (*target)[std::string(absl::StripAsciiWhitespace(kv[0]))] =
          std::string(absl::StripAsciiWhitespace(kv[1]));
    }
    return absl::OkStatus();
  };
  return f;
}

// cliflag.MapStringString with NoSplit: a single "k=v" per occurrence.
Flag NoSplitMapFlag(std::string_view name, std::map<std::string, std::string>* target,
                    std::string_view usage) {
  Flag f;
  f.name = std::string(name);
  f.type_name = "mapStringString";
  f.usage = std::string(usage);
  f.default_value = JoinMap(*target, "=");
  f.target = target;
  f.set = [target](std::string_view v, bool first) {
    if (first) target->clear();
    std::vector<absl::string_view> kv = absl::StrSplit(AV(v), absl::MaxSplits('=', 1));
    if (kv.size() != 2) return absl::InvalidArgumentError("malformed pair, expect string=string");
    (*target)[std::string(absl::StripAsciiWhitespace(kv[0]))] =
        std::string(absl::StripAsciiWhitespace(kv[1]));
    return absl::OkStatus();
  };
  return f;
}

// cliflag.ColonSeparatedMultimapStringString.
Flag ColonMultimapFlag(std::string_view name,
                       std::map<std::string, std::vector<std::string>>* target,
                       std::string_view usage) {
  Flag f;
  f.name = std::string(name);
  f.type_name = "colonSeparatedMultimapStringString";
  f.usage = std::string(usage);
  std::vector<std::string> pairs;
  for (const auto& [k, vs] : *target) {
    for (const std::string& v : vs) pairs.push_back(absl::StrCat(k, ":", v));
  }
  f.default_value = absl::StrJoin(pairs, ",");
  f.target = target;
  f.set = [target](std::string_view v, bool first) {
    if (first) target->clear();
    for (absl::string_view item : absl::StrSplit(AV(v), ',')) {
      if (item.empty()) continue;
      std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits(':', 1));
      if (kv.size() != 2) return absl::InvalidArgumentError("malformed pair, expect string:string");
      (*target)[std::string(absl::StripAsciiWhitespace(kv[0]))].push_back(
          std::string(absl::StripAsciiWhitespace(kv[1])));
    }
    return absl::OkStatus();
  };
  return f;
}

// --feature-gates: cliflag.MapStringBool syntax, merged per key into the current map (so that the
// replay after loading --config keeps the file's other gates, as kubeletConfigFlagPrecedence).
Flag FeatureGatesFlag(std::map<std::string, bool>* target) {
  Flag f;
  f.name = "feature-gates";
  f.type_name = "mapStringBool";
  f.usage = absl::StrCat(
      "A set of key=value pairs that describe feature gates for alpha/experimental features. "
      "Options are:\n",
      FeatureGate().KnownFeatures());
  std::vector<std::string> pairs;
  for (const auto& [k, v] : *target) pairs.push_back(absl::StrCat(k, "=", v ? "true" : "false"));
  f.default_value = absl::StrJoin(pairs, ",");
  f.target = target;
  f.set = [target](std::string_view v, bool) {
    std::map<std::string, bool> parsed;
    for (absl::string_view item : absl::StrSplit(AV(v), ',')) {
      if (item.empty()) continue;
      std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
      if (kv.size() != 2) return absl::InvalidArgumentError("malformed pair, expect string=bool");
      std::string key(absl::StripAsciiWhitespace(kv[0]));
      std::string raw(absl::StripAsciiWhitespace(kv[1]));
      bool b = false;
      if (!ParseGoBool(raw, &b)) {
        return absl::InvalidArgumentError(absl::StrCat("invalid value of ", key, ": ", raw,
                                                       ", err: strconv.ParseBool: parsing \"", raw,
                                                       "\": invalid syntax"));
      }
      parsed[key] = b;
    }
    for (const auto& [k, b] : parsed) (*target)[k] = b;
    return absl::OkStatus();
  };
  return f;
}

// logsapi VerbosityLevelPflag.
Flag VerbosityFlag(uint32_t* target) {
  Flag f;
  f.name = "v";
  f.shorthand = "v";
  f.type_name = "Level";
  f.usage = "number for the log level verbosity";
  f.default_value = absl::StrCat(*target);
  f.target = target;
  f.set = [target](std::string_view v, bool) {
    uint64_t n = 0;
    if (absl::Status st = ParseGoUint(v, 32, &n); !st.ok()) return st;
    *target = static_cast<uint32_t>(n);
    return absl::OkStatus();
  };
  return f;
}

// logsapi VModuleConfigurationPflag: appends "pattern=N" items.
Flag VModuleFlag(std::vector<VModuleItem>* target) {
  Flag f;
  f.name = "vmodule";
  f.type_name = "pattern=N,...";
  f.usage =
      "comma-separated list of pattern=N settings for file-filtered logging (only works for text "
      "log format)";
  f.target = target;
  f.set = [target](std::string_view v, bool) {
    for (absl::string_view pat : absl::StrSplit(AV(v), ',')) {
      if (pat.empty()) continue;
      std::vector<absl::string_view> pl = absl::StrSplit(pat, '=');
      if (pl.size() != 2 || pl[0].empty() || pl[1].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"", pat, "\" does not have the pattern=N format"));
      }
      uint64_t n = 0;
      if (absl::Status st = ParseGoUint(SV(pl[1]), 31, &n); !st.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("parsing verbosity in \"", pat, "\": ", st.message()));
      }
      target->push_back(VModuleItem{std::string(pl[0]), static_cast<uint32_t>(n)});
    }
    return absl::OkStatus();
  };
  return f;
}

// resource.QuantityValue.
Flag QuantityFlag(std::string_view name, api::Quantity* target, std::string_view usage) {
  Flag f;
  f.name = std::string(name);
  f.type_name = "quantity";
  f.usage = std::string(usage);
  f.default_value = target->String();
  f.target = target;
  f.set = [target](std::string_view v, bool) -> absl::Status {
    absl::StatusOr<api::Quantity> q = api::Quantity::Parse(v);
    if (!q.ok()) return q.status();
    *target = *q;
    return absl::OkStatus();
  };
  return f;
}

Flag ReservedMemoryFlag(std::vector<MemoryReservation>* target) {
  Flag f;
  f.name = "reserved-memory";
  f.type_name = "reserved-memory";
  f.usage =
      "Memory reserved per NUMA node, e.g. '--reserved-memory 0:memory=1Gi,hugepages-1M=2Gi "
      "--reserved-memory 1:memory=2Gi'. Per memory type, the sum over NUMA nodes should equal "
      "kube-reserved + system-reserved + the hard eviction threshold.";
  f.target = target;
  f.set = [target](std::string_view v, bool first) -> absl::Status {
    if (v.empty()) return absl::OkStatus();
    absl::StatusOr<std::vector<MemoryReservation>> parsed = ParseReservedMemory(v);
    if (!parsed.ok()) return parsed.status();
    if (first) target->clear();
    for (MemoryReservation& r : *parsed) target->push_back(std::move(r));
    return absl::OkStatus();
  };
  return f;
}

Flag TaintsFlag(std::vector<Taint>* target) {
  Flag f;
  f.name = "register-with-taints";
  f.type_name = "[]v1.Taint";
  f.usage =
      "Taints to register the node with, comma separated \"<key>=<value>:<effect>\". No-op when "
      "--register-node is false.";
  std::vector<std::string> taints;
  for (const Taint& t : *target) taints.push_back(absl::StrCat(t.key, "=", t.value, ":", t.effect));
  f.default_value = absl::StrJoin(taints, ",");
  f.target = target;
  f.set = [target](std::string_view v, bool) -> absl::Status {
    if (v.empty()) {
      target->clear();
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<Taint>> parsed = ParseRegisterWithTaints(v);
    if (!parsed.ok()) return parsed.status();
    *target = std::move(*parsed);
    return absl::OkStatus();
  };
  return f;
}

// --------------------------------------------------------------------------------------------
// Taints (k8s.io/kubernetes/pkg/util/taints).

absl::Status ValidateTaintEffect(std::string_view effect) {
  if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid taint effect: ", AV(effect), ", unsupported taint effect"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Taint> ParseTaint(std::string_view st) {
  Taint taint;
  std::vector<absl::string_view> parts = absl::StrSplit(AV(st), ':');
  std::string key;
  if (parts.size() == 1) {
    key = std::string(parts[0]);
  } else if (parts.size() == 2) {
    taint.effect = std::string(parts[1]);
    if (absl::Status s = ValidateTaintEffect(taint.effect); !s.ok()) return s;
    std::vector<absl::string_view> kv = absl::StrSplit(parts[0], '=');
    if (kv.size() > 2)
      return absl::InvalidArgumentError(absl::StrCat("invalid taint spec: ", AV(st)));
    key = std::string(kv[0]);
    if (kv.size() == 2) {
      taint.value = std::string(kv[1]);
      if (std::vector<std::string> errs = IsValidLabelValue(taint.value); !errs.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid taint spec: ", AV(st), ", ", absl::StrJoin(errs, "; ")));
      }
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("invalid taint spec: ", AV(st)));
  }
  if (std::vector<std::string> errs = IsQualifiedName(key); !errs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid taint spec: ", AV(st), ", ", absl::StrJoin(errs, "; ")));
  }
  taint.key = std::move(key);
  return taint;
}

}  // namespace

std::string ConfigFieldForFlag(const FlagSet& fs, const KubeletConfiguration& config,
                               std::string_view flag_name) {
  const Flag* f = fs.Lookup(flag_name);
  return f == nullptr ? std::string() : ConfigFieldPathAt(config, f->target);
}

absl::StatusOr<std::vector<Taint>> ParseRegisterWithTaints(std::string_view value) {
  std::vector<Taint> taints;
  std::map<std::string, std::set<std::string>> unique;  // effect -> keys
  for (absl::string_view spec : absl::StrSplit(AV(value), ',')) {
    if (absl::EndsWith(spec, "-")) {
      // A removal: validated, then dropped (it cannot apply at registration).
      absl::StatusOr<Taint> t = ParseTaint(SV(spec.substr(0, spec.size() - 1)));
      if (!t.ok()) return t.status();
      continue;
    }
    absl::StatusOr<Taint> t = ParseTaint(SV(spec));
    if (!t.ok()) return t.status();
    if (t->effect.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid taint spec: ", spec));
    }
    if (!unique[t->effect].insert(t->key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicated taints with the same key and effect: {", t->key, " ", t->value,
                       " ", t->effect, " <nil>}"));
    }
    taints.push_back(std::move(*t));
  }
  return taints;
}

absl::StatusOr<std::vector<MemoryReservation>> ParseReservedMemory(std::string_view value) {
  std::vector<MemoryReservation> out;
  for (absl::string_view reservation : absl::StrSplit(AV(value), ';')) {
    std::vector<absl::string_view> numa = absl::StrSplit(reservation, ':');
    if (numa.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("the reserved memory has incorrect format, expected "
                       "numaNodeID:type=quantity[,type=quantity...], got ",
                       reservation));
    }
    int32_t node = 0;
    if (!ParseGoAtoi(SV(numa[0]), &node).ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("failed to convert the NUMA node ID, exptected integer, got ", numa[0]));
    }
    MemoryReservation r;
    r.numa_node = node;
    for (absl::string_view limit : absl::StrSplit(numa[1], ',')) {
      std::vector<absl::string_view> kv = absl::StrSplit(limit, '=');
      if (kv.size() != 2) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the reserved limit has incorrect value, expected type=quantatity, got ", limit));
      }
      if (kv[0] != "memory" && !absl::StartsWith(kv[0], "hugepages-")) {
        return absl::InvalidArgumentError(
            absl::StrCat("memory type conversion error, unknown type: \"", kv[0], "\""));
      }
      absl::StatusOr<api::Quantity> q = api::Quantity::Parse(SV(kv[1]));
      if (!q.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("failed to parse the quantatity, expected quantatity, got ", kv[1]));
      }
      r.limits[std::string(kv[0])] = *q;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void AddKubeletConfigFlags(FlagSet& fs, KubeletConfiguration* c) {
  std::vector<Flag*> added;
  auto add = [&](Flag& f) -> Flag& {
    added.push_back(&f);
    return f;
  };
  auto custom = [&](Flag f) -> Flag& { return add(fs.Add(std::move(f))); };

  add(fs.Bool("enable-server", &c->enable_server, "Enable the kubelet's server."));
  add(fs.Bool("fail-swap-on", &c->fail_swap_on,
              "Refuse to start when swap is enabled on the node."));
  add(fs.String("pod-manifest-path", &c->static_pod_path,
                "Directory of static pod files, or a single static pod file. Dot files are "
                "ignored."));
  add(fs.Duration("sync-frequency", &c->sync_frequency,
                  "Maximum interval between syncs of running containers and config."));
  add(fs.Duration("file-check-frequency", &c->file_check_frequency,
                  "Interval between checks of the static pod files."));
  add(fs.Duration("http-check-frequency", &c->http_check_frequency,
                  "Interval between checks of the manifest URL."));
  add(fs.String("manifest-url", &c->static_pod_url, "URL to fetch additional pod manifests from."));
  custom(ColonMultimapFlag(
      "manifest-url-header", &c->static_pod_url_header,
      "HTTP headers for --manifest-url requests, comma-separated 'Name:value'. Repeat the flag "
      "or a name to send several values, e.g. --manifest-url-header 'a:hello,b:again,c:world' "
      "--manifest-url-header 'b:beautiful'"));
  custom(IPFlag("address", &c->address,
                "IP address to serve on ('0.0.0.0' or '::' for all interfaces and families)."));
  add(fs.Int32("port", &c->port, "Port to serve on."));
  add(fs.Int32("read-only-port", &c->read_only_port,
               "Unauthenticated read-only port to serve on (0 disables)."));

  add(fs.String("container-runtime-endpoint", &c->container_runtime_endpoint,
                "Endpoint of the CRI runtime service, e.g. 'unix:///path/to/runtime.sock'."));
  add(fs.String("image-service-endpoint", &c->image_service_endpoint,
                "Endpoint of the CRI image service. Defaults to --container-runtime-endpoint."));

  add(fs.Bool("anonymous-auth", &c->authentication.anonymous.enabled,
              "Treat requests not rejected by another authenticator as anonymous "
              "(system:anonymous, group system:unauthenticated)."));
  add(fs.Bool("authentication-token-webhook", &c->authentication.webhook.enabled,
              "Authenticate bearer tokens with the TokenReview API."));
  add(fs.Duration("authentication-token-webhook-cache-ttl", &c->authentication.webhook.cache_ttl,
                  "How long to cache webhook token authentication results."));
  add(fs.String("client-ca-file", &c->authentication.x509.client_ca_file,
                "CA bundle authenticating client certificates; the identity is the certificate's "
                "CommonName."));
  add(fs.String("authorization-mode", &c->authorization.mode,
                "Authorization mode of the kubelet server: AlwaysAllow or Webhook (uses the "
                "SubjectAccessReview API)."));
  add(fs.Duration("authorization-webhook-cache-authorized-ttl",
                  &c->authorization.webhook.cache_authorized_ttl,
                  "How long to cache 'authorized' webhook responses."));
  add(fs.Duration("authorization-webhook-cache-unauthorized-ttl",
                  &c->authorization.webhook.cache_unauthorized_ttl,
                  "How long to cache 'unauthorized' webhook responses."));

  add(fs.String("tls-cert-file", &c->tls_cert_file,
                "Serving certificate (with intermediates appended). Without it and "
                "--tls-private-key-file a self-signed pair is generated in --cert-dir."));
  add(fs.String("tls-private-key-file", &c->tls_private_key_file,
                "Private key matching --tls-cert-file."));
  add(fs.Bool("rotate-server-certificates", &c->server_tls_bootstrap,
              "Request and rotate the serving certificate through the certificates API. Needs "
              "the RotateKubeletServerCertificate feature gate and approval of the CSRs."));
  add(fs.StringSlice("tls-cipher-suites", &c->tls_cipher_suites,
                     "Comma-separated cipher suites for the server. Default: the Go defaults."));
  add(fs.String("tls-min-version", &c->tls_min_version,
                "Minimum TLS version: VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13."));
  add(fs.Bool("rotate-certificates", &c->rotate_certificates,
              "Rotate the client certificate through the certificates API before it expires."));

  add(fs.Int32("registry-qps", &c->registry_pull_qps,
               "Image pull QPS limit when > 0; 0 means unlimited."));
  add(fs.Int32("registry-burst", &c->registry_burst,
               "Image pull burst size (used when --registry-qps > 0)."));
  add(fs.Int32("event-qps", &c->event_record_qps,
               "QPS limit for event creation (>= 0; 0 uses the client default of 5)."));
  add(fs.Int32("event-burst", &c->event_burst,
               "Burst size for event creation (>= 0; 0 uses the client default of 10)."));

  add(fs.Bool("enable-debugging-handlers", &c->enable_debugging_handlers,
              "Serve the log, exec, attach, port-forward and run endpoints."));
  add(fs.Bool("contention-profiling", &c->enable_contention_profiling,
              "Enable block profiling when profiling is enabled."));
  add(fs.Int32("healthz-port", &c->healthz_port,
               "Port of the localhost healthz endpoint (0 disables)."));
  custom(IPFlag("healthz-bind-address", &c->healthz_bind_address,
                "IP address of the healthz server ('0.0.0.0' or '::' for all)."));
  add(fs.Int32("oom-score-adj", &c->oom_score_adj,
               "oom_score_adj of the kubelet process, in [-1000, 1000]."));
  add(fs.String("cluster-domain", &c->cluster_domain,
                "Cluster domain, added to the DNS search list of containers."));
  add(fs.String("volume-plugin-dir", &c->volume_plugin_dir,
                "Directory searched for third-party (flexvolume) volume plugins."));
  add(fs.StringSlice("cluster-dns", &c->cluster_dns,
                     "Comma-separated DNS server IPs for pods with dnsPolicy=ClusterFirst. All "
                     "servers must serve the same records."));
  add(fs.Duration("streaming-connection-idle-timeout", &c->streaming_connection_idle_timeout,
                  "Idle time after which a streaming connection is closed (0: never)."));
  add(fs.Duration("node-status-update-frequency", &c->node_status_update_frequency,
                  "How often node status is posted. Must fit the node controller's grace "
                  "period."));
  add(fs.Duration("minimum-image-ttl-duration", &c->image_minimum_gc_age,
                  "Minimum age of an unused image before it can be garbage collected."));
  add(fs.Int32("image-gc-high-threshold", &c->image_gc_high_threshold_percent,
               "Disk usage percent above which image garbage collection always runs, in "
               "[0, 100]; 100 disables image garbage collection."));
  add(fs.Int32("image-gc-low-threshold", &c->image_gc_low_threshold_percent,
               "Disk usage percent image garbage collection frees down to, in [0, 100] and "
               "below --image-gc-high-threshold."));
  add(fs.Duration("volume-stats-agg-period", &c->volume_stats_agg_period,
                  "Interval of volume disk usage computation; negative disables it."));
  custom(FeatureGatesFlag(&c->feature_gates));
  add(fs.String("kubelet-cgroups", &c->kubelet_cgroups,
                "Optional absolute name of the cgroup to run the kubelet in."));
  add(fs.String("system-cgroups", &c->system_cgroups,
                "Optional absolute name of the cgroup for non-kernel processes not already in a "
                "cgroup under '/'. Reverting needs a reboot."));
  add(fs.String("provider-id", &c->provider_id,
                "Unique identifier of the node in the cloud provider's machine database."));
  add(fs.Bool("cgroups-per-qos", &c->cgroups_per_qos, "Create the QoS and pod cgroup hierarchy."));
  add(fs.String("cgroup-driver", &c->cgroup_driver,
                "Cgroup driver used by the kubelet: 'cgroupfs' or 'systemd'."));
  add(fs.String("cgroup-root", &c->cgroup_root,
                "Optional root cgroup for pods, handled best-effort by the runtime. Empty: the "
                "runtime's default."));
  add(fs.String("cpu-manager-policy", &c->cpu_manager_policy,
                "CPU manager policy: 'none' or 'static'."));
  custom(NoSplitMapFlag("cpu-manager-policy-options", &c->cpu_manager_policy_options,
                        "A key=value CPU manager policy option; repeat for several."));
  add(fs.Duration("cpu-manager-reconcile-period", &c->cpu_manager_reconcile_period,
                  "<Warning: Alpha feature> CPU manager reconciliation period. Defaults to "
                  "--node-status-update-frequency."));
  add(fs.StringMap("qos-reserved", &c->qos_reserved,
                   "<Warning: Alpha feature> ResourceName=Percentage pairs (e.g. memory=50%) of "
                   "requests reserved per QoS level; memory only. Needs the QOSReserved feature "
                   "gate."));
  add(fs.String("topology-manager-policy", &c->topology_manager_policy,
                "Topology manager policy: 'none', 'best-effort', 'restricted' or "
                "'single-numa-node'."));
  add(fs.Duration("runtime-request-timeout", &c->runtime_request_timeout,
                  "Timeout of runtime requests other than pull, logs, exec and attach."));
  add(fs.String("hairpin-mode", &c->hairpin_mode,
                "Hairpin NAT setup: \"promiscuous-bridge\", \"hairpin-veth\" or \"none\"."));
  add(fs.Int32("max-pods", &c->max_pods, "Maximum number of pods on this node."));
  add(fs.String("pod-cidr", &c->pod_cidr,
                "Pod IP range, used in standalone mode only (the control plane assigns it "
                "otherwise)."));
  add(fs.Int64("pod-max-pids", &c->pod_pids_limit,
               "Maximum number of processes per pod; -1 uses the node's allocatable pids."));
  add(fs.String("resolv-conf", &c->resolv_conf,
                "Resolver configuration file the container DNS configuration is based on."));
  add(fs.Bool("runonce", &c->run_once,
              "Exit after spawning the pods from static files or the manifest URL. Exclusive "
              "with --enable-server."));
  add(fs.Bool("cpu-cfs-quota", &c->cpu_cfs_quota, "Enforce CPU limits with CFS quota."));
  add(fs.Duration("cpu-cfs-quota-period", &c->cpu_cfs_quota_period,
                  "CFS quota period (cpu.cfs_period_us). Defaults to the kernel's."));
  add(fs.Bool("enable-controller-attach-detach", &c->enable_controller_attach_detach,
              "Let the attach/detach controller handle volumes of this node instead of the "
              "kubelet."));
  add(fs.Bool("make-iptables-util-chains", &c->make_iptables_util_chains,
              "Ensure the iptables utility chains exist on the host."));
  add(fs.Int32("iptables-masquerade-bit", &c->iptables_masquerade_bit,
               "No effect; configure KUBE-MARK-MASQ through kube-proxy."))
      .hidden = true;
  add(fs.Int32("iptables-drop-bit", &c->iptables_drop_bit,
               "No effect; the kubelet no longer creates a KUBE-MARK-DROP chain."))
      .hidden = true;
  add(fs.String("container-log-max-size", &c->container_log_max_size,
                "<Warning: Beta feature> Size (e.g. 10Mi) at which a container log is rotated."));
  add(fs.Int32("container-log-max-files", &c->container_log_max_files,
               "<Warning: Beta feature> Maximum number of log files per container (>= 2)."));
  add(fs.StringSlice("allowed-unsafe-sysctls", &c->allowed_unsafe_sysctls,
                     "Comma-separated unsafe sysctls or patterns (ending in *) pods may set. Use "
                     "at your own risk."));
  add(fs.Int32("node-status-max-images", &c->node_status_max_images,
               "Maximum number of images reported in Node.Status.Images; -1 for no cap."));
  add(fs.Bool("kernel-memcg-notification", &c->kernel_memcg_notification,
              "Use kernel memcg notifications rather than polling to detect memory eviction "
              "thresholds."));
  add(fs.Bool("local-storage-capacity-isolation", &c->local_storage_capacity_isolation,
              "Enable local ephemeral storage isolation."));
  add(fs.Int64("max-open-files", &c->max_open_files,
               "Number of files the kubelet process may open."));
  add(fs.String("kube-api-content-type", &c->content_type,
                "Content type of requests sent to the API server."));
  add(fs.Int32("kube-api-qps", &c->kube_api_qps,
               "QPS to the API server (>= 0; 0 uses 50). Events and node heartbeats have their "
               "own limits."));
  add(fs.Int32("kube-api-burst", &c->kube_api_burst,
               "Burst to the API server (>= 0; 0 uses 100). Events and node heartbeats have "
               "their own limits."));
  add(fs.Bool("serialize-image-pulls", &c->serialize_image_pulls, "Pull images one at a time."));
  custom(LangleMapFlag("eviction-hard", &c->eviction_hard,
                       "Eviction thresholds (e.g. memory.available<1Gi) that trigger a pod "
                       "eviction when met."));
  custom(LangleMapFlag("eviction-soft", &c->eviction_soft,
                       "Eviction thresholds (e.g. memory.available<1.5Gi) that trigger a pod "
                       "eviction when met for their grace period."));
  add(fs.StringMap("eviction-soft-grace-period", &c->eviction_soft_grace_period,
                   "Grace periods of the soft eviction thresholds (e.g. "
                   "memory.available=1m30s)."));
  add(fs.Duration("eviction-pressure-transition-period", &c->eviction_pressure_transition_period,
                  "How long to wait before leaving an eviction pressure condition."));
  add(fs.Int32("eviction-max-pod-grace-period", &c->eviction_max_pod_grace_period,
               "Maximum grace period (seconds) for pods evicted on a soft threshold; negative "
               "uses the pod's own value."));
  add(fs.StringMap("eviction-minimum-reclaim", &c->eviction_minimum_reclaim,
                   "Minimum amounts to reclaim when evicting under resource pressure (e.g. "
                   "imagefs.available=2Gi)."));
  add(fs.Int32("pods-per-core", &c->pods_per_core,
               "Maximum pods per core, capped by --max-pods; 0 disables the limit."));
  add(fs.Bool("protect-kernel-defaults", &c->protect_kernel_defaults,
              "Fail when kernel tunables differ from the kubelet's defaults instead of "
              "changing them."));
  add(fs.String("reserved-cpus", &c->reserved_system_cpus,
                "CPU list (e.g. 0-3,7) reserved for system and Kubernetes daemons. Supersedes the "
                "cpu of --system-reserved and --kube-reserved."));
  add(fs.String("topology-manager-scope", &c->topology_manager_scope,
                "Scope of topology hints: 'container' or 'pod'."));
  custom(NoSplitMapFlag("topology-manager-policy-options", &c->topology_manager_policy_options,
                        "A key=value topology manager policy option; repeat for several."));
  add(fs.StringMap("system-reserved", &c->system_reserved,
                   "ResourceName=ResourceQuantity pairs (e.g. "
                   "cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) reserved for "
                   "non-Kubernetes components. [default=none]"));
  add(fs.StringMap("kube-reserved", &c->kube_reserved,
                   "ResourceName=ResourceQuantity pairs (e.g. "
                   "cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) reserved for Kubernetes "
                   "system components. [default=none]"));
  add(fs.StringSlice("enforce-node-allocatable", &c->enforce_node_allocatable,
                     "Comma-separated Node Allocatable enforcement levels: 'none', 'pods', "
                     "'system-reserved', 'kube-reserved'. The last two need "
                     "--system-reserved-cgroup / --kube-reserved-cgroup."));
  add(fs.String("system-reserved-cgroup", &c->system_reserved_cgroup,
                "Absolute name of the cgroup of the components --system-reserved is for, e.g. "
                "'/system-reserved'. [default='']"));
  add(fs.String("kube-reserved-cgroup", &c->kube_reserved_cgroup,
                "Absolute name of the cgroup of the components --kube-reserved is for, e.g. "
                "'/kube-reserved'. [default='']"));

  // Logging (logsapi.AddFlags).
  add(fs.String("logging-format", &c->logging.format,
                "Log format: \"json\" (gated by LoggingBetaOptions) or \"text\"."));
  add(fs.Duration("log-flush-frequency", &c->logging.flush_frequency.duration,
                  "Maximum time between log flushes."));
  custom(VerbosityFlag(&c->logging.verbosity));
  custom(VModuleFlag(&c->logging.vmodule));
  add(fs.Bool("log-json-split-stream", &c->logging.options.json.split_stream,
              "[Alpha] In JSON format, write errors to stderr and info to stdout. Needs the "
              "LoggingAlphaOptions feature gate."));
  custom(QuantityFlag("log-json-info-buffer-size", &c->logging.options.json.info_buffer_size,
                      "[Alpha] In JSON format with split streams, buffer this many bytes of info "
                      "messages (e.g. 512, 1K, 2Ki); 0 disables buffering. Needs the "
                      "LoggingAlphaOptions feature gate."));

  // Memory manager.
  add(fs.String("memory-manager-policy", &c->memory_manager_policy,
                "Memory manager policy: 'None' or 'Static'."));
  custom(ReservedMemoryFlag(&c->reserved_memory));

  add(fs.Bool("register-node", &c->register_node,
              "Register the node with the API server (irrelevant without --kubeconfig)."));
  custom(TaintsFlag(&c->register_with_taints));

  static const std::set<std::string_view> kNotDeprecated = {"v", "vmodule", "log-flush-frequency",
                                                            "provider-id"};
  for (Flag* f : added) {
    if (kNotDeprecated.count(f->name) == 0) f->deprecated = kConfigFlagDeprecation;
  }
}

}  // namespace kubelet::config
