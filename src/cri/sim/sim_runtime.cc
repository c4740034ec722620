#include "cri/sim/sim_runtime.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/duration.h"
#include "common/strings.h"
#include "cri/in_process.h"

namespace kubelet::cri {
namespace {

namespace v1 = ::runtime::v1;
using AnnotationMap = google::protobuf::Map<std::string, std::string>;

constexpr char kNoStreaming[] = "hollow node: no streaming";
constexpr int kMaxExitCode = 255;

absl::Status NotFound(std::string_view method, std::string_view what, std::string_view id) {
  return absl::NotFoundError(
      absl::StrCat(AV(method), ": ", AV(what), " \"", AV(id), "\": not found"));
}

absl::Status Unimplemented(std::string_view method, std::string_view why) {
  return absl::UnimplementedError(absl::StrCat(AV(method), ": ", AV(why)));
}

std::string ExitReason(int exit_code) { return exit_code == 0 ? "Completed" : "Error"; }

// ---- Annotation values ------------------------------------------------------------------------
// Each returns nullopt for an absent or bad value, which callers treat alike.

const std::string* Lookup(const AnnotationMap& annotations, const std::string& key) {
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &it->second;
}

std::optional<absl::Duration> DurationValue(const AnnotationMap& annotations,
                                            const std::string& key) {
  const std::string* value = Lookup(annotations, key);
  if (value == nullptr) return std::nullopt;
  absl::StatusOr<absl::Duration> d = ParseGoDuration(*value);
  if (!d.ok() || *d < absl::ZeroDuration()) return std::nullopt;
  return *d;
}

std::optional<int64_t> IntValue(const AnnotationMap& annotations, const std::string& key,
                                int64_t max) {
  const std::string* value = Lookup(annotations, key);
  if (value == nullptr) return std::nullopt;
  int64_t n = 0;
  if (!absl::SimpleAtoi(*value, &n) || n < 0 || n > max) return std::nullopt;
  return n;
}

// ---- Pod CIDR ---------------------------------------------------------------------------------

struct Ipv4Cidr {
  uint32_t network = 0;
  int prefix = 0;
};

// A decimal number without sign or leading zeros, at most `max`.
bool ParseDecimal(std::string_view s, uint32_t max, uint32_t* out) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return false;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > max) return false;
  *out = static_cast<uint32_t>(n);
  return true;
}

absl::StatusOr<Ipv4Cidr> ParseIpv4Cidr(std::string_view cidr) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat("invalid pod CIDR \"", AV(cidr),
                                                   "\": want an IPv4 CIDR such as 10.64.0.0/24"));
  };
  const size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return invalid();
  uint32_t prefix = 0;
  if (!ParseDecimal(cidr.substr(slash + 1), 32, &prefix)) return invalid();
  std::string_view addr = cidr.substr(0, slash);
  uint32_t ip = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t dot = i < 3 ? addr.find('.') : addr.size();
    if (dot == std::string_view::npos) return invalid();
    uint32_t octet = 0;
    if (!ParseDecimal(addr.substr(0, dot), 255, &octet)) return invalid();
    ip = (ip << 8) | octet;
    addr = i < 3 ? addr.substr(dot + 1) : std::string_view();
  }
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return Ipv4Cidr{ip & mask, static_cast<int>(prefix)};
}

std::string FormatIpv4(uint32_t ip) {
  return absl::StrFormat("%d.%d.%d.%d", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

// ---- Ids and digests --------------------------------------------------------------------------

// A bijective 64-bit mix (the splitmix64 finaliser).
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// A stable pseudo digest of `s`: "sha256:" and 64 hex digits from four FNV-1a lanes.
std::string PseudoDigest(std::string_view s) {
  std::string out = "sha256:";
  uint64_t lane_seed = 0xcbf29ce484222325ULL;
  for (int lane = 0; lane < 4; ++lane) {
    uint64_t h = lane_seed;
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    absl::StrAppendFormat(&out, "%016x", Mix(h));
    lane_seed = Mix(lane_seed + 0x9e3779b97f4a7c15ULL);
  }
  return out;
}

// The repository of a normalized reference: without its tag or digest.
std::string Repository(const std::string& normalized) {
  if (const size_t at = normalized.find('@'); at != std::string::npos) {
    return normalized.substr(0, at);
  }
  const size_t colon = normalized.rfind(':');
  const size_t slash = normalized.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    return normalized.substr(0, colon);
  }
  return normalized;
}

// ---- Arithmetic -------------------------------------------------------------------------------

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

// CPU time of `millicores` over `elapsed_ns`: millicores / 1000 cores.
uint64_t CpuNanos(int64_t millicores, int64_t elapsed_ns) {
  if (millicores <= 0 || elapsed_ns <= 0) return 0;
  const unsigned __int128 v = static_cast<unsigned __int128>(elapsed_ns) *
                              static_cast<unsigned __int128>(millicores) / 1000;
  return v > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                  : static_cast<uint64_t>(v);
}

uint64_t NanoCores(int64_t millicores) {
  if (millicores <= 0) return 0;
  const unsigned __int128 v = static_cast<unsigned __int128>(millicores) * 1000000;
  return v > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max()
                                                  : static_cast<uint64_t>(v);
}

SimRuntimeOptions Normalized(SimRuntimeOptions options) {
  if (!options.now) options.now = absl::Now;
  if (!options.sleep) options.sleep = absl::SleepFor;
  return options;
}

}  // namespace

