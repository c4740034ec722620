#include "kubelet/certificate/manager.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/certificates.h"
#include "common/files.h"
#include "common/log.h"
#include "kubelet/certificate/csr.h"

namespace kubelet::certificate {
namespace {

using Kind = CertificateManagerOptions::Kind;

const char* Prefix(Kind kind) {
  return kind == Kind::kServing ? "kubelet-server" : "kubelet-client";
}

// The signer, also the logger of the log lines.
const char* Signer(Kind kind) {
  return kind == Kind::kServing ? api::kKubeletServingSignerName
                                : api::kKubeAPIServerClientKubeletSignerName;
}

std::string CurrentPath(Kind kind, const std::string& dir) {
  return absl::StrCat(dir, "/", Prefix(kind), "-current.pem");
}

}  // namespace

CertificateManager::CertificateManager(CertificateManagerOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  if (!options_.random) {
    auto gen = std::make_shared<std::mt19937_64>(std::random_device{}());
    auto mu = std::make_shared<absl::Mutex>();
    options_.random = [gen, mu] {
      absl::MutexLock lock(mu.get());
      return std::uniform_real_distribution<double>(0.0, 1.0)(*gen);
    };
  }
  current_ = std::make_shared<const apiclient::ClientCertificate>();
}

CertificateManager::~CertificateManager() { Stop(); }

absl::StatusOr<std::unique_ptr<CertificateManager>> CertificateManager::Create(
    CertificateManagerOptions options, Clock& clock) {
  std::unique_ptr<CertificateManager> m(new CertificateManager(std::move(options), clock));
  const CertificateManagerOptions& o = m->options_;
  const bool serving = o.kind == Kind::kServing;
  absl::MutexLock lock(&m->mu_);
  // 1. The store.
  const std::string current = CurrentPath(o.kind, o.cert_dir);
  if (absl::StatusOr<std::pair<std::string, std::string>> stored = LoadPair(current);
      stored.ok() && ReadCertInfo(stored->first).ok()) {
    KLOG_INFO("Loading cert/key pair from a file", "filePath", current);
    m->SetCurrent(stored->first, stored->second, false);
    return m;
  }
  // 2. Files, used as they are: the kubeconfig's, or tlsCertFile / tlsPrivateKeyFile.
  const std::string& cert_file = serving ? o.serving_cert_file : o.config.client_cert_file;
  const std::string& key_file = serving ? o.serving_key_file : o.config.client_key_file;
  if (!cert_file.empty() && !key_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFileToString(cert_file);
    absl::StatusOr<std::string> key = ReadFileToString(key_file);
    if (cert.ok() && key.ok()) {
      auto [cert_pem, unused] = SplitPem(*cert);
      auto [unused2, key_pem] = SplitPem(*key);
      if (!cert_pem.empty() && !key_pem.empty() && ReadCertInfo(cert_pem).ok()) {
        KLOG_INFO("Loading cert/key pair", "certFile", cert_file, "keyFile", key_file);
        m->SetCurrent(cert_pem, key_pem, false);
        return m;
      }
    }
  }
  // 3. The kubeconfig's data: written to the store, rotated at once.
  if (!serving && !o.config.client_cert_pem.empty() && !o.config.client_key_pem.empty() &&
      ReadCertInfo(o.config.client_cert_pem).ok()) {
    absl::StatusOr<std::string> stored = StoreCertificate(
        o.cert_dir, Prefix(o.kind), o.config.client_cert_pem, o.config.client_key_pem, clock.Now());
    if (!stored.ok()) return stored.status();
    m->SetCurrent(o.config.client_cert_pem, o.config.client_key_pem, true);
    return m;
  }
  // 4. None yet.
  KLOG_INFO(serving ? "No serving certificate yet, it will be requested"
                    : "No client certificate yet, it will be requested",
            "certDir", o.cert_dir);
  m->deadline_ = clock.Now();
  return m;
}

void CertificateManager::SetCurrent(std::string cert_pem, std::string key_pem,
                                    bool force_rotation) {
  auto next = std::make_shared<apiclient::ClientCertificate>();
  next->generation = current_->generation + 1;
  next->cert_pem = std::move(cert_pem);
  next->key_pem = std::move(key_pem);
  absl::StatusOr<CertInfo> info = ReadCertInfo(next->cert_pem);
  not_before_.reset();
  not_after_.reset();
  current_sans_ = {};
  if (info.ok()) {
    not_before_ = info->not_before;
    not_after_ = info->not_after;
    current_sans_ = info->sans;
  }
  current_ = std::move(next);
  force_rotation_ = force_rotation;
  // Another subject than the one asked for (e.g. an admin's kubeconfig) is replaced at once.
  if (info.ok() && info->common_name != absl::StrCat("system:node:", options_.node_name)) {
    force_rotation_ = true;
  }
  deadline_ = ComputeDeadline();
}

bool CertificateManager::SansChangedLocked() {
  if (options_.kind != Kind::kServing || !options_.sans || current_->cert_pem.empty()) {
    return false;
  }
  std::optional<SubjectAltNames> want = options_.sans();
  if (!want.has_value() || want->ips.empty()) return false;
  // As upstream's certSatisfiesTemplate: every name asked for must be in the certificate
  // (addresses compared in canonical form); names it has beyond those do not matter.
  auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const std::string& dns : want->dns_names) {
    if (!has(current_sans_.dns_names, dns)) return true;
  }
  for (const std::string& ip : want->ips) {
    if (!has(current_sans_.ips, CanonicalIp(ip))) return true;
  }
  return false;
}

