// Backoff: the exponential backoff with jitter that reflectors wait between attempts (client-go's
// exponentialBackoffManager with a sliding reset).
//
// Next() returns base·(1 + jitter·r) for r uniform in [0, 1), where base starts at `initial`,
// is multiplied by `factor` after each call and is capped at `max`. When more than `reset_after`
// has passed since the previous Next(), the base starts over at `initial`: an attempt that stayed
// healthy that long (a watch that ran for minutes) earns a fast retry next time.
//
// With the reflector defaults the bases run 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, ... seconds.
//
// Thread-safety: not thread-safe; owned by one loop.
#pragma once

#include <functional>
#include <random>

#include "util/clock.h"

namespace converge::client {

struct BackoffOptions {
  // client-go's reflector backoff: 800 ms initial, 30 s cap, reset after 2 min healthy, factor 2,
  // jitter 1.0 (each delay lands in [base, 2·base)). The initial value is short enough that a
  // dropped watch resumes within a second; the cap keeps a dead server from being hammered.
  util::Clock::Duration initial = std::chrono::milliseconds(800);
  util::Clock::Duration max = std::chrono::seconds(30);
  util::Clock::Duration reset_after = std::chrono::minutes(2);
  double factor = 2.0;
  double jitter = 1.0;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  // Uniform in [0, 1); nullptr: a std::mt19937_64 seeded from std::random_device.
  std::function<double()> random;
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options);

  // The next delay to wait (see the header comment).
  util::Clock::Duration Next();
  // Starts over at `initial`.
  void Reset();

 private:
  const BackoffOptions options_;
  util::Clock* const clock_;
  std::mt19937_64 rng_;
  util::Clock::Duration base_;
  bool started_ = false;
  util::Clock::TimePoint last_;
};

}  // namespace converge::client
