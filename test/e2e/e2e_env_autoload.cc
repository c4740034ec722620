// Linked (as an object library, so it cannot be dropped by the linker) into every binary that
// kubelet_add_e2e_test() registers: loads $KUBELET_E2E_ENV_FILE into the environment before
// main() runs, so e2e tests that simply getenv("KUBELET_E2E_...") work under CTest without
// calling LoadE2EEnv() themselves. Static initialization runs before any test thread exists,
// which is what setenv() needs.
#include "test/e2e/e2e_env.h"

namespace {

[[maybe_unused]] const bool kE2EEnvLoaded = kubelet::e2e::LoadE2EEnv();

}  // namespace
