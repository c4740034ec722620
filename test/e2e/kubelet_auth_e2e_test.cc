// The kubelet API (:10250) with upstream's default authentication and authorization, on the
// real v1.28.7 control plane with OUR kubelet binary: authentication.webhook (TokenReview),
// authorization.mode Webhook (SubjectAccessReview), x509 client certificates from the cluster
// CA, anonymous off.
//   * no credentials, or a token the API server does not know: 401 "Unauthorized";
//   * a service account without RBAC: 403 "Forbidden (user=..., verb=get, resource=nodes,
//     subresource=proxy)";
//   * a service account granted nodes/proxy and nodes/stats: /pods and /stats/summary answer,
//     /metrics stays forbidden (subresource metrics);
//   * the API server reaches the kubelet with its client certificate: kubectl logs works;
//   * TLS bootstrap: with only a bootstrap token, the kubelet requests its client certificate
//     (CSR approved by the controller manager), writes kubelet-client-current.pem and its
//     kubeconfig, registers as system:node:<node>, and a restart reuses them;
//   * client certificate rotation (rotateCertificates): a kubelet started with a one-hour client
//     certificate past its rotation deadline requests a new one with it (a CSR approved through
//     the selfnodeclient role), stores it under --cert-dir, and goes on working on the new one:
//     the Node stays Ready, its Lease keeps being renewed, a new pod runs, and
//     kubelet_certificate_manager_client_ttl_seconds reports the new lifetime;
//   * background bootstrap (rotateCertificates with --bootstrap-kubeconfig): a static pod runs
//     before any client certificate exists (the API server unreachable), and once the API server
//     is reachable the certificate is requested and the node registers;
//   * streaming through the API server, proxied by the kubelet to the runtime's streaming
//     server: kubectl exec (output, exit codes, stdin with its end, a 3 MB transfer, several
//     sessions at once, a terminal), kubectl attach, kubectl logs -f, kubectl port-forward, and a
//     WebSocket client (v4.channel.k8s.io) on the kubelet's /exec.
// No timing is asserted.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/e2e/api_mode_fixture.h"
#include "test/e2e/http_client.h"

namespace kubelet::e2e {
namespace {

// PEM of a certificate for `cn` (O=system:nodes) and its new key, signed by the CA in
// `ca_file` / `ca_key_file`, valid from now+`from` for `lifetime`.
struct MintedPair {
  std::string cert, key;
};
MintedPair MintClientCert(const std::string& ca_file, const std::string& ca_key_file,
                          const std::string& cn, absl::Duration from, absl::Duration lifetime) {
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const std::string ca_pem = read(ca_file), ca_key_pem = read(ca_key_file);
  BIO* b = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  b = BIO_new_mem_buf(ca_key_pem.data(), static_cast<int>(ca_key_pem.size()));
  EVP_PKEY* ca_key = PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  MintedPair out;
  if (ca == nullptr || ca_key == nullptr) return out;
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), absl::ToUnixSeconds(absl::Now()));
  const absl::Time start = absl::Now() + from;
  ASN1_TIME_set(X509_getm_notBefore(cert), absl::ToTimeT(start));
  ASN1_TIME_set(X509_getm_notAfter(cert), absl::ToTimeT(start + lifetime));
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("system:nodes"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, X509_get_subject_name(ca));
  X509_set_pubkey(cert, key);
  X509_sign(cert, ca_key, EVP_sha256());
  auto pem = [](auto write) {
    BIO* bio = BIO_new(BIO_s_mem());
    write(bio);
    char* data = nullptr;
    long len = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int)
    std::string s(data, static_cast<size_t>(len));
    BIO_free_all(bio);
    return s;
  };
  out.cert = pem([&](BIO* bio) { PEM_write_bio_X509(bio, cert); });
  out.key = pem(
      [&](BIO* bio) { PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr); });
  X509_free(cert);
  X509_free(ca);
  EVP_PKEY_free(key);
  EVP_PKEY_free(ca_key);
  return out;
}

// notAfter of the first certificate in the PEM file (InfinitePast when unreadable), and its CN.
std::pair<absl::Time, std::string> CertExpiry(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string pem = ss.str();
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  if (cert == nullptr) return {absl::InfinitePast(), ""};
  struct tm tm {};
  ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm);
  char cn[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
  X509_free(cert);
  return {absl::FromTimeT(timegm(&tm)), cn};
}

