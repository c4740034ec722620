// TLS serving, client-certificate authentication, certificate generation, TLS option parsing,
// streaming responses and the kubelet API handlers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "server/kubelet_server.h"
#include "server/tls.h"

namespace kubelet::server {
namespace {

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "server-test-XXXXXX").string();
  char* d = ::mkdtemp(tmpl.data());
  return d ? std::string(d) : std::string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void Write(const std::string& path, const std::string& data) { std::ofstream(path) << data; }

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string PlainExchange(int port, const std::string& request) {
  int fd = Connect(port);
  if (fd < 0) return "connect failed";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, n);
  ::close(fd);
  return out;
}

// A CA and a client certificate it signs (CN, O values, clientAuth).
struct TestPki {
  std::string ca_file, cert_file, key_file;
};

EVP_PKEY* NewKey() { return EVP_RSA_gen(2048); }

X509* NewCert(EVP_PKEY* key, const std::string& cn, const std::vector<std::string>& orgs,
              X509* issuer, EVP_PKEY* issuer_key, bool ca) {
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), ca ? 10 : 11);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600 * 24);
  X509_NAME* n = X509_get_subject_name(x);
  for (const std::string& o : orgs) {
    X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
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
  if (ca) {
    add(NID_basic_constraints, "critical,CA:TRUE");
    add(NID_key_usage, "critical,keyCertSign,digitalSignature");
  } else {
    add(NID_key_usage, "critical,digitalSignature,keyEncipherment");
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

TestPki MakePki(const std::string& dir, const std::string& prefix) {
  EVP_PKEY* ca_key = NewKey();
  X509* ca = NewCert(ca_key, prefix + "-ca", {}, nullptr, nullptr, true);
  EVP_PKEY* key = NewKey();
  X509* cert = NewCert(key, "alice", {"team-a", "team-b"}, ca, ca_key, false);
  TestPki p{dir + "/" + prefix + "-ca.crt", dir + "/" + prefix + "-client.crt",
            dir + "/" + prefix + "-client.key"};
  Write(p.ca_file, Pem(ca));
  Write(p.cert_file, Pem(cert));
  Write(p.key_file, KeyPem(key));
  X509_free(ca);
  X509_free(cert);
  EVP_PKEY_free(ca_key);
  EVP_PKEY_free(key);
  return p;
}

// One HTTPS exchange with OpenSSL (no server verification); optional client certificate.
std::string TlsExchange(int port, const std::string& request, const std::string& cert = "",
                        const std::string& key = "", int max_version = 0) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (max_version) SSL_CTX_set_max_proto_version(ctx, max_version);
  if (!cert.empty()) {
    SSL_CTX_use_certificate_file(ctx, cert.c_str(), SSL_FILETYPE_PEM);
    SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM);
  }
  int fd = Connect(port);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  std::string out;
  if (SSL_connect(ssl) == 1) {
    SSL_write(ssl, request.data(), static_cast<int>(request.size()));
    char buf[4096];
    for (int n; (n = SSL_read(ssl, buf, sizeof(buf))) > 0;) out.append(buf, n);
  } else {
    out = "handshake failed";
  }
  ERR_clear_error();
  SSL_free(ssl);
  ::close(fd);
  SSL_CTX_free(ctx);
  return out;
}

std::string Get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
}

std::string Body(const std::string& r) {
  size_t p = r.find("\r\n\r\n");
  return p == std::string::npos ? "" : r.substr(p + 4);
}

// Decodes a chunked body.
std::string Dechunk(std::string body) {
  std::string out;
  for (;;) {
    size_t eol = body.find("\r\n");
    if (eol == std::string::npos) break;
    size_t n = std::stoul(body.substr(0, eol), nullptr, 16);
    if (n == 0) break;
    out += body.substr(eol + 2, n);
    body = body.substr(eol + 2 + n + 2);
  }
  return out;
}

class TlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    auto c = EnsureServingCertificate("", "", dir_ + "/pki", {.host = "node-a"});
    ASSERT_TRUE(c.ok()) << c.status();
    cert_ = *c;
    pki_ = MakePki(dir_, "good");
    other_ = MakePki(dir_, "other");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<HttpServer> Start(bool anonymous, bool with_ca = true) {
    HttpServerOptions o;
    o.name = "kubelet";
    o.handshake_timeout = absl::Seconds(2);
    o.tls = TlsServerOptions{.cert_file = cert_.cert_file,
                             .key_file = cert_.key_file,
                             .client_ca_file = with_ca ? pki_.ca_file : ""};
    auto s = std::make_unique<HttpServer>(o);
    s->SetFilter(MakeAuthFilter(
        {.anonymous = anonymous,
         .x509 = with_ca,
         .authorizer =
             [this](const UserInfo& u, const RequestAttributes& a) {
               absl::MutexLock l(&mu_);
               seen_user_ = u;
               seen_attrs_ = a;
               return AuthzDecision{u.name != "system:anonymous" || a.subresource != "stats", "no"};
             },
         .node_name = "node-a"}));
    s->Handle("/pods",
              [](const HttpRequest& req, HttpResponse* res) {
                res->body = req.user.name;
                for (const auto& g : req.user.groups) res->body += "," + g;
              },
              {"GET"});
    s->Handle("/stats/summary", [](const HttpRequest&, HttpResponse* res) { res->body = "s"; });
    EXPECT_TRUE(s->Start().ok());
    return s;
  }

  std::string dir_;
  ServingCertificate cert_;
  TestPki pki_, other_;
  absl::Mutex mu_;
  UserInfo seen_user_;
  RequestAttributes seen_attrs_;
};

TEST_F(TlsServerTest, AnonymousOffWithoutCredentialsIs401) {
  auto s = Start(/*anonymous=*/false);
  std::string r = TlsExchange(s->port(), Get("/pods"));
  EXPECT_EQ(r.rfind("HTTP/1.1 401", 0), 0u) << r;
  EXPECT_EQ(Body(r), "Unauthorized");
  // A bearer token cannot be checked without the webhook: still no credential.
  r = TlsExchange(s->port(),
                  "GET /pods HTTP/1.1\r\nAuthorization: Bearer abc\r\n"
                  "Connection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 401", 0), 0u) << r;
  // Unknown paths are not routed, hence not authenticated (as go-restful's mux).
  EXPECT_EQ(TlsExchange(s->port(), Get("/nope")).rfind("HTTP/1.1 404", 0), 0u);
}

