// The RestClient against an in-process HTTPS (or plain HTTP) server on 127.0.0.1 (OpenSSL, a
// thread per connection: fine for a test): TLS verification, client certificates and their
// rotation, tokens, unary calls and error answers, keep-alive reuse and idle connections the
// server closed, gzip, bounds, watch streaming, cancellation, the rate limiter, the metrics, and
// proxies (Go's selection rules, and an in-test CONNECT proxy in front of the server).
#include "apiclient/rest_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "apiclient/proxy.h"
#include "apiclient/reflector.h"
#include "common/cancellation.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"

namespace kubelet::apiclient {
namespace {

using ::testing::HasSubstr;

// The test server writes with SSL_write on plain sockets: a client that went away must not kill
// the test binary.
const bool kIgnoreSigpipe = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

// ---- PKI --------------------------------------------------------------------------------------

EVP_PKEY* NewKey() { return EVP_EC_gen("P-256"); }

X509* NewCert(EVP_PKEY* key, const std::string& cn, const std::string& org, X509* issuer,
              EVP_PKEY* issuer_key, const std::string& kind /* ca, server, client */) {
  static int serial = 100;
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600 * 24);
  X509_NAME* n = X509_get_subject_name(x);
  if (!org.empty()) {
    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
  X509_set_pubkey(x, key);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer ? issuer : x, x, nullptr, nullptr, 0);
  auto add = [&](int nid, const char* v) {
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, &ctx, nid, v);
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
  };
  if (kind == "ca") {
    add(NID_basic_constraints, "critical,CA:TRUE");
    add(NID_key_usage, "critical,keyCertSign,digitalSignature");
  } else if (kind == "server") {
    add(NID_key_usage, "critical,digitalSignature");
    add(NID_ext_key_usage, "serverAuth");
    add(NID_subject_alt_name, "IP:127.0.0.1,DNS:apiserver.test");
  } else {
    add(NID_key_usage, "critical,digitalSignature");
    add(NID_ext_key_usage, "clientAuth");
  }
  X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256());
  return x;
}

std::string Pem(X509* x) {
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(b, x);
  char* d;
  long len = BIO_get_mem_data(b, &d);  // NOLINT(runtime/int)
  std::string s(d, len);
  BIO_free(b);
  return s;
}

std::string KeyPem(EVP_PKEY* k) {
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr);
  char* d;
  long len = BIO_get_mem_data(b, &d);  // NOLINT(runtime/int)
  std::string s(d, len);
  BIO_free(b);
  return s;
}

struct Pki {
  std::string ca_pem, server_cert_pem, server_key_pem, client_cert_pem, client_key_pem;
  std::string client2_cert_pem, client2_key_pem;  // another node's identity
  std::string other_ca_pem;                       // trusts nothing here
};

const Pki& TestPki() {
  static const Pki* pki = [] {
    auto* p = new Pki;
    EVP_PKEY* ca_key = NewKey();
    X509* ca = NewCert(ca_key, "test-ca", "", nullptr, nullptr, "ca");
    EVP_PKEY* skey = NewKey();
    X509* scert = NewCert(skey, "apiserver", "", ca, ca_key, "server");
    EVP_PKEY* ckey = NewKey();
    X509* ccert = NewCert(ckey, "system:node:node-1", "system:nodes", ca, ca_key, "client");
    EVP_PKEY* c2key = NewKey();
    X509* c2cert = NewCert(c2key, "system:node:node-2", "system:nodes", ca, ca_key, "client");
    EVP_PKEY* okey = NewKey();
    X509* other = NewCert(okey, "other-ca", "", nullptr, nullptr, "ca");
    p->ca_pem = Pem(ca);
    p->server_cert_pem = Pem(scert);
    p->server_key_pem = KeyPem(skey);
    p->client_cert_pem = Pem(ccert);
    p->client_key_pem = KeyPem(ckey);
    p->client2_cert_pem = Pem(c2cert);
    p->client2_key_pem = KeyPem(c2key);
    p->other_ca_pem = Pem(other);
    for (X509* x : {ca, scert, ccert, c2cert, other}) X509_free(x);
    for (EVP_PKEY* k : {ca_key, skey, ckey, c2key, okey}) EVP_PKEY_free(k);
    return p;
  }();
  return *pki;
}

// ---- server -----------------------------------------------------------------------------------

struct ServerRequest {
  std::string method, target, body, client_cn;
  bool client_verified = false;
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string Header(const std::string& n) const {
    auto it = headers.find(n);
    return it == headers.end() ? "" : it->second;
  }
};

class Conn {
 public:
  // Over TLS when `ssl` is set, plain on `fd` otherwise.
  Conn(SSL* ssl, int fd, int index) : ssl_(ssl), fd_(fd), index_(index) {}
  bool Write(std::string_view data) {
    while (!data.empty()) {
      int n = ssl_ != nullptr ? SSL_write(ssl_, data.data(), static_cast<int>(data.size()))
                              : static_cast<int>(::send(fd_, data.data(), data.size(), 0));
      if (n <= 0) return false;
      data.remove_prefix(n);
    }
    return true;
  }
  int Read(char* buf, int size) {
    return ssl_ != nullptr ? SSL_read(ssl_, buf, size)
                           : static_cast<int>(::recv(fd_, buf, size, 0));
  }
  void Respond(int code, const std::string& body,
               const std::string& content_type = "application/json") {
    Write(absl::StrCat("HTTP/1.1 ", code, " X\r\nContent-Type: ", content_type,
                       "\r\nContent-Length: ", body.size(), "\r\n\r\n", body));
  }
  void StartChunked(int code) {
    Write(absl::StrCat("HTTP/1.1 ", code,
                       " X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                       "Connection: close\r\n\r\n"));
    close_ = true;
  }
  bool Chunk(std::string_view data) {
    char len[32];
    snprintf(len, sizeof(len), "%zx\r\n", data.size());
    return Write(len) && Write(data) && Write("\r\n");
  }
  void EndChunked() { Write("0\r\n\r\n"); }
  // Closes the connection once the handler returns (after its answer, if any), without saying
  // so in the answer: as a server does with a keep-alive connection it will not keep.
  void Close() { close_ = true; }
  bool closing() const { return close_; }
  int index() const { return index_; }  // 1 for the server's first connection
  int requests = 0;                     // served on this connection, the current one included

 private:
  SSL* ssl_;
  int fd_;
  int index_;
  bool close_ = false;
};

using Handler = std::function<void(const ServerRequest&, Conn&)>;

class TestServer {
 public:
  enum Mode { kTls, kTlsNoClientCert, kPlain };
  explicit TestServer(Handler handler, bool request_client_cert = true)
      : TestServer(std::move(handler), request_client_cert ? kTls : kTlsNoClientCert) {}
  TestServer(Handler handler, Mode mode) : handler_(std::move(handler)), plain_(mode == kPlain) {
    const bool request_client_cert = mode == kTls;
    const Pki& pki = TestPki();
    ctx_ = SSL_CTX_new(TLS_server_method());
    BIO* b = BIO_new_mem_buf(pki.server_cert_pem.data(), -1);
    X509* cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
    BIO_free(b);
    b = BIO_new_mem_buf(pki.server_key_pem.data(), -1);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
    BIO_free(b);
    SSL_CTX_use_certificate(ctx_, cert);
    SSL_CTX_use_PrivateKey(ctx_, key);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (request_client_cert) {
      X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
      b = BIO_new_mem_buf(pki.ca_pem.data(), -1);
      X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
      BIO_free(b);
      X509_STORE_add_cert(store, ca);
      X509_free(ca);
      // Resumed sessions (the client shares them between connections) need a context id when
      // client certificates are requested.
      static const unsigned char kSessionContext[] = "apiclient-test";
      SSL_CTX_set_session_id_context(ctx_, kSessionContext, sizeof(kSessionContext) - 1);
      // Request, never require: verification outcome is checked per request.
      SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
    }
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~TestServer() {
    stopping_.Notify();
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_thread_.join();
    {
      absl::MutexLock lock(&mu_);
      for (int fd : conn_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : conn_threads_) t.join();
    SSL_CTX_free(ctx_);
  }

  int port() const { return port_; }
  std::string url(const std::string& prefix = "") const {
    return absl::StrCat(plain_ ? "http" : "https", "://127.0.0.1:", port_, prefix);
  }
  int connections() const {
    absl::MutexLock lock(&mu_);
    return connections_;
  }
  // Connections that ended (the client closed them, or the handler did).
  int ended_connections() const {
    absl::MutexLock lock(&mu_);
    return ended_;
  }
  std::vector<ServerRequest> requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }
  // Fired when the server stops: handlers that hang wait on it.
  const absl::Notification& stopping() const { return stopping_; }

 private:
  void AcceptLoop() {
    while (true) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      absl::MutexLock lock(&mu_);
      if (stopping_.HasBeenNotified()) {
        ::close(c);
        return;
      }
      const int index = ++connections_;
      conn_fds_.push_back(c);
      conn_threads_.emplace_back([this, c, index] { Serve(c, index); });
    }
  }

  void Serve(int fd, int index) {
    SSL* ssl = nullptr;
    if (!plain_) {
      ssl = SSL_new(ctx_);
      SSL_set_fd(ssl, fd);
    }
    if (plain_ || SSL_accept(ssl) == 1) {
      std::string cn;
      bool verified = false;
      if (X509* peer = ssl != nullptr ? SSL_get1_peer_certificate(ssl) : nullptr) {
        char buf[256] = {0};
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof(buf));
        cn = buf;
        verified = SSL_get_verify_result(ssl) == X509_V_OK;
        X509_free(peer);
      }
      std::string buf;
      Conn conn(ssl, fd, index);
      while (!conn.closing()) {
        size_t end;
        while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
          char tmp[4096];
          int n = conn.Read(tmp, sizeof(tmp));
          if (n <= 0) goto done;
          buf.append(tmp, n);
        }
        ServerRequest req;
        req.client_cn = cn;
        req.client_verified = verified;
        std::string head = buf.substr(0, end);
        buf.erase(0, end + 4);
        size_t line_end = head.find("\r\n");
        std::string first = head.substr(0, line_end);
        size_t sp1 = first.find(' ');
        size_t sp2 = first.find(' ', sp1 + 1);
        req.method = first.substr(0, sp1);
        req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
        size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
        while (pos < head.size()) {
          size_t e = head.find("\r\n", pos);
          if (e == std::string::npos) e = head.size();
          std::string line = head.substr(pos, e - pos);
          size_t colon = line.find(':');
          if (colon != std::string::npos) {
            req.headers[absl::AsciiStrToLower(line.substr(0, colon))] =
                std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
          }
          pos = e + 2;
        }
        size_t body_len =
            std::stoul(req.Header("content-length").empty() ? "0" : req.Header("content-length"));
        while (buf.size() < body_len) {
          char tmp[4096];
          int n = conn.Read(tmp, sizeof(tmp));
          if (n <= 0) goto done;
          buf.append(tmp, n);
        }
        req.body = buf.substr(0, body_len);
        buf.erase(0, body_len);
        {
          absl::MutexLock lock(&mu_);
          requests_.push_back(req);
        }
        ++conn.requests;
        handler_(req, conn);
      }
    }
  done:
    if (ssl != nullptr) {
      SSL_shutdown(ssl);
      SSL_free(ssl);
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    absl::MutexLock lock(&mu_);
    ++ended_;
  }

  Handler handler_;
  const bool plain_;
  SSL_CTX* ctx_ = nullptr;
  int fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  absl::Notification stopping_;
  mutable absl::Mutex mu_;
  int connections_ ABSL_GUARDED_BY(mu_) = 0;
  int ended_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int> conn_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> conn_threads_;  // appended by the accept thread only
  std::vector<ServerRequest> requests_ ABSL_GUARDED_BY(mu_);
};

// ---- helpers ----------------------------------------------------------------------------------

RestConfig Config(const TestServer& s, const std::string& prefix = "") {
  RestConfig c;
  c.host = s.url(prefix);
  c.ca_pem = TestPki().ca_pem;
  c.client_cert_pem = TestPki().client_cert_pem;
  c.client_key_pem = TestPki().client_key_pem;
  c.qps = 0;  // no limit unless a test wants one
  return c;
}

std::unique_ptr<RestClient> Client(const RestConfig& c, RestClientOptions o = {}) {
  absl::StatusOr<std::unique_ptr<RestClient>> client = NewRestClient(c, o);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

// A POST of an (empty) event.
Request PostEvent() {
  Request r;
  r.method = "POST";
  r.path = "/api/v1/namespaces/default/events";
  r.body = "{}";
  return r;
}

Request Get(const std::string& path) {
  Request r;
  r.path = path;
  return r;
}

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                        {"reason", reason}, {"message", message}, {"code", code}}
      .dump();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "restclient-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& data) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << data;
    return p;
  }

 private:
  std::string path_;
};