// What a WebSocket (RFC 6455) client of the kubelet's streaming endpoints gets: the handshake's
// status and subprotocol, and the data of each channel (first payload byte) until the close.
struct WsResult {
  int code = 0;
  std::string protocol;
  std::map<int, std::string> channels;
  std::string error;  // transport trouble
};
WsResult WebSocketGet(int port, const std::string& cert_file, const std::string& key_file,
                      const std::string& target, const std::string& subprotocol) {
  WsResult out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    out.error = "connect failed";
    return out;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str());
  SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  auto done = [&] {
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    ::close(fd);
    return out;
  };
  if (SSL_connect(ssl) != 1) {
    out.error = "TLS handshake failed";
    return done();
  }
  const std::string request =
      absl::StrCat("GET ", target,
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Protocol: ",
                   subprotocol, "\r\n\r\n");
  SSL_write(ssl, request.data(), static_cast<int>(request.size()));
  std::string in;
  auto fill = [&](size_t want) {
    char buf[16384];
    while (in.size() < want) {
      int n = SSL_read(ssl, buf, sizeof(buf));
      if (n <= 0) return false;
      in.append(buf, static_cast<size_t>(n));
    }
    return true;
  };
  size_t head_end;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    if (!fill(in.size() + 1)) {
      out.error = "no handshake answer: " + in;
      return done();
    }
  }
  const std::string head = in.substr(0, head_end);
  in.erase(0, head_end + 4);
  out.code = std::atoi(head.c_str() + head.find(' ') + 1);
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    if (absl::StartsWithIgnoreCase(line, "sec-websocket-protocol:")) {
      out.protocol = std::string(absl::StripAsciiWhitespace(line.substr(23)));
    }
  }
  if (out.code != 101) return done();
  for (;;) {
    if (!fill(2)) break;
    const int opcode = in[0] & 0x0f;
    uint64_t len = static_cast<unsigned char>(in[1]) & 0x7f;
    size_t hdr = 2;
    if (len == 126) {
      if (!fill(4)) break;
      len = (static_cast<unsigned char>(in[2]) << 8) | static_cast<unsigned char>(in[3]);
      hdr = 4;
    } else if (len == 127) {
      if (!fill(10)) break;
      len = 0;
      for (int i = 2; i < 10; ++i) len = (len << 8) | static_cast<unsigned char>(in[i]);
      hdr = 10;
    }
    if (!fill(hdr + len)) break;
    const std::string payload = in.substr(hdr, len);
    in.erase(0, hdr + len);
    if (opcode == 8) break;  // close
    if ((opcode == 1 || opcode == 2) && !payload.empty()) {
      out.channels[static_cast<unsigned char>(payload[0])] += payload.substr(1);
    }
  }
  return done();
}

class KubeletAuthTest : public ApiModeTest {
 protected:
  std::string ExtraConfig() override { return "address: 127.0.0.1\n"; }
  std::string ServingConfig() override {
    return absl::StrCat("port: ", api_port_,
                        "\nauthentication:\n"
                        "  anonymous:\n    enabled: false\n"
                        "  webhook:\n    enabled: true\n    cacheTTL: 2m\n"
                        "  x509:\n    clientCAFile: ",
                        cp_->ca_file(), "\nauthorization:\n  mode: Webhook\n");
  }

  // GET https://127.0.0.1:<port><path>, with the bearer token when not empty.
  HttpAnswer Get(const std::string& path, const std::string& token = "") {
    return KubeletEndpoint::Https(api_port_).Get(
        path, HttpOptions{.bearer_token = token, .timeout = absl::Seconds(20)});
  }

  using BootstrapToken = ControlPlane::BootstrapToken;
  BootstrapToken CreateBootstrapToken(const std::string& binding_prefix) {
    absl::StatusOr<BootstrapToken> t = cp_->CreateBootstrapToken(binding_prefix + node_);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : BootstrapToken{};
  }
  void DeleteBootstrapToken(const BootstrapToken& t) { cp_->DeleteBootstrapToken(t); }
  // A kubeconfig at `path` for `server` with the token as its credentials.
  void WriteBootstrapKubeconfig(const std::string& path, const std::string& server,
                                const BootstrapToken& t) {
    std::ofstream(path) << cp_->BootstrapKubeconfig(t, server);
  }

  std::string Token(const std::string& sa) {
    auto r = cp_->Kubectl({"create", "token", sa, "-n", "default"});
    if (!r.ok() || r->exit_code != 0) return "";
    return std::string(absl::StripAsciiWhitespace(r->out));
  }
};

