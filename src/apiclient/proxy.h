// Proxy selection from the environment, with the rules of Go's net/http ProxyFromEnvironment
// (golang.org/x/net/http/httpproxy), which client-go and the kubelet use.
//
// Contract:
// - ProxyEnvironmentFrom() reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY; each upper-case name takes
//   precedence over its lower-case one when it is set and not empty.
// - ParseProxyUrl() is Go's parseProxy: a value without a scheme (or whose scheme is not http,
//   https or socks5) is taken as "http://<value>"; the port defaults to the scheme's (80, 443,
//   1080); user information is percent-decoded. A value that is not a URL even then is
//   InvalidArgument.
// - ProxyBypassed() is Go's useProxy, negated: "localhost" and loopback addresses (127.0.0.0/8,
//   ::1, and 127.x mapped into IPv6) never go through a proxy; otherwise NO_PROXY is a
//   comma-separated list (spaces around entries ignored, case-insensitive) of: "*" (everything);
//   an IP address, optionally with ":port" ("[v6]:port"); a CIDR range; a host name, optionally
//   with ":port", that matches itself and its subdomains ("foo.com" matches foo.com and
//   a.foo.com); ".foo.com" or "*.foo.com", that match the subdomains only. An entry's port, when
//   given, must equal the request's (default) port. Host names are compared as written (no IDNA
//   conversion: API server names are ASCII). Malformed entries are ignored.
// - ProxyFor() is Go's Config.ProxyFunc for one request: the HTTPS proxy for https, the HTTP proxy
//   for http (Go's CGI guard on HTTP_PROXY does not apply to a kubelet), nothing when bypassed or
//   unset. A value that does not parse is ignored (a direct connection), as Go does.
// Thread-safety: pure functions. Ownership: values.
#ifndef KUBELET_APICLIENT_PROXY_H_
#define KUBELET_APICLIENT_PROXY_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubelet::apiclient {

// The proxy settings of Go's httpproxy.FromEnvironment.
struct ProxyEnvironment {
  std::string http_proxy;   // HTTP_PROXY, else http_proxy
  std::string https_proxy;  // HTTPS_PROXY, else https_proxy
  std::string no_proxy;     // NO_PROXY, else no_proxy
};

// The settings as `lookup` (a variable's value, "" when unset) gives them.
ProxyEnvironment ProxyEnvironmentFrom(const std::function<std::string(const char*)>& lookup);
// The settings of the process environment.
ProxyEnvironment ProxyEnvironmentFromProcess();

struct ProxyUrl {
  std::string scheme;  // "http", "https" or "socks5"
  std::string host;    // without the brackets of an IPv6 literal
  std::string port;
  std::string username, password;  // decoded
  bool has_user = false;           // user information was given (Proxy-Authorization is sent)
  // host:port, an IPv6 host in brackets.
  std::string Address() const;
};

absl::StatusOr<ProxyUrl> ParseProxyUrl(std::string_view value);

// True when a request to host:port (host without brackets, port the URL's or its scheme's
// default) is not to go through a proxy under `no_proxy`.
bool ProxyBypassed(std::string_view no_proxy, std::string_view host, std::string_view port);

// The proxy for a request with `scheme` ("http"/"https") to host:port, or nullopt for a direct
// connection.
std::optional<ProxyUrl> ProxyFor(const ProxyEnvironment& env, std::string_view scheme,
                                 std::string_view host, std::string_view port);

}  // namespace kubelet::apiclient

#endif  // KUBELET_APICLIENT_PROXY_H_