// ---- tests ------------------------------------------------------------------------------------

TEST(RestClientTest, VerifiesTheServerAndPresentsCertificateAndToken) {
  TestServer server([](const ServerRequest& r, Conn& c) { c.Respond(200, R"({"kind":"Pod"})"); });
  RestConfig cfg = Config(server, "/prefix/");
  cfg.bearer_token = "secret-token";
  cfg.user_agent = "kubelet/v1.28.15 (linux/amd64) kubernetes/abc";
  std::unique_ptr<RestClient> client = Client(cfg);
  absl::StatusOr<Response> resp = client->Do(Get("/api/v1/namespaces/default/pods/a"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  EXPECT_EQ(resp->body, R"({"kind":"Pod"})");
  EXPECT_EQ(resp->Header("content-type"), "application/json");
  ASSERT_EQ(server.requests().size(), 1u);
  const ServerRequest r = server.requests()[0];
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/prefix/api/v1/namespaces/default/pods/a");
  EXPECT_EQ(r.Header("authorization"), "Bearer secret-token");
  EXPECT_EQ(r.Header("user-agent"), "kubelet/v1.28.15 (linux/amd64) kubernetes/abc");
  EXPECT_THAT(r.Header("accept"), HasSubstr("application/json"));
  EXPECT_EQ(r.client_cn, "system:node:node-1");
  EXPECT_TRUE(r.client_verified);
}

TEST(RestClientTest, CertificatesAndTokenFromFiles) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  TempDir dir;
  RestConfig cfg;
  cfg.host = server.url();
  cfg.ca_file = dir.Write("ca.crt", TestPki().ca_pem);
  cfg.client_cert_file = dir.Write("client.crt", TestPki().client_cert_pem);
  cfg.client_key_file = dir.Write("client.key", TestPki().client_key_pem);
  cfg.bearer_token_file = dir.Write("token", "file-token\n");
  std::unique_ptr<RestClient> client = Client(cfg);
  absl::StatusOr<Response> resp = client->Do(Get("/api/v1/nodes"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  const ServerRequest r = server.requests().at(0);
  EXPECT_EQ(r.Header("authorization"), "Bearer file-token");
  EXPECT_EQ(r.client_cn, "system:node:node-1");
  EXPECT_TRUE(r.client_verified);

  // A missing file is reported at construction, naming it.
  cfg.client_key_file = "/nonexistent/client.key";
  absl::StatusOr<std::unique_ptr<RestClient>> bad = NewRestClient(cfg);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("/nonexistent/client.key"));
  cfg.client_key_file = "";
  cfg.host = "ftp://127.0.0.1";
  EXPECT_EQ(NewRestClient(cfg).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RestClientTest, DynamicClientCertificateReachesNewConnections) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  RestConfig cfg = Config(server);
  absl::Mutex mu;
  ClientCertificate current;  // none yet
  cfg.client_cert_file = "/nonexistent/replaced-by-the-source.pem";
  cfg.client_certificate_source = [&] {
    absl::MutexLock lock(&mu);
    return current;
  };
  std::unique_ptr<RestClient> client = Client(cfg);
  ASSERT_TRUE(client->Do(Get("/api/v1/nodes")).ok());
  EXPECT_EQ(server.requests().at(0).client_cn, "");
  {
    absl::MutexLock lock(&mu);
    current = {TestPki().client_cert_pem, TestPki().client_key_pem, 1};
  }
  ASSERT_TRUE(client->Do(Get("/api/v1/nodes")).ok());
  ASSERT_TRUE(client->Do(Get("/api/v1/nodes")).ok());
  EXPECT_EQ(server.requests().at(1).client_cn, "system:node:node-1");
  EXPECT_EQ(server.requests().at(2).client_cn, "system:node:node-1");
  EXPECT_TRUE(server.requests().at(2).client_verified);
  const int before = server.connections();
  {
    absl::MutexLock lock(&mu);
    current = {TestPki().client2_cert_pem, TestPki().client2_key_pem, 2};
  }
  ASSERT_TRUE(client->Do(Get("/api/v1/nodes")).ok());
  EXPECT_EQ(server.requests().at(3).client_cn, "system:node:node-2");
  EXPECT_EQ(server.connections(), before + 1);  // the old connection was not reused
}

TEST(RestClientTest, UntrustedServerIsRefusedUnlessInsecure) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  RestConfig cfg = Config(server);
  cfg.ca_pem = TestPki().other_ca_pem;
  absl::StatusOr<Response> resp = Client(cfg)->Do(Get("/api"));
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kUnavailable);
  cfg.insecure = true;
  cfg.ca_pem.clear();
  resp = Client(cfg)->Do(Get("/api"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
}

TEST(RestClientTest, TlsServerNameIsVerifiedInsteadOfTheAddress) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  RestConfig cfg = Config(server);
  cfg.tls_server_name = "apiserver.test";
  absl::StatusOr<Response> resp = Client(cfg)->Do(Get("/api"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(server.requests().at(0).Header("host"), absl::StrCat("127.0.0.1:", server.port()));
  cfg.tls_server_name = "wrong.test";
  resp = Client(cfg)->Do(Get("/api"));
  EXPECT_FALSE(resp.ok());
}

TEST(RestClientTest, HttpErrorsAreResponses) {
  TestServer server([](const ServerRequest& r, Conn& c) {
    if (r.target.find("missing") != std::string::npos) {
      c.Respond(404, StatusBody(404, "NotFound", "pods \"missing\" not found"));
    } else if (r.target.find("busy") != std::string::npos) {
      c.Respond(429, StatusBody(429, "TooManyRequests", "slow down"));
    } else {
      c.Respond(503, "upstream unavailable", "text/plain");
    }
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  absl::StatusOr<Response> resp = client->Do(Get("/api/v1/namespaces/default/pods/missing"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 404);
  EXPECT_FALSE(resp->ok());
  ApiError e = DecodeApiError(*resp);
  EXPECT_EQ(e.code, 404);
  EXPECT_EQ(e.reason, "NotFound");
  EXPECT_EQ(e.message, "pods \"missing\" not found");
  EXPECT_EQ(ResponseStatus(*resp).code(), absl::StatusCode::kNotFound);

  resp = client->Do(Get("/busy"));
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->code, 429);
  EXPECT_EQ(ResponseStatus(*resp).code(), absl::StatusCode::kResourceExhausted);

  resp = client->Do(Get("/other"));
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->code, 503);
  e = DecodeApiError(*resp);
  EXPECT_EQ(e.reason, "ServiceUnavailable");
  EXPECT_EQ(e.message, "upstream unavailable");
  EXPECT_EQ(ResponseStatus(*resp).code(), absl::StatusCode::kUnavailable);
}

TEST(RestClientTest, MethodsBodiesAndKeepAlive) {
  TestServer server([](const ServerRequest& r, Conn& c) {
    c.Respond(
        200,
        nlohmann::json{{"method", r.method}, {"type", r.Header("content-type")}, {"body", r.body}}
            .dump());
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  struct Case {
    std::string method, content_type, body, want_type;
  };
  const std::vector<Case> cases = {
      {"POST", "", R"({"a":1})", "application/json"},
      {"PUT", "", R"({"b":2})", "application/json"},
      {"PATCH", kMergePatchType, R"({"c":3})", kMergePatchType},
      {"PATCH", kStrategicMergePatchType, R"({"d":4})", kStrategicMergePatchType},
      {"PATCH", kJsonPatchType, R"([{"op":"remove","path":"/e"}])", kJsonPatchType},
      {"DELETE", "", "", ""},
      {"GET", "", "", ""},
  };
  for (const Case& c : cases) {
    Request r;
    r.method = c.method;
    r.path = "/api/v1/namespaces/default/configmaps/x";
    r.body = c.body;
    r.content_type = c.content_type;
    absl::StatusOr<Response> resp = client->Do(r);
    ASSERT_TRUE(resp.ok()) << resp.status();
    nlohmann::json echo = nlohmann::json::parse(resp->body);
    EXPECT_EQ(echo["method"], c.method);
    EXPECT_EQ(echo["type"], c.want_type) << c.method;
    EXPECT_EQ(echo["body"], c.body) << c.method;
  }
  // Sequential calls reuse one keep-alive connection.
  EXPECT_EQ(server.connections(), 1);
  Request bad;
  bad.method = "TRACE";
  bad.path = "/x";
  EXPECT_EQ(client->Do(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RestClientTest, BodyIsBounded) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, std::string(4096, 'x')); });
  RestClientOptions o;
  o.max_body_bytes = 1024;
  absl::StatusOr<Response> resp = Client(Config(server), o)->Do(Get("/big"));
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(RestClientTest, TimeoutAndCancellationOfAUnaryCall) {
  TestServer server([&](const ServerRequest&, Conn& c) {
    // Never answers while the test runs.
  });
  // Hold the connection open: the handler returns at once but writes nothing; the server then
  // waits for the next request on the connection.
  std::unique_ptr<RestClient> client = Client(Config(server));
  Request r = Get("/slow");
  r.timeout = absl::Milliseconds(200);
  absl::Time start = absl::Now();
  absl::StatusOr<Response> resp = client->Do(r);
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));

  auto cancel = std::make_shared<Cancellation>();
  absl::StatusOr<Response> cancelled;
  std::thread t([&] {
    ScopedCancellation scope(cancel);
    cancelled = client->Do(Get("/slow"));
  });
  absl::SleepFor(absl::Milliseconds(100));
  start = absl::Now();
  cancel->Cancel();
  t.join();
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled) << cancelled.status();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
}

TEST(RestClientTest, WatchDeliversFramesAsTheyArrive) {
  absl::Notification first_seen;
  TestServer server([&](const ServerRequest& r, Conn& c) {
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})"
            "\n");
    // The next event goes out only after the client saw the first: frames are not batched.
    first_seen.WaitForNotificationWithTimeout(absl::Seconds(10));
    // One frame split over two chunks, then two frames in one chunk.
    c.Chunk(R"({"type":"MODIFIED","object":{"metadata":)");
    c.Chunk(R"({"name":"a","resourceVersion":"2"}}})"
            "\n");
    c.Chunk(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3"}}})"
            "\n"
            R"({"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"4"}}})"
            "\n");
    c.EndChunked();
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  std::vector<std::string> seen;
  absl::StatusOr<Response> resp =
      client->Watch(Get("/api/v1/pods?watch=true&resourceVersion=0"), [&](WatchEvent ev) {
        seen.push_back(ev.type + "@" + ev.object["metadata"]["resourceVersion"].get<std::string>());
        if (seen.size() == 1) first_seen.Notify();
        return true;
      });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED@1", "MODIFIED@2", "BOOKMARK@3", "DELETED@4"));
}