TEST_F(TlsServerTest, ClientCertificateFromTheCaAuthenticates) {
  auto s = Start(/*anonymous=*/false);
  std::string r = TlsExchange(s->port(), Get("/pods"), pki_.cert_file, pki_.key_file);
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_EQ(Body(r), "alice,team-a,team-b,system:authenticated");
  {
    absl::MutexLock l(&mu_);
    EXPECT_EQ(seen_user_.name, "alice");
    EXPECT_EQ(seen_attrs_.verb, "get");
    EXPECT_EQ(seen_attrs_.resource, "nodes");
    EXPECT_EQ(seen_attrs_.subresource, "proxy");
    EXPECT_EQ(seen_attrs_.name, "node-a");
  }
  // Another CA's certificate is an authentication error, anonymous or not.
  r = TlsExchange(s->port(), Get("/pods"), other_.cert_file, other_.key_file);
  EXPECT_EQ(r.rfind("HTTP/1.1 401", 0), 0u) << r;
  auto anon = Start(/*anonymous=*/true);
  r = TlsExchange(anon->port(), Get("/pods"), other_.cert_file, other_.key_file);
  EXPECT_EQ(r.rfind("HTTP/1.1 401", 0), 0u) << r;
  // Wrong method after authentication: 405.
  r = TlsExchange(s->port(),
                  "POST /pods HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                  pki_.cert_file, pki_.key_file);
  EXPECT_EQ(r.rfind("HTTP/1.1 405", 0), 0u) << r;
  EXPECT_EQ(Body(r), "405: Method Not Allowed");
}

TEST_F(TlsServerTest, AnonymousUserAndForbidden) {
  auto s = Start(/*anonymous=*/true);
  std::string r = TlsExchange(s->port(), Get("/pods"));
  EXPECT_EQ(Body(r), "system:anonymous,system:unauthenticated") << r;
  r = TlsExchange(s->port(), Get("/stats/summary"));
  EXPECT_EQ(r.rfind("HTTP/1.1 403", 0), 0u) << r;
  EXPECT_EQ(Body(r),
            "Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource=stats)");
}

TEST_F(TlsServerTest, MinVersionIsEnforced) {
  HttpServerOptions o;
  o.tls = TlsServerOptions{.cert_file = cert_.cert_file,
                           .key_file = cert_.key_file,
                           .min_version = *TlsVersionFromName("VersionTLS13")};
  HttpServer s(o);
  s.Handle("/x", [](const HttpRequest&, HttpResponse* res) { res->body = "x"; });
  ASSERT_TRUE(s.Start().ok());
  EXPECT_EQ(TlsExchange(s.port(), Get("/x"), "", "", TLS1_2_VERSION), "handshake failed");
  EXPECT_EQ(Body(TlsExchange(s.port(), Get("/x"))), "x");
}

TEST_F(TlsServerTest, StalledClientsDoNotBlockOthers) {
  auto s = Start(/*anonymous=*/true);
  // One client never starts its handshake, another stops mid-request.
  int silent = Connect(s->port());
  int partial = Connect(s->port());
  ASSERT_GE(silent, 0);
  ::send(partial, "\x16\x03\x01", 3, MSG_NOSIGNAL);
  EXPECT_EQ(Body(TlsExchange(s->port(), Get("/pods"))), "system:anonymous,system:unauthenticated");
  // The handshake deadline closes the silent one (recv returns 0 or an error, never hangs).
  char c;
  EXPECT_LE(::recv(silent, &c, 1, 0), 0);
  ::close(silent);
  ::close(partial);
  // Garbage instead of a ClientHello: dropped, server still fine.
  EXPECT_EQ(PlainExchange(s->port(), Get("/pods")).find("200 OK"), std::string::npos);
  EXPECT_EQ(Body(TlsExchange(s->port(), Get("/pods"))), "system:anonymous,system:unauthenticated");
}

TEST(Tls, CertificateIsGeneratedOnceAndReused) {
  std::string dir = TempDir();
  SelfSignedCertOptions self{
      .host = "node-b", .alternate_ips = {"10.1.2.3", "127.0.0.1"}, .alternate_dns = {"localhost"}};
  auto first = EnsureServingCertificate("", "", dir + "/pki", self);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->generated);
  EXPECT_EQ(first->cert_file, dir + "/pki/kubelet.crt");
  EXPECT_EQ(first->key_file, dir + "/pki/kubelet.key");
  std::string crt = ReadAll(first->cert_file), key = ReadAll(first->key_file);
  EXPECT_NE(key.find("-----BEGIN RSA PRIVATE KEY-----"), std::string::npos);
  EXPECT_EQ((std::filesystem::status(first->key_file).permissions() & std::filesystem::perms::all),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto second = EnsureServingCertificate("", "", dir + "/pki", self);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->generated);
  EXPECT_EQ(ReadAll(second->cert_file), crt);
  EXPECT_EQ(ReadAll(second->key_file), key);

  // Leaf then CA; names and SANs.
  BIO* b = BIO_new_mem_buf(crt.data(), static_cast<int>(crt.size()));
  X509* leaf = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  ASSERT_NE(leaf, nullptr);
  ASSERT_NE(ca, nullptr);
  char name[256];
  X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, name, sizeof(name));
  EXPECT_EQ(std::string(name).rfind("node-b@", 0), 0u) << name;
  X509_NAME_get_text_by_NID(X509_get_subject_name(ca), NID_commonName, name, sizeof(name));
  EXPECT_EQ(std::string(name).rfind("node-b-ca@", 0), 0u) << name;
  EXPECT_EQ(X509_check_host(leaf, "node-b", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(leaf, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf, "10.1.2.3", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_issued(ca, leaf), X509_V_OK);
  X509_free(leaf);
  X509_free(ca);

  // Given files are used as they are; broken generated files are an error, not overwritten.
  auto given = EnsureServingCertificate("/a.crt", "/a.key", dir + "/pki", self);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->cert_file, "/a.crt");
  Write(dir + "/pki/kubelet.key", "garbage");
  EXPECT_FALSE(EnsureServingCertificate("", "", dir + "/pki", self).ok());
  std::filesystem::remove_all(dir);
}

