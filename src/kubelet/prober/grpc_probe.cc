#include "kubelet/prober/grpc_probe.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/log.h"
#include "cri/grpc_client.h"

namespace kubelet::prober {

namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(const std::string& in, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < in.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(in[(*pos)++]);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

const char* ServingStatusName(int s) {
  switch (s) {
    case 0:
      return "UNKNOWN";
    case 1:
      return "SERVING";
    case 2:
      return "NOT_SERVING";
    case 3:
      return "SERVICE_UNKNOWN";
  }
  return "UNKNOWN";
}

// Go's time.Duration String() for whole seconds / milliseconds.
std::string GoDuration(absl::Duration d) { return absl::FormatDuration(d); }

}  // namespace

std::string EncodeHealthCheckRequest(const std::string& service) {
  std::string out;
  if (service.empty()) return out;  // proto3: default values are not sent
  out.push_back(static_cast<char>((1 << 3) | 2));
  PutVarint(service.size(), &out);
  out += service;
  return out;
}

int DecodeHealthCheckStatus(const std::string& bytes) {
  int status = 0;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t key;
    if (!GetVarint(bytes, &pos, &key)) return -1;
    const int field = static_cast<int>(key >> 3);
    const int wire = static_cast<int>(key & 7);
    uint64_t v = 0;
    switch (wire) {
      case 0:
        if (!GetVarint(bytes, &pos, &v)) return -1;
        if (field == 1) status = static_cast<int>(v);
        break;
      case 1:
        pos += 8;
        break;
      case 2:
        if (!GetVarint(bytes, &pos, &v)) return -1;
        pos += v;
        break;
      case 5:
        pos += 4;
        break;
      default:
        return -1;
    }
    if (pos > bytes.size()) return -1;
  }
  return status;
}

lifecycle::ProbeOutcome GrpcProbe(const std::string& host, int port, const std::string& service,
                                  absl::Duration timeout) {
  lifecycle::ProbeOutcome out;
  out.result = lifecycle::ProbeResult::kFailure;
  const std::string addr = host.find(':') != std::string::npos ? absl::StrCat("[", host, "]:", port)
                                                               : absl::StrCat(host, ":", port);
  grpc::ChannelArguments args;
  args.SetUserAgentPrefix(lifecycle::DefaultUserAgent("probe"));
  auto channel = grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), args);
  const auto deadline = std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout);
  if (!channel->WaitForConnected(deadline)) {
    out.output = absl::StrCat("timeout: failed to connect service ", log::Quote(addr), " within ",
                              GoDuration(timeout), ": context deadline exceeded");
    return out;
  }
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(deadline);
  const std::string req_bytes = EncodeHealthCheckRequest(service);
  grpc::Slice slice(req_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) {
    const std::string rpc_err = cri::GoRpcErrorText(
        static_cast<absl::StatusCode>(status.error_code()), status.error_message());
    switch (status.error_code()) {
      case grpc::StatusCode::UNIMPLEMENTED:
        out.output = absl::StrCat(
            "this server does not implement the grpc health protocol (grpc.health.v1.Health): ",
            rpc_err);
        break;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        out.output =
            absl::StrCat("timeout: health rpc did not complete within ", GoDuration(timeout));
        break;
      default:
        out.output = absl::StrCat("error: health rpc probe failed: ", rpc_err);
    }
    return out;
  }
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) {
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  const int serving = DecodeHealthCheckStatus(bytes);
  if (serving != 1) {
    out.output = absl::StrCat("service unhealthy (responded with ",
                              log::Quote(ServingStatusName(serving)), ")");
    return out;
  }
  out.result = lifecycle::ProbeResult::kSuccess;
  out.output = "service healthy";
  return out;
}

}  // namespace kubelet::prober