TEST(RestClientTest, WatchErrorAnswerAndBadFrame) {
  TestServer server([&](const ServerRequest& r, Conn& c) {
    if (r.target.find("gone") != std::string::npos) {
      c.Respond(410, StatusBody(410, "Expired", "too old resource version: 1 (5)"));
      return;
    }
    c.StartChunked(200);
    c.Chunk("this is not json\n");
    c.EndChunked();
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  int events = 0;
  absl::StatusOr<Response> resp = client->Watch(Get("/gone"), [&](WatchEvent) {
    ++events;
    return true;
  });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 410);
  EXPECT_TRUE(IsResourceExpired(DecodeApiError(*resp)));
  EXPECT_EQ(events, 0);
  resp = client->Watch(Get("/bad"), [&](WatchEvent) {
    ++events;
    return true;
  });
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(events, 0);
}

TEST(RestClientTest, DecodeWatchFrame) {
  absl::StatusOr<WatchEvent> ev =
      DecodeWatchFrame(" {\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\r");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->type, "ADDED");
  EXPECT_EQ(ev->object["metadata"]["name"], "a");
  ev = DecodeWatchFrame(R"({"type":"BOOKMARK"})");
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_TRUE(ev->object.is_null());
  for (const char* bad : {"this is not json", "[1,2]", R"({"object":{}})", R"({"type":1})",
                          R"("type")", R"({"type":"ADDED")"}) {
    ev = DecodeWatchFrame(bad);
    EXPECT_EQ(ev.status().code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(std::string(ev.status().message()), HasSubstr("watch frame is not a watch event"));
  }
  // Nesting beyond Go's limit is refused before parsing: the reflector's store and the pod source
  // copy objects recursively, and a frame 200000 levels deep overflowed the stack there.
  auto nested = [](int depth) {
    return R"({"type":"ADDED","object":{"spec":)" + std::string(depth - 2, '[') + "\"[{\"" +
           std::string(depth - 2, ']') + "}}";
  };
  EXPECT_TRUE(DecodeWatchFrame(nested(kMaxJsonNesting)).ok());
  EXPECT_EQ(DecodeWatchFrame(nested(kMaxJsonNesting + 1)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeWatchFrame(nested(200000)).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(
      ParseBoundedJson(std::string(kMaxJsonNesting, '[') + std::string(kMaxJsonNesting, ']'))
          .is_array());
  EXPECT_TRUE(ParseBoundedJson(std::string(kMaxJsonNesting + 1, '[') +
                               std::string(kMaxJsonNesting + 1, ']'))
                  .is_discarded());
}

TEST(RestClientTest, WatchFrameIsBounded) {
  TestServer server([&](const ServerRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(std::string(8192, ' '));  // no newline in sight
    c.EndChunked();
  });
  RestClientOptions o;
  o.max_frame_bytes = 1024;
  absl::StatusOr<Response> resp =
      Client(Config(server), o)->Watch(Get("/w"), [](WatchEvent) { return true; });
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(RestClientTest, WatchIsCancelledPromptlyAndStopsOnRequest) {
  TestServer server([&](const ServerRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":{}})"
            "\n");
    // Then silence: the stream stays open until the client goes or the server stops.
    for (int i = 0; i < 100 && !server.stopping().HasBeenNotified(); ++i) {
      server.stopping().WaitForNotificationWithTimeout(absl::Milliseconds(50));
      if (!c.Chunk("\n")) return;  // keep-alive blank lines are ignored by the client
    }
  });
  std::unique_ptr<RestClient> client = Client(Config(server));

  // The handler ends the watch.
  absl::Time start = absl::Now();
  absl::StatusOr<Response> resp = client->Watch(Get("/w"), [](WatchEvent) { return false; });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));

  // Another thread cancels.
  auto cancel = std::make_shared<Cancellation>();
  absl::Notification got_event;
  absl::StatusOr<Response> result;
  std::thread t([&] {
    ScopedCancellation scope(cancel);
    result = client->Watch(Get("/w"), [&](WatchEvent) {
      got_event.Notify();
      return true;
    });
  });
  ASSERT_TRUE(got_event.WaitForNotificationWithTimeout(absl::Seconds(10)));
  start = absl::Now();
  cancel->Cancel();
  t.join();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
}

// The threads of this process named `name` (/proc/self/task/*/comm).
int ThreadsNamed(const std::string& name) {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++n;
  }
  return n;
}

