#include "kubelet/certificate/bootstrap.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/certificates.h"
#include "api/codec.h"
#include "common/files.h"
#include "common/log.h"
#include "common/openssl.h"
#include "common/strings.h"

namespace kubelet::certificate {
namespace {

using ossl::BioPtr;
using ossl::BioString;
using ossl::PkeyPtr;
using ossl::ReqPtr;
using ossl::X509Ptr;

constexpr char kKeyTmp[] = "kubelet-client.key.tmp";
constexpr char kCurrent[] = "kubelet-client-current.pem";
const std::vector<std::string> kUsages = {"digital signature", "client auth"};

std::string OpenSslError() { return ossl::LastError(); }

// The bootstrap key kept across restarts, or a new ECDSA P-256 one.
absl::StatusOr<PkeyPtr> LoadOrGenerateKey(const std::string& path) {
  if (absl::StatusOr<std::string> pem = ReadFileToString(path); pem.ok()) {
    BioPtr bio(BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size())));
    PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (key) return key;
    KLOG_WARNING("Ignoring an unreadable bootstrap key; generating a new one", "path", path);
  }
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return absl::InternalError(absl::StrCat("generate key: ", OpenSslError()));
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return absl::InternalError(absl::StrCat("encode key: ", OpenSslError()));
  }
  if (absl::Status st = WriteFileAtomically(path, BioString(bio.get()), 0600); !st.ok()) return st;
  return key;
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return absl::InternalError(absl::StrCat("encode key: ", OpenSslError()));
  }
  return BioString(bio.get());
}

absl::StatusOr<std::string> PublicKeyDer(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key, &der);
  if (len <= 0) return absl::InternalError(absl::StrCat("encode public key: ", OpenSslError()));
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return out;
}

absl::StatusOr<std::string> MakeCsrPem(EVP_PKEY* key, const std::string& cn,
                                       const std::string& org) {
  ReqPtr req(X509_REQ_new());
  X509_REQ_set_version(req.get(), 0);
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  if (X509_REQ_set_pubkey(req.get(), key) != 1 ||
      X509_REQ_sign(req.get(), key, EVP_sha256()) <= 0) {
    return absl::InternalError(absl::StrCat("sign certificate request: ", OpenSslError()));
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509_REQ(bio.get(), req.get()) != 1) {
    return absl::InternalError(absl::StrCat("encode certificate request: ", OpenSslError()));
  }
  return BioString(bio.get());
}

// The first certificate of `pem` and whether it is valid at `now`.
absl::Status CertValidNow(const std::string& pem, absl::Time now) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return absl::InvalidArgumentError("no certificate");
  const time_t t = absl::ToTimeT(now);
  if (X509_cmp_time(X509_get0_notBefore(cert.get()), const_cast<time_t*>(&t)) > 0) {
    return absl::FailedPreconditionError("certificate not valid yet");
  }
  if (X509_cmp_time(X509_get0_notAfter(cert.get()), const_cast<time_t*>(&t)) < 0) {
    return absl::FailedPreconditionError("certificate expired");
  }
  return absl::OkStatus();
}

std::string CsrPath(const std::string& name) {
  return absl::StrCat("/apis/certificates.k8s.io/v1/certificatesigningrequests/", name);
}

absl::StatusOr<api::CertificateSigningRequest> GetCsr(apiclient::RestClient& client,
                                                      const std::string& name) {
  apiclient::Request req;
  req.path = CsrPath(name);
  absl::StatusOr<apiclient::Response> resp = client.Do(req);
  if (!resp.ok()) return resp.status();
  if (!resp->ok()) return apiclient::ResponseStatus(*resp);
  return api::Decode<api::CertificateSigningRequest>(resp->body);
}

