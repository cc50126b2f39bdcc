#include "kubelet/heartbeats.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "client/api_errors.h"

namespace converge::kubelet {

namespace {

const api::GroupVersionResource kNodes{"", "v1", "nodes"};
const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
constexpr char kLeaseNamespace[] = "kube-node-lease";

// Retry delays after failures: quick enough to ride out a restarting API server, slow enough not
// to hammer one that is down (upstream's lease controller backs off 200 ms → 7 s).
util::Clock::Duration RetryDelay(int failures) {
  auto d = std::chrono::milliseconds(500) * (1 << std::min(failures, 5));
  return std::min<util::Clock::Duration>(d, std::chrono::seconds(10));
}

}  // namespace

NodeHeartbeats::NodeHeartbeats(NodeHeartbeatsOptions options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : &util::RealClock()),
      state_(options_.nodes.size()) {
  for (size_t i = 0; i < options_.nodes.size(); ++i) index_[options_.nodes[i].name] = i;
}

client::RestClient* NodeHeartbeats::ClientFor(size_t i) const {
  if (!options_.client_for_node) return options_.client;
  client::RestClient* c = options_.client_for_node(options_.nodes[i].name);
  return c != nullptr ? c : options_.client;
}

NodeHeartbeats::Stats NodeHeartbeats::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool NodeHeartbeats::AllRegistered() const {
  std::lock_guard lock(mu_);
  return registered_count_ == state_.size();
}

bool NodeHeartbeats::WaitRegistered(std::stop_token stop) const {
  std::unique_lock lock(mu_);
  registered_cv_.wait(lock, stop, [this] { return registered_count_ == state_.size(); });
  return registered_count_ == state_.size();
}

void NodeHeartbeats::Pause(std::string_view node) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return;
  std::lock_guard lock(mu_);
  state_[it->second].paused = true;
}

void NodeHeartbeats::Resume(std::string_view node) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return;
  std::lock_guard lock(mu_);
  NodeState& s = state_[it->second];
  if (!s.paused) return;
  s.paused = false;
  s.status_due = true;
  ScheduleLocked(it->second, clock_->WallNow());
}

bool NodeHeartbeats::Paused(std::string_view node) const {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return false;
  std::lock_guard lock(mu_);
  return state_[it->second].paused;
}

void NodeHeartbeats::ObserveNode(std::string_view node, std::string_view ready, bool exists) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return;
  std::lock_guard lock(mu_);
  NodeState& s = state_[it->second];
  if (!exists) {
    if (s.registered) spdlog::warn("kubelet: node {} was deleted; not re-registering it", node);
    return;
  }
  s.observed_ready = std::string(ready);
  if (ready != "True" && s.registered && !s.paused && !s.status_due) {
    s.status_due = true;
    ScheduleLocked(it->second, clock_->WallNow());
  }
}

void NodeHeartbeats::ScheduleLocked(size_t i, WallTime at) {
  NodeState& s = state_[i];
  if (s.in_flight) {
    if (!s.poke_at || at < *s.poke_at) s.poke_at = at;
    return;
  }
  if (s.scheduled != WallTime{} && s.scheduled <= at) return;  // an earlier tick is coming
  s.scheduled = at;
  heap_.push({at, i});
  // The workers sleep until the earliest tick: only a new earliest one changes that.
  if (heap_.top().node == i && heap_.top().at == at) cv_.notify_all();
}

WallTime NodeHeartbeats::NextSlot(size_t i, WallTime now) const {
  const auto interval = options_.renew_interval;
  const auto n = static_cast<int64_t>(std::max<size_t>(1, options_.nodes.size()));
  const auto offset = interval * static_cast<int64_t>(i) / n;
  const WallTime base = epoch_ + offset;
  if (now < base) return base;
  const int64_t k = (now - base) / interval + 1;
  return base + interval * k;
}

