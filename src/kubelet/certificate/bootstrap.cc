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
#include "kubelet/certificate/csr.h"

namespace kubelet::certificate {
namespace {

using ossl::PkeyPtr;

constexpr char kKeyTmp[] = "kubelet-client.key.tmp";
constexpr char kPrefix[] = "kubelet-client";

// The bootstrap key kept across restarts, or a new ECDSA P-256 one.
absl::StatusOr<PkeyPtr> LoadOrGenerateKey(const std::string& path) {
  if (absl::StatusOr<std::string> pem = ReadFileToString(path); pem.ok()) {
    if (absl::StatusOr<PkeyPtr> key = ParseKey(*pem); key.ok()) return key;
    KLOG_WARNING("Ignoring an unreadable bootstrap key; generating a new one", "path", path);
  }
  absl::StatusOr<PkeyPtr> key = GenerateKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> pem = KeyPem(key->get());
  if (!pem.ok()) return pem.status();
  if (absl::Status st = WriteFileAtomically(path, *pem, 0600); !st.ok()) return st;
  return key;
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

absl::Status WriteCertDirKubeconfig(const std::string& kubeconfig_path,
                                    const apiclient::RestConfig& bootstrap,
                                    const std::string& cert_dir) {
  return WriteFileAtomically(
      kubeconfig_path,
      WrittenKubeconfig(bootstrap, absl::StrCat(cert_dir, "/", kPrefix, "-current.pem")), 0600);
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
  csr.metadata.name = DigestedName(*der, cn, {org}, ClientUsages());
  csr.spec.request = *csr_pem;
  csr.spec.signer_name = api::kKubeAPIServerClientKubeletSignerName;
  csr.spec.usages = ClientUsages();

  absl::StatusOr<std::unique_ptr<apiclient::RestClient>> client = o.make_client(*boot);
  if (!client.ok()) return client.status();
  const absl::Time deadline = absl::Now() + o.wait;
  // The API server may not answer yet: keep trying to create the request until the deadline.
  for (;;) {
    absl::StatusOr<std::string> created = CreateCsr(**client, csr);
    if (created.ok()) break;
    if (absl::IsAlreadyExists(created.status()) || absl::Now() >= deadline) {
      return absl::Status(created.status().code(),
                          absl::StrCat("unable to create certificate signing request: ",
                                       std::string(created.status().message())));
    }
    KLOG_V(2, "Failed to create the certificate signing request, retrying", "err",
           std::string(created.status().message()));
    absl::SleepFor(o.poll);
  }
  KLOG_INFO("Waiting for client certificate to be issued", "csr", csr.metadata.name);
  absl::StatusOr<std::string> cert_pem =
      WaitForCertificate(**client, csr.metadata.name, deadline, o.poll, nullptr);
  if (!cert_pem.ok()) return cert_pem.status();

  absl::StatusOr<std::string> key_pem = KeyPem(key->get());
  if (!key_pem.ok()) return key_pem.status();
  absl::StatusOr<std::string> dated =
      StoreCertificate(o.cert_dir, kPrefix, *cert_pem, *key_pem, clock.Now());
  if (!dated.ok()) return dated.status();
  const std::string current = absl::StrCat(o.cert_dir, "/", kPrefix, "-current.pem");
  std::filesystem::remove(key_path, ec);
  if (absl::Status st =
          WriteFileAtomically(o.kubeconfig_path, WrittenKubeconfig(*boot, current), 0600);
      !st.ok()) {
    return st;
  }
  KLOG_INFO("Client certificate issued, kubeconfig written", "certificate", *dated, "kubeconfig",
            o.kubeconfig_path);
  return absl::OkStatus();
}

}  // namespace kubelet::certificate
