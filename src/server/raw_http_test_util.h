// Raw-socket HTTP helpers for the server's tests: exact bytes in, exact bytes out, so tests can
// send what no well-behaved client would. Blocking, for tests only.
#ifndef KUBELET_SERVER_RAW_HTTP_TEST_UTIL_H_
#define KUBELET_SERVER_RAW_HTTP_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kubelet::server::testing {

// A TCP connection to 127.0.0.1:port (-1 when refused).
inline int Connect(int port) {
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

// Sends all of `data` (stops early if the peer closes).
inline void SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
}

// Everything the peer writes until it closes, or until nothing came for `idle_ms`.
inline std::string ReadUntilClose(int fd, int idle_ms = 10000) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, idle_ms) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// True once the peer has closed the connection (read returns 0 or an error) within `ms`.
inline bool PeerClosed(int fd, int ms) {
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;
  }
}

// Sends raw bytes to 127.0.0.1:port and returns everything the server writes until it closes.
inline std::string RawExchange(int port, const std::string& request) {
  int fd = Connect(port);
  if (fd < 0) return "connect failed";
  SendAll(fd, request);
  std::string out = ReadUntilClose(fd);
  ::close(fd);
  return out;
}

inline std::string Get(int port, const std::string& target) {
  return RawExchange(port, "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}

// The body after the header block ("" when there is none).
inline std::string Body(const std::string& response) {
  size_t p = response.find("\r\n\r\n");
  return p == std::string::npos ? "" : response.substr(p + 4);
}

// True when `response` starts with the status line "HTTP/1.1 <code> ".
inline bool HasStatus(const std::string& response, int code) {
  return response.rfind("HTTP/1.1 " + std::to_string(code) + " ", 0) == 0;
}

}  // namespace kubelet::server::testing

#endif  // KUBELET_SERVER_RAW_HTTP_TEST_UTIL_H_
