#include "test/e2e/e2e_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace kubelet::e2e {
namespace {

class E2EEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/e2e_env_test.XXXXXX";
    int fd = ::mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = tmpl;
    for (const char* key : {"KUBELET_E2E_ENV_FILE", "KUBELET_E2E_RUNTIME_SOCK",
                            "KUBELET_E2E_REGISTRY", "KUBELET_E2E_TEST_ONLY_PRESET"}) {
      ::unsetenv(key);
    }
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  void Write(const std::string& contents) {
    std::ofstream out(path_, std::ios::trunc);
    out << contents;
  }

  static std::string Get(const char* key) {
    const char* v = std::getenv(key);
    return v == nullptr ? "<unset>" : v;
  }

  std::string path_;
};

TEST_F(E2EEnvTest, LoadsKeysFromTheFileNamedByTheEnvironment) {
  Write(
      "# written by containerd-env.sh\n"
      "KUBELET_E2E_RUNTIME_SOCK=/run/x/runtime.sock\r\n"
      "\n"
      "not a pair\n"
      "KUBELET_E2E_REGISTRY=127.0.0.1:5000\n");
  ::setenv("KUBELET_E2E_ENV_FILE", path_.c_str(), 1);
  EXPECT_TRUE(LoadE2EEnv());
  EXPECT_EQ(Get("KUBELET_E2E_RUNTIME_SOCK"), "/run/x/runtime.sock");
  EXPECT_EQ(Get("KUBELET_E2E_REGISTRY"), "127.0.0.1:5000");
}

TEST_F(E2EEnvTest, ExplicitEnvironmentWinsAndEmptyValuesAreKept) {
  Write(
      "KUBELET_E2E_TEST_ONLY_PRESET=from-file\nKUBELET_E2E_RUNTIME_SOCK=/s\n"
      "KUBELET_E2E_REGISTRY=\n");
  ::setenv("KUBELET_E2E_TEST_ONLY_PRESET", "explicit", 1);
  EXPECT_TRUE(LoadE2EEnvFile(path_));
  EXPECT_EQ(Get("KUBELET_E2E_TEST_ONLY_PRESET"), "explicit");
  EXPECT_EQ(Get("KUBELET_E2E_REGISTRY"), "");
}

TEST_F(E2EEnvTest, FalseWithoutARuntime) {
  EXPECT_FALSE(LoadE2EEnv());  // no KUBELET_E2E_ENV_FILE at all
  ::setenv("KUBELET_E2E_ENV_FILE", "/nonexistent/e2e-env/env", 1);
  EXPECT_FALSE(LoadE2EEnv());
  Write("KUBELET_E2E_REGISTRY=127.0.0.1:5000\n");
  EXPECT_FALSE(LoadE2EEnvFile(path_));
}

TEST_F(E2EEnvTest, TrueWhenTheEnvironmentAlreadyNamesTheSocket) {
  ::setenv("KUBELET_E2E_RUNTIME_SOCK", "/explicit.sock", 1);
  ::setenv("KUBELET_E2E_ENV_FILE", "/nonexistent/e2e-env/env", 1);
  EXPECT_TRUE(LoadE2EEnv());
}

}  // namespace
}  // namespace kubelet::e2e