absl::Status ValidateSimRuntimeOptions(const SimRuntimeOptions& options) {
  if (absl::StatusOr<Ipv4Cidr> cidr = ParseIpv4Cidr(options.pod_cidr); !cidr.ok()) {
    return cidr.status();
  }
  if (options.start_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("start delay must not be negative");
  }
  if (options.pull_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("pull delay must not be negative");
  }
  if (options.cpu_millicores < 0) {
    return absl::InvalidArgumentError("CPU millicores must not be negative");
  }
  if (options.memory_bytes < 0) {
    return absl::InvalidArgumentError("memory bytes must not be negative");
  }
  return absl::OkStatus();
}

SimRuntime::SimRuntime(SimRuntimeOptions options)
    : options_(Normalized(std::move(options))),
      id_salt_(Mix(reinterpret_cast<uintptr_t>(this) ^
                   static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())))) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Ipv4Cidr> cidr = ParseIpv4Cidr(options_.pod_cidr);
  if (!cidr.ok()) {
    pool_.error = cidr.status();
    return;
  }
  const uint64_t size = uint64_t{1} << (32 - cidr->prefix);
  pool_.network = cidr->network;
  // Network address, gateway (.1) and broadcast address are never handed out.
  pool_.first = 2;
  pool_.end = size >= 4 ? size - 1 : 2;
  pool_.next = pool_.first;
}

SimRuntime::~SimRuntime() = default;

SimRuntimeCounts SimRuntime::Counts() {
  absl::MutexLock lock(&mu_);
  AdvanceAll(NowNanos());
  SimRuntimeCounts counts;
  counts.sandboxes = static_cast<int64_t>(sandboxes_.size());
  for (const auto& [id, s] : sandboxes_) {
    if (s.status.state() == v1::SANDBOX_READY) ++counts.ready_sandboxes;
  }
  counts.containers = static_cast<int64_t>(containers_.size());
  for (const auto& [id, c] : containers_) {
    if (c.status.state() == v1::CONTAINER_RUNNING) ++counts.running_containers;
  }
  return counts;
}

// ---- Internals ----------------------------------------------------------------------------

SimRuntime::Behaviour SimRuntime::ResolveBehaviour(const AnnotationMap& annotations,
                                                   const std::string& container_name) const {
  Behaviour b;
  const std::string suffix = absl::StrCat("-", container_name);
  const std::string exit_after = kExitAfterAnnotation;
  const std::string exit_code = kExitCodeAnnotation;
  if (auto d = DurationValue(annotations, exit_after + suffix)) {
    b.exit_after = *d;
  } else if (auto pod_d = DurationValue(annotations, exit_after)) {
    b.exit_after = *pod_d;
  }
  if (auto code = IntValue(annotations, exit_code + suffix, kMaxExitCode)) {
    b.exit_code = static_cast<int32_t>(*code);
  } else if (auto pod_code = IntValue(annotations, exit_code, kMaxExitCode)) {
    b.exit_code = static_cast<int32_t>(*pod_code);
  }
  b.start_delay = StartDelay(annotations);
  b.exec_exit_code = static_cast<int32_t>(
      IntValue(annotations, kExecExitCodeAnnotation, kMaxExitCode).value_or(0));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  b.cpu_millicores =
      IntValue(annotations, kCpuMillicoresAnnotation, kMax).value_or(options_.cpu_millicores);
  b.memory_bytes =
      IntValue(annotations, kMemoryBytesAnnotation, kMax).value_or(options_.memory_bytes);
  return b;
}

absl::Duration SimRuntime::StartDelay(const AnnotationMap& annotations) const {
  return DurationValue(annotations, kStartDelayAnnotation).value_or(options_.start_delay);
}

