#include "common/jitter.h"

#include <algorithm>
#include <random>

namespace kubelet {

absl::Duration JitterWith(absl::Duration d, double max_factor, double fraction) {
  if (max_factor <= 0) max_factor = 1.0;
  fraction = std::clamp(fraction, 0.0, 0.999999);
  return d + d * (fraction * max_factor);
}

absl::Duration Jitter(absl::Duration d, double max_factor) {
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_real_distribution<double> u(0.0, 1.0);
  return JitterWith(d, max_factor, u(rng));
}

}  // namespace kubelet