// Creates the request, or finds the one a previous start of this kubelet created (same name,
// same request).
absl::Status CreateCsr(apiclient::RestClient& client, const api::CertificateSigningRequest& csr) {
  apiclient::Request req;
  req.method = "POST";
  req.path = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
  req.body = api::Encode(csr);
  req.content_type = apiclient::kJsonContentType;
  absl::StatusOr<apiclient::Response> resp = client.Do(req);
  if (!resp.ok()) return resp.status();
  if (resp->ok()) return absl::OkStatus();
  if (resp->code != 409) return apiclient::ResponseStatus(*resp);
  absl::StatusOr<api::CertificateSigningRequest> existing = GetCsr(client, csr.metadata.name);
  if (!existing.ok()) return existing.status();
  if (existing->spec.request != csr.spec.request ||
      existing->spec.signer_name != csr.spec.signer_name) {
    return absl::AlreadyExistsError(absl::StrCat("certificate signing request ", csr.metadata.name,
                                                 " exists with another request"));
  }
  KLOG_INFO("Certificate signing request already exists, waiting for it", "name",
            csr.metadata.name);
  return absl::OkStatus();
}

std::string Timestamp(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d-%H-%M-%S", t, absl::UTCTimeZone());
}

std::string WrittenKubeconfig(const apiclient::RestConfig& bootstrap, const std::string& cert) {
  std::string ca = bootstrap.ca_pem;
  if (ca.empty() && !bootstrap.ca_file.empty())
    ca = ReadFileToString(bootstrap.ca_file).value_or("");
  std::string out = "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n";
  if (!ca.empty()) {
    absl::StrAppend(&out, "    certificate-authority-data: ", absl::Base64Escape(ca), "\n");
  }
  if (bootstrap.insecure) out += "    insecure-skip-tls-verify: true\n";
  absl::StrAppend(&out, "    server: ", bootstrap.host,
                  "\n  name: default-cluster\ncontexts:\n- context:\n"
                  "    cluster: default-cluster\n    namespace: default\n"
                  "    user: default-auth\n  name: default-context\n"
                  "current-context: default-context\nusers:\n- name: default-auth\n  user:\n"
                  "    client-certificate: ",
                  cert, "\n    client-key: ", cert, "\n");
  return out;
}

}  // namespace

std::string DigestedName(const std::string& public_key_der, const std::string& common_name,
                         const std::vector<std::string>& organizations,
                         const std::vector<std::string>& usages) {
  std::string stream;
  auto write = [&](const std::string& data) {
    absl::StrAppend(&stream, absl::WebSafeBase64Escape(AV(data)), "|");
  };
  write(public_key_der);
  write(common_name);
  for (const std::string& o : organizations) write(o);
  for (const std::string& u : usages) write(u);
  return absl::StrCat("node-csr-",
                      absl::WebSafeBase64Escape(AV(ossl::Digest(EVP_sha512_256(), stream))));
}

absl::Status ClientConfigStillValid(const std::string& kubeconfig_path, absl::Time now) {
  absl::StatusOr<apiclient::RestConfig> rc = apiclient::LoadRestConfig(kubeconfig_path);
  if (!rc.ok()) return rc.status();
  std::string pem = rc->client_cert_pem;
  if (pem.empty() && !rc->client_cert_file.empty()) {
    absl::StatusOr<std::string> f = ReadFileToString(rc->client_cert_file);
    if (!f.ok()) return f.status();
    pem = *std::move(f);
  }
  if (pem.empty()) return absl::FailedPreconditionError("no client certificate");
  return CertValidNow(pem, now);
}

