#include "server/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/log.h"
#include "common/openssl.h"

namespace kubelet::server {
namespace {

using ossl::BioPtr;
using ossl::PkeyPtr;
using ossl::X509Ptr;

std::string OpenSslError() { return ossl::LastError(); }

bool IsIP(const std::string& s) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) {
    return absl::InternalError(
        absl::StrCat("certificate extension ", OBJ_nid2sn(nid), "=", value, ": ", OpenSslError()));
  }
  int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) return absl::InternalError(absl::StrCat("X509_add_ext: ", OpenSslError()));
  return absl::OkStatus();
}

absl::StatusOr<X509Ptr> NewCertificate(long serial, const std::string& cn,  // NOLINT(runtime/int)
                                       EVP_PKEY* key, time_t now) {
  X509Ptr cert(X509_new());
  if (!cert) return absl::InternalError("X509_new failed");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  // Valid from an hour ago (clock skew) for a year, as upstream.
  ASN1_TIME_set(X509_getm_notBefore(cert.get()), now - 3600);
  ASN1_TIME_set(X509_getm_notAfter(cert.get()), now - 3600 + 365 * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  if (X509_set_pubkey(cert.get(), key) != 1) {
    return absl::InternalError(absl::StrCat("X509_set_pubkey: ", OpenSslError()));
  }
  return cert;
}

std::string CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);  // NOLINT(runtime/int)
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace

absl::StatusOr<int> TlsVersionFromName(const std::string& name) {
  static const std::map<std::string, int> kVersions = {
      {"VersionTLS10", TLS1_VERSION},
      {"VersionTLS11", TLS1_1_VERSION},
      {"VersionTLS12", TLS1_2_VERSION},
      {"VersionTLS13", TLS1_3_VERSION},
  };
  if (name.empty()) return TLS1_2_VERSION;
  auto it = kVersions.find(name);
  if (it == kVersions.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown tls version \"", name, "\""));
  }
  return it->second;
}