int OpenDescriptors() {
  int n = 0;
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A watch server: two events, then silence (blank keep-alive lines) until the client goes or
// the server stops; /gone answers 410.
Handler SilentWatchServer(const TestServer* const* server) {
  return [server](const ServerRequest& r, Conn& c) {
    if (r.target.find("gone") != std::string::npos) {
      c.Respond(410, StatusBody(410, "Expired", "too old resource version: 1 (5)"));
      return;
    }
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})"
            "\n"
            R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"2"}}})"
            "\n");
    if (r.target.find("end") != std::string::npos) {
      c.EndChunked();
      return;
    }
    while (!(*server)->stopping().WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (!c.Chunk("\n")) return;
    }
  };
}

TEST(RestClientTest, StartWatchStreamsWithoutTheCallersThreadAndEndsOnce) {
  const TestServer* self = nullptr;
  TestServer server(SilentWatchServer(&self));
  self = &server;
  std::unique_ptr<RestClient> client = Client(Config(server));
  absl::Mutex mu;
  std::vector<std::string> seen;
  int ends = 0;
  absl::StatusOr<Response> end_result;
  bool callbacks_on_caller = false;
  const std::thread::id caller = std::this_thread::get_id();
  absl::Notification ended;
  std::unique_ptr<BackgroundWatch> w = client->StartWatch(
      Get("/api/v1/pods?watch=true&end=1"),
      [&](WatchEvent ev) {
        absl::MutexLock lock(&mu);
        seen.push_back(ev.type);
        return true;
      },
      [&](absl::StatusOr<Response> r) {
        absl::MutexLock lock(&mu);
        ++ends;
        end_result = std::move(r);
        if (std::this_thread::get_id() == caller) callbacks_on_caller = true;
        ended.Notify();
      });
  ASSERT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(10)));
  w->Stop();
  absl::MutexLock lock(&mu);
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED", "MODIFIED"));
  EXPECT_EQ(ends, 1);
  ASSERT_TRUE(end_result.ok()) << end_result.status();
  EXPECT_EQ(end_result->code, 200);
  EXPECT_FALSE(callbacks_on_caller);
}

TEST(RestClientTest, StartWatchStopEndsTheStreamPromptlyWithoutOnEnd) {
  const TestServer* self = nullptr;
  TestServer server(SilentWatchServer(&self));
  self = &server;
  std::unique_ptr<RestClient> client = Client(Config(server));
  std::atomic<int> events{0}, ends{0};
  std::unique_ptr<BackgroundWatch> w = client->StartWatch(
      Get("/w?watch=true"),
      [&](WatchEvent) {
        ++events;
        return true;
      },
      [&](absl::StatusOr<Response>) { ++ends; });
  for (int i = 0; i < 1000 && events < 2; ++i) absl::SleepFor(absl::Milliseconds(10));
  ASSERT_EQ(events, 2);
  // The server never ends this stream: Stop() returning is the stream ended by the client.
  w->Stop();
  w->Stop();  // idempotent
  w.reset();
  EXPECT_EQ(ends, 0);
  for (int i = 0; i < 1000 && server.ended_connections() < 1; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(server.ended_connections(), 1);  // the client closed it
}

TEST(RestClientTest, StartWatchRefusedOrTimedOut) {
  const TestServer* self = nullptr;
  TestServer server(SilentWatchServer(&self));
  self = &server;
  std::unique_ptr<RestClient> client = Client(Config(server));
  // A refusal ends the watch before StartWatch returns.
  std::optional<absl::StatusOr<Response>> refused;
  std::unique_ptr<BackgroundWatch> w = client->StartWatch(
      Get("/gone?watch=true"), [](WatchEvent) { return true; },
      [&](absl::StatusOr<Response> r) { refused = std::move(r); });
  ASSERT_TRUE(refused.has_value());
  ASSERT_TRUE(refused->ok()) << refused->status();
  EXPECT_EQ((*refused)->code, 410);
  w.reset();
  // The request's timeout cuts a silent stream: the watch ended, as Watch() says it.
  Request r = Get("/w?watch=true");
  r.timeout = absl::Milliseconds(300);
  absl::Notification ended;
  absl::StatusOr<Response> result;
  w = client->StartWatch(
      r, [](WatchEvent) { return true; },
      [&](absl::StatusOr<Response> got) {
        result = std::move(got);
        ended.Notify();
      });
  ASSERT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->code, 200);
}

TEST(RestClientTest, ConnectionsOfAllClientsShareTheProcessIoThreads) {
  const TestServer* self = nullptr;
  TestServer server(SilentWatchServer(&self));
  self = &server;
  constexpr int kClients = 4, kWatchesEach = 10;
  std::vector<std::unique_ptr<RestClient>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(Client(Config(server)));
  // One watch first: the I/O threads and the server's accept loop exist before counting.
  std::unique_ptr<BackgroundWatch> first = clients[0]->StartWatch(
      Get("/w?watch=true"), [](WatchEvent) { return true; }, [](absl::StatusOr<Response>) {});
  const int fds_before = OpenDescriptors();
  std::atomic<int> events{0};
  std::vector<std::unique_ptr<BackgroundWatch>> watches;
  for (auto& c : clients) {
    for (int i = 0; i < kWatchesEach; ++i) {
      watches.push_back(c->StartWatch(
          Get("/w?watch=true"),
          [&](WatchEvent) {
            ++events;
            return true;
          },
          [](absl::StatusOr<Response>) {}));
    }
  }
  constexpr int kWatches = kClients * kWatchesEach;
  for (int i = 0; i < 1000 && events < 2 * kWatches; ++i) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_EQ(events, 2 * kWatches);
  // Each open stream: the client's socket and the test server's; nothing else per connection
  // (no reactor, eventfd or timer of its own: before, 3 more each), and no thread per watch.
  // The slack: the reactors of I/O threads that got their first connection now (3 each).
  EXPECT_LE(OpenDescriptors() - fds_before, 2 * kWatches + 3 * 4);
  EXPECT_GE(ThreadsNamed("api-io"), 1);
  EXPECT_LE(ThreadsNamed("api-io"), 4);
  for (auto& w : watches) w->Stop();
  first->Stop();
}

TEST(RestClientTest, DeadlinesRacingTheAnswerLeaveNothingBehind) {
  // The answer comes about when the deadline passes: whichever wins, the call returns an answer
  // or DeadlineExceeded, and nothing of it runs afterwards on a connection already dropped (the
  // sanitized build's check).
  std::atomic<int> delay_us{0};
  TestServer server([&](const ServerRequest&, Conn& c) {
    absl::SleepFor(absl::Microseconds(delay_us.load()));
    c.Respond(200, "{}");
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  for (int i = 0; i < 500; ++i) {
    delay_us = 1000 + (i % 7) * 300;
    Request r = Get("/race");
    r.timeout = absl::Microseconds(1000 + (i % 5) * 400);
    absl::StatusOr<Response> resp = client->Do(r);
    if (!resp.ok()) {
      ASSERT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded) << resp.status();
    }
  }
}

TEST(RestClientTest, RateLimiterSpacesRequests) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  RestConfig cfg = Config(server);
  cfg.qps = 10;
  cfg.burst = 2;
  std::unique_ptr<RestClient> client = Client(cfg);
  absl::Time start = absl::Now();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->Do(Get("/api")).ok());
  // Two from the burst, then three at 100 ms each.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(280));
}

