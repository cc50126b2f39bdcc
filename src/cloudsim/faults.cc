#include "cloudsim/faults.h"

#include <boost/json.hpp>

#include <string>

namespace converge::cloudsim {

namespace json = boost::json;

FaultInjector::FaultInjector(FaultInjectorOptions options)
    : clock_(options.clock != nullptr ? options.clock : &util::RealClock()),
      config_(options.config),
      rng_(options.seed) {}

bool FaultInjector::InOutageLocked() const {
  return config_.outage || clock_->Now() < outage_until_;
}

CallFaults FaultInjector::Next(bool is_create) {
  std::lock_guard lock(mu_);
  CallFaults f;
  if (InOutageLocked()) {
    ++counters_.outage_rejections;
    f.fail_status = 503;
    return f;
  }
  f.latency = config_.latency;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  if (config_.error_burst > 0) {
    --config_.error_burst;
    static constexpr int kBurstCodes[] = {500, 502, 503};
    f.fail_status = kBurstCodes[burst_seq_++ % 3];
  } else if (config_.error_probability > 0 && uniform(rng_) < config_.error_probability) {
    f.fail_status = 503;
  }
  if (f.fail_status != 0) {
    ++counters_.injected_errors;
    return f;
  }
  if (is_create && config_.timeout_next_creates > 0) {
    --config_.timeout_next_creates;
    ++counters_.injected_timeouts;
    f.hang_after = config_.hang;
  } else if (config_.timeout_after_action_probability > 0 &&
             uniform(rng_) < config_.timeout_after_action_probability) {
    ++counters_.injected_timeouts;
    f.hang_after = config_.hang;
  }
  return f;
}

FaultConfig FaultInjector::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

void FaultInjector::Set(const FaultConfig& config) {
  std::lock_guard lock(mu_);
  config_ = config;
}

void FaultInjector::OutageFor(util::Clock::Duration d) {
  std::lock_guard lock(mu_);
  outage_until_ = clock_->Now() + d;
}

namespace {

// A number as a double (JSON integers and doubles alike); nullopt for anything else.
std::optional<double> Number(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  if (v.is_double()) return v.as_double();
  return std::nullopt;
}

}  // namespace

util::Status FaultInjector::Patch(const json::object& patch) {
  std::lock_guard lock(mu_);
  FaultConfig c = config_;
  std::optional<util::Clock::TimePoint> outage_until;
  for (const auto& [key, value] : patch) {
    if (key == "outage") {
      if (!value.is_bool()) return util::InvalidArgument("outage: must be a boolean");
      c.outage = value.as_bool();
      continue;
    }
    std::optional<double> n = Number(value);
    if (!n || *n < 0) return util::InvalidArgument(std::string(key) + ": must be a number >= 0");
    if (key == "latencyMs") {
      c.latency = std::chrono::milliseconds(static_cast<int64_t>(*n));
    } else if (key == "hangMs") {
      c.hang = std::chrono::milliseconds(static_cast<int64_t>(*n));
    } else if (key == "timeoutAfterActionProbability" || key == "errorProbability") {
      if (*n > 1) return util::InvalidArgument(std::string(key) + ": must be in [0, 1]");
      (key == "errorProbability" ? c.error_probability : c.timeout_after_action_probability) = *n;
    } else if (key == "errorBurst") {
      c.error_burst = static_cast<int64_t>(*n);
    } else if (key == "timeoutNextCreates") {
      c.timeout_next_creates = static_cast<int64_t>(*n);
    } else if (key == "outageSeconds") {
      outage_until = clock_->Now() + std::chrono::duration_cast<util::Clock::Duration>(
                                         std::chrono::duration<double>(*n));
    } else {
      return util::InvalidArgument("unknown fault: " + std::string(key));
    }
  }
  config_ = c;
  if (outage_until) outage_until_ = *outage_until;
  return util::Status::Ok();
}

json::object FaultInjector::ToJson() const {
  std::lock_guard lock(mu_);
  const util::Clock::Duration remaining = outage_until_ - clock_->Now();
  return json::object{
      {"latencyMs", config_.latency.count()},
      {"hangMs", config_.hang.count()},
      {"timeoutAfterActionProbability", config_.timeout_after_action_probability},
      {"errorProbability", config_.error_probability},
      {"errorBurst", config_.error_burst},
      {"timeoutNextCreates", config_.timeout_next_creates},
      {"outage", config_.outage},
      {"outageRemainingMs",
       remaining > util::Clock::Duration::zero()
           ? std::chrono::duration_cast<std::chrono::milliseconds>(remaining).count()
           : 0},
  };
}

FaultInjector::Counters FaultInjector::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

}  // namespace converge::cloudsim
