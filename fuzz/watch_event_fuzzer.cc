// Fuzzes what the kubelet does with the API server's bytes. The first byte picks the case:
//   * even: the rest is the body of a watch answered 200. It is cut into frames at newlines as
//     the REST client cuts it (the last, unterminated frame too, as at the end of the stream),
//     each frame is decoded with DecodeWatchFrame (a bad frame ends the stream, as in Watch()),
//     and each event is handled as the reflector hands it on: ADDED / MODIFIED / DELETED into an
//     apiclient::Store and into the API pod source (decode, defaults, the PodConfig merge, whose
//     updates are drained), BOOKMARK into the store, ERROR through DecodeApiError, any other
//     type ends the stream; at the end the objects seen go to both again as a relist's items
//     (Replace). Each object is also read as the other watched kinds are (Node, Service,
//     ConfigMap, Secret). Property checked: a Node that decodes, encoded again (the
//     node status read-modify-write), decodes again to the same encoding.
//   * odd: the rest is the body of a unary answer with the status code the byte's other bits
//     pick: the Status decoding of an error (DecodeApiError, ResponseStatus) and the typed
//     decodes of a success body (Node, Lease, Event).
// Any crash, sanitizer report, exception, hang or property violation is a finding; an error
// result is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "api/codec.h"
#include "api/coordination.h"
#include "api/core_misc.h"
#include "api/event.h"
#include "api/node.h"
#include "apiclient/reflector.h"
#include "apiclient/rest_client.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/strings.h"
#include "kubelet/podsource/api_source.h"
#include "kubelet/podsource/pod_config.h"

namespace {

namespace api = kubelet::api;
namespace apiclient = kubelet::apiclient;

void ReadAsNode(const nlohmann::json& object) {
  absl::StatusOr<api::Node> node = api::FromJson<api::Node>(object);
  if (!node.ok()) return;
  const std::string encoded = api::Encode(*node);
  absl::StatusOr<api::Node> again = api::Decode<api::Node>(encoded);
  if (!again.ok()) {
    std::fprintf(stderr, "encoded Node does not decode: %s\n%s\n",
                 std::string(again.status().message()).c_str(), encoded.c_str());
    std::abort();
  }
  if (api::Encode(*again) != encoded) {
    std::fprintf(stderr, "Node encoding is not stable:\n%s\n", encoded.c_str());
    std::abort();
  }
}

void ReadAsOtherKinds(const nlohmann::json& object) {
  ReadAsNode(object);
  (void)api::FromJson<api::Service>(object);
  (void)api::FromJson<api::ConfigMap>(object);
  (void)api::FromJson<api::Secret>(object);
}

// metadata.resourceVersion when it is a string, as the reflector reads it.
std::string ResourceVersionOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  auto rv = md->find("resourceVersion");
  return rv != md->end() && rv->is_string() ? rv->get<std::string>() : "";
}

// The watch stream of one input, handled as Reflector::WatchOnce hands its events on.
void WatchStream(std::string_view body) {
  kubelet::FakeClock clock(absl::FromUnixSeconds(1700000000));
  kubelet::podsource::PodConfig config(clock);
  kubelet::podsource::ApiSource pods(config);
  apiclient::Store store;
  std::vector<nlohmann::json> seen;  // handed over again at the end, as a relist's items
  bool more = true;
  while (more && !body.empty()) {
    size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    if (absl::StripAsciiWhitespace(kubelet::AV(line)).empty()) continue;
    absl::StatusOr<apiclient::WatchEvent> ev = apiclient::DecodeWatchFrame(line);
    if (!ev.ok()) break;
    if (ev->type == "ADDED") {
      store.Add(ev->object);
      pods.Add(ev->object);
    } else if (ev->type == "MODIFIED") {
      store.Update(ev->object);
      pods.Update(ev->object);
    } else if (ev->type == "DELETED") {
      store.Delete(ev->object);
      pods.Delete(ev->object);
    } else if (ev->type == "BOOKMARK") {
      if (std::string rv = ResourceVersionOf(ev->object); !rv.empty()) store.Bookmark(rv);
    } else if (ev->type == "ERROR") {
      (void)apiclient::IsResourceExpired(apiclient::DecodeApiError(ev->object));
      more = false;
    } else {
      more = false;
    }
    ReadAsOtherKinds(ev->object);
    (void)config.Drain();
    seen.push_back(std::move(ev->object));
  }
  store.Replace(seen, "1");
  pods.Replace(std::move(seen));
  (void)config.Drain();
  (void)store.List();
  pods.Stop();
  config.Shutdown();
}

void UnaryAnswer(uint8_t selector, std::string_view body) {
  static constexpr int kCodes[] = {200, 201, 400, 401, 403, 404, 409, 410,
                                   412, 422, 429, 500, 503, 504, 302, 418};
  apiclient::Response resp;
  resp.code = kCodes[(selector >> 1) % (sizeof(kCodes) / sizeof(kCodes[0]))];
  resp.body = std::string(body);
  if (!resp.ok()) {
    (void)apiclient::IsResourceExpired(apiclient::DecodeApiError(resp));
    (void)apiclient::ResponseStatus(resp);
    return;
  }
  (void)api::Decode<api::Node>(resp.body);
  (void)api::Decode<api::Lease>(resp.body);
  (void)api::Decode<api::Event>(resp.body);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Pod decode errors are logged; keep the fuzzer's output readable and fast.
  kubelet::log::Configure(
      kubelet::log::Options{0, kubelet::log::Format::kText, [](std::string_view) {}});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) == 0) {
    WatchStream(rest);
  } else {
    UnaryAnswer(data[0], rest);
  }
  return 0;
}
