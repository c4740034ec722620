#include "apiclient/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::apiclient {
namespace {

// Decodes one kubeconfig; `file_` prefixes every error.
class Parser {
 public:
  explicit Parser(const std::string& path)
      : path_(path), dir_(std::filesystem::path(path).parent_path().string()) {}

  absl::Status Error(std::string_view field, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", AV(path_), ": ", AV(field), ": ", AV(what)));
  }

  // Reads the scalar `key` of map `n` into `out` (left alone when absent or null).
  absl::Status String(const YAML::Node& n, const char* key, const std::string& where,
                      std::string* out) const {
    YAML::Node v = n[key];
    if (!v || v.IsNull()) return absl::OkStatus();
    if (!v.IsScalar()) return Error(absl::StrCat(AV(where), ".", key), "must be a string");
    *out = v.Scalar();
    return absl::OkStatus();
  }

  absl::Status Bool(const YAML::Node& n, const char* key, const std::string& where,
                    bool* out) const {
    YAML::Node v = n[key];
    if (!v || v.IsNull()) return absl::OkStatus();
    bool b = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b)) {
      return Error(absl::StrCat(AV(where), ".", key), "must be a boolean");
    }
    *out = b;
    return absl::OkStatus();
  }

  // A base64 `*-data` field, decoded.
  absl::Status Data(const YAML::Node& n, const char* key, const std::string& where,
                    std::string* out) const {
    std::string encoded;
    if (absl::Status s = String(n, key, where, &encoded); !s.ok()) return s;
    if (encoded.empty()) return absl::OkStatus();
    if (!absl::Base64Unescape(AV(encoded), out)) {
      return Error(absl::StrCat(AV(where), ".", key), "not valid base64");
    }
    return absl::OkStatus();
  }

  // A file reference, made absolute against the kubeconfig's directory.
  absl::Status Path(const YAML::Node& n, const char* key, const std::string& where,
                    std::string* out) const {
    if (absl::Status s = String(n, key, where, out); !s.ok()) return s;
    if (!out->empty() && (*out)[0] != '/' && !dir_.empty()) {
      *out = (std::filesystem::path(dir_) / *out).lexically_normal().string();
    }
    return absl::OkStatus();
  }

  // Walks the named list `key` ("clusters", ...): each entry is {name, <body_key>: {...}}.
  template <typename Fn>
  absl::Status NamedList(const YAML::Node& root, const char* key, const char* body_key, Fn fn) {
    YAML::Node list = root[key];
    if (!list || list.IsNull()) return absl::OkStatus();
    if (!list.IsSequence()) return Error(key, "must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node& entry = list[i];
      std::string where = absl::StrCat(key, "[", i, "]");
      if (!entry.IsMap()) return Error(where, "must be a map");
      std::string name;
      if (absl::Status s = String(entry, "name", where, &name); !s.ok()) return s;
      if (name.empty()) return Error(absl::StrCat(where, ".name"), "missing");
      where = absl::StrCat(key, "[", AV(Quote(name)), "]");
      YAML::Node body = entry[body_key];
      if (body && !body.IsNull() && !body.IsMap()) {
        return Error(absl::StrCat(AV(where), ".", body_key), "must be a map");
      }
      where = absl::StrCat(AV(where), ".", body_key);
      if (absl::Status s = fn(name, body ? body : YAML::Node(YAML::NodeType::Map), where);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  static std::string Quote(const std::string& s) { return absl::StrCat("\"", AV(s), "\""); }

  absl::StatusOr<Kubeconfig> Parse(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("kubeconfig ", AV(path_), ": not valid YAML: ", e.what()));
    }
    Kubeconfig kc;
    kc.path = path_;
    if (!root || root.IsNull()) return kc;  // an empty file is an empty config, as clientcmd
    if (!root.IsMap()) return Error("(root)", "must be a map");
    absl::Status s = NamedList(
        root, "clusters", "cluster",
        [&](const std::string& name, const YAML::Node& c,
            const std::string& where) -> absl::Status {
          KubeconfigCluster out;
          absl::Status st = String(c, "server", where, &out.server);
          if (st.ok()) {
            st = Path(c, "certificate-authority", where, &out.certificate_authority);
          }
          if (st.ok()) {
            st = Data(c, "certificate-authority-data", where, &out.certificate_authority_data);
          }
          if (st.ok()) {
            st = Bool(c, "insecure-skip-tls-verify", where, &out.insecure_skip_tls_verify);
          }
          if (st.ok()) {
            st = String(c, "tls-server-name", where, &out.tls_server_name);
          }
          if (!st.ok()) return st;
          kc.clusters[name] = std::move(out);
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
    s = NamedList(root, "users", "user",
                  [&](const std::string& name, const YAML::Node& u,
                      const std::string& where) -> absl::Status {
                    KubeconfigUser out;
                    absl::Status st = Path(u, "client-certificate", where, &out.client_certificate);
                    if (st.ok()) {
                      st = Data(u, "client-certificate-data", where, &out.client_certificate_data);
                    }
                    if (st.ok()) st = Path(u, "client-key", where, &out.client_key);
                    if (st.ok()) st = Data(u, "client-key-data", where, &out.client_key_data);
                    if (st.ok()) st = String(u, "token", where, &out.token);
                    if (st.ok()) st = Path(u, "tokenFile", where, &out.token_file);
                    if (!st.ok()) return st;
                    kc.users[name] = std::move(out);
                    return absl::OkStatus();
                  });
    if (!s.ok()) return s;
    s = NamedList(root, "contexts", "context",
                  [&](const std::string& name, const YAML::Node& c,
                      const std::string& where) -> absl::Status {
                    KubeconfigContext out;
                    absl::Status st = String(c, "cluster", where, &out.cluster);
                    if (st.ok()) st = String(c, "user", where, &out.user);
                    if (st.ok()) st = String(c, "namespace", where, &out.namespace_);
                    if (!st.ok()) return st;
                    kc.contexts[name] = std::move(out);
                    return absl::OkStatus();
                  });
    if (!s.ok()) return s;
    s = String(root, "current-context", "", &kc.current_context);
    if (!s.ok()) return Error("current-context", "must be a string");
    return kc;
  }

 private:
  std::string path_;
  std::string dir_;
};

}  // namespace

absl::StatusOr<Kubeconfig> ParseKubeconfig(std::string_view text, const std::string& path) {
  Parser parser(path);
  try {
    return parser.Parse(text);
  } catch (const std::exception& e) {
    // Any yaml-cpp surprise (a conversion of an odd node) stays inside this boundary.
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", AV(path), ": ", e.what()));
  }
}

absl::StatusOr<Kubeconfig> LoadKubeconfig(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    return absl::NotFoundError(absl::StrCat("kubeconfig ", AV(path), ": cannot be read"));
  }
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return absl::DataLossError(absl::StrCat("kubeconfig ", AV(path), ": read failed"));
  return ParseKubeconfig(ss.str(), path);
}