std::string SimRuntime::NewId() {
  // The sequence number first, so that ids are unique and sort in creation order.
  const uint64_t n = next_id_++;
  return absl::StrFormat("%016x%016x%016x%016x", n, Mix(n ^ id_salt_), Mix(n + id_salt_),
                         Mix(Mix(n) ^ id_salt_));
}

int64_t SimRuntime::NowNanos() const { return absl::ToUnixNanos(options_.now()); }

SimRuntime::Container* SimRuntime::FindContainer(const std::string& id) {
  auto it = containers_.find(id);
  return it == containers_.end() ? nullptr : &it->second;
}

SimRuntime::Sandbox* SimRuntime::FindSandbox(const std::string& id) {
  auto it = sandboxes_.find(id);
  return it == sandboxes_.end() ? nullptr : &it->second;
}

void SimRuntime::Advance(Container& c, int64_t now_ns) {
  if (c.status.state() != v1::CONTAINER_RUNNING) return;
  const absl::Duration after = c.behaviour.exit_after;
  if (after == absl::InfiniteDuration()) return;
  const int64_t after_ns = absl::ToInt64Nanoseconds(after);
  const int64_t started = c.status.started_at();
  if (after_ns > std::numeric_limits<int64_t>::max() - started) return;  // beyond any clock
  const int64_t exit_at = started + after_ns;
  if (now_ns < exit_at) return;
  c.status.set_state(v1::CONTAINER_EXITED);
  c.status.set_finished_at(exit_at);
  c.status.set_exit_code(c.behaviour.exit_code);
  c.status.set_reason(ExitReason(c.behaviour.exit_code));
}

void SimRuntime::AdvanceAll(int64_t now_ns) {
  for (auto& [id, c] : containers_) Advance(c, now_ns);
}

void SimRuntime::AdvanceSandbox(const Sandbox& s, int64_t now_ns) {
  for (const std::string& id : s.container_ids) {
    if (Container* c = FindContainer(id); c != nullptr) Advance(*c, now_ns);
  }
}

absl::StatusOr<uint64_t> SimRuntime::AllocateIp() {
  if (!pool_.error.ok()) return pool_.error;
  if (!pool_.released.empty()) {
    const uint64_t offset = *pool_.released.begin();
    pool_.released.erase(pool_.released.begin());
    return offset;
  }
  if (pool_.next < pool_.end) return pool_.next++;
  return absl::ResourceExhaustedError(
      absl::StrCat("no IP address left in pod CIDR ", options_.pod_cidr));
}

void SimRuntime::ReleaseIp(Sandbox& s) {
  if (s.ip_offset < 0) return;
  const uint64_t offset = static_cast<uint64_t>(s.ip_offset);
  s.ip_offset = -1;
  s.status.mutable_network()->clear_ip();
  if (offset + 1 != pool_.next) {
    pool_.released.insert(offset);
    return;
  }
  // The highest address handed out: lower the mark instead, and with it any free run below.
  --pool_.next;
  while (!pool_.released.empty() && *pool_.released.rbegin() + 1 == pool_.next) {
    pool_.released.erase(std::prev(pool_.released.end()));
    --pool_.next;
  }
}

void SimRuntime::EraseContainer(const std::string& id) {
  auto it = containers_.find(id);
  if (it == containers_.end()) return;
  if (Sandbox* s = FindSandbox(it->second.pod_sandbox_id); s != nullptr) {
    std::vector<std::string>& ids = s->container_ids;
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  }
  containers_.erase(it);
}

v1::ContainerStats SimRuntime::StatsFor(const Container& c, int64_t now_ns) const {
  const bool running = c.status.state() == v1::CONTAINER_RUNNING;
  v1::ContainerStats stats;
  v1::ContainerAttributes* attrs = stats.mutable_attributes();
  attrs->set_id(c.status.id());
  *attrs->mutable_metadata() = c.status.metadata();
  *attrs->mutable_labels() = c.status.labels();
  *attrs->mutable_annotations() = c.status.annotations();
  v1::CpuUsage* cpu = stats.mutable_cpu();
  cpu->set_timestamp(now_ns);
  cpu->mutable_usage_core_nano_seconds()->set_value(
      running ? CpuNanos(c.behaviour.cpu_millicores, now_ns - c.status.started_at()) : 0);
  cpu->mutable_usage_nano_cores()->set_value(running ? NanoCores(c.behaviour.cpu_millicores) : 0);
  const uint64_t memory = running ? static_cast<uint64_t>(c.behaviour.memory_bytes) : 0;
  v1::MemoryUsage* mem = stats.mutable_memory();
  mem->set_timestamp(now_ns);
  mem->mutable_working_set_bytes()->set_value(memory);
  mem->mutable_usage_bytes()->set_value(memory);
  mem->mutable_rss_bytes()->set_value(memory);
  v1::FilesystemUsage* fs = stats.mutable_writable_layer();
  fs->set_timestamp(now_ns);
  fs->mutable_fs_id()->set_mountpoint(kImageFsMountpoint);
  fs->mutable_used_bytes()->set_value(0);
  fs->mutable_inodes_used()->set_value(0);
  return stats;
}

