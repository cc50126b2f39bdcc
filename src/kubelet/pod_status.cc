#include "kubelet/pod_status.h"

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>

#include "util/time_format.h"

namespace converge::kubelet {

namespace {

namespace json = boost::json;

const std::set<std::string_view>& KubeletConditionTypes() {
  static const std::set<std::string_view> types = {"PodReadyToStartContainers", "Initialized",
                                                   "Ready", "ContainersReady", "PodScheduled"};
  return types;
}

std::string Time(WallTime t) {
  return util::FormatRfc3339(t);
}

json::object Condition(std::string_view type, const ConditionState& c) {
  json::object o;
  o["type"] = type;
  o["status"] = c.status ? "True" : "False";
  o["lastProbeTime"] = nullptr;
  o["lastTransitionTime"] = Time(c.last_transition);
  if (!c.reason().empty()) o["reason"] = c.reason();
  if (!c.message().empty()) o["message"] = c.message();
  return o;
}

json::object Terminated(const TerminatedState& t) {
  json::object o;
  o["exitCode"] = t.exit_code;
  o["reason"] = t.reason;
  o["startedAt"] = Time(t.started_at);
  o["finishedAt"] = Time(t.finished_at);
  if (!t.container_id.empty()) o["containerID"] = t.container_id;
  return o;
}

json::object ContainerStatus(const PodMachine& m, const ContainerRun& c) {
  json::object s;
  s["name"] = c.spec.name.str();
  const bool ever_started = c.instance > 0;
  s["image"] = ever_started && !c.image_ref.empty() ? c.image_ref.str() : c.spec.image.str();
  s["imageID"] = ever_started ? c.image_id.str() : std::string();
  if (ever_started) {
    if (std::string id = m.ContainerId(c); !id.empty()) s["containerID"] = std::move(id);
  }
  json::object state;
  if (c.running()) {
    json::object running;
    running["startedAt"] = Time(c.started_at);
    state["running"] = std::move(running);
  } else if (c.terminated) {
    state["terminated"] = Terminated(*c.terminated);
  } else {
    json::object waiting;
    waiting["reason"] = c.waiting_reason.empty() ? "ContainerCreating" : c.waiting_reason.str();
    if (c.waiting_message && !c.waiting_message->empty()) waiting["message"] = *c.waiting_message;
    state["waiting"] = std::move(waiting);
  }
  s["state"] = std::move(state);
  json::object last;
  if (c.last_terminated) last["terminated"] = Terminated(*c.last_terminated);
  s["lastState"] = std::move(last);
  bool ready = c.running() && c.ready;
  if (c.init && !c.spec.sidecar) ready = c.succeeded();
  if (c.init && c.spec.sidecar) ready = c.running();
  s["ready"] = ready;
  s["restartCount"] = c.restart_count;
  s["started"] = c.running();
  return s;
}

json::array IpList(const std::string& ip) {
  json::array a;
  if (!ip.empty()) a.push_back(json::object{{"ip", ip}});
  return a;
}

bool IsEmpty(api::View v) {
  switch (v.kind()) {
    case json::kind::null: return true;
    case json::kind::string: return v.as_string().empty();
    case json::kind::object: return v.as_object().empty();
    case json::kind::array: return v.as_array().empty();
    default: return false;
  }
}

// Whether `v` is empty once its empty members are dropped ({"a": {"b": ""}} is).
bool IsDeepEmpty(api::View v) {
  if (IsEmpty(v)) return true;
  api::ObjectView o = v.if_object();
  if (!o) return false;
  for (api::Member m : o) {
    if (!IsDeepEmpty(m.value())) return false;
  }
  return true;
}

// Feeds the canonical form of JSON values to a 64-bit hash as tokens (a tag per kind, then the
// value), without building the canonical text: the kubelet fingerprints every status it builds
// and every pod it sees. Each token is mixed in order, so the structure is part of the hash
// ({"a":"bc"} and {"ab":"c"}, ["a","b"] and ["ab"] differ).
class CanonicalHasher {
 public:
  uint64_t hash() const { return h_; }

