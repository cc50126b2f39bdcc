// LeaderElector: leader election on a coordination.k8s.io/v1 Lease (client-go's
// tools/leaderelection), so that of several replicas of a component exactly one acts.
//
// The algorithm (client-go's, restated):
//   - Candidates try every retry_period (jittered by up to 1.2×) to acquire the lease: create it
//     if absent, or take it over when it is free (empty holder) or expired. Expiry is judged on
//     the candidate's own clock: the lease is expired when lease_duration has passed since this
//     candidate last saw the lease record change — never by comparing clocks across machines.
//   - The leader renews every retry_period. A renewal round keeps trying until renew_deadline;
//     if it has not succeeded by then, the leader steps down (stops its work) even though the
//     lease may not have expired for others yet: renew_deadline < lease_duration leaves the
//     margin in which the old leader has stopped before anyone else may take over.
//   - On shutdown (release_on_cancel) the leader writes the lease with an empty holder and a
//     one-second duration, so a successor takes over at once instead of after lease_duration.
//   - Updates are conditional on the lease's resourceVersion: two candidates racing for a free
//     lease cannot both win.
// Defaults as client-go's users (kube-controller-manager): 15 s lease, 10 s renew deadline, 2 s
// retry.
//
// Run(stop): acquires, calls on_started_leading on a thread of its own with a stop token that
// fires when leadership ends, renews until stop or failure; then, in this order: stops the
// leading work and joins its thread, releases the lease (if configured and still held), calls
// on_stopped_leading. Run is called once per elector. It returns only when `stop` is requested or
// leadership was lost: a caller that finds `stop` not requested lost the lease (upstream's
// components then exit with "leaderelection lost", to be restarted as candidates).
//
// Thread-safety: IsLeader and GetLeader may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>

#include "api/object.h"
#include "api/types.h"
#include "client/rest_client.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::client {

struct LeaderElectionRecord {
  std::string holder_identity;
  int64_t lease_duration_seconds = 0;
  util::Clock::WallTime acquire_time{};
  util::Clock::WallTime renew_time{};
  int64_t leader_transitions = 0;

  bool operator==(const LeaderElectionRecord&) const = default;
};

// The object holding the record (client-go's resourcelock.Interface).
class ResourceLock {
 public:
  virtual ~ResourceLock() = default;
  // The current record; kNotFound when the lock object does not exist.
  virtual util::StatusOr<LeaderElectionRecord> Get(std::stop_token stop) = 0;
  virtual util::Status Create(const LeaderElectionRecord& record, std::stop_token stop) = 0;
  // Conditional on the version last read or written (kAborted on a conflict).
  virtual util::Status Update(const LeaderElectionRecord& record, std::stop_token stop) = 0;
  virtual std::string Identity() const = 0;
  virtual std::string Describe() const = 0;
};

struct LeaseLockOptions {
  RestClient* client = nullptr;  // not owned
  api::ObjectKey lease;          // namespace/name of the Lease
  std::string identity;          // unique per candidate (e.g. hostname + random suffix)
  // Deadline of each API call; the elector's renew deadline is the natural choice.
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
};

// A ResourceLock on a coordination.k8s.io/v1 Lease.
class LeaseLock final : public ResourceLock {
 public:
  explicit LeaseLock(LeaseLockOptions options) : options_(std::move(options)) {}
  util::StatusOr<LeaderElectionRecord> Get(std::stop_token stop) override;
  util::Status Create(const LeaderElectionRecord& record, std::stop_token stop) override;
  util::Status Update(const LeaderElectionRecord& record, std::stop_token stop) override;
  std::string Identity() const override { return options_.identity; }
  std::string Describe() const override { return options_.lease.ToString(); }

  // Lease spec <-> record (RFC 3339 MicroTime timestamps).
  static LeaderElectionRecord RecordFromLease(const api::Object& lease);
  static boost::json::object LeaseSpec(const LeaderElectionRecord& record);

 private:
  const LeaseLockOptions options_;
  std::mutex mu_;
  api::Object last_;        // guarded by mu_; the Lease as last read or written (for its RV)
  bool have_last_ = false;  // guarded by mu_
};

// The three timings of leader election, as upstream's components take them
// (--leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period).
// The Lease records the duration in whole seconds (spec.leaseDurationSeconds, rounded down).
struct LeaderElectionTimings {
  std::chrono::milliseconds lease_duration{std::chrono::seconds(15)};
  std::chrono::milliseconds renew_deadline{std::chrono::seconds(10)};
  std::chrono::milliseconds retry_period{std::chrono::seconds(2)};
};

// client-go's checks (NewLeaderElector): every timing positive (the lease duration at least one
// second, since the Lease holds whole seconds), lease_duration > renew_deadline, and
// renew_deadline > jitter_factor·retry_period. InvalidArgument naming the offending timing.
util::Status ValidateLeaderElectionTimings(const LeaderElectionTimings& timings,
                                           double jitter_factor = 1.2);

struct LeaderElectionConfig {
  ResourceLock* lock = nullptr;  // not owned; required
  std::chrono::milliseconds lease_duration{std::chrono::seconds(15)};
  std::chrono::milliseconds renew_deadline{std::chrono::seconds(10)};
  std::chrono::milliseconds retry_period{std::chrono::seconds(2)};
  // Waits between acquire attempts are retry_period·(1 + jitter_factor·r), r in [0, 1).
  double jitter_factor = 1.2;
  bool release_on_cancel = true;
  // Runs on its own thread while this candidate leads; `stop` fires when it must stop.
  std::function<void(std::stop_token stop)> on_started_leading;
  std::function<void()> on_stopped_leading;
  // Told whenever the observed leader changes (including to this candidate).
  std::function<void(const std::string& identity)> on_new_leader;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  // Uniform in [0, 1) for the jitter; nullptr: a seeded std::mt19937_64.
  std::function<double()> random;
};

// The status a component's Run returns when it lost its lease (kAborted, "leaderelection lost",
// upstream's words).
util::Status LeadershipLost();
bool IsLeadershipLost(const util::Status& status);

class LeaderElector {
 public:
  // InvalidArgument unless the timings pass ValidateLeaderElectionTimings and a lock and
  // on_started_leading are given (client-go's validation).
  static util::StatusOr<std::unique_ptr<LeaderElector>> New(LeaderElectionConfig config);

  void Run(std::stop_token stop);

  bool IsLeader() const;
  std::string GetLeader() const;

 private:
  explicit LeaderElector(LeaderElectionConfig config);

  // Acquire loop: true once leading, false when stopped.
  bool Acquire(std::stop_token stop);
  // Renew loop: returns when stopped or when a renewal round missed its deadline.
  void Renew(std::stop_token stop);
  bool TryAcquireOrRenew(std::stop_token stop);
  // Writes a released record if this candidate holds the lease.
  void Release();
  void SetObserved(const LeaderElectionRecord& record);
  bool LeaseValidLocked(util::Clock::TimePoint now) const;
  util::Clock::Duration Jittered(util::Clock::Duration d);

  const LeaderElectionConfig config_;
  util::Clock* const clock_;
  std::mt19937_64 rng_;  // Run's thread only

  mutable std::mutex mu_;
  LeaderElectionRecord observed_;           // guarded by mu_
  util::Clock::TimePoint observed_time_{};  // guarded by mu_; local time of the last change seen
  std::string reported_leader_;             // guarded by mu_
};

}  // namespace converge::client