// The CN of the certificate the server presents; "handshake failed" when there is none.
std::string PeerCommonName(int port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  int fd = Connect(port);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  std::string out = "handshake failed";
  if (SSL_connect(ssl) == 1) {
    X509* peer = SSL_get1_peer_certificate(ssl);
    char name[256] = {0};
    if (peer != nullptr) {
      X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, name, sizeof(name));
      X509_free(peer);
    }
    out = name;
  }
  ERR_clear_error();
  SSL_free(ssl);
  ::close(fd);
  SSL_CTX_free(ctx);
  return out;
}

TEST(Tls, DynamicCertificateIsChosenPerHandshake) {
  absl::Mutex mu;
  std::optional<TlsCertificate> current;  // guarded by mu
  int calls = 0;
  HttpServerOptions o;
  o.name = "kubelet";
  o.handshake_timeout = absl::Seconds(2);
  o.tls = TlsServerOptions{.certificate = [&]() -> std::optional<TlsCertificate> {
    absl::MutexLock l(&mu);
    ++calls;
    return current;
  }};
  HttpServer server(o);
  server.Handle("/healthz", [](const HttpRequest&, HttpResponse* res) { res->body = "ok"; });
  ASSERT_TRUE(server.Start().ok());

  // None yet: the handshake fails, the server goes on.
  EXPECT_EQ(PeerCommonName(server.port()), "handshake failed");
  auto a = GenerateSelfSignedCertKey({.host = "node-a"});
  auto b = GenerateSelfSignedCertKey({.host = "node-b"});
  ASSERT_TRUE(a.ok() && b.ok());
  {
    absl::MutexLock l(&mu);
    current = TlsCertificate{.generation = 1, .cert_pem = a->cert_pem, .key_pem = a->key_pem};
  }
  EXPECT_EQ(PeerCommonName(server.port()).rfind("node-a@", 0), 0u);
  EXPECT_EQ(Body(TlsExchange(server.port(), Get("/healthz"))), "ok");
  // A new generation: the next handshake presents it, without a restart.
  {
    absl::MutexLock l(&mu);
    current = TlsCertificate{.generation = 2, .cert_pem = b->cert_pem, .key_pem = b->key_pem};
  }
  EXPECT_EQ(PeerCommonName(server.port()).rfind("node-b@", 0), 0u);
  // A pair whose key does not match fails the handshake instead of serving it.
  {
    absl::MutexLock l(&mu);
    current = TlsCertificate{.generation = 3, .cert_pem = a->cert_pem, .key_pem = b->key_pem};
  }
  EXPECT_EQ(PeerCommonName(server.port()), "handshake failed");
  {
    absl::MutexLock l(&mu);
    EXPECT_GE(calls, 5);
  }
  server.Stop();
}

