// TokenBucket: a blocking client-side rate limiter (client-go's flowcontrol token bucket).
//
// Tokens accrue at `qps` per second up to `burst`; Wait takes one, blocking until it is there.
// Waiters are served in the order they arrive: each Wait reserves the next token, so a burst of
// callers is spread out at exactly 1/qps apart.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <mutex>
#include <stop_token>

#include "util/clock.h"

namespace converge::client {

struct TokenBucketOptions {
  double qps = 5;                // > 0
  int burst = 10;                // >= 1
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
};

class TokenBucket {
 public:
  explicit TokenBucket(TokenBucketOptions options);

  // Takes a token, waiting for it if needed. Returns false (without a token) when stop is
  // requested first.
  bool Wait(std::stop_token stop = {});

  // Reserves a token and returns how long the caller must wait before using it (zero when one
  // was available). Wait = Reserve + sleep.
  util::Clock::Duration Reserve();

 private:
  const double qps_;
  const double burst_;
  util::Clock* const clock_;

  std::mutex mu_;
  // Available tokens at last_; negative when callers have reserved tokens not yet accrued.
  double tokens_;                // guarded by mu_
  util::Clock::TimePoint last_;  // guarded by mu_
};

}  // namespace converge::client