TEST(RestClientTest, RecordsClientGoMetrics) {
  TestServer server(
      [](const ServerRequest& r, Conn& c) { c.Respond(r.target == "/missing" ? 404 : 200, "{}"); });
  std::unique_ptr<RestClient> client = Client(Config(server));
  ASSERT_TRUE(client->Do(Get("/missing")).ok());
  Request post = PostEvent();
  ASSERT_TRUE(client->Do(post).ok());
  const std::string host = absl::StrCat("127.0.0.1:", server.port());
  std::string text = metrics::Serialize(metrics::KubeletRegistry());
  EXPECT_THAT(text, HasSubstr(absl::StrCat("rest_client_requests_total{code=\"404\",host=\"", host,
                                           "\",method=\"GET\"} 1")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("rest_client_requests_total{code=\"200\",host=\"", host,
                                           "\",method=\"POST\"} 1")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("rest_client_request_duration_seconds_count{host=\"",
                                           host, "\",verb=\"GET\"} 1")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("rest_client_request_duration_seconds_bucket{host=\"",
                                           host, "\",verb=\"GET\",le=\"0.005\"}")));
  EXPECT_THAT(text, HasSubstr("le=\"60\""));

  // A transport failure counts as code "<error>".
  RestConfig down = Config(server);
  down.host = "https://127.0.0.1:1";
  EXPECT_FALSE(Client(down)->Do(Get("/x")).ok());
  text = metrics::Serialize(metrics::KubeletRegistry());
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"<error>\",host=\"127.0.0.1:1\","
                              "method=\"GET\"}"));
}

TEST(RestClientTest, OnRequestSeesEveryRequestAndItsCode) {
  TestServer server(
      [](const ServerRequest& r, Conn& c) { c.Respond(r.target == "/missing" ? 404 : 200, "{}"); });
  absl::Mutex mu;
  std::vector<std::string> seen;
  RestClientOptions o;
  o.on_request = [&](const Request& r, int code) {
    absl::MutexLock lock(&mu);
    seen.push_back(absl::StrCat(r.method, " ", r.path, " ", code));
  };
  std::unique_ptr<RestClient> client = Client(Config(server), o);
  ASSERT_TRUE(client->Do(Get("/missing")).ok());
  Request post = PostEvent();
  ASSERT_TRUE(client->Do(post).ok());
  RestConfig down = Config(server);
  down.host = "https://127.0.0.1:1";
  EXPECT_FALSE(Client(down, o)->Do(Get("/x")).ok());
  absl::MutexLock lock(&mu);
  EXPECT_EQ(seen,
            (std::vector<std::string>{"GET /missing 404",
                                      "POST /api/v1/namespaces/default/events 200", "GET /x 0"}));
}

TEST(RestClientTest, ReflectorOverTheRealClient) {
  TestServer server([&](const ServerRequest& r, Conn& c) {
    if (r.target.find("watch=true") == std::string::npos) {
      c.Respond(200, R"({"kind":"PodList","metadata":{"resourceVersion":"10"},"items":[)"
                     R"({"metadata":{"namespace":"default","name":"a","resourceVersion":"9"}}]})");
      return;
    }
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":{"metadata":{"namespace":"default","name":"b",)"
            R"("resourceVersion":"11"}}})"
            "\n");
    while (!server.stopping().WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
      if (!c.Chunk("\n")) return;
    }
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  Store store;
  ReflectorOptions o;
  o.name = "pods";
  o.path = "/api/v1/pods";
  o.field_selector = "spec.nodeName=node-1";
  RealClock clock;
  Reflector reflector(*client, store, o, clock);
  reflector.Start();
  ASSERT_TRUE(
      store.WaitFor([](const Store::Items& items, const std::string&) { return items.size() == 2; },
                    absl::Seconds(10)));
  EXPECT_EQ(store.ResourceVersion(), "11");
  absl::Time start = absl::Now();
  reflector.Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  std::vector<ServerRequest> reqs = server.requests();
  ASSERT_GE(reqs.size(), 2u);
  EXPECT_THAT(reqs[0].target, HasSubstr("fieldSelector=spec.nodeName%3Dnode-1"));
  EXPECT_THAT(reqs[0].target, HasSubstr("resourceVersion=0"));
  EXPECT_THAT(reqs[1].target, HasSubstr("resourceVersion=10"));
  EXPECT_THAT(reqs[1].target, HasSubstr("allowWatchBookmarks=true"));
}

std::string Gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(RestClientTest, PlainHttpUnaryAndWatch) {
  TestServer server(
      [](const ServerRequest& r, Conn& c) {
        if (r.target.find("watch=true") == std::string::npos) {
          c.Respond(200, R"({"kind":"Node"})");
          return;
        }
        c.StartChunked(200);
        c.Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"n"}}})"
                "\n");
        c.EndChunked();
      },
      TestServer::kPlain);
  RestConfig cfg;
  cfg.host = server.url();
  cfg.bearer_token = "t";
  cfg.qps = 0;
  std::unique_ptr<RestClient> client = Client(cfg);
  absl::StatusOr<Response> resp = client->Do(Get("/api/v1/nodes/n"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, R"({"kind":"Node"})");
  std::vector<std::string> names;
  resp = client->Watch(Get("/api/v1/nodes?watch=true"), [&](WatchEvent ev) {
    names.push_back(ev.object["metadata"]["name"].get<std::string>());
    return true;
  });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  EXPECT_THAT(names, ::testing::ElementsAre("n"));
  EXPECT_EQ(server.requests().at(0).Header("authorization"), "Bearer t");
  EXPECT_EQ(server.requests().at(0).Header("host"), absl::StrCat("127.0.0.1:", server.port()));
  EXPECT_EQ(server.connections(), 1);
}