v1::PodSandboxStats SimRuntime::SandboxStatsFor(const Sandbox& s, int64_t now_ns) const {
  v1::PodSandboxStats stats;
  v1::PodSandboxAttributes* attrs = stats.mutable_attributes();
  attrs->set_id(s.status.id());
  *attrs->mutable_metadata() = s.status.metadata();
  *attrs->mutable_labels() = s.status.labels();
  *attrs->mutable_annotations() = s.status.annotations();
  v1::LinuxPodSandboxStats* linux_stats = stats.mutable_linux();
  uint64_t cpu_total = 0, nano_cores = 0, memory = 0, processes = 0;
  for (const std::string& id : s.container_ids) {
    auto it = containers_.find(id);
    if (it == containers_.end()) continue;
    v1::ContainerStats* cs = linux_stats->add_containers();
    *cs = StatsFor(it->second, now_ns);
    cpu_total = SaturatingAdd(cpu_total, cs->cpu().usage_core_nano_seconds().value());
    nano_cores = SaturatingAdd(nano_cores, cs->cpu().usage_nano_cores().value());
    memory = SaturatingAdd(memory, cs->memory().working_set_bytes().value());
    if (it->second.status.state() == v1::CONTAINER_RUNNING) ++processes;
  }
  v1::CpuUsage* cpu = linux_stats->mutable_cpu();
  cpu->set_timestamp(now_ns);
  cpu->mutable_usage_core_nano_seconds()->set_value(cpu_total);
  cpu->mutable_usage_nano_cores()->set_value(nano_cores);
  v1::MemoryUsage* mem = linux_stats->mutable_memory();
  mem->set_timestamp(now_ns);
  mem->mutable_working_set_bytes()->set_value(memory);
  mem->mutable_usage_bytes()->set_value(memory);
  mem->mutable_rss_bytes()->set_value(memory);
  v1::NetworkUsage* net = linux_stats->mutable_network();
  net->set_timestamp(now_ns);
  v1::NetworkInterfaceUsage* eth0 = net->mutable_default_interface();
  eth0->set_name("eth0");
  eth0->mutable_rx_bytes()->set_value(0);
  eth0->mutable_rx_errors()->set_value(0);
  eth0->mutable_tx_bytes()->set_value(0);
  eth0->mutable_tx_errors()->set_value(0);
  v1::ProcessUsage* process = linux_stats->mutable_process();
  process->set_timestamp(now_ns);
  process->mutable_process_count()->set_value(processes);
  return stats;
}

const v1::Image* SimRuntime::FindImage(const std::string& ref) const {
  if (ref.empty()) return nullptr;
  if (auto it = images_.find(ref); it != images_.end()) return &it->second;
  const std::string normalized = NormalizeImageRef(ref);
  if (auto it = images_.find(PseudoDigest(normalized)); it != images_.end()) return &it->second;
  for (const auto& [id, image] : images_) {
    for (const std::string& tag : image.repo_tags()) {
      if (tag == normalized) return &image;
    }
    for (const std::string& digest : image.repo_digests()) {
      if (digest == normalized) return &image;
    }
  }
  return nullptr;
}

// ---- RuntimeService -----------------------------------------------------------------------

absl::StatusOr<v1::VersionResponse> SimRuntime::Version(const std::string& api_version) {
  v1::VersionResponse resp;
  resp.set_version(kKubeRuntimeAPIVersion);
  resp.set_runtime_name(options_.runtime_name);
  resp.set_runtime_version(options_.runtime_version);
  resp.set_runtime_api_version(kRuntimeApiVersion);
  return resp;
}