void NodeHeartbeats::Run(std::stop_token stop) {
  {
    std::lock_guard lock(mu_);
    epoch_ = clock_->WallNow();
    for (size_t i = 0; i < state_.size(); ++i) ScheduleLocked(i, epoch_);
  }
  std::stop_callback wake(stop, [this] {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  });
  std::vector<std::jthread> workers;
  for (int i = 1; i < std::max(1, options_.workers); ++i) {
    workers.emplace_back([this, stop] { Worker(stop); });
  }
  Worker(stop);
  for (auto& w : workers) w.join();
}

void NodeHeartbeats::Worker(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (heap_.empty()) {
      clock_->WaitUntil(cv_, lock, clock_->Now() + std::chrono::hours(1));
      continue;
    }
    Entry top = heap_.top();
    WallTime now = clock_->WallNow();
    if (top.at > now + options_.batch_window) {
      clock_->WaitUntil(cv_, lock, clock_->Now() + (top.at - now));
      continue;
    }
    heap_.pop();
    NodeState& s = state_[top.node];
    if (s.scheduled != top.at) continue;  // superseded by an earlier schedule
    s.scheduled = WallTime{};
    s.in_flight = true;
    lock.unlock();
    WallTime next = Tick(top.node, top.at, stop);
    lock.lock();
    NodeState& after = state_[top.node];
    after.in_flight = false;
    if (after.poke_at) next = std::min(next, *after.poke_at);
    after.poke_at.reset();
    ScheduleLocked(top.node, next);
  }
}

WallTime NodeHeartbeats::Tick(size_t i, WallTime at, std::stop_token stop) {
  WallTime now = clock_->WallNow();
  bool paused;
  bool registered;
  bool status_due;
  WallTime last_status;
  int register_failures;
  {
    std::lock_guard lock(mu_);
    const NodeState& s = state_[i];
    paused = s.paused;
    registered = s.registered;
    status_due = s.status_due;
    last_status = s.last_status;
    register_failures = s.register_failures;
  }
  // The slot after the one this tick was for, also when it runs early (batch_window).
  const WallTime slot_after = NextSlot(i, std::max(now, at));
  if (paused) return slot_after;
  if (!registered) {
    if (!Register(i, stop)) return now + RetryDelay(register_failures);
    std::lock_guard lock(mu_);
    status_due = state_[i].status_due;
    last_status = state_[i].last_status;
  }
  WallTime next = slot_after;
  if (!RenewLease(i, stop)) {
    next = std::min(next, now + RetryDelay(0));
  } else {
    std::lock_guard lock(mu_);
    if (!state_[i].counted) {
      state_[i].counted = true;
      ++registered_count_;
      registered_cv_.notify_all();
    }
  }
  if (status_due || now - last_status >= options_.status_report_interval) {
    if (!PostStatus(i, stop)) next = std::min(next, now + RetryDelay(0));
  }
  return next;
}

bool NodeHeartbeats::Register(size_t i, std::stop_token stop) {
  const NodeConfig& config = options_.nodes[i];
  WallTime now = clock_->WallNow();
  client::WriteOptions wo;
  wo.stop = stop;
  auto created = ClientFor(i)->Create(kNodes, "", BuildNode(config, now), wo);
  std::string uid;
  bool existed = false;
  WallTime transition = now;
  if (created.ok()) {
    uid = std::string(created->uid());
  } else if (client::IsAlreadyExists(created.status())) {
    client::GetOptions go;
    go.stop = stop;
    auto got = ClientFor(i)->Get(kNodes, {"", config.name}, go);
    if (!got.ok()) {
      std::lock_guard lock(mu_);
      ++state_[i].register_failures;
      return false;
    }
    uid = std::string(got->uid());
    existed = true;
  } else {
    std::lock_guard lock(mu_);
    if (state_[i].register_failures++ == 0) {
      spdlog::warn("kubelet: registering node {}: {}", config.name, created.status().ToString());
    }
    return false;
  }
  {
    std::lock_guard lock(mu_);
    NodeState& s = state_[i];
    s.registered = true;
    s.uid = uid;
    s.register_failures = 0;
    s.ready_transition = transition;
    s.last_status = now;
    s.status_due = existed;
    if (!existed) s.observed_ready = "True";
    ++stats_.registrations;
  }
  if (options_.on_event) {
    options_.on_event(config.name, uid, "Starting", "Starting kubelet.");
    if (!existed) {
      options_.on_event(config.name, uid, "NodeReady",
                        "Node " + config.name + " status is now: NodeReady");
    }
  }
  return true;
}

