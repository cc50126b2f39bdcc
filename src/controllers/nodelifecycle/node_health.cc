#include "controllers/nodelifecycle/node_health.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "util/time_format.h"

namespace converge::controllers::nodelifecycle {

namespace json = boost::json;

namespace {

const json::object* FindCondition(const api::Object& node, std::string_view type) {
  if (const json::array* conds = api::FindArray(node.doc(), {"status", "conditions"})) {
    for (const json::value& c : *conds) {
      if (c.is_object() && api::Object::GetString(c.get_object(), "type") == type) {
        return &c.get_object();
      }
    }
  }
  return nullptr;
}

std::string NoExecuteKeyFor(std::string_view ready) {
  if (ready == "False") return std::string(kNotReadyTaint);
  if (ready == "Unknown") return std::string(kUnreachableTaint);
  return "";
}

}  // namespace

std::string ConditionStatus(const api::Object& node, std::string_view type) {
  const json::object* c = FindCondition(node, type);
  return c ? std::string(api::Object::GetString(*c, "status")) : "";
}

NodeHealthDecision DecideNodeHealth(const api::Object& node, std::string_view lease_renew_time,
                                    NodeHealth& h, WallTime now, const NodeHealthOptions& o) {
  NodeHealthDecision d;
  const json::object* ready = FindCondition(node, "Ready");
  d.observed_ready = ready ? std::string(api::Object::GetString(*ready, "status")) : "";
  const std::string heartbeat =
      ready ? std::string(api::Object::GetString(*ready, "lastHeartbeatTime")) : "";
  const WallTime created = util::ParseRfc3339(node.creation_timestamp()).value_or(now);
  if (!h.known) {
    h.known = true;
    h.probe_timestamp = ready ? now : created;
    h.ready_transition_timestamp = h.probe_timestamp;
    h.heartbeat = heartbeat;
    h.ready = d.observed_ready;
  } else {
    if (ready && heartbeat != h.heartbeat) {
      h.heartbeat = heartbeat;
      h.probe_timestamp = now;
    }
    if (d.observed_ready != h.ready) {
      h.ready = d.observed_ready;
      h.ready_transition_timestamp = now;
    }
  }
  if (!lease_renew_time.empty() && lease_renew_time != h.lease_renew) {
    auto seen = util::ParseRfc3339(h.lease_renew);
    auto renewed = util::ParseRfc3339(lease_renew_time);
    if (!seen || !renewed || *seen < *renewed) {
      h.lease_renew = std::string(lease_renew_time);
      h.probe_timestamp = now;
    }
  }
  d.current_ready = d.observed_ready;
  const Duration grace = ready ? o.grace : o.startup_grace;
  if (now <= h.probe_timestamp + grace) return d;

  // No sign of life within the grace period: the kubelet's conditions become Unknown.
  json::array conds;
  if (const json::array* existing = api::FindArray(node.doc(), {"status", "conditions"})) {
    conds = *existing;
  }
  bool changed = false;
  const std::string now_text = util::FormatRfc3339(now);
  for (std::string_view type : {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure"}) {
    json::object* current = nullptr;
    for (json::value& c : conds) {
      if (c.is_object() && api::Object::GetString(c.get_object(), "type") == type) {
        current = &c.get_object();
      }
    }
    if (!current) {
      json::object c;
      c["type"] = type;
      c["status"] = "Unknown";
      c["reason"] = "NodeStatusNeverUpdated";
      c["message"] = "Kubelet never posted node status.";
      c["lastHeartbeatTime"] = std::string(node.creation_timestamp());
      c["lastTransitionTime"] = now_text;
      conds.push_back(std::move(c));
      changed = true;
    } else if (api::Object::GetString(*current, "status") != "Unknown") {
      (*current)["status"] = "Unknown";
      (*current)["reason"] = "NodeStatusUnknown";
      (*current)["message"] = "Kubelet stopped posting node status.";
      (*current)["lastTransitionTime"] = now_text;
      changed = true;
    }
  }
  d.current_ready = "Unknown";
  if (changed) d.new_conditions = std::move(conds);
  if (h.ready != "Unknown") {
    h.ready = "Unknown";
    h.ready_transition_timestamp = now;
  }
  return d;
}

std::optional<std::vector<Taint>> NoScheduleTaintUpdate(const api::Object& node) {
  // Upstream's nodeConditionToTaintKeyStatusMap, plus unschedulable.
  static const std::vector<std::tuple<std::string_view, std::string_view, std::string_view>> kMap =
      {{"Ready", "False", "node.kubernetes.io/not-ready"},
       {"Ready", "Unknown", "node.kubernetes.io/unreachable"},
       {"MemoryPressure", "True", "node.kubernetes.io/memory-pressure"},
       {"DiskPressure", "True", "node.kubernetes.io/disk-pressure"},
       {"PIDPressure", "True", "node.kubernetes.io/pid-pressure"},
       {"NetworkUnavailable", "True", "node.kubernetes.io/network-unavailable"}};
  std::vector<std::string> want;
  for (const auto& [type, status, key] : kMap) {
    if (ConditionStatus(node, type) == status) want.emplace_back(key);
  }
  if (api::FindBool(node.doc(), {"spec", "unschedulable"})) {
    want.emplace_back("node.kubernetes.io/unschedulable");
  }
  auto managed = [&](std::string_view key) {
    if (key == "node.kubernetes.io/unschedulable") return true;
    for (const auto& entry : kMap) {
      if (std::get<2>(entry) == key) return true;
    }
    return false;
  };
  std::vector<Taint> taints = NodeTaints(node);
  std::vector<Taint> out;
  bool changed = false;
  for (const Taint& t : taints) {
    if (t.effect == kNoSchedule && managed(t.key) &&
        std::find(want.begin(), want.end(), t.key) == want.end()) {
      changed = true;  // stale
      continue;
    }
    out.push_back(t);
  }
  for (const std::string& key : want) {
    if (!HasTaint(out, key, kNoSchedule)) {
      out.push_back({key, "", std::string(kNoSchedule), ""});
      changed = true;
    }
  }
  if (!changed) return std::nullopt;
  return out;
}

NoExecuteAction DecideNoExecute(const std::vector<Taint>& taints, std::string_view ready,
                                WallTime now) {
  NoExecuteAction a;
  const bool unreachable = HasTaint(taints, kUnreachableTaint, kNoExecute);
  const bool not_ready = HasTaint(taints, kNotReadyTaint, kNoExecute);
  const std::string want = NoExecuteKeyFor(ready);
  if (want.empty()) {
    if (!unreachable && !not_ready) return a;
    a.kind = NoExecuteAction::Kind::kRemoveNow;
    for (const Taint& t : taints) {
      if (t.effect == kNoExecute && (t.key == kUnreachableTaint || t.key == kNotReadyTaint)) {
        continue;
      }
      a.taints.push_back(t);
    }
    return a;
  }
  if (HasTaint(taints, want, kNoExecute)) return a;
  if (unreachable || not_ready) {
    // The node is tainted already, for the other reason: swap at once.
    a.kind = NoExecuteAction::Kind::kSwapNow;
    a.taints = *WithNoExecuteTaint(taints, ready, now);
    return a;
  }
  a.kind = NoExecuteAction::Kind::kAddRateLimited;
  return a;
}

std::optional<std::vector<Taint>> WithNoExecuteTaint(const std::vector<Taint>& taints,
                                                     std::string_view ready, WallTime now) {
  const std::string want = NoExecuteKeyFor(ready);
  if (want.empty() || HasTaint(taints, want, kNoExecute)) return std::nullopt;
  std::vector<Taint> out;
  for (const Taint& t : taints) {
    if (t.effect == kNoExecute && (t.key == kUnreachableTaint || t.key == kNotReadyTaint)) continue;
    out.push_back(t);
  }
  out.push_back({want, "", std::string(kNoExecute), util::FormatRfc3339(now)});
  return out;
}

json::array TaintsJson(const std::vector<Taint>& taints) {
  json::array a;
  for (const Taint& t : taints) a.push_back(t.ToJson());
  return a;
}

}  // namespace converge::controllers::nodelifecycle