absl::StatusOr<std::string> SimRuntime::RunPodSandbox(const v1::PodSandboxConfig& config,
                                                      const std::string& runtime_handler) {
  if (!config.has_metadata()) {
    return absl::InvalidArgumentError("RunPodSandbox: sandbox config must include metadata");
  }
  if (const absl::Duration delay = StartDelay(config.annotations()); delay > absl::ZeroDuration()) {
    options_.sleep(delay);
  }
  absl::MutexLock lock(&mu_);
  const v1::PodSandboxMetadata& md = config.metadata();
  for (const auto& [id, s] : sandboxes_) {
    const v1::PodSandboxMetadata& other = s.status.metadata();
    if (other.name() == md.name() && other.namespace_() == md.namespace_() &&
        other.uid() == md.uid() && other.attempt() == md.attempt()) {
      return absl::AlreadyExistsError(absl::StrCat(
          "RunPodSandbox: failed to reserve sandbox name \"", md.name(), "_", md.namespace_(), "_",
          md.uid(), "_", md.attempt(), "\": name is reserved for \"", id, "\""));
    }
  }
  const v1::NamespaceOption& ns = config.linux().security_context().namespace_options();
  int64_t ip_offset = -1;
  if (ns.network() != v1::NODE) {
    absl::StatusOr<uint64_t> offset = AllocateIp();
    if (!offset.ok()) {
      return absl::Status(offset.status().code(),
                          absl::StrCat("RunPodSandbox: hollow node: ", offset.status().message()));
    }
    ip_offset = static_cast<int64_t>(*offset);
  }
  std::string id = NewId();
  Sandbox& s = sandboxes_[id];
  s.ip_offset = ip_offset;
  s.log_directory = config.log_directory();
  v1::PodSandboxStatus& st = s.status;
  st.set_id(id);
  *st.mutable_metadata() = md;
  st.set_state(v1::SANDBOX_READY);
  st.set_created_at(NowNanos());
  if (ip_offset >= 0) {
    st.mutable_network()->set_ip(
        FormatIpv4(pool_.network + static_cast<uint32_t>(static_cast<uint64_t>(ip_offset))));
  } else {
    st.mutable_network();
  }
  *st.mutable_linux()->mutable_namespaces()->mutable_options() = ns;
  *st.mutable_labels() = config.labels();
  *st.mutable_annotations() = config.annotations();
  st.set_runtime_handler(runtime_handler);
  return id;
}

absl::Status SimRuntime::StopPodSandbox(const std::string& pod_sandbox_id) {
  absl::MutexLock lock(&mu_);
  Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("StopPodSandbox", "sandbox", pod_sandbox_id);
  const int64_t now = NowNanos();
  for (const std::string& id : s->container_ids) {
    Container* c = FindContainer(id);
    if (c == nullptr) continue;
    Advance(*c, now);
    if (c->status.state() != v1::CONTAINER_RUNNING) continue;
    c->status.set_state(v1::CONTAINER_EXITED);
    c->status.set_finished_at(now);
    c->status.set_exit_code(kKilledExitCode);
    c->status.set_reason(ExitReason(kKilledExitCode));
  }
  s->status.set_state(v1::SANDBOX_NOTREADY);
  ReleaseIp(*s);
  return absl::OkStatus();
}

absl::Status SimRuntime::RemovePodSandbox(const std::string& pod_sandbox_id) {
  absl::MutexLock lock(&mu_);
  Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return absl::OkStatus();
  ReleaseIp(*s);
  for (const std::string& id : s->container_ids) containers_.erase(id);
  sandboxes_.erase(pod_sandbox_id);
  return absl::OkStatus();
}

absl::StatusOr<v1::PodSandboxStatusResponse> SimRuntime::PodSandboxStatus(
    const std::string& pod_sandbox_id, bool verbose) {
  absl::MutexLock lock(&mu_);
  const Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("PodSandboxStatus", "sandbox", pod_sandbox_id);
  const int64_t now = NowNanos();
  AdvanceSandbox(*s, now);
  v1::PodSandboxStatusResponse resp;
  *resp.mutable_status() = s->status;
  for (const std::string& id : s->container_ids) {
    if (const Container* c = FindContainer(id); c != nullptr) {
      *resp.add_containers_statuses() = c->status;
    }
  }
  resp.set_timestamp(now);
  return resp;
}

absl::StatusOr<std::vector<v1::PodSandbox>> SimRuntime::ListPodSandbox(
    const v1::PodSandboxFilter* filter) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::PodSandbox> out;
  for (const auto& [id, s] : sandboxes_) {
    if (SandboxMatches(id, s.status, filter)) out.push_back(SandboxListItem(id, s.status));
  }
  return out;
}

absl::StatusOr<v1::PortForwardResponse> SimRuntime::PortForward(
    const v1::PortForwardRequest& request) {
  return Unimplemented("PortForward", kNoStreaming);
}