absl::Time CertificateManager::ComputeDeadline() {
  const absl::Time now = clock_.Now();
  if (force_rotation_ || !not_before_ || !not_after_ || now >= *not_after_) return now;
  if (SansChangedLocked()) {
    KLOG_INFO("Certificate template changed, rotating", "logger", Signer(options_.kind));
    return now;
  }
  const absl::Duration total = *not_after_ - *not_before_;
  const absl::Time deadline = *not_before_ + total * (0.7 + 0.2 * options_.random());
  KLOG_INFO("Certificate rotation deadline determined", "logger", Signer(options_.kind),
            "expiration", absl::FormatTime(*not_after_), "deadline", absl::FormatTime(deadline));
  return deadline;
}

apiclient::ClientCertificate CertificateManager::Current() const {
  absl::MutexLock lock(&mu_);
  return *current_;
}

apiclient::ClientCertificateSource CertificateManager::Source() const {
  return [this] { return Current(); };
}

double CertificateManager::TtlSeconds() const {
  absl::MutexLock lock(&mu_);
  if (!not_after_ || current_->cert_pem.empty()) return std::numeric_limits<double>::infinity();
  return std::floor(absl::ToDoubleSeconds(*not_after_ - clock_.Now()));
}

absl::Time CertificateManager::RotationDeadline() const {
  absl::MutexLock lock(&mu_);
  return deadline_;
}