TEST(RestClientTest, IdleConnectionTheServerClosedIsReplaced) {
  TestServer server([](const ServerRequest& r, Conn& c) {
    c.Respond(200, std::to_string(c.index()));
    if (r.target == "/close-after") c.Close();
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  absl::StatusOr<Response> resp = client->Do(Get("/close-after"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, "1");
  absl::SleepFor(absl::Milliseconds(100));  // the server's close reaches the client
  // Not idempotent, so it could not be sent again: the closed connection is noticed before.
  Request post;
  post.method = "POST";
  post.path = "/x";
  post.body = "{}";
  resp = client->Do(post);
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, "2");
  resp = client->Do(Get("/y"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, "2");  // the new connection is kept in turn
  EXPECT_EQ(server.connections(), 2);
}

TEST(RestClientTest, ConnectionsIdleForMoreThan90sAreClosed) {
  // Two calls at once leave two pooled connections; the steady traffic then reuses one of them,
  // and the other is closed once it has been idle for more than 90 s.
  absl::Mutex mu;
  int arrived = 0;
  TestServer server([&](const ServerRequest&, Conn& c) {
    if (c.requests == 1) {
      absl::MutexLock lock(&mu);
      ++arrived;
      auto both = [&] { return arrived >= 2; };
      mu.AwaitWithTimeout(absl::Condition(&both), absl::Seconds(10));
    }
    c.Respond(200, std::to_string(c.index()));
  });
  FakeClock clock(absl::FromUnixSeconds(1000));
  RestClientOptions o;
  o.clock = &clock;
  std::unique_ptr<RestClient> client = Client(Config(server), o);
  std::thread other([&] { EXPECT_TRUE(client->Do(Get("/a")).ok()); });
  EXPECT_TRUE(client->Do(Get("/b")).ok());
  other.join();
  ASSERT_EQ(server.connections(), 2);
  for (int i = 0; i < 3; ++i) {
    clock.Advance(absl::Seconds(40));
    ASSERT_TRUE(client->Do(Get("/steady")).ok());
  }
  EXPECT_EQ(server.connections(), 2);  // the steady calls reused one connection
  for (int i = 0; i < 50 && server.ended_connections() < 1; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(server.ended_connections(), 1);  // the other one, idle for 120 s, was closed
}

TEST(RestClientTest, GetIsSentAgainWhenAReusedConnectionDropsIt) {
  // The server closes a reused connection as the request arrives, without an answer (its idle
  // timeout firing while the request was on its way).
  TestServer server([](const ServerRequest& r, Conn& c) {
    if (r.target == "/drop" && c.requests > 1) {
      c.Close();
      return;
    }
    c.Respond(200, std::to_string(c.index()));
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  ASSERT_TRUE(client->Do(Get("/a")).ok());
  absl::StatusOr<Response> resp = client->Do(Get("/drop"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, "2");
  EXPECT_EQ(server.connections(), 2);
  int drops = 0;
  for (const ServerRequest& r : server.requests()) drops += r.target == "/drop";
  EXPECT_EQ(drops, 2);

  // A POST may have been acted on: it is not sent again, the failure is the caller's.
  Request post;
  post.method = "POST";
  post.path = "/drop";
  post.body = "{}";
  resp = client->Do(post);
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kUnavailable) << resp.status();
  EXPECT_EQ(server.connections(), 2);
  // The next call opens a new connection.
  resp = client->Do(Get("/b"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->body, "3");
}

TEST(RestClientTest, GzipAnswersAreDecodedAndBounded) {
  const std::string big(20000, 'a');
  TestServer server([&](const ServerRequest& r, Conn& c) {
    if (r.Header("accept-encoding") != "gzip") {
      c.Respond(410, StatusBody(410, "Expired", "identity"));
      return;
    }
    const std::string body = Gzip(big);
    c.Write(
        absl::StrCat("HTTP/1.1 200 X\r\nContent-Type: application/json\r\n"
                     "Content-Encoding: gzip\r\nContent-Length: ",
                     body.size(), "\r\n\r\n", body));
  });
  std::unique_ptr<RestClient> client = Client(Config(server));
  absl::StatusOr<Response> resp = client->Do(Get("/big"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  EXPECT_EQ(resp->body, big);
  EXPECT_EQ(resp->Header("content-encoding"), "gzip");
  // Watches ask for no compression.
  resp = client->Watch(Get("/w"), [](WatchEvent) { return true; });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 410);
  // The bound applies to the decoded body.
  RestClientOptions o;
  o.max_body_bytes = 10000;
  resp = Client(Config(server), o)->Do(Get("/big"));
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kResourceExhausted) << resp.status();
}

TEST(RestClientTest, ClientCertificateFilesAreReadAgainForNewConnections) {
  TestServer server([](const ServerRequest& r, Conn& c) {
    c.Respond(200, "{}");
    if (r.target == "/close-after") c.Close();
  });
  TempDir dir;
  RestConfig cfg = Config(server);
  cfg.client_cert_pem.clear();
  cfg.client_key_pem.clear();
  cfg.client_cert_file = dir.Write("client.crt", TestPki().client_cert_pem);
  cfg.client_key_file = dir.Write("client.key", TestPki().client_key_pem);
  std::unique_ptr<RestClient> client = Client(cfg);
  ASSERT_TRUE(client->Do(Get("/a")).ok());
  // Rotated on disk: the live connection keeps its identity...
  dir.Write("client.crt", TestPki().client2_cert_pem);
  dir.Write("client.key", TestPki().client2_key_pem);
  ASSERT_TRUE(client->Do(Get("/close-after")).ok());
  absl::SleepFor(absl::Milliseconds(100));
  // ...and the next connection presents the new one.
  ASSERT_TRUE(client->Do(Get("/b")).ok());
  const std::vector<ServerRequest> reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].client_cn, "system:node:node-1");
  EXPECT_EQ(reqs[1].client_cn, "system:node:node-1");
  EXPECT_EQ(reqs[2].client_cn, "system:node:node-2");
  EXPECT_TRUE(reqs[2].client_verified);
  EXPECT_EQ(server.connections(), 2);
}

TEST(RestClientTest, DefaultHeadersAndExtraHeaders) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  std::unique_ptr<RestClient> client = Client(Config(server));
  Request r = Get("/api");
  ASSERT_TRUE(client->Do(r).ok());
  r.headers = {{"Accept", "application/vnd.kubernetes.protobuf"}, {"X-Extra", "1"}};
  ASSERT_TRUE(client->Do(r).ok());
  const std::vector<ServerRequest> reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].Header("accept"), "application/json, */*");
  EXPECT_EQ(reqs[0].headers.count("user-agent"), 0u);    // none unless configured
  EXPECT_EQ(reqs[0].headers.count("content-type"), 0u);  // GET without a body
  EXPECT_EQ(reqs[0].headers.count("authorization"), 0u);
  EXPECT_EQ(reqs[1].Header("accept"), "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(reqs[1].Header("x-extra"), "1");
}

TEST(RestClientTest, CancellationWhileConnecting) {
  // A listener that never accepts: the TLS handshake hangs after the TCP connect.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  RestConfig cfg;
  cfg.host = absl::StrCat("https://127.0.0.1:", ntohs(addr.sin_port));
  cfg.ca_pem = TestPki().ca_pem;
  cfg.qps = 0;
  RestClientOptions o;
  o.connect_timeout = absl::Milliseconds(300);
  std::unique_ptr<RestClient> client = Client(cfg, o);
  absl::Time start = absl::Now();
  absl::StatusOr<Response> resp = client->Do(Get("/api"));
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded) << resp.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));

  o.connect_timeout = absl::Seconds(30);
  client = Client(cfg, o);
  auto cancel = std::make_shared<Cancellation>();
  absl::StatusOr<Response> cancelled;
  std::thread t([&] {
    ScopedCancellation scope(cancel);
    cancelled = client->Watch(Get("/w"), [](WatchEvent) { return true; });
  });
  absl::SleepFor(absl::Milliseconds(100));
  start = absl::Now();
  cancel->Cancel();
  t.join();
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled) << cancelled.status();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  ::close(fd);
}

// ---- proxy ------------------------------------------------------------------------------------

TEST(RestClientTest, ProxyEnvironmentUpperCaseFirst) {
  std::map<std::string, std::string> vars = {{"HTTPS_PROXY", "upper:1"},
                                             {"https_proxy", "lower:1"},
                                             {"http_proxy", "lower:2"},
                                             {"HTTP_PROXY", ""},  // empty: the other one counts
                                             {"no_proxy", "a.test"}};
  auto lookup = [&](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
  ProxyEnvironment env = ProxyEnvironmentFrom(lookup);
  EXPECT_EQ(env.https_proxy, "upper:1");
  EXPECT_EQ(env.http_proxy, "lower:2");
  EXPECT_EQ(env.no_proxy, "a.test");
  vars["NO_PROXY"] = "b.test";
  EXPECT_EQ(ProxyEnvironmentFrom(lookup).no_proxy, "b.test");
}

TEST(RestClientTest, ParseProxyUrlAsGo) {
  absl::StatusOr<ProxyUrl> u = ParseProxyUrl("proxy.corp:3128");  // no scheme: http
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->Address(), "proxy.corp:3128");
  EXPECT_FALSE(u->has_user);
  u = ParseProxyUrl("10.0.0.1");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->Address(), "10.0.0.1:80");
  u = ParseProxyUrl("HTTP://us%65r:p%40ss:x@[fd00::1]/ignored");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "fd00::1");
  EXPECT_EQ(u->Address(), "[fd00::1]:80");
  EXPECT_TRUE(u->has_user);
  EXPECT_EQ(u->username, "user");
  EXPECT_EQ(u->password, "p@ss:x");
  u = ParseProxyUrl("https://proxy.corp");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->Address(), "proxy.corp:443");
  u = ParseProxyUrl("socks5://proxy.corp");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->Address(), "proxy.corp:1080");
  EXPECT_FALSE(ParseProxyUrl("http://proxy:abc").ok());
  EXPECT_FALSE(ParseProxyUrl("http://a%zz@proxy").ok());
  EXPECT_FALSE(ParseProxyUrl("http://").ok());
  EXPECT_FALSE(ParseProxyUrl("pro xy:80").ok());
}

TEST(RestClientTest, NoProxyMatchingAsGo) {
  // The list of Go's httpproxy tests, ports as there (http: 80).
  const std::string no_proxy =
      "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, "
      "10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:3]:443, 2002:db8:a::45/64, "
      "Upper.Example:8443";
  struct Case {
    const char* host;
    const char* port;
    bool bypassed;
  };
  const Case cases[] = {
      {"localhost", "80", true},  // never proxied
      {"127.0.0.1", "80", true},
      {"127.0.0.2", "80", true},
      {"::1", "80", true},
      {"::ffff:127.0.0.1", "80", true},
      {"::2", "80", false},               // not a loopback address
      {"192.168.1.1", "80", true},        // exact IPv4
      {"192.168.1.2", "80", false},       // the ports differ
      {"192.168.1.2", "81", true},        // exact IPv4:port
      {"192.168.1.3", "80", true},        // exact IPv4:port
      {"192.168.1.4", "80", false},       // no match
      {"10.0.0.2", "80", true},           // IPv4 CIDR
      {"10.0.0.4", "80", false},          // outside the /30
      {"2001:db8::52:0:1", "80", true},   // exact IPv6
      {"2001:db8::52:0:2", "80", false},  // no match
      {"2001:db8::52:0:3", "443", true},  // exact [IPv6]:port
      {"2001:db8::52:0:3", "80", false},  // the ports differ
      {"2002:db8:a::123", "80", true},    // IPv6 CIDR
      {"fe80::424b:c8be:1643:a1b6", "80", false},
      {"barbaz.net", "80", false},  // ".barbaz.net": subdomains only
      {"www.barbaz.net", "80", true},
      {"foobar.com", "80", true},      // "foobar.com": itself
      {"www.foobar.com", "80", true},  // and its subdomains
      {"FooBar.COM", "80", true},      // case-insensitive
      {"foofoobar.com", "80", false},  // not a suffix match of the name
      {"localhost.net", "80", false},
      {"local.localhost", "80", false},
      {"wildcard.io", "80", false},  // "*.wildcard.io": subdomains only
      {"nested.wildcard.io", "80", true},
      {"awildcard.io", "80", false},
      {"upper.example", "8443", true},  // entries are lower-cased, port must match
      {"upper.example", "443", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ProxyBypassed(no_proxy, c.host, c.port), c.bypassed) << c.host << ":" << c.port;
  }
  EXPECT_TRUE(ProxyBypassed("*", "anything.example", "443"));
  EXPECT_TRUE(ProxyBypassed(" a.test , * ", "anything.example", "443"));
  EXPECT_FALSE(ProxyBypassed("", "anything.example", "443"));
  EXPECT_FALSE(ProxyBypassed(",, :80, [::1", "anything.example", "80"));  // malformed: ignored
  EXPECT_FALSE(ProxyBypassed("10.0.0.0/8", "example.10.0.0.0", "80"));    // a name, not an IP
}