absl::StatusOr<std::string> SimRuntime::CreateContainer(
    const std::string& pod_sandbox_id, const v1::ContainerConfig& config,
    const v1::PodSandboxConfig& sandbox_config) {
  if (!config.has_metadata()) {
    return absl::InvalidArgumentError("CreateContainer: container config must include metadata");
  }
  if (config.image().image().empty()) {
    return absl::InvalidArgumentError("CreateContainer: container config must include an image");
  }
  absl::MutexLock lock(&mu_);
  Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("CreateContainer", "sandbox", pod_sandbox_id);
  if (s->status.state() != v1::SANDBOX_READY) {
    return absl::FailedPreconditionError(
        absl::StrCat("CreateContainer: sandbox \"", pod_sandbox_id, "\" is not running"));
  }
  const v1::ContainerMetadata& md = config.metadata();
  for (const std::string& other_id : s->container_ids) {
    const Container* other = FindContainer(other_id);
    if (other != nullptr && other->status.metadata().name() == md.name() &&
        other->status.metadata().attempt() == md.attempt()) {
      return absl::AlreadyExistsError(
          absl::StrCat("CreateContainer: failed to reserve container name \"", md.name(), "_",
                       md.attempt(), "\": name is reserved for \"", other_id, "\""));
    }
  }
  std::string id = NewId();
  Container& c = containers_[id];
  s->container_ids.push_back(id);
  c.pod_sandbox_id = pod_sandbox_id;
  c.behaviour = ResolveBehaviour(
      sandbox_config.annotations().empty() ? s->status.annotations() : sandbox_config.annotations(),
      md.name());
  v1::ContainerStatus& st = c.status;
  st.set_id(id);
  *st.mutable_metadata() = md;
  st.set_state(v1::CONTAINER_CREATED);
  st.set_created_at(NowNanos());
  *st.mutable_image() = config.image();
  const v1::Image* image = FindImage(config.image().image());
  st.set_image_ref(image != nullptr ? image->id() : config.image().image());
  *st.mutable_labels() = config.labels();
  *st.mutable_annotations() = config.annotations();
  const std::string& log_dir =
      sandbox_config.log_directory().empty() ? s->log_directory : sandbox_config.log_directory();
  if (!config.log_path().empty()) {
    st.set_log_path(log_dir.empty() ? config.log_path()
                                    : absl::StrCat(log_dir, "/", config.log_path()));
  }
  if (config.linux().has_resources()) {
    *st.mutable_resources()->mutable_linux() = config.linux().resources();
  }
  return id;
}

absl::StatusOr<SimRuntime::Container*> SimRuntime::StartableContainer(
    const std::string& container_id) {
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("StartContainer", "container", container_id);
  if (c->status.state() != v1::CONTAINER_CREATED) {
    return absl::FailedPreconditionError(
        absl::StrCat("StartContainer: container \"", container_id, "\" is in ",
                     v1::ContainerState_Name(c->status.state()), " state"));
  }
  const Sandbox* s = FindSandbox(c->pod_sandbox_id);
  if (s == nullptr || s->status.state() != v1::SANDBOX_READY) {
    return absl::FailedPreconditionError(
        absl::StrCat("StartContainer: sandbox \"", c->pod_sandbox_id, "\" is not running"));
  }
  return c;
}

absl::Status SimRuntime::StartContainer(const std::string& container_id) {
  // Checked before the delay so that a bad call fails at once, and again after it: the
  // container or its sandbox may have changed meanwhile.
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Container*> c = StartableContainer(container_id);
    if (!c.ok()) return c.status();
    delay = (*c)->behaviour.start_delay;
  }
  if (delay > absl::ZeroDuration()) options_.sleep(delay);
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Container*> c = StartableContainer(container_id);
  if (!c.ok()) return c.status();
  (*c)->status.set_state(v1::CONTAINER_RUNNING);
  (*c)->status.set_started_at(NowNanos());
  return absl::OkStatus();
}

absl::Status SimRuntime::StopContainer(const std::string& container_id, int64_t timeout_seconds) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("StopContainer", "container", container_id);
  const int64_t now = NowNanos();
  Advance(*c, now);
  if (c->status.state() != v1::CONTAINER_RUNNING) return absl::OkStatus();
  c->status.set_state(v1::CONTAINER_EXITED);
  c->status.set_finished_at(now);
  c->status.set_exit_code(0);
  c->status.set_reason(ExitReason(0));
  return absl::OkStatus();
}

