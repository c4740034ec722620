// Owning pointers for the OpenSSL objects the kubelet handles (BIO, X509, X509_REQ, EVP_PKEY)
// and the text of OpenSSL's last error. Header-only: only code that already links OpenSSL
// includes it. Thread-safe (OpenSSL's error queue is per thread).
#ifndef KUBELET_COMMON_OPENSSL_H_
#define KUBELET_COMMON_OPENSSL_H_

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"

namespace kubelet::ossl {

struct BioFree {
  void operator()(BIO* b) const { BIO_free_all(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct ReqFree {
  void operator()(X509_REQ* r) const { X509_REQ_free(r); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using ReqPtr = std::unique_ptr<X509_REQ, ReqFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// The oldest queued error as OpenSSL words it; the queue is cleared.
inline std::string LastError() {
  unsigned long e = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// The raw digest of `data` with `md` (EVP_sha256(), EVP_md5(), ...); "" when it is unavailable.
inline std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (md == nullptr || EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) return "";
  return std::string(reinterpret_cast<const char*>(out), len);
}

// Lowercase hex of the SHA-256 of `data`.
inline std::string Sha256Hex(std::string_view data) {
  const std::string d = Digest(EVP_sha256(), data);
  return absl::BytesToHexString(absl::string_view(d.data(), d.size()));
}

// What a memory BIO holds.
inline std::string BioString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int): OpenSSL's type
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace kubelet::ossl

#endif  // KUBELET_COMMON_OPENSSL_H_