TEST(RestClientTest, ProxyForPicksTheSchemesProxy) {
  ProxyEnvironment env;
  env.https_proxy = "secure-proxy:3128";
  env.http_proxy = "http://plain-proxy:8080";
  env.no_proxy = "internal.test";
  std::optional<ProxyUrl> p = ProxyFor(env, "https", "api.example", "443");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->Address(), "secure-proxy:3128");
  p = ProxyFor(env, "http", "api.example", "80");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->Address(), "plain-proxy:8080");
  EXPECT_FALSE(ProxyFor(env, "https", "api.internal.test", "443").has_value());
  EXPECT_FALSE(ProxyFor(env, "https", "127.0.0.1", "6443").has_value());
  env.https_proxy.clear();
  EXPECT_FALSE(ProxyFor(env, "https", "api.example", "443").has_value());
  env.https_proxy = "http://proxy:bad-port";  // ignored, as Go does
  EXPECT_FALSE(ProxyFor(env, "https", "api.example", "443").has_value());
}

// An HTTP proxy on 127.0.0.1 (a thread per connection) that answers CONNECT: it records the
// request, checks the credentials when `required_auth` is set (407 otherwise), maps the name
// "apiserver.test" (the test server certificate's DNS name) to 127.0.0.1 as its own resolver,
// and relays bytes both ways. `hang` makes it never answer.
class ConnectProxy {
 public:
  struct Connect {
    std::string target, host, authorization, user_agent;
  };
  explicit ConnectProxy(std::string required_auth = "", bool hang = false)
      : required_auth_(std::move(required_auth)), hang_(hang) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~ConnectProxy() {
    stopping_.Notify();
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_thread_.join();
    {
      absl::MutexLock lock(&mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : threads_) t.join();
  }
  int port() const { return port_; }
  std::vector<Connect> connects() const {
    absl::MutexLock lock(&mu_);
    return connects_;
  }

 private:
  void AcceptLoop() {
    while (true) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      absl::MutexLock lock(&mu_);
      if (stopping_.HasBeenNotified()) {
        ::close(c);
        return;
      }
      fds_.push_back(c);
      threads_.emplace_back([this, c] { Serve(c); });
    }
  }

  static bool SendAll(int fd, std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(n);
    }
    return true;
  }

  void Serve(int fd) {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        Close(fd);
        return;
      }
      head.append(buf, n);
    }
    Connect req;
    std::string first = head.substr(0, head.find("\r\n"));
    std::vector<std::string> words = absl::StrSplit(first, ' ');
    if (words.size() == 3 && words[0] == "CONNECT") req.target = words[1];
    for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
      size_t colon = line.find(':');
      if (colon == absl::string_view::npos) continue;
      std::string name = absl::AsciiStrToLower(line.substr(0, colon));
      std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
      if (name == "host") req.host = value;
      if (name == "proxy-authorization") req.authorization = value;
      if (name == "user-agent") req.user_agent = value;
    }
    {
      absl::MutexLock lock(&mu_);
      connects_.push_back(req);
    }
    if (hang_) {
      stopping_.WaitForNotification();
      Close(fd);
      return;
    }
    if (!required_auth_.empty() && req.authorization != required_auth_) {
      SendAll(fd,
              "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n"
              "Content-Length: 6\r\n\r\ndenied");
      Close(fd);
      return;
    }
    const size_t colon = req.target.rfind(':');
    if (req.target.empty() || colon == std::string::npos ||
        req.target.substr(0, colon) != "apiserver.test") {
      SendAll(fd, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
      Close(fd);
      return;
    }
    int up = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(req.target.substr(colon + 1))));
    if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      SendAll(fd, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
      ::close(up);
      Close(fd);
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      fds_.push_back(up);
    }
    SendAll(fd, "HTTP/1.1 200 Connection established\r\n\r\n");
    pollfd p[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
    while (!stopping_.HasBeenNotified()) {
      if (::poll(p, 2, 100) < 0) break;
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if (p[i].revents == 0) continue;
        ssize_t n = ::recv(p[i].fd, buf, sizeof(buf), 0);
        closed = n <= 0 || !SendAll(p[1 - i].fd, std::string_view(buf, n));
      }
      if (closed) break;
    }
    Close(up);
    Close(fd);
  }

  // Unlists `fd` (so that the destructor does not shut a reused number down) and closes it.
  void Close(int fd) {
    {
      absl::MutexLock lock(&mu_);
      fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end());
    }
    ::close(fd);
  }

  const std::string required_auth_;
  const bool hang_;
  int fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  absl::Notification stopping_;
  mutable absl::Mutex mu_;
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;  // appended by the accept thread only
  std::vector<Connect> connects_ ABSL_GUARDED_BY(mu_);
};

RestClientOptions ProxyOptions(const std::string& https_proxy, const std::string& no_proxy = "") {
  RestClientOptions o;
  o.proxy_environment = ProxyEnvironment{};
  o.proxy_environment->https_proxy = https_proxy;
  o.proxy_environment->no_proxy = no_proxy;
  return o;
}

TEST(RestClientTest, RequestsAndWatchesGoThroughTheProxyTunnel) {
  TestServer server([](const ServerRequest& r, Conn& c) {
    if (r.target.find("watch=true") == std::string::npos) {
      c.Respond(200, R"({"kind":"Pod"})");
      return;
    }
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})"
            "\n");
    c.Chunk(R"({"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"2"}}})"
            "\n");
    c.EndChunked();
  });
  ConnectProxy proxy;
  RestConfig cfg = Config(server);
  // Not a loopback name (which Go never proxies): only the proxy resolves it.
  const std::string target = absl::StrCat("apiserver.test:", server.port());
  cfg.host = absl::StrCat("https://", target, "/prefix");
  cfg.user_agent = "kubelet/test";
  cfg.bearer_token = "tok";
  std::unique_ptr<RestClient> client =
      Client(cfg, ProxyOptions(absl::StrCat("127.0.0.1:", proxy.port())));  // no scheme: http
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 2; ++i) {  // the second reuses the tunnelled connection
    absl::StatusOr<Response> resp = client->Do(Get("/api/v1/pods/a"));
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_EQ(resp->body, R"({"kind":"Pod"})");
  }
  std::vector<std::string> seen;
  absl::StatusOr<Response> resp = client->Watch(Get("/api/v1/pods?watch=true"), [&](WatchEvent ev) {
    seen.push_back(ev.type + "@" + ev.object["metadata"]["resourceVersion"].get<std::string>());
    return true;
  });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED@1", "DELETED@2"));
  // The watch's connection was closed by the server: the next call opens a new tunnel.
  ASSERT_TRUE(client->Do(Get("/api/v1/pods/a")).ok());

  const std::vector<ConnectProxy::Connect> connects = proxy.connects();
  ASSERT_EQ(connects.size(), 2u);
  for (const ConnectProxy::Connect& c : connects) {
    EXPECT_EQ(c.target, target);
    EXPECT_EQ(c.host, target);
    EXPECT_EQ(c.user_agent, "kubelet/test");
    EXPECT_EQ(c.authorization, "");  // no credentials configured
  }
  EXPECT_EQ(server.connections(), 2);
  const std::vector<ServerRequest> reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  for (const ServerRequest& r : reqs) {
    // TLS end to end through the tunnel: the server saw the verified client certificate, and
    // the request is in origin form with the API server as Host.
    EXPECT_EQ(r.client_cn, "system:node:node-1");
    EXPECT_TRUE(r.client_verified);
    EXPECT_EQ(r.Header("host"), target);
    EXPECT_EQ(r.Header("authorization"), "Bearer tok");
    EXPECT_EQ(r.headers.count("proxy-authorization"), 0u);
    EXPECT_EQ(r.target.rfind("/prefix/api/v1/pods", 0), 0u) << r.target;
  }
}