absl::Status SimRuntime::RemoveContainer(const std::string& container_id) {
  absl::MutexLock lock(&mu_);
  EraseContainer(container_id);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Container>> SimRuntime::ListContainers(
    const v1::ContainerFilter* filter) {
  absl::MutexLock lock(&mu_);
  AdvanceAll(NowNanos());
  std::vector<v1::Container> out;
  for (const auto& [id, c] : containers_) {
    if (ContainerMatches(id, c.pod_sandbox_id, c.status, filter)) {
      out.push_back(ContainerListItem(id, c.pod_sandbox_id, c.status));
    }
  }
  return out;
}

absl::StatusOr<v1::ContainerStatusResponse> SimRuntime::ContainerStatus(
    const std::string& container_id, bool verbose) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("ContainerStatus", "container", container_id);
  Advance(*c, NowNanos());
  v1::ContainerStatusResponse resp;
  *resp.mutable_status() = c->status;
  return resp;
}

absl::Status SimRuntime::UpdateContainerResources(const std::string& container_id,
                                                  const v1::ContainerResources& resources) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("UpdateContainerResources", "container", container_id);
  if (resources.has_linux()) {
    *c->status.mutable_resources()->mutable_linux() = resources.linux();
  }
  if (resources.has_windows()) {
    *c->status.mutable_resources()->mutable_windows() = resources.windows();
  }
  return absl::OkStatus();
}

