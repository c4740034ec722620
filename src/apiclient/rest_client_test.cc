// The libcurl RestClient against an in-process HTTPS server on 127.0.0.1 (OpenSSL, a thread per
// connection: fine for a test): TLS verification, client certificates, tokens, unary calls and
// error answers, keep-alive reuse, bounds, watch streaming, cancellation, the rate limiter and
// the metrics.
#include "apiclient/rest_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
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
  std::string other_ca_pem;  // trusts nothing here
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
  explicit Conn(SSL* ssl) : ssl_(ssl) {}
  bool Write(std::string_view data) {
    while (!data.empty()) {
      int n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
      if (n <= 0) return false;
      data.remove_prefix(n);
    }
    return true;
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
  bool closing() const { return close_; }

 private:
  SSL* ssl_;
  bool close_ = false;
};

using Handler = std::function<void(const ServerRequest&, Conn&)>;

class TestServer {
 public:
  explicit TestServer(Handler handler, bool request_client_cert = true)
      : handler_(std::move(handler)) {
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
    return absl::StrCat("https://127.0.0.1:", port_, prefix);
  }
  int connections() const {
    absl::MutexLock lock(&mu_);
    return connections_;
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
      ++connections_;
      conn_fds_.push_back(c);
      conn_threads_.emplace_back([this, c] { Serve(c); });
    }
  }

  void Serve(int fd) {
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
      std::string cn;
      bool verified = false;
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        char buf[256] = {0};
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof(buf));
        cn = buf;
        verified = SSL_get_verify_result(ssl) == X509_V_OK;
        X509_free(peer);
      }
      std::string buf;
      Conn conn(ssl);
      while (!conn.closing()) {
        size_t end;
        while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
          char tmp[4096];
          int n = SSL_read(ssl, tmp, sizeof(tmp));
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
          int n = SSL_read(ssl, tmp, sizeof(tmp));
          if (n <= 0) goto done;
          buf.append(tmp, n);
        }
        req.body = buf.substr(0, body_len);
        buf.erase(0, body_len);
        {
          absl::MutexLock lock(&mu_);
          requests_.push_back(req);
        }
        handler_(req, conn);
      }
    }
  done:
    SSL_shutdown(ssl);
    SSL_free(ssl);
    ::close(fd);
  }

  Handler handler_;
  SSL_CTX* ctx_ = nullptr;
  int fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  absl::Notification stopping_;
  mutable absl::Mutex mu_;
  int connections_ ABSL_GUARDED_BY(mu_) = 0;
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
  Request post;
  post.method = "POST";
  post.path = "/api/v1/namespaces/default/events";
  post.body = "{}";
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

}  // namespace
}  // namespace kubelet::apiclient