TEST(Tls, VersionAndCipherNames) {
  EXPECT_EQ(*TlsVersionFromName(""), TLS1_2_VERSION);
  EXPECT_EQ(*TlsVersionFromName("VersionTLS10"), TLS1_VERSION);
  EXPECT_EQ(*TlsVersionFromName("VersionTLS13"), TLS1_3_VERSION);
  EXPECT_EQ(TlsVersionFromName("TLS12").status().message(), "unknown tls version \"TLS12\"");
  auto c = CipherSuitesToOpenSsl({"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                                  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
                                  "TLS_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:AES256-SHA");
  EXPECT_EQ(CipherSuitesToOpenSsl({"TLS_FOO"}).status().message(),
            "Cipher suite TLS_FOO not supported or doesn't exist");
  EXPECT_EQ(*CipherSuitesToOpenSsl({}), "");
}

TEST(Streaming, ChunkedBodyFromAWorker) {
  HttpServer s(HttpServerOptions{.port = 0});
  s.Handle("/s", [](const HttpRequest&, HttpResponse* res) {
    res->SetHeader("Content-Type", "text/plain");
    res->stream = [](ResponseStream& out) {
      for (int i = 0; i < 3; ++i) out.Write("line " + std::to_string(i) + "\n");
    };
  });
  s.Handle("/fail", [](const HttpRequest&, HttpResponse* res) {
    res->stream = [](ResponseStream& out) { out.Fail(400, "bad thing"); };
  });
  ASSERT_TRUE(s.Start().ok());
  std::string r = PlainExchange(s.port(), Get("/s"));
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_EQ(Dechunk(Body(r)), "line 0\nline 1\nline 2\n");
  r = PlainExchange(s.port(), Get("/fail"));
  EXPECT_EQ(r.rfind("HTTP/1.1 400", 0), 0u) << r;
  EXPECT_EQ(Body(r), "bad thing\n");
}

TEST(Streaming, ProducerLearnsTheClientHasGone) {
  HttpServerOptions o;
  o.stream_buffer_bytes = 64 << 10;
  HttpServer s(o);
  absl::Notification stopped;
  std::atomic<bool> saw_gone{false};
  s.Handle("/follow", [&](const HttpRequest&, HttpResponse* res) {
    res->stream = [&](ResponseStream& out) {
      std::string block(4096, 'x');
      while (out.Write(block)) {
      }
      saw_gone = out.Gone();
      stopped.Notify();
    };
  });
  ASSERT_TRUE(s.Start().ok());
  int fd = Connect(s.port());
  std::string req = Get("/follow");
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  char buf[1024];
  ASSERT_GT(::recv(fd, buf, sizeof(buf), 0), 0);
  ::close(fd);
  // A hang detector, not a timing assertion.
  ASSERT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_TRUE(saw_gone);
  // And others are served meanwhile / afterwards.
  s.Handle("/late", [](const HttpRequest&, HttpResponse*) {});  // ignored after Start
  EXPECT_EQ(PlainExchange(s.port(), Get("/nope")).rfind("HTTP/1.1 404", 0), 0u);
}

TEST(Streaming, StopReleasesABlockedProducer) {
  auto s = std::make_unique<HttpServer>(HttpServerOptions{.port = 0, .stream_buffer_bytes = 1024});
  absl::Notification done;
  s->Handle("/f", [&](const HttpRequest&, HttpResponse* res) {
    res->stream = [&](ResponseStream& out) {
      while (out.Write(std::string(4096, 'y'))) {
      }
      done.Notify();
    };
  });
  ASSERT_TRUE(s->Start().ok());
  int fd = Connect(s->port());  // sends the request, never reads
  std::string req = Get("/f");
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  char c;
  ::recv(fd, &c, 1, 0);
  s->Stop();
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(60)));
  ::close(fd);
}

TEST(ContainerLogOptions, ParsesAndValidatesAsUpstream) {
  auto parse = [](const std::string& q, int* code) {
    HttpRequest req;
    std::stringstream ss(q);
    std::string kv;
    while (std::getline(ss, kv, '&')) {
      size_t eq = kv.find('=');
      req.query.emplace(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    }
    return ParseContainerLogOptions(req, code);
  };
  int code = 0;
  auto o = parse("follow=true&previous=0&timestamps=&tailLines=10&limitBytes=5", &code);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->follow);
  EXPECT_FALSE(o->previous);
  EXPECT_TRUE(o->timestamps);  // present with an empty value is true, as metav1
  EXPECT_EQ(o->tail_lines, 10);
  EXPECT_EQ(o->limit_bytes, 5);
  o = parse("sinceTime=2024-01-02T03:04:05Z", &code);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*o->since_time, absl::FromUnixSeconds(1704164645));
  o = parse("sinceTime=2024-01-02T03:04:05.5%2B01:00", &code);  // raw '+' not decoded here
  EXPECT_FALSE(o.ok());
  o = parse("sinceTime=2024-01-02T03:04:05.5+01:00", &code);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*o->since_time, absl::FromUnixMillis(1704164645500) - absl::Hours(1));
  o = parse("tail=7", &code);
  EXPECT_EQ(o->tail_lines, 7);
  o = parse("tail=all&tailLines=3", &code);
  EXPECT_FALSE(o->tail_lines.has_value());
  for (const char* bad :
       {"tailLines=x", "sinceSeconds=", "limitBytes=1.5", "sinceTime=yesterday"}) {
    code = 0;
    o = parse(bad, &code);
    EXPECT_FALSE(o.ok()) << bad;
    EXPECT_EQ(code, 400) << bad;
    EXPECT_EQ(o.status().message(), "{\"message\": \"Unable to decode query.\"}");
  }
  for (const char* bad : {"tailLines=-1", "limitBytes=0", "sinceSeconds=0",
                          "sinceSeconds=5&sinceTime=2024-01-02T03:04:05Z"}) {
    code = 0;
    o = parse(bad, &code);
    EXPECT_FALSE(o.ok()) << bad;
    EXPECT_EQ(code, 422) << bad;
    EXPECT_EQ(o.status().message(), "{\"message\": \"Invalid request.\"}");
  }
}

