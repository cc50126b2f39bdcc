#include "client/backoff.h"

#include <algorithm>

namespace converge::client {

Backoff::Backoff(BackoffOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      rng_(std::random_device{}()),
      base_(options_.initial) {}

void Backoff::Reset() {
  base_ = options_.initial;
  started_ = false;
}

util::Clock::Duration Backoff::Next() {
  util::Clock::TimePoint now = clock_->Now();
  if (started_ && now - last_ > options_.reset_after) base_ = options_.initial;
  started_ = true;
  last_ = now;
  util::Clock::Duration d = base_;
  auto scaled =
      std::chrono::duration_cast<util::Clock::Duration>(std::chrono::duration<double, std::nano>(
          static_cast<double>(base_.count()) * options_.factor));
  base_ = std::min(scaled, options_.max);
  if (options_.jitter > 0) {
    double r =
        options_.random ? options_.random() : std::uniform_real_distribution<double>(0, 1)(rng_);
    d += std::chrono::duration_cast<util::Clock::Duration>(std::chrono::duration<double, std::nano>(
        static_cast<double>(d.count()) * options_.jitter * r));
  }
  return d;
}

}  // namespace converge::client