absl::StatusOr<RestConfig> ToRestConfig(const Kubeconfig& kc, std::string_view context) {
  auto error = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", AV(kc.path), ": ", AV(what)));
  };
  std::string name(context.empty() ? std::string_view(kc.current_context) : context);
  if (name.empty()) return error("current-context: not set and no context was given");
  auto ctx = kc.contexts.find(name);
  if (ctx == kc.contexts.end()) {
    return error(absl::StrCat("contexts[\"", AV(name), "\"]: context was not found"));
  }
  const std::string where = absl::StrCat("contexts[\"", AV(name), "\"].context");
  if (ctx->second.cluster.empty()) return error(absl::StrCat(AV(where), ".cluster: missing"));
  auto cluster = kc.clusters.find(ctx->second.cluster);
  if (cluster == kc.clusters.end()) {
    return error(absl::StrCat(AV(where), ".cluster: cluster \"", AV(ctx->second.cluster),
                              "\" was not found"));
  }
  const KubeconfigCluster& c = cluster->second;
  const std::string cwhere = absl::StrCat("clusters[\"", AV(cluster->first), "\"].cluster");
  if (c.server.empty()) return error(absl::StrCat(AV(cwhere), ".server: missing"));
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    return error(absl::StrCat(AV(cwhere), ".server: \"", AV(c.server),
                              "\" is not an http:// or https:// URL"));
  }
  if (!c.certificate_authority.empty() && !c.certificate_authority_data.empty()) {
    return error(absl::StrCat(AV(cwhere),
                              ": certificate-authority-data and certificate-authority are both "
                              "specified"));
  }
  if (c.insecure_skip_tls_verify &&
      (!c.certificate_authority.empty() || !c.certificate_authority_data.empty())) {
    return error(absl::StrCat(AV(cwhere),
                              ".insecure-skip-tls-verify: specifying a root certificates file "
                              "with the insecure flag is not allowed"));
  }
  RestConfig rc;
  rc.host = c.server;
  while (rc.host.size() > 1 && rc.host.back() == '/') rc.host.pop_back();
  rc.ca_file = c.certificate_authority;
  rc.ca_pem = c.certificate_authority_data;
  rc.insecure = c.insecure_skip_tls_verify;
  rc.tls_server_name = c.tls_server_name;

  if (!ctx->second.user.empty()) {
    auto user = kc.users.find(ctx->second.user);
    if (user == kc.users.end()) {
      return error(
          absl::StrCat(AV(where), ".user: user \"", AV(ctx->second.user), "\" was not found"));
    }
    const KubeconfigUser& u = user->second;
    const std::string uwhere = absl::StrCat("users[\"", AV(user->first), "\"].user");
    if (!u.client_certificate.empty() && !u.client_certificate_data.empty()) {
      return error(absl::StrCat(AV(uwhere),
                                ": client-certificate-data and client-certificate are both "
                                "specified"));
    }
    if (!u.client_key.empty() && !u.client_key_data.empty()) {
      return error(absl::StrCat(AV(uwhere), ": client-key-data and client-key are both specified"));
    }
    const bool has_cert = !u.client_certificate.empty() || !u.client_certificate_data.empty();
    const bool has_key = !u.client_key.empty() || !u.client_key_data.empty();
    if (has_cert && !has_key) return error(absl::StrCat(AV(uwhere), ".client-key: missing"));
    if (has_key && !has_cert) {
      return error(absl::StrCat(AV(uwhere), ".client-certificate: missing"));
    }
    rc.client_cert_file = u.client_certificate;
    rc.client_cert_pem = u.client_certificate_data;
    rc.client_key_file = u.client_key;
    rc.client_key_pem = u.client_key_data;
    rc.bearer_token = u.token;
    rc.bearer_token_file = u.token_file;
  }
  return rc;
}

absl::StatusOr<RestConfig> LoadRestConfig(const std::string& path, std::string_view context) {
  absl::StatusOr<Kubeconfig> kc = LoadKubeconfig(path);
  if (!kc.ok()) return kc.status();
  return ToRestConfig(*kc, context);
}

}  // namespace kubelet::apiclient