class FakeHost : public HostInterface {
 public:
  std::vector<api::Pod> GetPods() override {
    api::Pod p;
    p.metadata.name = "web";
    p.metadata.namespace_ = "default";
    p.metadata.uid = "u1";
    api::Container c;
    c.name = "app";
    c.image = "busybox";
    p.spec.containers.push_back(c);
    return {p};
  }
  absl::StatusOr<std::vector<api::Pod>> GetRunningPods() override { return GetPods(); }
  absl::Status GetContainerLogs(const std::string& ns, const std::string& pod,
                                const std::string& container, const logs::LogOptions& o,
                                const logs::LogSink& sink) override {
    sink(ns + "/" + pod + "/" + container + "\n");
    sink(o.follow ? "follow\n" : "once\n");
    return absl::OkStatus();
  }
  stats::StatsProvider* GetStatsProvider() override { return nullptr; }
  absl::Status SyncLoopHealthy() override { return absl::OkStatus(); }
  std::string Configz() override { return "{\"kubeletconfig\":{}}"; }
};

TEST(KubeletHandlers, Endpoints) {
  HttpServer s(HttpServerOptions{.port = 0});
  auto host = std::make_shared<FakeHost>();
  InstallDefaultHandlers(s, host);
  InstallDebuggingHandlers(s, host);
  ASSERT_TRUE(s.Start().ok());
  std::string r = PlainExchange(s.port(), Get("/pods"));
  EXPECT_NE(r.find("Content-Type: application/json"), std::string::npos) << r;
  EXPECT_EQ(
      Body(r).rfind("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[", 0),
      0u)
      << r;
  EXPECT_EQ(PlainExchange(s.port(),
                          "POST /pods HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .rfind("HTTP/1.1 405", 0),
            0u);
  r = PlainExchange(s.port(), Get("/runningpods/"));
  EXPECT_NE(Dechunk(Body(r)).find("\"name\":\"web\""), std::string::npos) << r;
  r = PlainExchange(s.port(), Get("/containerLogs/default/web/app?follow=true"));
  EXPECT_EQ(Dechunk(Body(r)), "default/web/app\nfollow\n") << r;
  r = PlainExchange(s.port(), Get("/containerLogs/default/nope/app"));
  EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Body(r), "pod \"nope\" does not exist");
  r = PlainExchange(s.port(), Get("/containerLogs/default/web/other"));
  EXPECT_EQ(Body(r), "container \"other\" not found in pod \"web\"");
  r = PlainExchange(s.port(), Get("/containerLogs/default/web/app?tailLines=-2"));
  EXPECT_EQ(r.rfind("HTTP/1.1 422", 0), 0u) << r;
  r = PlainExchange(s.port(), Get("/containerLogs/default/web"));
  EXPECT_EQ(r.rfind("HTTP/1.1 404", 0), 0u) << r;
  r = PlainExchange(s.port(), Get("/stats/summary"));
  EXPECT_EQ(r.rfind("HTTP/1.1 503", 0), 0u) << r;
  r = PlainExchange(s.port(), Get("/metrics"));
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << r;
  EXPECT_EQ(Body(PlainExchange(s.port(), Get("/configz"))), "{\"kubeletconfig\":{}}");
  EXPECT_EQ(Body(PlainExchange(s.port(), Get("/healthz?verbose"))),
            "[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n");

  HttpServer off(HttpServerOptions{.port = 0});
  InstallDefaultHandlers(off, host);
  InstallDebuggingDisabledHandlers(off);
  ASSERT_TRUE(off.Start().ok());
  r = PlainExchange(off.port(), Get("/containerLogs/default/web/app"));
  EXPECT_EQ(r.rfind("HTTP/1.1 405", 0), 0u) << r;
  EXPECT_EQ(Body(r), "Debug endpoints are disabled.\n");
}

}  // namespace
}  // namespace kubelet::server
