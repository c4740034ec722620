#include "kubelet/certificate/csr.h"

#include <arpa/inet.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/codec.h"
#include "common/files.h"
#include "common/log.h"

namespace kubelet::certificate {
namespace {

using ossl::BioPtr;
using ossl::BioString;
using ossl::PkeyPtr;
using ossl::ReqPtr;
using ossl::X509Ptr;

constexpr char kCsrs[] = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

absl::StatusOr<api::CertificateSigningRequest> GetCsr(apiclient::RestClient& client,
                                                      const std::string& name) {
  apiclient::Request req;
  req.path = absl::StrCat(kCsrs, "/", name);
  absl::StatusOr<apiclient::Response> resp = client.Do(req);
  if (!resp.ok()) return resp.status();
  if (!resp->ok()) return apiclient::ResponseStatus(*resp);
  return api::Decode<api::CertificateSigningRequest>(resp->body);
}

absl::Time Asn1Time(const ASN1_TIME* t) {
  struct tm tm {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return absl::InfinitePast();
  return absl::FromTimeT(timegm(&tm));
}

// The 4- or 16-byte form of a textual address; empty when it is neither.
std::string IpBytes(const std::string& ip) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) return std::string(reinterpret_cast<char*>(buf), 4);
  if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
    return std::string(reinterpret_cast<char*>(buf), 16);
  }
  return "";
}

std::string IpText(const ASN1_OCTET_STRING* bytes) {
  char text[INET6_ADDRSTRLEN] = {0};
  const int len = ASN1_STRING_length(bytes);
  const unsigned char* data = ASN1_STRING_get0_data(bytes);
  if (len == 4 && inet_ntop(AF_INET, data, text, sizeof(text)) != nullptr) return text;
  if (len == 16 && inet_ntop(AF_INET6, data, text, sizeof(text)) != nullptr) return text;
  return "";
}

void SortUnique(std::vector<std::string>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

std::string CanonicalIp(const std::string& ip) {
  unsigned char buf[16];
  char text[INET6_ADDRSTRLEN] = {0};
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) {
    return inet_ntop(AF_INET, buf, text, sizeof(text)) != nullptr ? text : "";
  }
  if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
    return inet_ntop(AF_INET6, buf, text, sizeof(text)) != nullptr ? text : "";
  }
  return "";
}

absl::StatusOr<PkeyPtr> GenerateKey() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return absl::InternalError(absl::StrCat("generate key: ", ossl::LastError()));
  return key;
}

absl::StatusOr<PkeyPtr> ParseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return absl::InvalidArgumentError("no private key");
  return key;
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return absl::InternalError(absl::StrCat("encode key: ", ossl::LastError()));
  }
  return BioString(bio.get());
}

absl::StatusOr<std::string> PublicKeyDer(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key, &der);
  if (len <= 0) {
    return absl::InternalError(absl::StrCat("encode public key: ", ossl::LastError()));
  }
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(len));
  OPENSSL_free(der);
  return out;
}

absl::StatusOr<std::string> MakeCsrPem(EVP_PKEY* key, const std::string& cn, const std::string& org,
                                       const SubjectAltNames& sans) {
  ReqPtr req(X509_REQ_new());
  X509_REQ_set_version(req.get(), 0);
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  if (!sans.dns_names.empty() || !sans.ips.empty()) {
    GENERAL_NAMES* names = sk_GENERAL_NAME_new_null();
    auto free_names = [&] { sk_GENERAL_NAME_pop_free(names, GENERAL_NAME_free); };
    for (const std::string& dns : sans.dns_names) {
      GENERAL_NAME* g = GENERAL_NAME_new();
      ASN1_IA5STRING* v = ASN1_IA5STRING_new();
      ASN1_STRING_set(v, dns.data(), static_cast<int>(dns.size()));
      GENERAL_NAME_set0_value(g, GEN_DNS, v);
      sk_GENERAL_NAME_push(names, g);
    }
    for (const std::string& ip : sans.ips) {
      const std::string bytes = IpBytes(ip);
      if (bytes.empty()) {
        free_names();
        return absl::InvalidArgumentError(absl::StrCat("invalid IP address \"", ip, "\""));
      }
      GENERAL_NAME* g = GENERAL_NAME_new();
      ASN1_OCTET_STRING* v = ASN1_OCTET_STRING_new();
      ASN1_OCTET_STRING_set(v, reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()));
      GENERAL_NAME_set0_value(g, GEN_IPADD, v);
      sk_GENERAL_NAME_push(names, g);
    }
    STACK_OF(X509_EXTENSION)* exts = sk_X509_EXTENSION_new_null();
    X509_EXTENSION* ext = X509V3_EXT_i2d(NID_subject_alt_name, 0, names);
    free_names();
    const bool added = ext != nullptr && sk_X509_EXTENSION_push(exts, ext) > 0 &&
                       X509_REQ_add_extensions(req.get(), exts) == 1;
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    if (!added) {
      return absl::InternalError(absl::StrCat("subject alternative names: ", ossl::LastError()));
    }
  }
  if (X509_REQ_set_pubkey(req.get(), key) != 1 ||
      X509_REQ_sign(req.get(), key, EVP_sha256()) <= 0) {
    return absl::InternalError(absl::StrCat("sign certificate request: ", ossl::LastError()));
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509_REQ(bio.get(), req.get()) != 1) {
    return absl::InternalError(absl::StrCat("encode certificate request: ", ossl::LastError()));
  }
  return BioString(bio.get());
}

