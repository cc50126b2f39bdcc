#include "client/token_bucket.h"

#include <algorithm>
#include <cmath>

#include "client/wait.h"

namespace converge::client {

TokenBucket::TokenBucket(TokenBucketOptions options)
    : qps_(options.qps > 0 ? options.qps : 1),
      burst_(std::max(1, options.burst)),
      clock_(options.clock != nullptr ? options.clock : &util::RealClock()),
      tokens_(burst_),
      last_(clock_->Now()) {}

util::Clock::Duration TokenBucket::Reserve() {
  std::lock_guard lock(mu_);
  util::Clock::TimePoint now = clock_->Now();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return util::Clock::Duration::zero();
  return std::chrono::duration_cast<util::Clock::Duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucket::Wait(std::stop_token stop) {
  if (stop.stop_requested()) return false;
  util::Clock::Duration d = Reserve();
  if (d <= util::Clock::Duration::zero()) return true;
  return SleepFor(*clock_, d, std::move(stop));
}

}  // namespace converge::client
