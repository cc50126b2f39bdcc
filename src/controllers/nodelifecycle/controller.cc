#include "controllers/nodelifecycle/controller.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "client/api_errors.h"
#include "client/index_funcs.h"
#include "util/time_format.h"

namespace converge::controllers::nodelifecycle {

namespace {

namespace json = boost::json;

const api::GroupVersionResource kNodes{"", "v1", "nodes"};
const api::GroupVersionResource kPods{"", "v1", "pods"};
const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
constexpr char kLeaseNamespace[] = "kube-node-lease";

client::ObjectReference NodeRef(const api::Object& node) {
  client::ObjectReference r;
  r.kind = "Node";
  r.name = std::string(node.name());
  r.uid = std::string(node.uid());
  r.api_version = "v1";
  return r;
}

// Sleeps until `d` has passed on `clock` or stop.
void SleepFor(util::Clock* clock, Duration d, std::stop_token stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::stop_callback wake(stop, [&] {
    std::lock_guard l(m);
    cv.notify_all();
  });
  std::unique_lock lock(m);
  auto deadline = clock->Now() + d;
  while (!stop.stop_requested() && clock->Now() < deadline) clock->WaitUntil(cv, lock, deadline);
}

}  // namespace

NodeLifecycleController::NodeLifecycleController(NodeLifecycleOptions options)
    : options_(options), clock_(options.clock ? options.clock : &util::RealClock()) {}

NodeLifecycleController::~NodeLifecycleController() = default;

util::StatusOr<std::unique_ptr<NodeLifecycleController>> NodeLifecycleController::New(
    NodeLifecycleOptions options) {
  if (!options.client || !options.informers) {
    return util::InvalidArgument("node lifecycle controller: client and informers are required");
  }
  std::unique_ptr<NodeLifecycleController> c(new NodeLifecycleController(options));
  c->nodes_ = &options.informers->InformerFor(kNodes);
  c->leases_ = &options.informers->InformerFor(kLeases);
  c->pods_ = &options.informers->InformerFor(kPods);
  if (!c->pods_->indexer().HasIndex(client::kNodeNameIndex)) {
    util::Status s = c->pods_->AddIndexers(
        {{std::string(client::kNodeNameIndex), client::FieldIndexFunc("spec.nodeName")}});
    if (!s.ok() && !c->pods_->indexer().HasIndex(client::kNodeNameIndex)) return s;
  }
  NodeLifecycleController* raw = c.get();
  client::ControllerOptions co;
  co.name = "taint-eviction";
  co.reconcile = [raw](const api::ObjectKey& key, std::stop_token stop) {
    return raw->ReconcileEvictions(key, stop);
  };
  co.workers = std::max(1, options.eviction_workers);
  co.clock = c->clock_;
  co.metrics = options.metrics;
  co.wait_for_sync = {c->nodes_, c->pods_};
  c->evictions_ = std::make_unique<client::Controller>(std::move(co));

  auto nodes_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  nodes_handler->add = [raw](const api::ObjectPtr& n, bool) {
    raw->evictions_->Enqueue({"", std::string(n->name())});
  };
  nodes_handler->update = [raw](const api::ObjectPtr& old_node, const api::ObjectPtr& n) {
    if (old_node == n) return;  // resync
    api::View a = api::Find(old_node->view(), {"spec", "taints"});
    api::View b = api::Find(n->view(), {"spec", "taints"});
    const bool same = (!a && !b) || (a && b && *a == *b);
    if (!same) raw->evictions_->Enqueue({"", std::string(n->name())});
  };
  auto pods_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  auto enqueue_pod_node = [raw](const api::ObjectPtr& p) {
    std::string_view node = api::FindString(p->view(), {"spec", "nodeName"});
    if (!node.empty()) raw->evictions_->Enqueue({"", std::string(node)});
  };
  pods_handler->add = [enqueue_pod_node](const api::ObjectPtr& p, bool) { enqueue_pod_node(p); };
  pods_handler->update = [enqueue_pod_node](const api::ObjectPtr& old_pod,
                                            const api::ObjectPtr& p) {
    if (api::FindString(old_pod->view(), {"spec", "nodeName"}) !=
        api::FindString(p->view(), {"spec", "nodeName"})) {
      enqueue_pod_node(p);
    }
  };
  // Both only enqueue node names: called inline on the informers' threads.
  auto added = c->nodes_->AddEventHandler(nodes_handler, {.inline_delivery = true});
  if (!added.ok()) return added.status();
  added = c->pods_->AddEventHandler(pods_handler, {.inline_delivery = true});
  if (!added.ok()) return added.status();
  return c;
}

void NodeLifecycleController::Run(std::stop_token stop) {
  if (!client::WaitForCacheSync(stop, {nodes_, leases_, pods_})) return;
  std::jthread evictions([this, stop] { evictions_->Run(stop); });
  std::jthread tainter([this, stop] {
    while (!stop.stop_requested()) {
      DoNoExecuteTaintingPass(stop);
      SleepFor(clock_, options_.taint_pass_period, stop);
    }
  });
  while (!stop.stop_requested()) {
    MonitorNodeHealth(stop);
    SleepFor(clock_, options_.monitor_period, stop);
  }
}

// ---- node health ----

void NodeLifecycleController::MonitorNodeHealth(std::stop_token stop) {
  const WallTime now = clock_->WallNow();
  std::unordered_map<std::string, std::string> renew;
  for (const api::ObjectPtr& lease : leases_->indexer().List()) {
    if (lease->namespace_() != kLeaseNamespace) continue;
    renew[std::string(lease->name())] =
        std::string(api::FindString(lease->view(), {"spec", "renewTime"}));
  }
  std::vector<api::ObjectPtr> nodes = nodes_->indexer().List();
  std::map<std::string, std::vector<std::string>> zone_ready;
  std::set<std::string> present;
  for (api::ObjectPtr node : nodes) {
    if (stop.stop_requested()) return;
    const std::string name(node->name());
    present.insert(name);
    NodeHealthDecision d;
    {
      std::lock_guard lock(mu_);
      d = DecideNodeHealth(*node, renew[name], health_[name], now, options_.health);
    }
    if (d.new_conditions) {
      api::Object updated = *node;
      api::EnsureObject(updated.mutable_doc(), "status")["conditions"] = *d.new_conditions;
      client::WriteOptions wo;
      wo.stop = stop;
      auto r = options_.client->UpdateStatus(kNodes, updated, wo);
      if (!r.ok()) {
        // Retried next round; forget what we saw so the decision is made again.
        if (!client::IsConflict(r.status()) && !client::IsNotFound(r.status())) {
          spdlog::warn("node-lifecycle: marking node {} Unknown: {}", name, r.status().ToString());
        }
        std::lock_guard lock(mu_);
        health_[name].ready = d.observed_ready;
        continue;
      }
      node = std::make_shared<const api::Object>(std::move(*r));
      spdlog::info("node-lifecycle: node {} stopped posting status; Ready is now Unknown", name);
    }
    if (d.observed_ready == "True" && d.current_ready != "True") {
      if (options_.node_recorder) {
        options_.node_recorder->Event(NodeRef(*node), client::kEventTypeNormal, "NodeNotReady",
                                      "Node " + name + " status is now: NodeNotReady");
      }
      MarkPodsNotReady(*node, now, stop);
    }
    zone_ready[ZoneKey(*node)].push_back(d.current_ready);

    // Taints: NoSchedule at once; NoExecute from the Ready status read this round (upstream's
    // observedReadyCondition), added through the zone's rate limiter.
    std::vector<Taint> taints = NodeTaints(*node);
    bool changed = false;
    if (auto ns = NoScheduleTaintUpdate(*node)) {
      taints = std::move(*ns);
      changed = true;
    }
    bool all_disrupted;
    {
      std::lock_guard lock(mu_);
      all_disrupted = all_fully_disrupted_;
    }
    if (!all_disrupted) {
      NoExecuteAction a = DecideNoExecute(taints, d.observed_ready, now);
      std::lock_guard lock(mu_);
      ZoneQueue& q = zones_[ZoneKey(*node)];
      switch (a.kind) {
        case NoExecuteAction::Kind::kNone: break;
        case NoExecuteAction::Kind::kAddRateLimited:
          if (q.queued.insert(name).second) q.nodes.push_back(name);
          break;
        case NoExecuteAction::Kind::kSwapNow:
        case NoExecuteAction::Kind::kRemoveNow:
          taints = std::move(a.taints);
          changed = true;
          break;
      }
      if (d.observed_ready == "True" && q.queued.erase(name)) {
        q.nodes.erase(std::remove(q.nodes.begin(), q.nodes.end(), name), q.nodes.end());
      }
    }
    if (changed) {
      util::Status s = UpdateTaints(*node, taints, stop);
      if (!s.ok() && !client::IsConflict(s) && !client::IsNotFound(s)) {
        spdlog::warn("node-lifecycle: updating the taints of node {}: {}", name, s.ToString());
      }
    }
  }
  {
    std::lock_guard lock(mu_);
    for (auto it = health_.begin(); it != health_.end();) {
      it = present.count(it->first) ? std::next(it) : health_.erase(it);
    }
  }
  HandleDisruption(zone_ready, nodes, now, stop);
}

void NodeLifecycleController::HandleDisruption(
    const std::map<std::string, std::vector<std::string>>& zone_ready,
    const std::vector<api::ObjectPtr>& nodes, WallTime now, std::stop_token stop) {
  std::map<std::string, ZoneState> states;
  for (const auto& [zone, ready] : zone_ready) {
    states[zone] = ComputeZoneState(ready, options_.unhealthy_zone_threshold);
  }
  bool all_full = !states.empty();
  for (const auto& [zone, s] : states) all_full &= s == ZoneState::kFullDisruption;
  bool was_all_full;
  {
    std::lock_guard lock(mu_);
    was_all_full = all_fully_disrupted_;
    all_fully_disrupted_ = all_full;
    for (const auto& [zone, s] : states) {
      ZoneQueue& q = zones_[zone];
      q.rate = all_full ? 0 : ZoneTaintRate(s, zone_ready.at(zone).size(), options_.rates);
      if (zone_states_[zone] != s) {
        spdlog::info("node-lifecycle: zone \"{}\" is now {}", zone, ZoneStateName(s));
      }
      zone_states_[zone] = s;
    }
    if (was_all_full && !all_full) {
      // Leaving disruption mode: every node gets a fresh grace period.
      for (auto& [name, h] : health_) {
        h.probe_timestamp = now;
        h.ready_transition_timestamp = now;
      }
    }
    if (all_full) {
      for (auto& [zone, q] : zones_) {
        q.nodes.clear();
        q.queued.clear();
      }
    }
  }
  if (all_full && !was_all_full) {
    spdlog::warn("node-lifecycle: every node is not Ready: no evictions until some node recovers");
  }
  if (!all_full) return;
  // Disruption mode: no node is evicted from.
  for (const api::ObjectPtr& node : nodes) {
    if (stop.stop_requested()) return;
    NoExecuteAction a = DecideNoExecute(NodeTaints(*node), "True", now);
    if (a.kind == NoExecuteAction::Kind::kRemoveNow) (void)UpdateTaints(*node, a.taints, stop);
  }
}

void NodeLifecycleController::DoNoExecuteTaintingPass(std::stop_token stop) {
  const WallTime now = clock_->WallNow();
  std::vector<std::string> due;
  {
    std::lock_guard lock(mu_);
    for (auto& [zone, q] : zones_) {
      if (q.last_refill != WallTime{}) {
        double elapsed = std::chrono::duration<double>(now - q.last_refill).count();
        q.tokens = std::min(1.0, q.tokens + elapsed * q.rate);
      }
      q.last_refill = now;
      while (!q.nodes.empty() && q.tokens >= 1.0) {
        due.push_back(q.nodes.front());
        q.queued.erase(q.nodes.front());
        q.nodes.erase(q.nodes.begin());
        q.tokens -= 1.0;
      }
    }
  }
  for (const std::string& name : due) {
    if (stop.stop_requested()) return;
    api::ObjectPtr node = nodes_->indexer().Get({"", name});
    if (!node) continue;
    auto taints = WithNoExecuteTaint(NodeTaints(*node), ConditionStatus(*node, "Ready"), now);
    if (!taints) continue;
    util::Status s = UpdateTaints(*node, *taints, stop);
    if (!s.ok()) {
      // Try again (the next round re-queues it from the node's state).
      if (!client::IsNotFound(s)) {
        spdlog::warn("node-lifecycle: tainting node {}: {}", name, s.ToString());
      }
      continue;
    }
    spdlog::info("node-lifecycle: node {} tainted {}:NoExecute", name, taints->back().key);
  }
}

util::Status NodeLifecycleController::UpdateTaints(const api::Object& node,
                                                   const std::vector<Taint>& taints,
                                                   std::stop_token stop) {
  api::Object updated = node;
  json::object& spec = api::EnsureObject(updated.mutable_doc(), "spec");
  if (taints.empty()) {
    spec.erase("taints");
  } else {
    spec["taints"] = TaintsJson(taints);
  }
  client::WriteOptions wo;
  wo.stop = stop;
  auto r = options_.client->Update(kNodes, updated, wo);
  return r.ok() ? util::Status() : r.status();
}

void NodeLifecycleController::MarkPodsNotReady(const api::Object& node, WallTime now,
                                               std::stop_token stop) {
  auto pods = pods_->indexer().ByIndex(client::kNodeNameIndex, node.name());
  if (!pods.ok()) return;
  for (const api::ObjectPtr& pod : *pods) {
    if (stop.stop_requested()) return;
    bool ready = false;
    if (api::ArrayView conds = api::FindArray(pod->view(), {"status", "conditions"})) {
      for (const api::View c : *conds) {
        if (c.is_object() && api::Object::GetString(c.get_object(), "type") == "Ready" &&
            api::Object::GetString(c.get_object(), "status") == "True") {
          ready = true;
        }
      }
    }
    if (!ready) continue;
    json::object cond{
        {"type", "Ready"}, {"status", "False"}, {"lastTransitionTime", util::FormatRfc3339(now)}};
    json::object patch{{"status", json::object{{"conditions", json::array{std::move(cond)}}}}};
    client::PatchOptions po;
    po.subresource = "status";
    po.stop = stop;
    auto r = options_.client->Patch(kPods, pod->key(), client::PatchType::kStrategicMerge,
                                    json::serialize(patch), po);
    if (!r.ok()) continue;
    if (options_.node_recorder) {
      options_.node_recorder->Event(*pod, client::kEventTypeWarning, "NodeNotReady",
                                    "Node is not ready");
    }
  }
}

// ---- evictions ----

client::ReconcileResult NodeLifecycleController::ReconcileEvictions(const api::ObjectKey& key,
                                                                    std::stop_token stop) {
  api::ObjectPtr node = nodes_->indexer().Get(key);
  if (!node) return client::ReconcileResult::Done();
  auto pods = pods_->indexer().ByIndex(client::kNodeNameIndex, key.name);
  if (!pods.ok()) return client::ReconcileResult::Error(pods.status());
  const WallTime now = clock_->WallNow();
  EvictionPlan plan = DecideEvictions(NodeTaints(*node), *pods, now, options_.eviction);
  for (const api::ObjectPtr& pod : plan.evict) {
    if (stop.stop_requested()) return client::ReconcileResult::Done();
    const std::string who = std::string(pod->namespace_()) + "/" + std::string(pod->name());
    if (options_.eviction_recorder) {
      options_.eviction_recorder->Event(*pod, client::kEventTypeNormal, "TaintManagerEviction",
                                        "Marking for deletion Pod " + who);
    }
    json::object cond{{"type", "DisruptionTarget"},
                      {"status", "True"},
                      {"reason", "DeletionByTaintManager"},
                      {"message", "Taint manager: deleting due to NoExecute taint"},
                      {"lastTransitionTime", util::FormatRfc3339(now)}};
    json::object patch{{"status", json::object{{"conditions", json::array{std::move(cond)}}}}};
    client::PatchOptions po;
    po.subresource = "status";
    po.stop = stop;
    (void)options_.client->Patch(kPods, pod->key(), client::PatchType::kStrategicMerge,
                                 json::serialize(patch), po);
    client::DeleteOptions del;
    del.precondition_uid = std::string(pod->uid());
    del.stop = stop;
    util::Status s = options_.client->Delete(kPods, pod->key(), del);
    if (!s.ok() && !client::IsNotFound(s) && !client::IsConflict(s)) {
      return client::ReconcileResult::Error(s.WithContext("evicting pod " + who));
    }
    spdlog::info("taint-eviction: evicted pod {} from node {}", who, key.name);
  }
  if (plan.recheck_after) return client::ReconcileResult::RequeueAfter(*plan.recheck_after);
  return client::ReconcileResult::Done();
}

// ---- registration ----

ControllerDescriptor Descriptor() {
  return {"nodelifecycle",
          [](ControllerContext& ctx) -> util::StatusOr<std::unique_ptr<RunnableController>> {
            NodeLifecycleOptions o;
            o.client = ctx.client;
            o.informers = ctx.informers;
            o.clock = ctx.clock;
            o.metrics = ctx.metrics;
            o.health.grace = ctx.node_monitor_grace_period;
            o.monitor_period = ctx.node_monitor_period;
            if (ctx.recorder) {
              o.node_recorder = ctx.recorder("node-controller");
              o.eviction_recorder = ctx.recorder("taint-eviction-controller");
            }
            auto c = NodeLifecycleController::New(o);
            if (!c.ok()) return c.status();
            return std::unique_ptr<RunnableController>(std::move(*c));
          },
          "node-controller"};
}

}  // namespace converge::controllers::nodelifecycle
