// FaultInjector: decides, call by call, which fault the simulated cloud injects.
//
// Faults, in the order a call meets them:
//   1. outage      every call fails with 503 (switched on and off, or on for a duration);
//   2. latency     the call waits this long before it is served;
//   3. error burst the next N calls fail with a 5xx (500, 502, 503 in turn) before acting;
//      error probability: each call fails so with probability p;
//   4. timeout after the action: with probability p the call is performed and then stalls for
//      `hang` before answering, so a client with a shorter timeout sees a timeout for a call that
//      succeeded — the "performed but not acknowledged" case of seed §七.4. The same for exactly
//      the next N creates (timeout_next_creates): tests use it to catch a client mid-create.
// Faults apply to the cloud API (/v1/...), never to the admin endpoints.
//
// Randomness comes from one generator seeded by FaultConfig::seed, so a run can be repeated.
//
// Thread-safety: safe for concurrent use (one mutex).
#pragma once

#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>

#include "util/clock.h"
#include "util/status.h"

namespace converge::cloudsim {

struct FaultConfig {
  std::chrono::milliseconds latency{0};
  double timeout_after_action_probability = 0;
  // How long a "timed out" call stalls before it answers. Longer than the clients' timeout.
  std::chrono::milliseconds hang{std::chrono::seconds(10)};
  double error_probability = 0;
  int64_t error_burst = 0;           // calls left in the current burst
  int64_t timeout_next_creates = 0;  // creates left that are performed, then stall
  bool outage = false;
};

// What to do with one call.
struct CallFaults {
  std::chrono::milliseconds latency{0};
  int fail_status = 0;                      // non-zero: answer this 5xx without acting
  std::chrono::milliseconds hang_after{0};  // non-zero: act, then stall this long
};

struct FaultInjectorOptions {
  FaultConfig config;
  uint64_t seed = 1;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock(); times timed outages
};

class FaultInjector {
 public:
  explicit FaultInjector(FaultInjectorOptions options);

  // Decides the faults of the next call and counts them. `is_create`: the call creates.
  CallFaults Next(bool is_create = false);

  FaultConfig config() const;
  void Set(const FaultConfig& config);
  // An outage that ends by itself after `d` (the `outage` flag stays as it was).
  void OutageFor(util::Clock::Duration d);

  // Applies a JSON patch of the admin endpoint: any of "latencyMs", "hangMs",
  // "timeoutAfterActionProbability", "errorProbability", "errorBurst", "timeoutNextCreates",
  // "outage" (bool), "outageSeconds" (an outage that ends by itself; 0 ends a timed one).
  // Unknown fields and values of the wrong type or range are InvalidArgument, and nothing is
  // applied.
  util::Status Patch(const boost::json::object& patch);
  // The configuration, plus "outageRemainingMs" for a timed outage.
  boost::json::object ToJson() const;

  struct Counters {
    int64_t injected_errors = 0;    // 5xx from bursts and error probability
    int64_t injected_timeouts = 0;  // calls performed, then stalled
    int64_t outage_rejections = 0;  // calls refused by an outage
  };
  Counters counters() const;

 private:
  bool InOutageLocked() const;

  util::Clock* const clock_;
  mutable std::mutex mu_;
  FaultConfig config_;                     // guarded by mu_
  util::Clock::TimePoint outage_until_{};  // guarded by mu_
  std::mt19937_64 rng_;                    // guarded by mu_
  int64_t burst_seq_ = 0;                  // guarded by mu_; picks the burst's status code
  Counters counters_;                      // guarded by mu_
};

}  // namespace converge::cloudsim
