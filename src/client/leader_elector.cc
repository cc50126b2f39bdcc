#include "client/leader_elector.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "client/api_errors.h"
#include "client/wait.h"
#include "util/time_format.h"

namespace converge::client {
namespace json = boost::json;

namespace {

const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};

util::Clock::WallTime ParseTime(std::string_view s) {
  std::optional<util::Clock::WallTime> t = util::ParseRfc3339(s);
  return t ? *t : util::Clock::WallTime{};
}

}  // namespace

// ---- LeaseLock ----

LeaderElectionRecord LeaseLock::RecordFromLease(const api::Object& lease) {
  LeaderElectionRecord r;
  const json::object& doc = lease.doc();
  r.holder_identity = std::string(api::FindString(doc, {"spec", "holderIdentity"}));
  r.lease_duration_seconds = api::FindInt(doc, {"spec", "leaseDurationSeconds"});
  r.acquire_time = ParseTime(api::FindString(doc, {"spec", "acquireTime"}));
  r.renew_time = ParseTime(api::FindString(doc, {"spec", "renewTime"}));
  r.leader_transitions = api::FindInt(doc, {"spec", "leaseTransitions"});
  return r;
}

json::object LeaseLock::LeaseSpec(const LeaderElectionRecord& r) {
  return json::object{{"holderIdentity", r.holder_identity},
                      {"leaseDurationSeconds", r.lease_duration_seconds},
                      {"acquireTime", util::FormatRfc3339Micro(r.acquire_time)},
                      {"renewTime", util::FormatRfc3339Micro(r.renew_time)},
                      {"leaseTransitions", r.leader_transitions}};
}

util::StatusOr<LeaderElectionRecord> LeaseLock::Get(std::stop_token stop) {
  CONVERGE_ASSIGN_OR_RETURN(api::Object lease, options_.client->Get(kLeases, options_.lease,
                                                                    {.stop = std::move(stop),
                                                                     .timeout = options_.timeout}));
  LeaderElectionRecord r = RecordFromLease(lease);
  std::lock_guard lock(mu_);
  last_ = std::move(lease);
  have_last_ = true;
  return r;
}

util::Status LeaseLock::Create(const LeaderElectionRecord& record, std::stop_token stop) {
  api::Object lease;
  lease.SetGvk({"coordination.k8s.io", "v1", "Lease"});
  lease.set_namespace(options_.lease.ns);
  lease.set_name(options_.lease.name);
  lease.mutable_doc()["spec"] = LeaseSpec(record);
  CONVERGE_ASSIGN_OR_RETURN(
      api::Object created,
      options_.client->Create(kLeases, options_.lease.ns, lease,
                              {.stop = std::move(stop), .timeout = options_.timeout}));
  std::lock_guard lock(mu_);
  last_ = std::move(created);
  have_last_ = true;
  return util::Status();
}

util::Status LeaseLock::Update(const LeaderElectionRecord& record, std::stop_token stop) {
  api::Object lease;
  {
    std::lock_guard lock(mu_);
    if (!have_last_) return util::FailedPrecondition("lease not initialized; call Get or Create");
    lease = last_;  // carries metadata.resourceVersion: the update is conditional
  }
  lease.mutable_doc()["spec"] = LeaseSpec(record);
  CONVERGE_ASSIGN_OR_RETURN(
      api::Object updated,
      options_.client->Update(kLeases, lease,
                              {.stop = std::move(stop), .timeout = options_.timeout}));
  std::lock_guard lock(mu_);
  last_ = std::move(updated);
  return util::Status();
}

// ---- LeaderElector ----

