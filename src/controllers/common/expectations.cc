#include "controllers/common/expectations.h"

#include <spdlog/spdlog.h>

namespace converge::controllers {

ControllerExpectations::ControllerExpectations(ExpectationsOptions options)
    : clock_(options.clock != nullptr ? options.clock : &util::RealClock()), ttl_(options.ttl) {}

bool ControllerExpectations::SatisfiedExpectations(const api::ObjectKey& controller) const {
  std::lock_guard lock(mu_);
  auto it = records_.find(controller);
  if (it == records_.end()) return true;
  const Record& r = it->second;
  if (r.adds <= 0 && r.dels <= 0) return true;
  if (clock_->Now() - r.set_at > ttl_) {
    spdlog::info("expectations of {} expired (adds {}, dels {})", controller.ToString(), r.adds,
                 r.dels);
    return true;
  }
  return false;
}

void ControllerExpectations::SetExpectations(const api::ObjectKey& controller, int adds, int dels) {
  std::lock_guard lock(mu_);
  records_[controller] = Record{adds, dels, clock_->Now(), {}};
}

void ControllerExpectations::ExpectCreations(const api::ObjectKey& controller, int adds) {
  SetExpectations(controller, adds, 0);
}

void ControllerExpectations::ExpectDeletions(const api::ObjectKey& controller,
                                             const std::vector<api::ObjectKey>& dependents) {
  std::lock_guard lock(mu_);
  Record r;
  r.pending_deletes.insert(dependents.begin(), dependents.end());
  r.dels = static_cast<int64_t>(r.pending_deletes.size());
  r.set_at = clock_->Now();
  records_[controller] = std::move(r);
}

void ControllerExpectations::CreationObserved(const api::ObjectKey& controller) {
  LowerExpectations(controller, 1, 0);
}

void ControllerExpectations::DeletionObserved(const api::ObjectKey& controller,
                                              const api::ObjectKey& dependent) {
  std::lock_guard lock(mu_);
  auto it = records_.find(controller);
  if (it == records_.end()) return;
  if (it->second.pending_deletes.erase(dependent) > 0) --it->second.dels;
}

void ControllerExpectations::LowerExpectations(const api::ObjectKey& controller, int adds,
                                               int dels) {
  std::lock_guard lock(mu_);
  auto it = records_.find(controller);
  if (it == records_.end()) return;
  it->second.adds -= adds;
  it->second.dels -= dels;
}

void ControllerExpectations::RaiseExpectations(const api::ObjectKey& controller, int adds,
                                               int dels) {
  LowerExpectations(controller, -adds, -dels);
}

void ControllerExpectations::DeleteExpectations(const api::ObjectKey& controller) {
  std::lock_guard lock(mu_);
  records_.erase(controller);
}

std::optional<ControllerExpectations::Counts> ControllerExpectations::Get(
    const api::ObjectKey& controller) const {
  std::lock_guard lock(mu_);
  auto it = records_.find(controller);
  if (it == records_.end()) return std::nullopt;
  return Counts{it->second.adds, it->second.dels, it->second.set_at};
}

}  // namespace converge::controllers