absl::Status CertificateManager::RotateOnce() {
  const bool serving = options_.kind == Kind::kServing;
  const char* logger = Signer(options_.kind);
  // kServing: the names first; without an IP there is nothing to ask for yet.
  SubjectAltNames sans;
  if (serving) {
    std::optional<SubjectAltNames> want = options_.sans ? options_.sans() : std::nullopt;
    if (!want.has_value() || want->ips.empty()) {
      return absl::UnavailableError("no addresses to request a serving certificate for yet");
    }
    sans = *std::move(want);
  }
  KLOG_INFO("Rotating certificates", "logger", logger);
  apiclient::RestConfig rc = options_.config;
  if (!serving) {
    rc.client_certificate_source = nullptr;
    rc.client_cert_file.clear();
    rc.client_key_file.clear();
    rc.client_cert_pem.clear();
    rc.client_key_pem.clear();
    absl::MutexLock lock(&mu_);
    const bool valid = !current_->cert_pem.empty() && not_after_ && clock_.Now() < *not_after_;
    if (valid) {
      rc.client_cert_pem = current_->cert_pem;
      rc.client_key_pem = current_->key_pem;
    } else if (options_.bootstrap) {
      rc = *options_.bootstrap;
    }
  }
  absl::StatusOr<ossl::PkeyPtr> key = GenerateKey();
  if (!key.ok()) return key.status();
  const std::string cn = absl::StrCat("system:node:", options_.node_name);
  absl::StatusOr<std::string> csr_pem = MakeCsrPem(key->get(), cn, "system:nodes", sans);
  if (!csr_pem.ok()) return csr_pem.status();
  api::CertificateSigningRequest csr;
  csr.metadata.generate_name = "csr-";
  csr.spec.request = *csr_pem;
  csr.spec.signer_name = logger;
  csr.spec.usages = serving ? ServingUsages() : ClientUsages();
  absl::StatusOr<std::unique_ptr<apiclient::RestClient>> client = options_.make_client(rc);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::string> name = CreateCsr(**client, csr);
  if (!name.ok()) {
    return absl::Status(name.status().code(),
                        absl::StrCat("unable to create certificate signing request: ",
                                     std::string(name.status().message())));
  }
  KLOG_INFO(serving ? "Waiting for serving certificate to be issued"
                    : "Waiting for client certificate to be issued",
            "csr", *name);
  absl::StatusOr<std::string> cert_pem =
      WaitForCertificate(**client, *name, absl::Now() + options_.csr_wait, options_.poll, [this] {
        absl::MutexLock lock(&mu_);
        return stopping_;
      });
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<CertInfo> info = ReadCertInfo(*cert_pem);
  if (!info.ok()) return absl::InvalidArgumentError("the issued certificate does not parse");
  absl::StatusOr<std::string> key_pem = KeyPem(key->get());
  if (!key_pem.ok()) return key_pem.status();
  absl::StatusOr<std::string> stored =
      StoreCertificate(options_.cert_dir, Prefix(options_.kind), *cert_pem, *key_pem, clock_.Now());
  if (!stored.ok()) return stored.status();
  std::optional<double> old_lived;
  {
    absl::MutexLock lock(&mu_);
    if (!current_->cert_pem.empty() && not_before_) {
      old_lived = absl::ToDoubleSeconds(clock_.Now() - *not_before_);
    }
    SetCurrent(*cert_pem, *key_pem, false);
  }
  KLOG_INFO(serving ? "Serving certificate rotated" : "Client certificate rotated", "logger",
            logger, "csr", *name, "certificate", *stored, "expiration",
            absl::FormatTime(info->not_after));
  if (old_lived && options_.on_rotated) options_.on_rotated(*old_lived);
  return absl::OkStatus();
}

bool CertificateManager::SleepUntil(absl::Time t) {
  absl::MutexLock lock(&mu_);
  for (;;) {
    if (stopping_) return false;
    const absl::Duration left = t - clock_.Now();
    if (left <= absl::ZeroDuration()) return true;
    // Re-read the clock at least once a minute (a suspended machine's clock jumps).
    auto stopped = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopped), std::min(left, absl::Minutes(1)));
  }
}

void CertificateManager::Loop() {
  for (;;) {
    absl::Time deadline;
    {
      absl::MutexLock lock(&mu_);
      deadline = deadline_;
    }
    if (deadline > clock_.Now()) {
      KLOG_INFO("Waiting for next certificate rotation", "logger", Signer(options_.kind), "sleep",
                absl::FormatDuration(deadline - clock_.Now()));
    }
    if (!SleepUntil(deadline)) return;
    absl::Duration backoff = absl::Seconds(2);
    for (;;) {
      absl::Status st = RotateOnce();
      if (st.ok()) break;
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) return;
      }
      if (options_.on_renew_error) options_.on_renew_error();
      KLOG_ERROR(st, "Failed while requesting a signed certificate from the control plane",
                 "logger", Signer(options_.kind));
      if (!SleepUntil(clock_.Now() + backoff)) return;
      backoff = std::min(backoff * 2, absl::Seconds(32));
    }
  }
}

void CertificateManager::Start() {
  KLOG_INFO("Certificate rotation is enabled", "logger", Signer(options_.kind));
  thread_ = std::thread([this] { Loop(); });
}

void CertificateManager::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace kubelet::certificate