util::Status ValidateLeaderElectionTimings(const LeaderElectionTimings& t, double jitter_factor) {
  using std::chrono::milliseconds;
  if (t.lease_duration < std::chrono::seconds(1)) {
    return util::InvalidArgument("leader election: the lease duration (" +
                                 std::to_string(t.lease_duration.count()) +
                                 "ms) must be at least 1s");
  }
  if (t.renew_deadline <= milliseconds(0)) {
    return util::InvalidArgument("leader election: the renew deadline must be greater than zero");
  }
  if (t.retry_period <= milliseconds(0)) {
    return util::InvalidArgument("leader election: the retry period must be greater than zero");
  }
  if (jitter_factor < 0) {
    return util::InvalidArgument("leader election: the jitter factor must not be negative");
  }
  if (t.lease_duration <= t.renew_deadline) {
    return util::InvalidArgument("leader election: the lease duration (" +
                                 std::to_string(t.lease_duration.count()) +
                                 "ms) must be greater than the renew deadline (" +
                                 std::to_string(t.renew_deadline.count()) + "ms)");
  }
  if (static_cast<double>(t.renew_deadline.count()) <=
      jitter_factor * static_cast<double>(t.retry_period.count())) {
    return util::InvalidArgument(
        "leader election: the renew deadline (" + std::to_string(t.renew_deadline.count()) +
        "ms) must be greater than the retry period (" + std::to_string(t.retry_period.count()) +
        "ms) times the jitter factor (" + std::to_string(jitter_factor) + ")");
  }
  return util::Status();
}

util::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::New(LeaderElectionConfig config) {
  if (config.lock == nullptr) return util::InvalidArgument("leader election: a lock is required");
  if (!config.on_started_leading) {
    return util::InvalidArgument("leader election: on_started_leading is required");
  }
  CONVERGE_RETURN_IF_ERROR(ValidateLeaderElectionTimings({.lease_duration = config.lease_duration,
                                                          .renew_deadline = config.renew_deadline,
                                                          .retry_period = config.retry_period},
                                                         config.jitter_factor));
  return std::unique_ptr<LeaderElector>(new LeaderElector(std::move(config)));
}

LeaderElector::LeaderElector(LeaderElectionConfig config)
    : config_(std::move(config)),
      clock_(config_.clock != nullptr ? config_.clock : &util::RealClock()),
      rng_(std::random_device{}()) {}

bool LeaderElector::IsLeader() const {
  std::lock_guard lock(mu_);
  return observed_.holder_identity == config_.lock->Identity();
}

std::string LeaderElector::GetLeader() const {
  std::lock_guard lock(mu_);
  return observed_.holder_identity;
}

void LeaderElector::SetObserved(const LeaderElectionRecord& record) {
  std::string new_leader;
  {
    std::lock_guard lock(mu_);
    observed_ = record;
    observed_time_ = clock_->Now();
    if (record.holder_identity != reported_leader_) {
      reported_leader_ = record.holder_identity;
      new_leader = record.holder_identity;
    }
  }
  if (!new_leader.empty() && config_.on_new_leader) config_.on_new_leader(new_leader);
}

bool LeaderElector::LeaseValidLocked(util::Clock::TimePoint now) const {
  return observed_time_ + std::chrono::seconds(observed_.lease_duration_seconds) > now;
}

util::Clock::Duration LeaderElector::Jittered(util::Clock::Duration d) {
  if (config_.jitter_factor <= 0) return d;
  double r = config_.random ? config_.random() : std::uniform_real_distribution<double>(0, 1)(rng_);
  return d +
         std::chrono::duration_cast<util::Clock::Duration>(std::chrono::duration<double, std::nano>(
             static_cast<double>(d.count()) * config_.jitter_factor * r));
}

bool LeaderElector::TryAcquireOrRenew(std::stop_token stop) {
  const util::Clock::TimePoint now = clock_->Now();
  const util::Clock::WallTime wall_now = clock_->WallNow();
  const std::string me = config_.lock->Identity();
  LeaderElectionRecord desired{
      .holder_identity = me,
      .lease_duration_seconds =
          std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count(),
      .acquire_time = wall_now,
      .renew_time = wall_now};

  // 1. Fast path: the leader renews optimistically against the version it last wrote.
  {
    std::unique_lock lock(mu_);
    if (observed_.holder_identity == me && LeaseValidLocked(now)) {
      desired.acquire_time = observed_.acquire_time;
      desired.leader_transitions = observed_.leader_transitions;
      lock.unlock();
      if (config_.lock->Update(desired, stop).ok()) {
        SetObserved(desired);
        return true;
      }
      // Fall back to reading the lease.
    }
  }

  // 2. Read (or create) the record.
  util::StatusOr<LeaderElectionRecord> current = config_.lock->Get(stop);
  if (!current.ok()) {
    if (!IsNotFound(current.status())) {
      spdlog::warn("leader election: reading {}: {}", config_.lock->Describe(),
                   current.status().ToString());
      return false;
    }
    if (util::Status s = config_.lock->Create(desired, stop); !s.ok()) {
      spdlog::warn("leader election: creating {}: {}", config_.lock->Describe(), s.ToString());
      return false;
    }
    SetObserved(desired);
    return true;
  }

  // 3. Someone else holds a lease that has not expired by our clock: wait.
  bool is_leader;
  {
    std::unique_lock lock(mu_);
    if (!(*current == observed_)) {
      lock.unlock();
      SetObserved(*current);  // a change: restart the expiry clock from now
      lock.lock();
    }
    is_leader = observed_.holder_identity == me;
    if (!current->holder_identity.empty() && LeaseValidLocked(now) && !is_leader) return false;
  }

  // 4. Take or keep it.
  if (is_leader) {
    desired.acquire_time = current->acquire_time;
    desired.leader_transitions = current->leader_transitions;
  } else {
    desired.leader_transitions = current->leader_transitions + 1;
  }
  if (util::Status s = config_.lock->Update(desired, stop); !s.ok()) {
    if (!IsConflict(s)) {
      spdlog::warn("leader election: updating {}: {}", config_.lock->Describe(), s.ToString());
    }
    return false;
  }
  SetObserved(desired);
  return true;
}

