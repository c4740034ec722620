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

constexpr char kPrefix[] = "kubelet-client";
constexpr char kLogger[] = "kubernetes.io/kube-apiserver-client-kubelet";

std::string CurrentPath(const std::string& dir) {
  return absl::StrCat(dir, "/", kPrefix, "-current.pem");
}

}  // namespace

ClientCertificateManager::ClientCertificateManager(ClientCertificateManagerOptions options,
                                                   Clock& clock)
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

ClientCertificateManager::~ClientCertificateManager() { Stop(); }

absl::StatusOr<std::unique_ptr<ClientCertificateManager>> ClientCertificateManager::Create(
    ClientCertificateManagerOptions options, Clock& clock) {
  std::unique_ptr<ClientCertificateManager> m(
      new ClientCertificateManager(std::move(options), clock));
  const ClientCertificateManagerOptions& o = m->options_;
  absl::MutexLock lock(&m->mu_);
  // 1. The store.
  if (absl::StatusOr<std::pair<std::string, std::string>> stored =
          LoadPair(CurrentPath(o.cert_dir));
      stored.ok() && ReadCertInfo(stored->first).ok()) {
    KLOG_INFO("Loading cert/key pair from a file", "filePath", CurrentPath(o.cert_dir));
    m->SetCurrent(stored->first, stored->second, false);
    return m;
  }
  // 2. The kubeconfig's files, used as they are.
  if (!o.config.client_cert_file.empty() && !o.config.client_key_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFileToString(o.config.client_cert_file);
    absl::StatusOr<std::string> key = ReadFileToString(o.config.client_key_file);
    if (cert.ok() && key.ok()) {
      auto [cert_pem, unused] = SplitPem(*cert);
      auto [unused2, key_pem] = SplitPem(*key);
      if (!cert_pem.empty() && !key_pem.empty() && ReadCertInfo(cert_pem).ok()) {
        KLOG_INFO("Loading cert/key pair", "certFile", o.config.client_cert_file, "keyFile",
                  o.config.client_key_file);
        m->SetCurrent(cert_pem, key_pem, false);
        return m;
      }
    }
  }
  // 3. The kubeconfig's data: written to the store, rotated at once.
  if (!o.config.client_cert_pem.empty() && !o.config.client_key_pem.empty() &&
      ReadCertInfo(o.config.client_cert_pem).ok()) {
    absl::StatusOr<std::string> stored = StoreCertificate(
        o.cert_dir, kPrefix, o.config.client_cert_pem, o.config.client_key_pem, clock.Now());
    if (!stored.ok()) return stored.status();
    m->SetCurrent(o.config.client_cert_pem, o.config.client_key_pem, true);
    return m;
  }
  // 4. None yet.
  KLOG_INFO("No client certificate yet, it will be requested", "certDir", o.cert_dir);
  m->deadline_ = clock.Now();
  return m;
}

void ClientCertificateManager::SetCurrent(std::string cert_pem, std::string key_pem,
                                          bool force_rotation) {
  auto next = std::make_shared<apiclient::ClientCertificate>();
  next->generation = current_->generation + 1;
  next->cert_pem = std::move(cert_pem);
  next->key_pem = std::move(key_pem);
  absl::StatusOr<CertInfo> info = ReadCertInfo(next->cert_pem);
  not_before_.reset();
  not_after_.reset();
  if (info.ok()) {
    not_before_ = info->not_before;
    not_after_ = info->not_after;
  }
  current_ = std::move(next);
  force_rotation_ = force_rotation;
  // Another subject than the one asked for (e.g. an admin's kubeconfig) is replaced at once.
  if (info.ok() && info->common_name != absl::StrCat("system:node:", options_.node_name)) {
    force_rotation_ = true;
  }
  deadline_ = ComputeDeadline();
}

absl::Time ClientCertificateManager::ComputeDeadline() {
  const absl::Time now = clock_.Now();
  if (force_rotation_ || !not_before_ || !not_after_ || now >= *not_after_) return now;
  const absl::Duration total = *not_after_ - *not_before_;
  const absl::Time deadline = *not_before_ + total * (0.7 + 0.2 * options_.random());
  KLOG_INFO("Certificate rotation deadline determined", "logger", kLogger, "expiration",
            absl::FormatTime(*not_after_), "deadline", absl::FormatTime(deadline));
  return deadline;
}

apiclient::ClientCertificate ClientCertificateManager::Current() const {
  absl::MutexLock lock(&mu_);
  return *current_;
}

apiclient::ClientCertificateSource ClientCertificateManager::Source() const {
  return [this] { return Current(); };
}

double ClientCertificateManager::TtlSeconds() const {
  absl::MutexLock lock(&mu_);
  if (!not_after_ || current_->cert_pem.empty()) return std::numeric_limits<double>::infinity();
  return std::floor(absl::ToDoubleSeconds(*not_after_ - clock_.Now()));
}

absl::Time ClientCertificateManager::RotationDeadline() const {
  absl::MutexLock lock(&mu_);
  return deadline_;
}

absl::Status ClientCertificateManager::RotateOnce() {
  KLOG_INFO("Rotating certificates", "logger", kLogger);
  apiclient::RestConfig rc = options_.config;
  rc.client_certificate_source = nullptr;
  rc.client_cert_file.clear();
  rc.client_key_file.clear();
  rc.client_cert_pem.clear();
  rc.client_key_pem.clear();
  {
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
  absl::StatusOr<std::string> csr_pem = MakeCsrPem(key->get(), cn, "system:nodes");
  if (!csr_pem.ok()) return csr_pem.status();
  api::CertificateSigningRequest csr;
  csr.metadata.generate_name = "csr-";
  csr.spec.request = *csr_pem;
  csr.spec.signer_name = api::kKubeAPIServerClientKubeletSignerName;
  csr.spec.usages = ClientUsages();
  absl::StatusOr<std::unique_ptr<apiclient::RestClient>> client = options_.make_client(rc);
  if (!client.ok()) return client.status();
  absl::StatusOr<std::string> name = CreateCsr(**client, csr);
  if (!name.ok()) {
    return absl::Status(name.status().code(),
                        absl::StrCat("unable to create certificate signing request: ",
                                     std::string(name.status().message())));
  }
  KLOG_INFO("Waiting for client certificate to be issued", "csr", *name);
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
      StoreCertificate(options_.cert_dir, kPrefix, *cert_pem, *key_pem, clock_.Now());
  if (!stored.ok()) return stored.status();
  absl::MutexLock lock(&mu_);
  SetCurrent(*cert_pem, *key_pem, false);
  KLOG_INFO("Client certificate rotated", "logger", kLogger, "csr", *name, "certificate", *stored,
            "expiration", absl::FormatTime(info->not_after));
  return absl::OkStatus();
}

bool ClientCertificateManager::SleepUntil(absl::Time t) {
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

void ClientCertificateManager::Loop() {
  for (;;) {
    absl::Time deadline;
    {
      absl::MutexLock lock(&mu_);
      deadline = deadline_;
    }
    if (deadline > clock_.Now()) {
      KLOG_INFO("Waiting for next certificate rotation", "logger", kLogger, "sleep",
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
                 "logger", kLogger);
      if (!SleepUntil(clock_.Now() + backoff)) return;
      backoff = std::min(backoff * 2, absl::Seconds(32));
    }
  }
}

void ClientCertificateManager::Start() {
  KLOG_INFO("Certificate rotation is enabled", "logger", kLogger);
  thread_ = std::thread([this] { Loop(); });
}

void ClientCertificateManager::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace kubelet::certificate