TEST(RestClientTest, ProxyCredentialsAndARefusedConnect) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  const std::string auth = absl::StrCat("Basic ", absl::Base64Escape("node user:p@ss"));
  ConnectProxy proxy(auth);
  RestConfig cfg = Config(server);
  cfg.host = absl::StrCat("https://apiserver.test:", server.port());
  absl::StatusOr<Response> resp =
      Client(cfg, ProxyOptions(absl::StrCat("http://node%20user:p%40ss@127.0.0.1:", proxy.port())))
          ->Do(Get("/api"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->code, 200);
  ASSERT_EQ(proxy.connects().size(), 1u);
  EXPECT_EQ(proxy.connects()[0].authorization, auth);
  EXPECT_EQ(server.requests().at(0).headers.count("proxy-authorization"), 0u);

  // Without (or with wrong) credentials the proxy answers 407: the call fails as Unavailable
  // naming the proxy and its status line; the API server never sees a connection.
  for (const std::string& value :
       {absl::StrCat("127.0.0.1:", proxy.port()),
        absl::StrCat("http://node%20user:wrong@127.0.0.1:", proxy.port())}) {
    resp = Client(cfg, ProxyOptions(value))->Do(Get("/api"));
    EXPECT_EQ(resp.status().code(), absl::StatusCode::kUnavailable) << resp.status();
    EXPECT_THAT(resp.status().message(), HasSubstr(absl::StrCat("proxy 127.0.0.1:", proxy.port())));
    EXPECT_THAT(resp.status().message(), HasSubstr("407 Proxy Authentication Required"));
  }
  EXPECT_EQ(proxy.connects().size(), 3u);
  EXPECT_EQ(server.connections(), 1);

  // A proxy that cannot reach the target (502) fails the same way.
  cfg.host = absl::StrCat("https://elsewhere.test:", server.port());
  resp =
      Client(cfg, ProxyOptions(absl::StrCat("http://node%20user:p%40ss@127.0.0.1:", proxy.port())))
          ->Do(Get("/api"));
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kUnavailable) << resp.status();
  EXPECT_THAT(resp.status().message(), HasSubstr("502 Bad Gateway"));
}

TEST(RestClientTest, ProxyThatNeverAnswersTimesOutAndIsCancellable) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  ConnectProxy proxy("", /*hang=*/true);
  RestConfig cfg = Config(server);
  cfg.host = absl::StrCat("https://apiserver.test:", server.port());
  RestClientOptions o = ProxyOptions(absl::StrCat("127.0.0.1:", proxy.port()));
  o.connect_timeout = absl::Milliseconds(300);
  absl::Time start = absl::Now();
  absl::StatusOr<Response> resp = Client(cfg, o)->Do(Get("/api"));
  EXPECT_EQ(resp.status().code(), absl::StatusCode::kDeadlineExceeded) << resp.status();
  EXPECT_THAT(resp.status().message(), HasSubstr("CONNECT"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));

  o.connect_timeout = absl::Seconds(30);
  std::unique_ptr<RestClient> client = Client(cfg, o);
  auto cancel = std::make_shared<Cancellation>();
  absl::StatusOr<Response> cancelled;
  std::thread t([&] {
    ScopedCancellation scope(cancel);
    cancelled = client->Watch(Get("/w"), [](WatchEvent) { return true; });
  });
  absl::SleepFor(absl::Milliseconds(100));
  start = absl::Now();
  cancel->Cancel();
  t.join();
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled) << cancelled.status();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_EQ(server.connections(), 0);
}

TEST(RestClientTest, LoopbackAndNoProxyHostsBypassTheProxy) {
  TestServer server([](const ServerRequest&, Conn& c) { c.Respond(200, "{}"); });
  ConnectProxy proxy;
  const std::string proxy_value = absl::StrCat("127.0.0.1:", proxy.port());
  // Loopback addresses and "localhost" are never proxied (Go's useProxy), whatever NO_PROXY says.
  RestConfig cfg = Config(server);  // https://127.0.0.1:port
  absl::StatusOr<Response> resp = Client(cfg, ProxyOptions(proxy_value))->Do(Get("/api"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  cfg.host = absl::StrCat("https://localhost:", server.port());
  cfg.tls_server_name = "apiserver.test";
  resp = Client(cfg, ProxyOptions(proxy_value))->Do(Get("/api"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(proxy.connects().size(), 0u);

  // A host NO_PROXY names is dialled directly: "apiserver.test" only resolves at the proxy, so
  // the direct attempt fails on the name (or the connect timeout, with a slow resolver), without
  // the proxy seeing a CONNECT.
  cfg = Config(server);
  cfg.host = absl::StrCat("https://apiserver.test:", server.port());
  for (const std::string no_proxy : {"apiserver.test", ".test", "*", "other.test, *.test"}) {
    RestClientOptions o = ProxyOptions(proxy_value, no_proxy);
    o.connect_timeout = absl::Seconds(2);
    resp = Client(cfg, o)->Do(Get("/api"));
    EXPECT_FALSE(resp.ok()) << no_proxy;
    EXPECT_THAT(resp.status().message(), ::testing::Not(HasSubstr("proxy"))) << resp.status();
  }
  EXPECT_EQ(proxy.connects().size(), 0u);
  // With a NO_PROXY port that is not the server's, the proxy is used.
  resp = Client(cfg, ProxyOptions(proxy_value, "apiserver.test:1"))->Do(Get("/api"));
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(proxy.connects().size(), 1u);
}

TEST(RestClientTest, OnlyHttpProxiesAreSupported) {
  RestConfig cfg;
  cfg.host = "https://api.example:6443";
  cfg.qps = 0;
  for (const char* value : {"https://proxy.example", "socks5://proxy.example:1080"}) {
    absl::StatusOr<std::unique_ptr<RestClient>> c = NewRestClient(cfg, ProxyOptions(value));
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_THAT(c.status().message(), HasSubstr("HTTPS_PROXY")) << c.status();
    // Not used (NO_PROXY, or an http:// server): no objection.
    EXPECT_TRUE(NewRestClient(cfg, ProxyOptions(value, "api.example")).ok());
    cfg.host = "http://api.example:8080";
    EXPECT_TRUE(NewRestClient(cfg, ProxyOptions(value)).ok());
    cfg.host = "https://api.example:6443";
  }
  // A value that is not a URL is ignored (a direct connection), as Go does.
  EXPECT_TRUE(NewRestClient(cfg, ProxyOptions("http://proxy:bad-port")).ok());
}

TEST(RestClientTest, PlainHttpThroughAProxyUsesAbsoluteUrls) {
  // The plain test server plays the proxy: it sees what a forwarding proxy would be sent.
  TestServer proxy(
      [](const ServerRequest& r, Conn& c) {
        if (r.target.find("watch=true") == std::string::npos) {
          c.Respond(200, R"({"kind":"Node"})");
          return;
        }
        c.StartChunked(200);
        c.Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"n"}}})"
                "\n");
        c.EndChunked();
      },
      TestServer::kPlain);
  RestConfig cfg;
  cfg.host = "http://apiserver.test:8080/prefix";
  cfg.bearer_token = "t";
  cfg.qps = 0;
  RestClientOptions o;
  o.proxy_environment = ProxyEnvironment{};
  o.proxy_environment->http_proxy = absl::StrCat("http://u:p@127.0.0.1:", proxy.port());
  o.proxy_environment->https_proxy = "http://127.0.0.1:1";  // for https:// servers only
  std::unique_ptr<RestClient> client = Client(cfg, o);
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Response> resp = client->Do(Get("/api/v1/nodes/n"));
    ASSERT_TRUE(resp.ok()) << resp.status();
    EXPECT_EQ(resp->body, R"({"kind":"Node"})");
  }
  std::vector<std::string> names;
  absl::StatusOr<Response> resp =
      client->Watch(Get("/api/v1/nodes?watch=true"), [&](WatchEvent ev) {
        names.push_back(ev.object["metadata"]["name"].get<std::string>());
        return true;
      });
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_THAT(names, ::testing::ElementsAre("n"));
  EXPECT_EQ(proxy.connections(), 1);  // kept alive, as without a proxy
  const std::vector<ServerRequest> reqs = proxy.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].target, "http://apiserver.test:8080/prefix/api/v1/nodes/n");
  EXPECT_EQ(reqs[2].target, "http://apiserver.test:8080/prefix/api/v1/nodes?watch=true");
  for (const ServerRequest& r : reqs) {
    EXPECT_EQ(r.Header("host"), "apiserver.test:8080");
    EXPECT_EQ(r.Header("proxy-authorization"), absl::StrCat("Basic ", absl::Base64Escape("u:p")));
    EXPECT_EQ(r.Header("authorization"), "Bearer t");
  }
}

}  // namespace
}  // namespace kubelet::apiclient
