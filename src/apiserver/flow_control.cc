#include "apiserver/flow_control.h"

#include <algorithm>

#include "util/metrics.h"

namespace converge::apiserver {

namespace {

struct FlowControlMetrics {
  util::CounterFamily& dispatched;
  util::CounterFamily& rejected;

  static FlowControlMetrics& Get() {
    static FlowControlMetrics* m = new FlowControlMetrics{
        util::DefaultRegistry().AddCounter({"apiserver_flowcontrol_dispatched_requests_total",
                                            "Requests that got a seat, by priority level.",
                                            {"priority_level"}}),
        util::DefaultRegistry().AddCounter(
            {"apiserver_flowcontrol_rejected_requests_total",
             "Requests rejected with 429, by priority level and reason (concurrency-limit: the "
             "in-flight cap of their kind; queue-full: their flow's queue; time-out: they waited "
             "too long).",
             {"priority_level", "reason"}}),
    };
    return *m;
  }
};

bool IsInGroup(const UserInfo& user, std::string_view group) {
  return std::find(user.groups.begin(), user.groups.end(), group) != user.groups.end();
}

bool IsHealthProbe(std::string_view path) {
  for (std::string_view p : {"/healthz", "/livez", "/readyz"}) {
    if (path == p || (path.starts_with(p) && path.size() > p.size() && path[p.size()] == '/')) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view PriorityLevelName(PriorityLevel level) {
  switch (level) {
    case PriorityLevel::kExempt: return "exempt";
    case PriorityLevel::kSystem: return "system";
    case PriorityLevel::kGlobal: return "global-default";
  }
  return "global-default";
}

RequestClass ClassifyRequest(const Request& req, const RequestInfo& ri, const UserInfo& user) {
  RequestClass c;
  c.flow = user.name.empty() ? "system:anonymous" : user.name;
  c.mutating = ri.verb == "create" || ri.verb == "update" || ri.verb == "patch" ||
               ri.verb == "delete" || ri.verb == "deletecollection";
  if (ri.is_resource_request) {
    const std::string& sub = ri.subresource;
    c.long_running =
        ri.verb == "watch" || sub == "exec" || sub == "attach" || sub == "portforward" ||
        sub == "proxy" ||
        (sub == "log" && (req.Query("follow") == "true" || req.Query("follow") == "1"));
    c.nonblocking = ri.verb == "create" && sub.empty();
  }
  if (IsInGroup(user, "system:masters") || (!ri.is_resource_request && IsHealthProbe(req.path))) {
    c.level = PriorityLevel::kExempt;
  } else if ((ri.group == "coordination.k8s.io" && ri.resource == "leases") ||
             (ri.group.empty() && ri.resource == "nodes" && ri.subresource == "status") ||
             IsInGroup(user, "system:nodes")) {
    c.level = PriorityLevel::kSystem;
  }
  return c;
}

FlowControl::FlowControl(FlowControlOptions options) : options_(std::move(options)) {
  system_.seats = std::max(1, options_.system_seats);
  global_.seats = std::max(1, options_.concurrency - options_.system_seats);
}

FlowControl::Ticket FlowControl::Admit(const RequestClass& c, std::function<void()> start) {
  FlowControlMetrics& m = FlowControlMetrics::Get();
  const std::string_view level_name = PriorityLevelName(c.level);
  if (c.level == PriorityLevel::kExempt) {
    Ticket t;
    {
      std::lock_guard lock(mu_);
      t = next_ticket_++;
      entries_.emplace(t, Entry{c.level, c.mutating, true, {}, {}});
    }
    m.dispatched.WithLabelValues({level_name}).Inc();
    start();
    return t;
  }
  std::vector<std::function<void()>> to_start;
  Ticket t;
  {
    std::lock_guard lock(mu_);
    int& count = c.mutating ? mutating_ : readonly_;
    const int cap =
        c.mutating ? options_.max_mutating_requests_inflight : options_.max_requests_inflight;
    Level& level = LevelOf(c.level);
    auto queue = level.queues.find(c.flow);
    const size_t waiting = queue == level.queues.end() ? 0 : queue->second.size();
    const char* reason = nullptr;
    if (cap > 0 && count >= cap) {
      reason = "concurrency-limit";
    } else if (level.executing >= level.seats && waiting >= options_.queue_length_per_flow) {
      reason = "queue-full";
    }
    if (reason) {
      m.rejected.WithLabelValues({level_name, reason}).Inc();
      return 0;
    }
    ++count;
    t = next_ticket_++;
    entries_.emplace(t, Entry{c.level, c.mutating, false, c.flow, std::move(start)});
    level.queues[c.flow].push_back(t);
    to_start = DispatchLocked(level);
  }
  for (auto& s : to_start) s();
  return t;
}

std::vector<std::function<void()>> FlowControl::DispatchLocked(Level& level) {
  std::vector<std::function<void()>> to_start;
  while (level.executing < level.seats && !level.queues.empty()) {
    // Round-robin over the flows that wait: the first one after the flow served last.
    auto next = level.queues.upper_bound(level.last_served);
    if (next == level.queues.end()) next = level.queues.begin();
    Ticket t = next->second.front();
    next->second.pop_front();
    level.last_served = next->first;
    if (next->second.empty()) level.queues.erase(next);
    Entry& e = entries_.at(t);
    e.started = true;
    ++level.executing;
    to_start.push_back(std::move(e.start));
    FlowControlMetrics::Get().dispatched.WithLabelValues({PriorityLevelName(e.level)}).Inc();
  }
  return to_start;
}

bool FlowControl::Cancel(Ticket ticket) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(ticket);
  if (it == entries_.end() || it->second.started) return false;
  Entry& e = it->second;
  Level& level = LevelOf(e.level);
  auto queue = level.queues.find(e.flow);
  if (queue != level.queues.end()) {
    auto& q = queue->second;
    q.erase(std::remove(q.begin(), q.end(), ticket), q.end());
    if (q.empty()) level.queues.erase(queue);
  }
  --(e.mutating ? mutating_ : readonly_);
  FlowControlMetrics::Get()
      .rejected.WithLabelValues({PriorityLevelName(e.level), "time-out"})
      .Inc();
  entries_.erase(it);
  return true;
}

void FlowControl::Finish(Ticket ticket) {
  std::vector<std::function<void()>> to_start;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(ticket);
    if (it == entries_.end()) return;
    const Entry e = std::move(it->second);
    entries_.erase(it);
    if (e.level == PriorityLevel::kExempt) return;
    --(e.mutating ? mutating_ : readonly_);
    Level& level = LevelOf(e.level);
    --level.executing;
    to_start = DispatchLocked(level);
  }
  for (auto& s : to_start) s();
}

int FlowControl::executing(PriorityLevel level) const {
  std::lock_guard lock(mu_);
  if (level == PriorityLevel::kExempt) return 0;
  return level == PriorityLevel::kSystem ? system_.executing : global_.executing;
}

size_t FlowControl::queued(PriorityLevel level) const {
  std::lock_guard lock(mu_);
  if (level == PriorityLevel::kExempt) return 0;
  const Level& l = level == PriorityLevel::kSystem ? system_ : global_;
  size_t n = 0;
  for (const auto& [flow, q] : l.queues) n += q.size();
  return n;
}

}  // namespace converge::apiserver