TEST_F(KubeletAuthTest, WebhookAuthenticationAndAuthorization) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  absl::Status ready = WaitNodeReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();

  // No credentials: 401, as upstream's filter answers.
  HttpAnswer a = Get("/pods");
  EXPECT_EQ(a.code, 401);
  EXPECT_EQ(a.body, "Unauthorized");
  // A token the API server does not accept: 401 too (never anonymous).
  a = Get("/pods", "not-a-real-token");
  EXPECT_EQ(a.code, 401);
  EXPECT_EQ(a.body, "Unauthorized");

  // A service account the API server knows, without RBAC: 403 with upstream's message.
  const std::string nobody = absl::StrCat("nobody-", node_);
  const std::string viewer = absl::StrCat("viewer-", node_);
  for (const std::string& sa : {nobody, viewer}) {
    auto r = cp_->Kubectl({"create", "serviceaccount", sa, "-n", "default"});
    ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : "");
  }
  const std::string nobody_token = Token(nobody);
  ASSERT_FALSE(nobody_token.empty());
  a = Get("/pods", nobody_token);
  EXPECT_EQ(a.code, 403);
  EXPECT_EQ(a.body, absl::StrCat("Forbidden (user=system:serviceaccount:default:", nobody,
                                 ", verb=get, resource=nodes, subresource=proxy)"));

  // RBAC on nodes/proxy and nodes/stats (not nodes/metrics) for the viewer.
  const std::string role = absl::StrCat("kubelet-viewer-", node_);
  ASSERT_TRUE(
      Apply(absl::StrCat("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n"
                         "  name: ",
                         role,
                         "\nrules:\n- apiGroups: [\"\"]\n  resources: [nodes/proxy, nodes/stats]\n"
                         "  verbs: [get]\n---\n"
                         "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
                         "metadata:\n  name: ",
                         role, "\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n",
                         "  kind: ClusterRole\n  name: ", role,
                         "\nsubjects:\n- kind: ServiceAccount\n  name: ", viewer,
                         "\n  namespace: default\n"))
          .ok());
  const std::string viewer_token = Token(viewer);
  ASSERT_FALSE(viewer_token.empty());
  // RBAC reaches the authorizer's informers within moments; the viewer's first (denied) answer
  // would be cached for 30 s, so keep asking until allowed.
  EXPECT_TRUE(WaitUntil(
      [&] {
        a = Get("/pods", viewer_token);
        return a.code == 200;
      },
      absl::Seconds(90), absl::Seconds(2)))
      << a.code << " " << a.body;
  EXPECT_TRUE(absl::StrContains(a.body, "\"kind\":\"PodList\"")) << a.body.substr(0, 200);
  a = Get("/stats/summary", viewer_token);
  EXPECT_EQ(a.code, 200) << a.body;
  EXPECT_TRUE(absl::StrContains(a.body, "\"nodeName\"")) << a.body.substr(0, 200);
  a = Get("/metrics", viewer_token);
  EXPECT_EQ(a.code, 403);
  EXPECT_EQ(a.body, absl::StrCat("Forbidden (user=system:serviceaccount:default:", viewer,
                                 ", verb=get, resource=nodes, subresource=metrics)"));

  // The API server reaches the kubelet with its client certificate (cluster CA, system:masters).
  const std::string pod = PodName("talker");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  ASSERT_TRUE(Apply(BusyboxPod(pod,
                               "\"echo hello-from-auth; trap 'exit 0' TERM; "
                               "while true; do sleep 1; done\"",
                               parts))
                  .ok());
  std::string logs;
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto r = cp_->Kubectl({"logs", pod, "-n", "default"});
        logs = r.ok() ? r->out + r->err : "";
        return r.ok() && r->exit_code == 0 && absl::StrContains(r->out, "hello-from-auth");
      },
      absl::Seconds(120), absl::Seconds(1)))
      << logs << "\n"
      << kubelet_->Log();

  (void)cp_->Kubectl({"delete", "clusterrolebinding,clusterrole", role, "--wait=false"});
  (void)cp_->Kubectl({"delete", "serviceaccount", nobody, viewer, "-n", "default", "--wait=false"});
}