absl::Status LoadClientCert(const BootstrapOptions& o, Clock& clock) {
  if (absl::Status valid = ClientConfigStillValid(o.kubeconfig_path, clock.Now()); valid.ok()) {
    KLOG_INFO("Kubeconfig exists and is valid, skipping bootstrap", "path", o.kubeconfig_path);
    return absl::OkStatus();
  } else {
    KLOG_INFO("Using bootstrap kubeconfig to generate TLS client cert, key and kubeconfig file",
              "reason", std::string(valid.message()));
  }
  absl::StatusOr<apiclient::RestConfig> boot =
      apiclient::LoadRestConfig(o.bootstrap_kubeconfig_path);
  if (!boot.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("unable to load bootstrap kubeconfig: ",
                                                   std::string(boot.status().message())));
  }
  std::error_code ec;
  std::filesystem::create_directories(o.cert_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("create ", o.cert_dir, ": ", ec.message()));

  const std::string key_path = absl::StrCat(o.cert_dir, "/", kKeyTmp);
  absl::StatusOr<PkeyPtr> key = LoadOrGenerateKey(key_path);
  if (!key.ok()) return key.status();
  const std::string cn = absl::StrCat("system:node:", o.node_name);
  const std::string org = "system:nodes";
  absl::StatusOr<std::string> csr_pem = MakeCsrPem(key->get(), cn, org);
  if (!csr_pem.ok()) return csr_pem.status();
  absl::StatusOr<std::string> der = PublicKeyDer(key->get());
  if (!der.ok()) return der.status();

  api::CertificateSigningRequest csr;
  csr.metadata.name = DigestedName(*der, cn, {org}, kUsages);
  csr.spec.request = *csr_pem;
  csr.spec.signer_name = api::kKubeAPIServerClientKubeletSignerName;
  csr.spec.usages = kUsages;

  absl::StatusOr<std::unique_ptr<apiclient::RestClient>> client = o.make_client(*boot);
  if (!client.ok()) return client.status();
  const absl::Time deadline = absl::Now() + o.wait;
  // The API server may not answer yet: keep trying to create the request until the deadline.
  for (;;) {
    absl::Status st = CreateCsr(**client, csr);
    if (st.ok()) break;
    if (absl::IsAlreadyExists(st) || absl::Now() >= deadline) {
      return absl::Status(st.code(), absl::StrCat("unable to create certificate signing request: ",
                                                  std::string(st.message())));
    }
    KLOG_V(2, "Failed to create the certificate signing request, retrying", "err",
           std::string(st.message()));
    absl::SleepFor(o.poll);
  }
  KLOG_INFO("Waiting for client certificate to be issued", "csr", csr.metadata.name);
  std::string cert_pem;
  while (cert_pem.empty()) {
    absl::StatusOr<api::CertificateSigningRequest> got = GetCsr(**client, csr.metadata.name);
    if (got.ok()) {
      for (const api::CertificateSigningRequestCondition& c : got->status.conditions) {
        if ((c.type == "Denied" || c.type == "Failed") && c.status != "False") {
          return absl::PermissionDeniedError(
              absl::StrCat("certificate signing request ", csr.metadata.name, " is ", c.type,
                           ", reason: ", c.reason, ", message: ", c.message));
        }
      }
      cert_pem = got->status.certificate;
    }
    if (!cert_pem.empty()) break;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "timed out waiting for the certificate signing request ", csr.metadata.name));
    }
    absl::SleepFor(o.poll);
  }

  absl::StatusOr<std::string> key_pem = KeyPem(key->get());
  if (!key_pem.ok()) return key_pem.status();
  const std::string dated =
      absl::StrCat(o.cert_dir, "/kubelet-client-", Timestamp(clock.Now()), ".pem");
  if (absl::Status st = WriteFileAtomically(dated, cert_pem + *key_pem, 0600); !st.ok()) return st;
  const std::string current = absl::StrCat(o.cert_dir, "/", kCurrent);
  const std::string link_tmp = absl::StrCat(current, ".tmp");
  std::filesystem::remove(link_tmp, ec);
  std::filesystem::create_symlink(dated, link_tmp, ec);
  if (!ec) std::filesystem::rename(link_tmp, current, ec);
  if (ec) return absl::InternalError(absl::StrCat("link ", current, ": ", ec.message()));
  std::filesystem::remove(key_path, ec);
  if (absl::Status st =
          WriteFileAtomically(o.kubeconfig_path, WrittenKubeconfig(*boot, current), 0600);
      !st.ok()) {
    return st;
  }
  KLOG_INFO("Client certificate issued, kubeconfig written", "certificate", dated, "kubeconfig",
            o.kubeconfig_path);
  return absl::OkStatus();
}

}  // namespace kubelet::certificate
