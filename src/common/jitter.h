// Jittered periods, as apimachinery's wait.Jitter: Jitter(d, f) is d plus a uniformly random
// part of up to f*d, so that many loops started together (a fleet of nodes, a thousand
// reflectors after an API server restart) drift apart instead of firing in the same instant.
//
// Thread-safety: callable from any thread (the random source is per thread).
#ifndef KUBELET_COMMON_JITTER_H_
#define KUBELET_COMMON_JITTER_H_

#include "absl/time/time.h"

namespace kubelet {

// d + rand[0, 1) * max_factor * d. A max_factor <= 0 means 1.0, as upstream.
absl::Duration Jitter(absl::Duration d, double max_factor);

// The same with the random fraction in [0, 1) given (for tests and callers with their own
// source); `fraction` is clamped to [0, 1).
absl::Duration JitterWith(absl::Duration d, double max_factor, double fraction);

}  // namespace kubelet

#endif  // KUBELET_COMMON_JITTER_H_