absl::StatusOr<std::string> CipherSuitesToOpenSsl(const std::vector<std::string>& names) {
  // Every suite Go's crypto/tls knows (tls.CipherSuites() and tls.InsecureCipherSuites()).
  static const std::map<std::string, std::string> kSuites = {
      {"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
      {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
      {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
      {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
      {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
      {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
      {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
      {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
      {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
      {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
      {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
      {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
      {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
      {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
      {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
      {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
      {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
      {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
      {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
      {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
      {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
      {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
      // TLS 1.3: always enabled, not configurable (as in Go).
      {"TLS_AES_128_GCM_SHA256", ""},
      {"TLS_AES_256_GCM_SHA384", ""},
      {"TLS_CHACHA20_POLY1305_SHA256", ""},
  };
  std::vector<std::string> out;
  for (const std::string& n : names) {
    auto it = kSuites.find(n);
    if (it == kSuites.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("Cipher suite ", n, " not supported or doesn't exist"));
    }
    if (!it->second.empty()) out.push_back(it->second);
  }
  return absl::StrJoin(out, ":");
}

absl::StatusOr<CertKeyPem> GenerateSelfSignedCertKey(const SelfSignedCertOptions& options) {
  time_t now = ::time(nullptr);
  PkeyPtr ca_key(EVP_RSA_gen(2048));
  PkeyPtr key(EVP_RSA_gen(2048));
  if (!ca_key || !key) return absl::InternalError(absl::StrCat("RSA keygen: ", OpenSslError()));

  auto ca = NewCertificate(1, absl::StrCat(options.host, "-ca@", now), ca_key.get(), now);
  if (!ca.ok()) return ca.status();
  X509* c = ca->get();
  X509_set_issuer_name(c, X509_get_subject_name(c));
  for (auto [nid, v] : std::vector<std::pair<int, std::string>>{
           {NID_basic_constraints, "critical,CA:TRUE"},
           {NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign"},
           {NID_subject_key_identifier, "hash"}}) {
    if (absl::Status st = AddExtension(c, c, nid, v); !st.ok()) return st;
  }
  if (X509_sign(c, ca_key.get(), EVP_sha256()) == 0) {
    return absl::InternalError(absl::StrCat("sign CA certificate: ", OpenSslError()));
  }

  auto leaf = NewCertificate(2, absl::StrCat(options.host, "@", now), key.get(), now);
  if (!leaf.ok()) return leaf.status();
  X509* l = leaf->get();
  X509_set_issuer_name(l, X509_get_subject_name(c));
  std::vector<std::string> sans;
  auto add_san = [&sans](const std::string& v) {
    if (v.empty()) return;
    std::string entry = absl::StrCat(IsIP(v) ? "IP:" : "DNS:", v);
    for (const std::string& s : sans) {
      if (s == entry) return;
    }
    sans.push_back(std::move(entry));
  };
  add_san(options.host);
  for (const std::string& ip : options.alternate_ips) add_san(ip);
  for (const std::string& dns : options.alternate_dns) add_san(dns);
  std::vector<std::pair<int, std::string>> exts = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
      {NID_ext_key_usage, "serverAuth"},
      {NID_authority_key_identifier, "keyid"},
  };
  if (!sans.empty()) exts.push_back({NID_subject_alt_name, absl::StrJoin(sans, ",")});
  for (const auto& [nid, v] : exts) {
    if (absl::Status st = AddExtension(l, c, nid, v); !st.ok()) return st;
  }
  if (X509_sign(l, ca_key.get(), EVP_sha256()) == 0) {
    return absl::InternalError(absl::StrCat("sign serving certificate: ", OpenSslError()));
  }

  CertKeyPem out;
  out.cert_pem = CertPem(l) + CertPem(c);
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey_traditional(bio.get(), key.get(), nullptr, nullptr, 0, nullptr,
                                           nullptr) != 1) {
    return absl::InternalError(absl::StrCat("encode private key: ", OpenSslError()));
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);  // NOLINT(runtime/int)
  out.key_pem.assign(data, static_cast<size_t>(len));
  return out;
}

absl::Status CheckCertKeyPair(const std::string& cert_file, const std::string& key_file) {
  BioPtr cb(BIO_new_file(cert_file.c_str(), "r"));
  if (!cb) return absl::NotFoundError(absl::StrCat("open ", cert_file, ": ", OpenSslError()));
  X509Ptr cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return absl::InvalidArgumentError(
        absl::StrCat("no certificate in ", cert_file, ": ", OpenSslError()));
  }
  BioPtr kb(BIO_new_file(key_file.c_str(), "r"));
  if (!kb) return absl::NotFoundError(absl::StrCat("open ", key_file, ": ", OpenSslError()));
  PkeyPtr key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return absl::InvalidArgumentError(
        absl::StrCat("no private key in ", key_file, ": ", OpenSslError()));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("private key ", key_file, " does not match certificate ", cert_file));
  }
  return absl::OkStatus();
}

absl::StatusOr<ServingCertificate> EnsureServingCertificate(const std::string& tls_cert_file,
                                                            const std::string& tls_key_file,
                                                            const std::string& cert_dir,
                                                            const SelfSignedCertOptions& self) {
  ServingCertificate out;
  if (!tls_cert_file.empty() || !tls_key_file.empty()) {
    out.cert_file = tls_cert_file;
    out.key_file = tls_key_file;
    return out;
  }
  out.cert_file = (std::filesystem::path(cert_dir) / "kubelet.crt").string();
  out.key_file = (std::filesystem::path(cert_dir) / "kubelet.key").string();
  std::error_code ec;
  bool both =
      std::filesystem::exists(out.cert_file, ec) && std::filesystem::exists(out.key_file, ec);
  if (both) {
    if (absl::Status st = CheckCertKeyPair(out.cert_file, out.key_file); !st.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unable to load the serving certificate: ", st.message()));
    }
    return out;
  }
  auto pair = GenerateSelfSignedCertKey(self);
  if (!pair.ok()) {
    return absl::Status(pair.status().code(), absl::StrCat("unable to generate self signed cert: ",
                                                           pair.status().message()));
  }
  if (absl::Status st = WriteFileAtomically(out.cert_file, pair->cert_pem, 0644); !st.ok()) {
    return absl::Status(st.code(),
                        absl::StrCat("unable to write self signed cert: ", st.message()));
  }
  if (absl::Status st = WriteFileAtomically(out.key_file, pair->key_pem, 0600); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("unable to write self signed key: ", st.message()));
  }
  out.generated = true;
  KLOG_V(4, "Using self-signed cert", "TLSCertFile", out.cert_file, "TLSPrivateKeyFile",
         out.key_file);
  return out;
}

}  // namespace kubelet::server
