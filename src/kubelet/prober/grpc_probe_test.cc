#include "kubelet/prober/grpc_probe.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <memory>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace kubelet::prober {
namespace {

TEST(GrpcProbeTest, Encoding) {
  EXPECT_EQ(EncodeHealthCheckRequest(""), "");
  EXPECT_EQ(EncodeHealthCheckRequest("svc"), std::string("\x0a\x03svc", 5));
  EXPECT_EQ(DecodeHealthCheckStatus(std::string("\x08\x01", 2)), 1);
  EXPECT_EQ(DecodeHealthCheckStatus(""), 0);
  EXPECT_EQ(DecodeHealthCheckStatus(std::string("\x08\x02", 2)), 2);
  EXPECT_EQ(DecodeHealthCheckStatus(std::string("\x08", 1)), -1);
}

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    // A callback service so the server has a poller for the built-in health service.
    builder.RegisterCallbackGenericService(&generic_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  int port_ = 0;
  grpc::CallbackGenericService generic_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(GrpcServerTest, ServingAndNotServing) {
  lifecycle::ProbeOutcome ok = GrpcProbe("127.0.0.1", port_, "", absl::Seconds(5));
  EXPECT_EQ(ok.result, lifecycle::ProbeResult::kSuccess) << ok.output;
  EXPECT_EQ(ok.output, "service healthy");

  server_->GetHealthCheckService()->SetServingStatus("db", false);
  lifecycle::ProbeOutcome bad = GrpcProbe("127.0.0.1", port_, "db", absl::Seconds(5));
  EXPECT_EQ(bad.result, lifecycle::ProbeResult::kFailure);
  EXPECT_EQ(bad.output, "service unhealthy (responded with \"NOT_SERVING\")");

  lifecycle::ProbeOutcome unknown = GrpcProbe("127.0.0.1", port_, "nope", absl::Seconds(5));
  EXPECT_EQ(unknown.result, lifecycle::ProbeResult::kFailure);
  EXPECT_TRUE(absl::StartsWith(unknown.output,
                               "error: health rpc probe failed: rpc error: code = NotFound"))
      << unknown.output;
}

TEST(GrpcProbeTest, ConnectFailure) {
  // Port 1 on loopback: nothing listens there.
  lifecycle::ProbeOutcome out = GrpcProbe("127.0.0.1", 1, "", absl::Milliseconds(500));
  EXPECT_EQ(out.result, lifecycle::ProbeResult::kFailure);
  EXPECT_TRUE(
      absl::StartsWith(out.output, "timeout: failed to connect service \"127.0.0.1:1\" within"))
      << out.output;
}

}  // namespace
}  // namespace kubelet::prober