TEST_F(KubeletAuthTest, ExecAttachAndPortForwardThroughTheApiServer) {
  StartKubelet({"--kubeconfig", kubeconfig_});
  absl::Status ready = WaitNodeReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  const std::string pod = PodName("streams");
  PodParts parts;
  parts.spec = absl::StrCat("  nodeName: ", node_, "\n  automountServiceAccountToken: false\n");
  ASSERT_TRUE(Apply(BusyboxPod(pod,
                               "\"mkdir -p /www; echo port-forward-ok > /www/index.html; "
                               "httpd -p 8080 -h /www; trap 'exit 0' TERM; i=0; "
                               "while true; do echo tick-$i; i=$((i+1)); sleep 1; done\"",
                               parts))
                  .ok());
  ASSERT_TRUE(WaitUntil([&] { return GetPod(pod)["status"].value("phase", "") == "Running"; },
                        absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  auto exec = [&](const std::vector<std::string>& cmd, const std::string& stdin_data = "",
                  bool interactive = false) {
    std::vector<std::string> args = {"exec", pod, "-n", "default"};
    if (interactive) args.push_back("-i");
    args.push_back("--");
    args.insert(args.end(), cmd.begin(), cmd.end());
    return cp_->Kubectl(args, stdin_data, absl::Seconds(60));
  };

  // The API server finds the node by its name (an /etc/hosts line the harness adds), which its
  // resolver may take a moment to see: the first exec is retried until the node is reachable.
  absl::StatusOr<CommandResult> r;
  EXPECT_TRUE(WaitUntil(
      [&] {
        r = exec({"echo", "hello-exec"});
        return r.ok() && r->exit_code == 0;
      },
      absl::Seconds(120), absl::Seconds(2)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->err << "\n" << kubelet_->Log();
  EXPECT_EQ(r->out, "hello-exec\n");

  // The command's exit code comes back.
  r = exec({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3) << r->err;
  EXPECT_EQ(r->out, "out\n");
  EXPECT_TRUE(absl::StrContains(r->err, "err")) << r->err;

  // stdin reaches the command and its end ends it.
  const std::string input = "line one\nline two\n";
  r = exec({"cat"}, input, /*interactive=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(r->out, input);

  // A large transfer arrives whole.
  r = exec({"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(r->out.size(), 3000000u);
  EXPECT_EQ(r->out.find_first_not_of('x'), std::string::npos);

  // Several sessions at once.
  std::vector<std::unique_ptr<KubeletProcess>> sessions;
  for (int i = 0; i < 4; ++i) {
    auto p = KubeletProcess::Start(
        cp_->kubectl(),
        {"--kubeconfig", cp_->admin_kubeconfig(), "exec", pod, "-n", "default", "--", "sh", "-c",
         absl::StrCat("sleep 2; echo session-", i)},
        {}, absl::StrCat(dir_, "/exec-", i, ".log"));
    ASSERT_TRUE(p.ok()) << p.status();
    sessions.push_back(std::move(*p));
  }
  for (int i = 0; i < 4; ++i) {
    std::optional<int> code = sessions[i]->Wait(absl::Seconds(60));
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 0) << sessions[i]->Log();
    EXPECT_TRUE(absl::StrContains(sessions[i]->Log(), absl::StrCat("session-", i)))
        << sessions[i]->Log();
  }

  // attach: the running container's output.
  auto attached = RunCommand(
      {"sh", "-c",
       absl::StrCat("timeout 6 ", cp_->kubectl(), " --kubeconfig ", cp_->admin_kubeconfig(),
                    " attach ", pod, " -n default -c main; true")},
      {}, absl::Seconds(30));
  ASSERT_TRUE(attached.ok()) << attached.status();
  EXPECT_TRUE(absl::StrContains(attached->out, "tick-")) << attached->out << attached->err;

  // exec with a terminal (kubectl given one by script(1)): the command sees a tty of the size
  // kubectl's terminal has (sent as a resize on the stream's resize channel), the exit code
  // comes back.
  const std::string kubectl_cmd = absl::StrCat(
      "stty rows 45 cols 123; ", cp_->kubectl(), " --kubeconfig ", cp_->admin_kubeconfig(),
      " exec -it ", pod, " -n default -- sh -c 'tty; sleep 1; stty size; exit 5'");
  auto tty = RunCommand({"script", "-qec", kubectl_cmd, "/dev/null"}, {}, absl::Seconds(60));
  ASSERT_TRUE(tty.ok()) << tty.status();
  EXPECT_EQ(tty->exit_code, 5) << tty->out << tty->err;
  EXPECT_TRUE(absl::StrContains(tty->out, "/dev/pts/")) << tty->out << tty->err;
  EXPECT_FALSE(absl::StrContains(tty->out, "not a tty")) << tty->out;
  EXPECT_TRUE(absl::StrContains(tty->out, "45 123")) << tty->out << tty->err;

  // logs -f streams: lines written after it started arrive while it runs.
  auto follow = KubeletProcess::Start(
      cp_->kubectl(),
      {"--kubeconfig", cp_->admin_kubeconfig(), "logs", "-f", "--tail=1", pod, "-n", "default"}, {},
      dir_ + "/logs-follow.log");
  ASSERT_TRUE(follow.ok()) << follow.status();
  auto ticks = [&] {
    int n = 0;
    for (absl::string_view line : absl::StrSplit((*follow)->Log(), '\n')) {
      n += absl::StartsWith(line, "tick-") ? 1 : 0;
    }
    return n;
  };
  EXPECT_TRUE(WaitUntil([&] { return ticks() >= 4; }, absl::Seconds(60), absl::Milliseconds(250)))
      << (*follow)->Log();
  EXPECT_FALSE((*follow)->Wait(absl::Milliseconds(1)).has_value());  // still following
  (*follow)->Signal(SIGTERM);
  (*follow)->Wait(absl::Seconds(10));

  // A WebSocket client straight on the kubelet's /exec (v4.channel.k8s.io, as kubectl's
  // WebSocket executor offers): stdout on channel 1, stderr on 2, the exit status on 3.
  auto ws = WebSocketGet(
      api_port_, cp_->Get("KUBELET_CP_KUBELET_CLIENT_CERT"),
      cp_->Get("KUBELET_CP_KUBELET_CLIENT_KEY"),
      absl::StrCat("/exec/default/", pod,
                   "/main?command=sh&command=-c&command=echo%20ws-out%3B%20echo%20ws-err%20%3E%262"
                   "%3B%20exit%207&output=1&error=1"),
      "v4.channel.k8s.io");
  EXPECT_EQ(ws.code, 101) << ws.error;
  EXPECT_EQ(ws.protocol, "v4.channel.k8s.io");
  EXPECT_EQ(ws.channels[1], "ws-out\n");
  EXPECT_EQ(ws.channels[2], "ws-err\n");
  EXPECT_TRUE(absl::StrContains(ws.channels[3], "NonZeroExitCode")) << ws.channels[3];
  EXPECT_TRUE(absl::StrContains(ws.channels[3], "\"message\":\"7\"")) << ws.channels[3];

  // port-forward to the pod's httpd.
  const int local = FreePort();
  auto pf = KubeletProcess::Start(cp_->kubectl(),
                                  {"--kubeconfig", cp_->admin_kubeconfig(), "port-forward", pod,
                                   "-n", "default", absl::StrCat(local, ":8080")},
                                  {}, dir_ + "/port-forward.log");
  ASSERT_TRUE(pf.ok()) << pf.status();
  std::string page;
  EXPECT_TRUE(WaitUntil(
      [&] {
        page = HttpRequest(absl::StrCat("http://127.0.0.1:", local, "/index.html"),
                           HttpOptions{.timeout = absl::Seconds(5)})
                   .body;
        return page == "port-forward-ok\n";
      },
      absl::Seconds(60), absl::Seconds(1)))
      << page << "\n"
      << (*pf)->Log() << "\n"
      << kubelet_->Log();
  (*pf)->Signal(SIGTERM);
  (*pf)->Wait(absl::Seconds(10));
}

TEST_F(KubeletAuthTest, TlsBootstrapWithABootstrapToken) {
  const BootstrapToken token = CreateBootstrapToken("kubelet-bootstrap-");
  const std::string id = token.id, secret = token.secret;
  const std::string bootstrap = dir_ + "/bootstrap.kubeconfig";
  WriteBootstrapKubeconfig(bootstrap, cp_->server(), token);
  const std::string kubeconfig = dir_ + "/kubelet.kubeconfig";
  const std::vector<std::string> args = {"--bootstrap-kubeconfig", bootstrap, "--kubeconfig",
                                         kubeconfig};
  StartKubelet(args);
  absl::Status ready = WaitNodeReady(absl::Seconds(120));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();

  // The certificate files and the kubeconfig the kubelet wrote.
  const std::string current = dir_ + "/pki/kubelet-client-current.pem";
  ASSERT_TRUE(std::filesystem::is_symlink(current)) << kubelet_->Log();
  EXPECT_TRUE(
      absl::StrContains(std::filesystem::read_symlink(current).string(), "/pki/kubelet-client-20"));
  std::ifstream kin(kubeconfig);
  std::stringstream written;
  written << kin.rdbuf();
  EXPECT_TRUE(absl::StrContains(written.str(), "client-certificate: " + current)) << written.str();
  EXPECT_FALSE(absl::StrContains(written.str(), secret));

  // The CSR: this node's, the kubelet client signer, approved.
  json csrs = GetJson({"get", "csr"});
  int mine = 0;
  for (const json& c : csrs.value("items", json::array())) {
    if (c["spec"].value("username", "") != absl::StrCat("system:bootstrap:", id)) continue;
    ++mine;
    EXPECT_EQ(c["spec"].value("signerName", ""), "kubernetes.io/kube-apiserver-client-kubelet");
    EXPECT_TRUE(ConditionTrue(c, "Approved")) << c.dump();
  }
  EXPECT_EQ(mine, 1) << csrs.dump();
  // The node speaks as system:node:<node> from now on: its Lease is held under that identity.
  EXPECT_TRUE(
      WaitUntil([&] { return GetLease().is_object(); }, absl::Seconds(60), absl::Seconds(1)));

  // A restart reuses the certificate: no second request.
  StopKubelet();
  StartKubelet(args);
  EXPECT_TRUE(
      absl::StrContains(kubelet_->Log(), "Kubeconfig exists and is valid, skipping bootstrap"))
      << kubelet_->Log();
  ready = WaitNodeReady(absl::Seconds(90));
  EXPECT_TRUE(ready.ok()) << ready;
  csrs = GetJson({"get", "csr"});
  mine = 0;
  for (const json& c : csrs.value("items", json::array())) {
    mine += c["spec"].value("username", "") == absl::StrCat("system:bootstrap:", id) ? 1 : 0;
  }
  EXPECT_EQ(mine, 1);
  DeleteBootstrapToken(token);
}

TEST_F(KubeletAuthTest, ClientCertificateRotation) {
  // Nodes may renew their own client certificates (kubeadm's
  // kubeadm:node-autoapprove-certificate-rotation binding).
  const std::string binding = absl::StrCat("kubelet-rotation-", node_);
  ASSERT_TRUE(
      Apply(absl::StrCat(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n"
                "  name: ",
                binding,
                "\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n"
                "  name: system:certificates.k8s.io:certificatesigningrequests:selfnodeclient\n"
                "subjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n"
                "  name: system:nodes\n"))
          .ok());
  // A one-hour certificate, 55 minutes old: past its rotation deadline (70-90 %).
  const MintedPair old = MintClientCert(cp_->ca_file(), cp_->Get("KUBELET_CP_CA_KEY"),
                                        "system:node:" + node_, -absl::Minutes(55), absl::Hours(1));
  ASSERT_FALSE(old.cert.empty());
  std::ofstream(dir_ + "/old.crt") << old.cert;
  std::ofstream(dir_ + "/old.key") << old.key;
  const std::string kubeconfig = dir_ + "/rotating.kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                               "    server: "
                            << cp_->server() << "\n    certificate-authority: " << cp_->ca_file()
                            << "\nusers:\n- name: u\n  user:\n    client-certificate: " << dir_
                            << "/old.crt\n    client-key: " << dir_
                            << "/old.key\ncontexts:\n- name: x\n  context:\n    cluster: c\n"
                               "    user: u\ncurrent-context: x\n";
  // CSRs already there (the same node name's, from this test on the other runtime against the
  // same control plane) are not this run's.
  std::set<std::string> earlier_csrs;
  for (const json& c : GetJson({"get", "csr"}).value("items", json::array())) {
    earlier_csrs.insert(c["metadata"].value("name", ""));
  }
  StartKubelet({"--kubeconfig", kubeconfig, "--rotate-certificates"});
  absl::Status ready = WaitNodeReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();

  // The new certificate: this node's, from an approved CSR it sent as itself, in the store.
  const std::string current = dir_ + "/pki/kubelet-client-current.pem";
  ASSERT_TRUE(WaitUntil([&] { return std::filesystem::is_symlink(current); }, absl::Seconds(120),
                        absl::Seconds(1)))
      << kubelet_->Log();
  auto [not_after, cn] = CertExpiry(current);
  EXPECT_EQ(cn, "system:node:" + node_);
  EXPECT_GT(not_after, absl::Now() + absl::Hours(24)) << absl::FormatTime(not_after);
  json csrs = GetJson({"get", "csr"});
  int mine = 0;
  for (const json& c : csrs.value("items", json::array())) {
    if (c["spec"].value("username", "") != "system:node:" + node_) continue;
    if (earlier_csrs.contains(c["metadata"].value("name", ""))) continue;
    ++mine;
    EXPECT_TRUE(absl::StartsWith(c["metadata"].value("name", ""), "csr-"));
    EXPECT_EQ(c["spec"].value("signerName", ""), "kubernetes.io/kube-apiserver-client-kubelet");
    EXPECT_TRUE(ConditionTrue(c, "Approved")) << c.dump();
  }
  EXPECT_EQ(mine, 1) << csrs.dump();
  EXPECT_TRUE(absl::StrContains(kubelet_->Log(), "\"Client certificate rotated\""));

  // It goes on working: the Lease is renewed after the rotation, a new pod runs, the Node stays
  // Ready, and the TTL metric reports the new certificate.
  const std::string renewed_before = GetLease()["spec"].value("renewTime", "");
  EXPECT_TRUE(WaitUntil(
      [&] {
        json l = GetLease();
        return l.is_object() && l["spec"].value("renewTime", "") != renewed_before;
      },
      absl::Seconds(60), absl::Seconds(1)));
  const std::string pod = PodName("after-rotation");
  ASSERT_TRUE(Apply(BusyboxPod(pod, kSleepForever,
                               PodParts{.spec = absl::StrCat("  nodeName: ", node_,
                                                             "\n  automountServiceAccountToken: "
                                                             "false\n")}))
                  .ok());
  EXPECT_TRUE(WaitUntil([&] { return GetPod(pod)["status"].value("phase", "") == "Running"; },
                        absl::Seconds(120), absl::Seconds(1)))
      << kubelet_->Log();
  EXPECT_TRUE(ConditionTrue(GetNode(), "Ready"));
  // /metrics as the API server's kubelet client (O=system:masters) reads it.
  HttpAnswer metrics = KubeletEndpoint::Https(api_port_).Get(
      "/metrics", HttpOptions{.cert_file = cp_->Get("KUBELET_CP_KUBELET_CLIENT_CERT"),
                              .key_file = cp_->Get("KUBELET_CP_KUBELET_CLIENT_KEY")});
  ASSERT_EQ(metrics.code, 200);
  double ttl = 0;
  for (absl::string_view line : absl::StrSplit(metrics.body, '\n')) {
    if (absl::ConsumePrefix(&line, "kubelet_certificate_manager_client_ttl_seconds ")) {
      EXPECT_TRUE(absl::SimpleAtod(line, &ttl)) << line;
    }
  }
  EXPECT_GT(ttl, 86400) << metrics.body.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(metrics.body,
                                "kubelet_certificate_manager_client_expiration_renew_errors 0"));
  (void)cp_->Kubectl({"delete", "clusterrolebinding", binding, "--wait=false"});
}

TEST_F(KubeletAuthTest, ServingCertificateFromTheCluster) {
  std::set<std::string> earlier_csrs;
  for (const json& c : GetJson({"get", "csr"}).value("items", json::array())) {
    earlier_csrs.insert(c["metadata"].value("name", ""));
  }
  const std::vector<std::string> args = {"--kubeconfig", kubeconfig_,
                                         "--rotate-server-certificates"};
  StartKubelet(args);
  absl::Status ready = WaitNodeReady(absl::Seconds(90));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  std::string node_ip;
  for (const json& a : GetNode()["status"].value("addresses", json::array())) {
    if (a.value("type", "") == "InternalIP") node_ip = a.value("address", "");
  }
  ASSERT_FALSE(node_ip.empty()) << GetNode().dump();

  // The kubelet asks the kubelet-serving signer for its names, as itself.
  json csr;
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const json& c : GetJson({"get", "csr"}).value("items", json::array())) {
          if (earlier_csrs.contains(c["metadata"].value("name", ""))) continue;
          if (c["spec"].value("signerName", "") != "kubernetes.io/kubelet-serving") continue;
          if (c["spec"].value("username", "") != "system:node:" + node_) continue;
          csr = c;
          return true;
        }
        return false;
      },
      absl::Seconds(60), absl::Seconds(1)))
      << kubelet_->Log();
  EXPECT_EQ(csr["spec"]["usages"], json({"digital signature", "server auth"})) << csr.dump();
  EXPECT_FALSE(ConditionTrue(csr, "Approved"));

  // HTTPS to the kubelet, verified against the cluster CA and the node's name, as the API
  // server's kubelet client; the exit code and HTTP status ("000": no TLS session).
  const std::string port = absl::StrCat(api_port_);
  // The server's certificate verified against the cluster CA for the node's name, as the API
  // server's kubelet client: the TLS session and the HTTP status.
  HttpOptions verified{.cert_file = cp_->Get("KUBELET_CP_KUBELET_CLIENT_CERT"),
                       .key_file = cp_->Get("KUBELET_CP_KUBELET_CLIENT_KEY"),
                       .ca_file = cp_->ca_file(),
                       .connect_to = absl::StrCat(node_, ":", port, ":127.0.0.1:", port),
                       .timeout = absl::Seconds(20)};
  auto verified_get = [&](const std::string& path) {
    HttpAnswer a = HttpRequest(absl::StrCat("https://", node_, ":", port, path), verified);
    return absl::StrCat(a.curl_exit, " ", a.code);
  };
  // No certificate until the request is approved: the handshake fails, the kubelet runs on.
  EXPECT_NE(verified_get("/healthz"), "0 200");
  EXPECT_NE(Get("/healthz").code, 200);
  EXPECT_TRUE(ConditionTrue(GetNode(), "Ready"));

  auto approve = cp_->Kubectl({"certificate", "approve", csr["metadata"].value("name", "")});
  ASSERT_TRUE(approve.ok() && approve->exit_code == 0) << (approve.ok() ? approve->err : "");
  // Served once issued, without a restart.
  EXPECT_TRUE(WaitUntil([&] { return verified_get("/healthz") == "0 200"; }, absl::Seconds(60),
                        absl::Seconds(1)))
      << verified_get("/healthz") << "\n"
      << kubelet_->Log();
  const std::string current = dir_ + "/pki/kubelet-server-current.pem";
  ASSERT_TRUE(std::filesystem::is_symlink(current));
  auto text =
      RunCommand({"openssl", "x509", "-in", current, "-noout", "-text"}, {}, absl::Seconds(30));
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(absl::StrContains(text->out, "IP Address:" + node_ip)) << text->out;
  EXPECT_TRUE(absl::StrContains(text->out, "DNS:" + node_)) << text->out;
  auto [not_after, cn] = CertExpiry(current);
  EXPECT_EQ(cn, "system:node:" + node_);
  // No self-signed pair was made.
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/pki/kubelet.crt"));
  HttpAnswer metrics =
      HttpRequest(absl::StrCat("https://", node_, ":", port, "/metrics"), verified);
  ASSERT_EQ(metrics.code, 200);
  double ttl = 0;
  for (absl::string_view line : absl::StrSplit(metrics.body, '\n')) {
    if (absl::ConsumePrefix(&line, "kubelet_certificate_manager_server_ttl_seconds ")) {
      EXPECT_TRUE(absl::SimpleAtod(line, &ttl)) << line;
    }
  }
  EXPECT_GT(ttl, 3600) << metrics.body.substr(0, 2000);
  EXPECT_TRUE(absl::StrContains(metrics.body, "kubelet_server_expiration_renew_errors"));
  EXPECT_TRUE(
      absl::StrContains(metrics.body, "kubelet_certificate_manager_server_rotation_seconds"));

  // A restart serves the stored certificate at once: no second request.
  StopKubelet();
  StartKubelet(args);
  EXPECT_TRUE(WaitUntil([&] { return verified_get("/healthz") == "0 200"; }, absl::Seconds(60),
                        absl::Seconds(1)))
      << kubelet_->Log();
  int mine = 0;
  for (const json& c : GetJson({"get", "csr"}).value("items", json::array())) {
    if (earlier_csrs.contains(c["metadata"].value("name", ""))) continue;
    mine += c["spec"].value("signerName", "") == "kubernetes.io/kubelet-serving" &&
                    c["spec"].value("username", "") == "system:node:" + node_
                ? 1
                : 0;
  }
  EXPECT_EQ(mine, 1);
}

TEST_F(KubeletAuthTest, BackgroundBootstrapRunsStaticPodsFirst) {
  const BootstrapToken token = CreateBootstrapToken("kubelet-bg-bootstrap-");
  // First the API server is not reachable at the address the bootstrap kubeconfig names (a
  // closed port, as when the control plane is itself a static pod of this kubelet).
  const int closed = FreePort();
  auto write_bootstrap = [&](const std::string& server) {
    WriteBootstrapKubeconfig(dir_ + "/bootstrap.kubeconfig", server, token);
  };
  write_bootstrap(absl::StrCat("https://127.0.0.1:", closed));
  const std::string kubeconfig = dir_ + "/kubelet.kubeconfig";
  WriteManifest("static.yaml", BusyboxPod("static-first", kSleepForever));
  StartKubelet({"--bootstrap-kubeconfig", dir_ + "/bootstrap.kubeconfig", "--kubeconfig",
                kubeconfig, "--rotate-certificates"});
  // The static pod runs without any client certificate.
  EXPECT_TRUE(WaitUntil([&] { return !Running("static-first").empty(); }, absl::Seconds(120),
                        absl::Seconds(1)))
      << kubelet_->Log();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/pki/kubelet-client-current.pem"));
  EXPECT_TRUE(
      absl::StrContains(kubelet_->Log(), "Client rotation is on, will bootstrap in background"));
  // The kubeconfig was written at once, pointing at the certificate store.
  std::ifstream kin(kubeconfig);
  std::stringstream written;
  written << kin.rdbuf();
  EXPECT_TRUE(absl::StrContains(written.str(),
                                "client-certificate: " + dir_ + "/pki/kubelet-client-current.pem"))
      << written.str();
  StopKubelet();

  // With the API server reachable, the certificate comes in the background and the node
  // registers as itself.
  write_bootstrap(cp_->server());
  std::filesystem::remove(kubeconfig);
  StartKubelet({"--bootstrap-kubeconfig", dir_ + "/bootstrap.kubeconfig", "--kubeconfig",
                kubeconfig, "--rotate-certificates"});
  absl::Status ready = WaitNodeReady(absl::Seconds(120));
  ASSERT_TRUE(ready.ok()) << ready << "\n" << kubelet_->Log();
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/pki/kubelet-client-current.pem"));
  EXPECT_TRUE(
      WaitUntil([&] { return GetLease().is_object(); }, absl::Seconds(60), absl::Seconds(1)));
  DeleteBootstrapToken(token);
}

}  // namespace
}  // namespace kubelet::e2e