bool LeaderElector::Acquire(std::stop_token stop) {
  for (;;) {
    if (stop.stop_requested()) return false;
    if (TryAcquireOrRenew(stop)) {
      spdlog::info("leader election: {} acquired {}", config_.lock->Identity(),
                   config_.lock->Describe());
      return true;
    }
    if (!SleepFor(*clock_, Jittered(config_.retry_period), stop)) return false;
  }
}

void LeaderElector::Renew(std::stop_token stop) {
  for (;;) {
    // One renewal round: retry every retry_period until it succeeds or the deadline passes.
    const util::Clock::TimePoint deadline = clock_->Now() + config_.renew_deadline;
    bool renewed = false;
    while (!stop.stop_requested()) {
      if (TryAcquireOrRenew(stop) && clock_->Now() < deadline) {
        renewed = true;
        break;
      }
      util::Clock::TimePoint now = clock_->Now();
      if (now >= deadline) break;
      SleepUntil(*clock_, std::min(deadline, now + config_.retry_period), stop);
    }
    if (stop.stop_requested()) return;
    if (!renewed) {
      spdlog::error("leader election: {} failed to renew {} within {}ms; stepping down",
                    config_.lock->Identity(), config_.lock->Describe(),
                    config_.renew_deadline.count());
      return;
    }
    if (!SleepFor(*clock_, config_.retry_period, stop)) return;
  }
}

void LeaderElector::Release() {
  if (!IsLeader()) return;
  // The lease's latest version, so that the release is not refused as a conflict — and only if
  // it is still ours: a successor that took over after we missed our renew deadline keeps it.
  util::StatusOr<LeaderElectionRecord> current = config_.lock->Get({});
  if (!current.ok() || current->holder_identity != config_.lock->Identity()) return;
  util::Clock::WallTime wall_now = clock_->WallNow();
  LeaderElectionRecord released{.holder_identity = "",
                                .lease_duration_seconds = 1,
                                .acquire_time = wall_now,
                                .renew_time = wall_now};
  {
    std::lock_guard lock(mu_);
    released.leader_transitions = observed_.leader_transitions;
  }
  if (util::Status s = config_.lock->Update(released, {}); !s.ok()) {
    spdlog::warn("leader election: releasing {}: {}", config_.lock->Describe(), s.ToString());
    return;
  }
  SetObserved(released);
}

util::Status LeadershipLost() {
  return util::Aborted("leaderelection lost");
}

bool IsLeadershipLost(const util::Status& status) {
  return status.code() == util::Code::kAborted && status.message() == "leaderelection lost";
}

void LeaderElector::Run(std::stop_token stop) {
  if (Acquire(stop)) {
    std::stop_source leading;
    std::jthread work([this, token = leading.get_token()] { config_.on_started_leading(token); });
    Renew(stop);
    // Leadership ends, in this order: the leading work is told to stop and joined (nothing acts
    // for this candidate any more), the lease is released, on_stopped_leading is told.
    leading.request_stop();
    work.join();
    if (config_.release_on_cancel) Release();
  }
  if (config_.on_stopped_leading) config_.on_stopped_leading();
}

}  // namespace converge::client