  void Value(api::View v) {
    switch (v.kind()) {
      case json::kind::object: Object(v.as_object(), {}); break;
      case json::kind::array:
        Mix('[');
        for (api::View e : v.as_array()) Value(e);
        Mix(']');
        break;
      case json::kind::string: String('s', v.as_string()); break;
      case json::kind::int64:
        Mix('n');
        Mix(static_cast<uint64_t>(v.as_int64()));
        break;
      case json::kind::uint64: {
        // An unsigned value an int64 can hold is written the same way: they hash alike.
        const uint64_t u = *v.if_uint64();
        Mix(u <= static_cast<uint64_t>(INT64_MAX) ? 'n' : 'u');
        Mix(u);
        break;
      }
      case json::kind::double_: {
        uint64_t bits;
        const double d = *v.to_double();
        std::memcpy(&bits, &d, sizeof bits);
        Mix('d');
        Mix(bits);
        break;
      }
      case json::kind::bool_: Mix(v.as_bool() ? 't' : 'f'); break;
      case json::kind::null: Mix('z'); break;
    }
  }

  // `o` with its members sorted by key, deep-empty members and the member `skip` (unless "") left
  // out.
  void Object(api::ObjectView o, std::string_view skip) {
    boost::container::small_vector<api::Member, 16> members;
    for (api::Member m : o) {
      if ((skip.empty() || m.key() != skip) && !IsDeepEmpty(m.value())) members.push_back(m);
    }
    std::sort(members.begin(), members.end(),
              [](const api::Member& a, const api::Member& b) { return a.key() < b.key(); });
    Mix('{');
    for (const api::Member& m : members) {
      String('k', m.key());
      Value(m.value());
    }
    Mix('}');
  }

  void String(char tag, std::string_view s) {
    Mix(tag);
    Mix(s.size());
    Mix(std::hash<std::string_view>{}(s));
  }

