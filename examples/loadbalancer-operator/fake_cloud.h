// FakeCloud: a CloudApi test double with state — load balancers, idempotency keys — and faults
// the test switches: an outage, failures of the next calls, and "performed, then timed out".
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstdio>
#include <map>
#include <mutex>

#include "cloud.h"

namespace lboperator {

class FakeCloud final : public CloudApi {
 public:
  // Every call fails with kUnavailable without acting.
  void SetDown(bool down) {
    std::lock_guard lock(mu_);
    down_ = down;
  }
  // The next `n` calls fail with `status` without acting.
  void FailNext(int n, util::Status status) {
    std::lock_guard lock(mu_);
    fail_next_ = n;
    fail_status_ = std::move(status);
  }
  // The next `n` mutating calls (create, update, delete) are performed and then report
  // kDeadlineExceeded, as a call whose answer was lost.
  void TimeoutAfterNext(int n) {
    std::lock_guard lock(mu_);
    timeout_after_ = n;
  }
  // New load balancers start "provisioning" until Activate.
  void SetProvisioning(bool on) {
    std::lock_guard lock(mu_);
    provisioning_ = on;
  }
  void Activate(const std::string& id) {
    std::lock_guard lock(mu_);
    if (auto it = lbs_.find(id); it != lbs_.end()) it->second.state = "active";
  }
  // Adds a load balancer directly (a leak from elsewhere, an adopted one).
  ExternalLoadBalancer Inject(ExternalLoadBalancer lb) {
    std::lock_guard lock(mu_);
    lb.id = NextIdLocked();
    if (lb.state.empty()) lb.state = "active";
    lbs_[lb.id] = lb;
    return lb;
  }
  void Remove(const std::string& id) {
    std::lock_guard lock(mu_);
    lbs_.erase(id);
  }

  std::vector<ExternalLoadBalancer> All() const {
    std::lock_guard lock(mu_);
    std::vector<ExternalLoadBalancer> out;
    for (const auto& [id, lb] : lbs_) out.push_back(lb);
    return out;
  }
  int creates() const {
    std::lock_guard lock(mu_);
    return creates_;
  }
  int create_calls() const {
    std::lock_guard lock(mu_);
    return create_calls_;
  }
  int calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

  util::StatusOr<ExternalLoadBalancer> Create(const CreateRequest& req, std::stop_token) override {
    std::lock_guard lock(mu_);
    ++create_calls_;
    if (util::Status s = FaultLocked(); !s.ok()) return s;
    ExternalLoadBalancer lb;
    if (auto k = keys_.find(req.idempotency_key);
        !req.idempotency_key.empty() && k != keys_.end() && lbs_.contains(k->second)) {
      lb = lbs_.at(k->second);
    } else {
      lb = {.id = NextIdLocked(),
            .name = req.name,
            .tags = req.tags,
            .ports = req.ports,
            .address = "100.64.0." + std::to_string(next_id_),
            .state = provisioning_ ? "provisioning" : "active"};
      lbs_[lb.id] = lb;
      if (!req.idempotency_key.empty()) keys_[req.idempotency_key] = lb.id;
      ++creates_;
    }
    if (util::Status s = TimeoutAfterLocked(); !s.ok()) return s;
    return lb;
  }

  util::StatusOr<std::vector<ExternalLoadBalancer>> ListByTag(const std::string& key,
                                                              const std::string& value,
                                                              std::stop_token) override {
    std::lock_guard lock(mu_);
    if (util::Status s = FaultLocked(); !s.ok()) return s;
    std::vector<ExternalLoadBalancer> out;
    for (const auto& [id, lb] : lbs_) {  // ids sort in creation order
      auto t = lb.tags.find(key);
      if (t != lb.tags.end() && t->second == value) out.push_back(lb);
    }
    return out;
  }

  util::StatusOr<ExternalLoadBalancer> UpdatePorts(const std::string& id,
                                                   const std::vector<Port>& ports,
                                                   std::stop_token) override {
    std::lock_guard lock(mu_);
    if (util::Status s = FaultLocked(); !s.ok()) return s;
    auto it = lbs_.find(id);
    if (it == lbs_.end()) return util::NotFound(id);
    it->second.ports = ports;
    if (util::Status s = TimeoutAfterLocked(); !s.ok()) return s;
    return it->second;
  }

  util::Status Delete(const std::string& id, std::stop_token) override {
    std::lock_guard lock(mu_);
    if (util::Status s = FaultLocked(); !s.ok()) return s;
    if (lbs_.erase(id) == 0) return util::NotFound(id);
    return TimeoutAfterLocked();
  }

 private:
  util::Status FaultLocked() {
    ++calls_;
    if (down_) return util::Unavailable("cloud answered 503");
    if (fail_next_ > 0) {
      --fail_next_;
      return fail_status_;
    }
    return util::Status::Ok();
  }
  util::Status TimeoutAfterLocked() {
    if (timeout_after_ > 0) {
      --timeout_after_;
      return util::DeadlineExceeded("cloud: timed out");
    }
    return util::Status::Ok();
  }
  std::string NextIdLocked() {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "lb-%06d", ++next_id_);
    return buf;
  }

  mutable std::mutex mu_;
  std::map<std::string, ExternalLoadBalancer> lbs_;  // guarded by mu_
  std::map<std::string, std::string> keys_;          // guarded by mu_; key → id
  bool down_ = false;                                // guarded by mu_
  int fail_next_ = 0;                                // guarded by mu_
  util::Status fail_status_;                         // guarded by mu_
  int timeout_after_ = 0;                            // guarded by mu_
  bool provisioning_ = false;                        // guarded by mu_
  int next_id_ = 0;                                  // guarded by mu_
  int creates_ = 0;                                  // guarded by mu_
  int create_calls_ = 0;                             // guarded by mu_
  int calls_ = 0;                                    // guarded by mu_
};

}  // namespace lboperator
