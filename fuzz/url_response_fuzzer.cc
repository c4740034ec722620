// Fuzzes the static pod URL source's handling of a server's response: the bytes are what a
// server sent on the connection before closing it. The first byte picks the size of each read
// (so framing split across reads is covered), the rest go through the client's parser, limits
// and error wording (ParseHttpResponseBytes, the code Get() runs on a socket), and a 200 body
// goes through the URL source's decode (pods, defaults, validation). Any crash, sanitizer
// report, exception or hang is a finding; an error result is not.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/time/time.h"
#include "api/static_pod.h"
#include "kubelet/podsource/http_fetch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t read_size = static_cast<size_t>(data[0]) + 1;
  const std::string_view raw(reinterpret_cast<const char*>(data) + 1, size - 1);
  kubelet::podsource::HttpFetchOptions options;
  options.max_body_bytes = 1 << 20;  // the real bound is 10 MiB; smaller keeps runs fast
  const std::string url = "http://127.0.0.1:8080/pods";
  auto resp = kubelet::podsource::ParseHttpResponseBytes(url, raw, read_size, options);
  if (!resp.ok()) return 0;
  if (resp->status_code == 200 && !resp->body.empty()) {
    auto pods = kubelet::api::DecodeStaticPodsHTTP(resp->body, "node1", url,
                                                   absl::FromUnixSeconds(1700000000));
    (void)pods;
  }
  return 0;
}