  void Mix(uint64_t v) { h_ = std::rotl(h_ ^ v, 27) * 0x9e3779b97f4a7c15ULL; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

uint64_t CanonicalHash(const json::value& v) {
  CanonicalHasher h;
  h.Value(api::View(v));
  return h.hash();
}

json::object BuildPodStatus(const PodMachine& m, std::string_view pod_scheduled_time) {
  json::object st;
  auto scheduled = [&](WallTime fallback) {
    json::object c;
    c["type"] = "PodScheduled";
    c["status"] = "True";
    c["lastProbeTime"] = nullptr;
    c["lastTransitionTime"] =
        pod_scheduled_time.empty() ? Time(fallback) : std::string(pod_scheduled_time);
    return c;
  };
  if (!m.start_time()) {
    // Rejected at admission (or not yet through it).
    st["conditions"] = json::array{scheduled(m.decided_at())};
    st["phase"] = std::string(m.phase());
    if (!m.reason().empty()) st["reason"] = m.reason();
    if (!m.message().empty()) st["message"] = m.message();
    return st;
  }
  json::array conds;
  conds.push_back(Condition("PodReadyToStartContainers", m.ready_to_start()));
  conds.push_back(Condition("Initialized", m.initialized()));
  conds.push_back(Condition("Ready", m.ready()));
  conds.push_back(Condition("ContainersReady", m.containers_ready()));
  conds.push_back(scheduled(*m.start_time()));
  st["conditions"] = std::move(conds);

  json::array statuses;
  for (const ContainerRun& c : m.containers()) statuses.push_back(ContainerStatus(m, c));
  st["containerStatuses"] = std::move(statuses);
  st["hostIP"] = m.host_ip();
  st["hostIPs"] = IpList(m.host_ip());
  if (!m.init_containers().empty()) {
    json::array inits;
    for (const ContainerRun& c : m.init_containers()) inits.push_back(ContainerStatus(m, c));
    st["initContainerStatuses"] = std::move(inits);
  }
  st["phase"] = std::string(m.phase());
  if (!m.pod_ip().empty()) {
    st["podIP"] = m.pod_ip();
    st["podIPs"] = IpList(m.pod_ip());
  }
  st["startTime"] = Time(*m.start_time());
  if (!m.reason().empty()) st["reason"] = m.reason();
  if (!m.message().empty()) st["message"] = m.message();
  return st;
}

std::string BuildStatusPatch(std::string_view uid, const json::object& status) {
  json::object st = status;
  if (json::value* conds = st.if_contains("conditions"); conds && conds->is_array()) {
    json::array order;
    for (json::value& c : conds->get_array()) {
      json::object& cond = c.as_object();
      order.push_back(json::object{{"type", cond.at("type")}});
      // Conditions merge by type: a condition that had a reason or message (Ready False,
      // ContainersNotReady) and has none now (Ready True) must clear them, as the null members
      // of upstream's two-way merge patch do.
      for (const char* key : {"reason", "message"}) {
        if (!cond.contains(key)) cond[key] = nullptr;
      }
    }
    st["$setElementOrder/conditions"] = std::move(order);
  }
  // Clear what an earlier status may have set and this one does not.
  for (const char* key : {"reason", "message"}) {
    if (!st.contains(key)) st[key] = nullptr;
  }
  json::object patch;
  patch["metadata"] = json::object{{"uid", uid}};
  patch["status"] = std::move(st);
  return json::serialize(patch);
}

uint64_t StatusFingerprint(api::ObjectView status) {
  // The canonical form of the status reduced to these members (sorted: the hasher's order) and
  // the kubelet's conditions sorted by type, each without lastProbeTime.
  static constexpr std::string_view kMembers[] = {"conditions",
                                                  "containerStatuses",
                                                  "hostIP",
                                                  "hostIPs",
                                                  "initContainerStatuses",
                                                  "message",
                                                  "phase",
                                                  "podIP",
                                                  "podIPs",
                                                  "reason",
                                                  "startTime"};
  CanonicalHasher h;
  h.Mix('{');
  for (std::string_view key : kMembers) {
    if (key == "conditions") {
      boost::container::small_vector<api::ObjectView, 8> owned;
      for (api::View c : status.if_contains(key).if_array()) {
        api::ObjectView cond = c.if_object();
        if (cond && KubeletConditionTypes().count(api::GetString(cond, "type"))) {
          owned.push_back(cond);
        }
      }
      if (owned.empty()) continue;
      std::sort(owned.begin(), owned.end(), [](api::ObjectView a, api::ObjectView b) {
        return api::GetString(a, "type") < api::GetString(b, "type");
      });
      h.String('k', key);
      h.Mix('[');
      for (api::ObjectView c : owned) h.Object(c, "lastProbeTime");
      h.Mix(']');
      continue;
    }
    api::View v = status.if_contains(key);
    if (!v || IsDeepEmpty(v)) continue;
    h.String('k', key);
    h.Value(v);
  }
  h.Mix('}');
  return h.hash();
}

std::string PodScheduledTime(api::ObjectView status) {
  for (api::View c : api::FindArray(status, {"conditions"})) {
    if (api::GetString(c.if_object(), "type") == "PodScheduled") {
      return std::string(api::GetString(c.if_object(), "lastTransitionTime"));
    }
  }
  return "";
}

ScheduledTime::ScheduledTime(std::string_view text) {
  if (text.empty()) return;
  std::optional<WallTime> t = util::ParseRfc3339(text);
  if (t && *t != WallTime{} && util::FormatRfc3339(*t) == text) {
    at_ = *t;
  } else {
    verbatim_ = std::string(text);
  }
}

std::string ScheduledTime::text() const {
  if (verbatim_) return *verbatim_;
  return at_ == WallTime{} ? std::string() : util::FormatRfc3339(at_);
}

}  // namespace converge::kubelet
