#include "sweeper.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>

namespace lboperator {

std::vector<ExternalLoadBalancer> FindOrphans(const std::vector<ExternalLoadBalancer>& managed,
                                              const std::set<std::string>& live_uids,
                                              const std::string& ns) {
  std::vector<ExternalLoadBalancer> out;
  for (const ExternalLoadBalancer& lb : managed) {
    auto uid = lb.tags.find(kTagUid);
    if (uid == lb.tags.end()) continue;  // not made by us after all: never touch it
    if (!ns.empty()) {
      auto object = lb.tags.find(kTagObject);
      if (object == lb.tags.end() || !object->second.starts_with(ns + "/")) continue;
    }
    if (!live_uids.contains(uid->second)) out.push_back(lb);
  }
  return out;
}

OrphanSweeper::OrphanSweeper(OrphanSweeperOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()) {}

int OrphanSweeper::SweepOnce(std::stop_token stop) {
  if (!options_.informer->HasSynced()) return 0;
  // First the cloud, then the cache (see the header for why this order).
  util::StatusOr<std::vector<ExternalLoadBalancer>> managed =
      options_.cloud->ListByTag(kTagManagedBy, kManagedByValue, stop);
  if (!managed.ok()) {
    spdlog::info("orphan sweep: listing failed ({}); next time", managed.status().ToString());
    return 0;
  }
  std::set<std::string> live;
  for (const api::ObjectPtr& obj : options_.informer->indexer().List()) {
    live.insert(std::string(obj->uid()));
  }
  int deleted = 0;
  for (const ExternalLoadBalancer& lb : FindOrphans(*managed, live, options_.ns)) {
    util::Status s = options_.cloud->Delete(lb.id, stop);
    if (s.ok() || s.code() == util::Code::kNotFound) {
      spdlog::warn("orphan sweep: deleted {} (object {} uid {} is gone)", lb.id,
                   lb.tags.contains(kTagObject) ? lb.tags.at(kTagObject) : "?",
                   lb.tags.at(kTagUid));
      ++deleted;
    } else {
      spdlog::info("orphan sweep: deleting {} failed ({}); next time", lb.id, s.ToString());
    }
  }
  return deleted;
}

void OrphanSweeper::Run(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::stop_callback wake(stop, [&] {
    std::lock_guard lock(mu);
    cv.notify_all();
  });
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mu);
      const util::Clock::TimePoint deadline = clock_->Now() + options_.interval;
      while (!stop.stop_requested() && clock_->Now() < deadline) {
        clock_->WaitUntil(cv, lock, deadline);
      }
    }
    if (stop.stop_requested()) return;
    SweepOnce(stop);
  }
}

}  // namespace lboperator