absl::Status SimRuntime::ReopenContainerLog(const std::string& container_id) {
  absl::MutexLock lock(&mu_);
  if (FindContainer(container_id) == nullptr) {
    return NotFound("ReopenContainerLog", "container", container_id);
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ExecSyncResponse> SimRuntime::ExecSync(const std::string& container_id,
                                                          const std::vector<std::string>& cmd,
                                                          absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("ExecSync", "container", container_id);
  Advance(*c, NowNanos());
  if (c->status.state() != v1::CONTAINER_RUNNING) {
    return absl::FailedPreconditionError(
        absl::StrCat("ExecSync: container \"", container_id, "\" is in ",
                     v1::ContainerState_Name(c->status.state()), " state"));
  }
  v1::ExecSyncResponse resp;
  resp.set_exit_code(c->behaviour.exec_exit_code);
  return resp;
}

absl::StatusOr<v1::ExecResponse> SimRuntime::Exec(const v1::ExecRequest& request) {
  return Unimplemented("Exec", kNoStreaming);
}

absl::StatusOr<v1::AttachResponse> SimRuntime::Attach(const v1::AttachRequest& request) {
  return Unimplemented("Attach", kNoStreaming);
}

absl::Status SimRuntime::CheckpointContainer(const v1::CheckpointContainerRequest& request) {
  return Unimplemented("CheckpointContainer", "hollow node: no checkpoints");
}

absl::Status SimRuntime::GetContainerEvents(const ContainerEventCallback& on_event,
                                            StreamCancellation& cancel) {
  return Unimplemented("GetContainerEvents", "hollow node: no container events");
}

absl::StatusOr<v1::ContainerStats> SimRuntime::ContainerStats(const std::string& container_id) {
  absl::MutexLock lock(&mu_);
  Container* c = FindContainer(container_id);
  if (c == nullptr) return NotFound("ContainerStats", "container", container_id);
  const int64_t now = NowNanos();
  Advance(*c, now);
  return StatsFor(*c, now);
}

absl::StatusOr<std::vector<v1::ContainerStats>> SimRuntime::ListContainerStats(
    const v1::ContainerStatsFilter* filter) {
  absl::MutexLock lock(&mu_);
  const int64_t now = NowNanos();
  AdvanceAll(now);
  std::vector<v1::ContainerStats> out;
  for (const auto& [id, c] : containers_) {
    if (filter != nullptr) {
      if (!filter->id().empty() && filter->id() != id) continue;
      if (!filter->pod_sandbox_id().empty() && filter->pod_sandbox_id() != c.pod_sandbox_id) {
        continue;
      }
      if (!LabelsMatch(c.status.labels(), filter->label_selector())) continue;
    }
    out.push_back(StatsFor(c, now));
  }
  return out;
}

absl::StatusOr<v1::PodSandboxStats> SimRuntime::PodSandboxStats(const std::string& pod_sandbox_id) {
  absl::MutexLock lock(&mu_);
  const Sandbox* s = FindSandbox(pod_sandbox_id);
  if (s == nullptr) return NotFound("PodSandboxStats", "sandbox", pod_sandbox_id);
  const int64_t now = NowNanos();
  AdvanceSandbox(*s, now);
  return SandboxStatsFor(*s, now);
}

absl::StatusOr<std::vector<v1::PodSandboxStats>> SimRuntime::ListPodSandboxStats(
    const v1::PodSandboxStatsFilter* filter) {
  absl::MutexLock lock(&mu_);
  const int64_t now = NowNanos();
  AdvanceAll(now);
  std::vector<v1::PodSandboxStats> out;
  for (const auto& [id, s] : sandboxes_) {
    if (filter != nullptr) {
      if (!filter->id().empty() && filter->id() != id) continue;
      if (!LabelsMatch(s.status.labels(), filter->label_selector())) continue;
    }
    out.push_back(SandboxStatsFor(s, now));
  }
  return out;
}

absl::StatusOr<std::vector<v1::MetricDescriptor>> SimRuntime::ListMetricDescriptors() {
  return std::vector<v1::MetricDescriptor>();
}

absl::StatusOr<std::vector<v1::PodSandboxMetrics>> SimRuntime::ListPodSandboxMetrics() {
  return std::vector<v1::PodSandboxMetrics>();
}

absl::Status SimRuntime::UpdateRuntimeConfig(const v1::RuntimeConfig& runtime_config) {
  return absl::OkStatus();
}

absl::StatusOr<v1::StatusResponse> SimRuntime::Status(bool verbose) {
  v1::StatusResponse resp;
  for (const char* type : {"RuntimeReady", "NetworkReady"}) {
    v1::RuntimeCondition* cond = resp.mutable_status()->add_conditions();
    cond->set_type(type);
    cond->set_status(true);
  }
  return resp;
}

// ---- ImageManagerService ------------------------------------------------------------------

absl::StatusOr<std::vector<v1::Image>> SimRuntime::ListImages(const v1::ImageFilter* filter) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Image> out;
  if (filter != nullptr && !filter->image().image().empty()) {
    if (const v1::Image* image = FindImage(filter->image().image()); image != nullptr) {
      out.push_back(*image);
    }
    return out;
  }
  out.reserve(images_.size());
  for (const auto& [id, image] : images_) out.push_back(image);
  return out;
}

absl::StatusOr<v1::ImageStatusResponse> SimRuntime::ImageStatus(const v1::ImageSpec& image,
                                                                bool verbose) {
  absl::MutexLock lock(&mu_);
  v1::ImageStatusResponse resp;
  if (const v1::Image* found = FindImage(image.image()); found != nullptr) {
    *resp.mutable_image() = *found;
  }
  return resp;
}

absl::StatusOr<std::string> SimRuntime::PullImage(const v1::ImageSpec& image,
                                                  const v1::AuthConfig* auth,
                                                  const v1::PodSandboxConfig* sandbox_config) {
  if (image.image().empty()) {
    return absl::InvalidArgumentError("PullImage: image spec must name an image");
  }
  {
    absl::MutexLock lock(&mu_);
    if (const v1::Image* found = FindImage(image.image()); found != nullptr) return found->id();
  }
  if (options_.pull_delay > absl::ZeroDuration()) options_.sleep(options_.pull_delay);
  const std::string name = NormalizeImageRef(image.image());
  const std::string id = PseudoDigest(name);
  absl::MutexLock lock(&mu_);
  // Another pull of the same reference may have finished meanwhile.
  if (const v1::Image* found = FindImage(image.image()); found != nullptr) return found->id();
  v1::Image& added = images_[id];
  added.set_id(id);
  if (name.find('@') == std::string::npos) {
    added.add_repo_tags(name);
    added.add_repo_digests(
        absl::StrCat(Repository(name), "@", PseudoDigest(absl::StrCat("manifest:", name))));
  } else {
    added.add_repo_digests(name);
  }
  added.set_size(options_.image_size_bytes);
  *added.mutable_spec() = image;
  return id;
}

absl::Status SimRuntime::RemoveImage(const v1::ImageSpec& image) {
  absl::MutexLock lock(&mu_);
  if (const v1::Image* found = FindImage(image.image()); found != nullptr) {
    const std::string id = found->id();
    images_.erase(id);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::FilesystemUsage>> SimRuntime::ImageFsInfo() {
  absl::MutexLock lock(&mu_);
  v1::FilesystemUsage usage;
  usage.set_timestamp(NowNanos());
  usage.mutable_fs_id()->set_mountpoint(kImageFsMountpoint);
  uint64_t bytes = 0;
  for (const auto& [id, image] : images_) bytes = SaturatingAdd(bytes, image.size());
  usage.mutable_used_bytes()->set_value(bytes);
  usage.mutable_inodes_used()->set_value(images_.size());
  return std::vector<v1::FilesystemUsage>{usage};
}

}  // namespace kubelet::cri