bool NodeHeartbeats::RenewLease(size_t i, std::stop_token stop) {
  const std::string& name = options_.nodes[i].name;
  std::string uid;
  std::string rv;
  {
    std::lock_guard lock(mu_);
    uid = state_[i].uid;
    rv = state_[i].lease_rv;
  }
  client::WriteOptions wo;
  wo.stop = stop;
  client::GetOptions go;
  go.stop = stop;
  const api::ObjectKey key{kLeaseNamespace, name};
  util::Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    WallTime now = clock_->WallNow();
    if (rv.empty()) {
      auto created =
          ClientFor(i)->Create(kLeases, kLeaseNamespace,
                               BuildLease(name, uid, "", options_.lease_duration_seconds, now), wo);
      if (created.ok()) {
        rv = std::string(created->resource_version());
        last = util::Status();
        break;
      }
      last = created.status();
      if (!client::IsAlreadyExists(last)) break;
      auto got = ClientFor(i)->Get(kLeases, key, go);
      if (!got.ok()) {
        last = got.status();
        break;
      }
      rv = std::string(got->resource_version());
    }
    auto updated = ClientFor(i)->Update(
        kLeases, BuildLease(name, uid, rv, options_.lease_duration_seconds, now), wo);
    if (updated.ok()) {
      rv = std::string(updated->resource_version());
      last = util::Status();
      break;
    }
    last = updated.status();
    if (client::IsNotFound(last)) {
      rv.clear();
      continue;
    }
    if (!client::IsConflict(last)) break;
    auto got = ClientFor(i)->Get(kLeases, key, go);
    if (!got.ok()) {
      last = got.status();
      break;
    }
    rv = std::string(got->resource_version());
  }
  std::lock_guard lock(mu_);
  if (last.ok()) {
    state_[i].lease_rv = rv;
    ++stats_.lease_renewals;
    return true;
  }
  state_[i].lease_rv.clear();
  if (stats_.lease_failures++ % 1000 == 0 && !stop.stop_requested()) {
    spdlog::warn("kubelet: renewing the lease of node {}: {}", name, last.ToString());
  }
  return false;
}

bool NodeHeartbeats::PostStatus(size_t i, std::stop_token stop) {
  const NodeConfig& config = options_.nodes[i];
  WallTime now = clock_->WallNow();
  WallTime transition;
  bool recovering;
  std::string uid;
  {
    std::lock_guard lock(mu_);
    NodeState& s = state_[i];
    recovering = s.observed_ready != "True";
    if (recovering) s.ready_transition = now;
    transition = s.ready_transition;
    uid = s.uid;
  }
  client::PatchOptions po;
  po.subresource = "status";
  po.stop = stop;
  auto r = ClientFor(i)->Patch(kNodes, {"", config.name}, client::PatchType::kStrategicMerge,
                               NodeStatusPatch(now, transition), po);
  {
    std::lock_guard lock(mu_);
    NodeState& s = state_[i];
    if (!r.ok()) {
      if (stats_.status_failures++ % 1000 == 0 && !stop.stop_requested()) {
        spdlog::warn("kubelet: posting the status of node {}: {}", config.name,
                     r.status().ToString());
      }
      return false;
    }
    ++stats_.status_posts;
    s.status_due = false;
    s.last_status = now;
    s.observed_ready = "True";
  }
  if (recovering && options_.on_event) {
    options_.on_event(config.name, uid, "NodeReady",
                      "Node " + config.name + " status is now: NodeReady");
  }
  return true;
}

}  // namespace converge::kubelet