absl::StatusOr<CertInfo> ReadCertInfo(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return absl::InvalidArgumentError("no certificate");
  CertInfo info;
  info.not_before = Asn1Time(X509_get0_notBefore(cert.get()));
  info.not_after = Asn1Time(X509_get0_notAfter(cert.get()));
  char cn[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof(cn)) >
      0) {
    info.common_name = cn;
  }
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  if (names != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
      if (g->type == GEN_DNS) {
        const ASN1_IA5STRING* v = g->d.dNSName;
        info.sans.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(v)),
                                         static_cast<size_t>(ASN1_STRING_length(v)));
      } else if (g->type == GEN_IPADD) {
        if (std::string ip = IpText(g->d.iPAddress); !ip.empty()) info.sans.ips.push_back(ip);
      }
    }
    sk_GENERAL_NAME_pop_free(names, GENERAL_NAME_free);
  }
  SortUnique(&info.sans.dns_names);
  SortUnique(&info.sans.ips);
  return info;
}

absl::Status CertValidNow(const std::string& pem, absl::Time now) {
  absl::StatusOr<CertInfo> info = ReadCertInfo(pem);
  if (!info.ok()) return info.status();
  if (now < info->not_before) return absl::FailedPreconditionError("certificate not valid yet");
  if (now > info->not_after) return absl::FailedPreconditionError("certificate expired");
  return absl::OkStatus();
}

absl::StatusOr<std::string> CreateCsr(apiclient::RestClient& client,
                                      const api::CertificateSigningRequest& csr) {
  apiclient::Request req;
  req.method = "POST";
  req.path = kCsrs;
  req.body = api::Encode(csr);
  req.content_type = apiclient::kJsonContentType;
  absl::StatusOr<apiclient::Response> resp = client.Do(req);
  if (!resp.ok()) return resp.status();
  if (resp->ok()) {
    absl::StatusOr<api::CertificateSigningRequest> created =
        api::Decode<api::CertificateSigningRequest>(resp->body);
    if (!created.ok()) return created.status();
    return created->metadata.name;
  }
  if (resp->code != 409 || csr.metadata.name.empty()) return apiclient::ResponseStatus(*resp);
  absl::StatusOr<api::CertificateSigningRequest> existing = GetCsr(client, csr.metadata.name);
  if (!existing.ok()) return existing.status();
  if (existing->spec.request != csr.spec.request ||
      existing->spec.signer_name != csr.spec.signer_name) {
    return absl::AlreadyExistsError(absl::StrCat("certificate signing request ", csr.metadata.name,
                                                 " exists with another request"));
  }
  KLOG_INFO("Certificate signing request already exists, waiting for it", "name",
            csr.metadata.name);
  return csr.metadata.name;
}

absl::StatusOr<std::string> WaitForCertificate(apiclient::RestClient& client,
                                               const std::string& name, absl::Time deadline,
                                               absl::Duration poll,
                                               const std::function<bool()>& stopped) {
  for (;;) {
    absl::StatusOr<api::CertificateSigningRequest> got = GetCsr(client, name);
    if (got.ok()) {
      for (const api::CertificateSigningRequestCondition& c : got->status.conditions) {
        if ((c.type == "Denied" || c.type == "Failed") && c.status != "False") {
          return absl::PermissionDeniedError(absl::StrCat("certificate signing request ", name,
                                                          " is ", c.type, ", reason: ", c.reason,
                                                          ", message: ", c.message));
        }
      }
      if (!got->status.certificate.empty()) return got->status.certificate;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("timed out waiting for the certificate signing request ", name));
    }
    if (stopped && stopped()) return absl::CancelledError("stopped");
    absl::SleepFor(poll);
  }
}

absl::StatusOr<std::string> StoreCertificate(const std::string& dir, const std::string& prefix,
                                             const std::string& cert_pem,
                                             const std::string& key_pem, absl::Time now) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("create ", dir, ": ", ec.message()));
  std::string dated =
      absl::StrCat(dir, "/", prefix, "-",
                   absl::FormatTime("%Y-%m-%d-%H-%M-%S", now, absl::UTCTimeZone()), ".pem");
  std::string with_newline = cert_pem;
  if (!with_newline.empty() && with_newline.back() != '\n') with_newline += '\n';
  if (absl::Status st = WriteFileAtomically(dated, with_newline + key_pem, 0600); !st.ok()) {
    return st;
  }
  const std::string current = absl::StrCat(dir, "/", prefix, "-current.pem");
  const std::string link_tmp = absl::StrCat(current, ".tmp");
  std::filesystem::remove(link_tmp, ec);
  std::filesystem::create_symlink(dated, link_tmp, ec);
  if (!ec) std::filesystem::rename(link_tmp, current, ec);
  if (ec) return absl::InternalError(absl::StrCat("link ", current, ": ", ec.message()));
  return dated;
}

std::pair<std::string, std::string> SplitPem(const std::string& pem) {
  std::string certs, key;
  size_t pos = 0;
  while ((pos = pem.find("-----BEGIN ", pos)) != std::string::npos) {
    const size_t label_end = pem.find("-----", pos + 11);
    if (label_end == std::string::npos) break;
    const std::string label = pem.substr(pos + 11, label_end - pos - 11);
    const std::string end_marker = "-----END " + label + "-----";
    size_t end = pem.find(end_marker, label_end);
    if (end == std::string::npos) break;
    end += end_marker.size();
    std::string block = pem.substr(pos, end - pos) + "\n";
    if (label == "CERTIFICATE") {
      certs += block;
    } else if (label.find("PRIVATE KEY") != std::string::npos && key.empty()) {
      key = block;
    }
    pos = end;
  }
  return {certs, key};
}

absl::StatusOr<std::pair<std::string, std::string>> LoadPair(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFileToString(path);
  if (!pem.ok()) return pem.status();
  auto pair = SplitPem(*pem);
  if (pair.first.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no certificate"));
  if (pair.second.empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": no private key"));
  return pair;
}

}  // namespace kubelet::certificate
