// Waiting on a util::Clock with cancellation (client-go's wait package, the parts the library
// uses).
//
// Thread-safety: free functions; each call is independent.
#pragma once

#include <stop_token>

#include "util/clock.h"

namespace converge::client {

// Sleeps on `clock` for `d`, or until stop is requested. Returns false when stopped (at once if
// stop was already requested), true when the time passed.
bool SleepFor(util::Clock& clock, util::Clock::Duration d, std::stop_token stop);

// Sleeps until clock.Now() >= deadline, or until stop is requested; as SleepFor.
bool SleepUntil(util::Clock& clock, util::Clock::TimePoint deadline, std::stop_token stop);

}  // namespace converge::client
