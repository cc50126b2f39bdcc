// The Pod printer: upstream's printPod, the busiest cell computation kubectl shows.
//
// STATUS is a running "reason" refined in three passes, each later pass overriding:
//   1. the phase, or status.reason when set; "SchedulingGated" from the PodScheduled condition;
//   2. init containers in order, stopping at the first one not done: "Init:<reason>",
//      "Init:ExitCode:n", "Init:Signal:n" or "Init:i/n" (restartable sidecars that started count
//      as done);
//   3. when initialization is over, app containers from last to first: a waiting or terminated
//      reason, "ExitCode:n"/"Signal:n"; "Completed" turns back into Running/NotReady while a
//      container still runs;
// and finally a deleted pod is "Terminating" (or "Unknown" when its node was lost).
//
// Worked example: two init containers, the first exited 0, the second waiting with reason
// PodInitializing, app container waiting ContainerCreating → pass 2 stops at index 1 with no
// usable reason → "Init:1/2"; pass 3 is skipped because initialization is not over.
#include <optional>

#include "apiserver/printers.h"
#include "util/time_format.h"

namespace converge::apiserver::printers {

namespace {

// Restart bookkeeping: the count and the latest lastState.terminated.finishedAt.
struct Restarts {
  int64_t count = 0;
  std::optional<TimePoint> last;

  void Add(const json::object& status) {
    count += Int(status, "restartCount");
    const json::object& terminated = Sub(Sub(status, "lastState"), "terminated");
    if (auto finished = util::ParseRfc3339(Str(terminated, "finishedAt"))) {
      if (!last || *last < *finished) last = *finished;
    }
  }
};

bool ConditionTrue(const json::object& status, std::string_view type) {
  for (const json::object* c : Objects(status, "conditions")) {
    if (Str(*c, "type") == type) return Str(*c, "status") == "True";
  }
  return false;
}

bool HasPodReadyCondition(const json::object& status) {
  // Upstream scans every condition (not only the first of its type).
  for (const json::object* c : Objects(status, "conditions")) {
    if (Str(*c, "type") == "Ready" && Str(*c, "status") == "True") return true;
  }
  return false;
}

std::string ExitReason(std::string_view prefix, const json::object& terminated) {
  if (int64_t signal = Int(terminated, "signal"); signal != 0) {
    return std::string(prefix) + "Signal:" + std::to_string(signal);
  }
  return std::string(prefix) + "ExitCode:" + std::to_string(Int(terminated, "exitCode"));
}

bool IsRestartableInit(const json::object& spec, std::string_view name) {
  for (const json::object* c : Objects(spec, "initContainers")) {
    if (Str(*c, "name") == name) return Str(*c, "restartPolicy") == "Always";
  }
  return false;
}

// READY, STATUS and RESTARTS as they are being worked out.
struct PodSummary {
  int64_t ready = 0;
  int64_t total = 0;
  std::string reason;
  Restarts restarts;
  Restarts sidecar_restarts;  // restartable init containers only
};

// Pass 2: init containers in order. Returns whether initialization is still in progress.
bool SummarizeInitContainers(const json::object& spec, const json::object& status, PodSummary& s) {
  const size_t init_count = Objects(spec, "initContainers").size();
  const std::vector<const json::object*> statuses = Objects(status, "initContainerStatuses");
  for (size_t i = 0; i < statuses.size(); ++i) {
    const json::object& c = *statuses[i];
    const bool restartable = IsRestartableInit(spec, Str(c, "name"));
    s.restarts.Add(c);
    if (restartable) s.sidecar_restarts.Add(c);
    const json::object& state = Sub(c, "state");
    const json::object& term = Sub(state, "terminated");
    const std::string_view waiting = Str(Sub(state, "waiting"), "reason");
    if (Has(state, "terminated") && Int(term, "exitCode") == 0) continue;
    if (restartable && Bool(c, "started")) {
      if (Bool(c, "ready")) ++s.ready;
      continue;
    }
    if (Has(state, "terminated")) {
      s.reason = Str(term, "reason").empty() ? ExitReason("Init:", term)
                                             : "Init:" + std::string(Str(term, "reason"));
    } else if (!waiting.empty() && waiting != "PodInitializing") {
      s.reason = "Init:" + std::string(waiting);
    } else {
      s.reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_count);
    }
    return true;
  }
  return false;
}

// Pass 3: app containers, last to first, so the first container's reason wins.
void SummarizeContainers(const json::object& status, PodSummary& s) {
  s.restarts = s.sidecar_restarts;
  bool has_running = false;
  const std::vector<const json::object*> statuses = Objects(status, "containerStatuses");
  for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
    const json::object& c = **it;
    s.restarts.Add(c);
    const json::object& state = Sub(c, "state");
    const json::object& term = Sub(state, "terminated");
    const std::string_view waiting = Str(Sub(state, "waiting"), "reason");
    if (!waiting.empty()) {
      s.reason = waiting;
    } else if (Has(state, "terminated")) {
      s.reason =
          Str(term, "reason").empty() ? ExitReason("", term) : std::string(Str(term, "reason"));
    } else if (Bool(c, "ready") && Has(state, "running")) {
      has_running = true;
      ++s.ready;
    }
  }
  if (s.reason == "Completed" && has_running) {
    s.reason = HasPodReadyCondition(status) ? "Running" : "NotReady";
  }
}

PodSummary Summarize(const api::Object& pod) {
  const json::object& spec = Sub(pod.doc(), "spec");
  const json::object& status = Sub(pod.doc(), "status");
  PodSummary s;
  s.total = Count(spec, "containers");
  for (const json::object* c : Objects(spec, "initContainers")) {
    if (Str(*c, "restartPolicy") == "Always") ++s.total;
  }

  // Pass 1.
  const std::string_view phase = Str(status, "phase");
  s.reason = Str(status, "reason").empty() ? phase : Str(status, "reason");
  for (const json::object* c : Objects(status, "conditions")) {
    if (Str(*c, "type") == "PodScheduled" && Str(*c, "reason") == "SchedulingGated") {
      s.reason = "SchedulingGated";
    }
  }

  const bool initializing = SummarizeInitContainers(spec, status, s);
  if (!initializing || ConditionTrue(status, "Initialized")) SummarizeContainers(status, s);

  if (pod.being_deleted()) {
    if (Str(status, "reason") == "NodeLost") {
      s.reason = "Unknown";
    } else if (phase != "Failed" && phase != "Succeeded") {
      s.reason = "Terminating";
    }
  }
  return s;
}

std::string PodIP(const json::object& status) {
  // v1 → internal conversion fills podIPs from podIP when only the latter is set.
  if (auto ips = Objects(status, "podIPs"); !ips.empty())
    return std::string(Str(*ips.front(), "ip"));
  return std::string(Str(status, "podIP"));
}

// "true/total" over spec.readinessGates, "<none>" without gates.
std::string ReadinessGates(const json::object& spec, const json::object& status) {
  const std::vector<const json::object*> gates = Objects(spec, "readinessGates");
  if (gates.empty()) return "<none>";
  int64_t true_conditions = 0;
  for (const json::object* gate : gates) {
    for (const json::object* c : Objects(status, "conditions")) {
      if (Str(*c, "type") == Str(*gate, "conditionType")) {
        if (Str(*c, "status") == "True") ++true_conditions;
        break;
      }
    }
  }
  return std::to_string(true_conditions) + "/" + std::to_string(gates.size());
}

json::array PodCells(const api::Object& pod, TimePoint now) {
  const json::object& spec = Sub(pod.doc(), "spec");
  const json::object& status = Sub(pod.doc(), "status");
  const PodSummary s = Summarize(pod);
  std::string restarts = std::to_string(s.restarts.count);
  if (s.restarts.count != 0 && s.restarts.last) {
    restarts += " (" + util::HumanDuration(now - *s.restarts.last) + " ago)";
  }
  json::array cells;
  cells.emplace_back(pod.name());
  cells.emplace_back(std::to_string(s.ready) + "/" + std::to_string(s.total));
  cells.emplace_back(s.reason);
  cells.emplace_back(restarts);
  cells.emplace_back(AgeOf(pod, now));
  cells.emplace_back(OrNone(PodIP(status)));
  cells.emplace_back(OrNone(Str(spec, "nodeName")));
  cells.emplace_back(OrNone(Str(status, "nominatedNodeName")));
  cells.emplace_back(ReadinessGates(spec, status));
  return cells;
}

}  // namespace

void AddPodPrinter(PrinterMap& map) {
  map[{"", "pods"}] = MakePrinter(
      {
          NameColumn(),
          Column("Ready", "string", "Ready containers out of all containers (sidecars included)."),
          Column("Status", "string", "A summary of the pod's and its containers' states."),
          Column("Restarts", "string",
                 "Container restarts, and how long ago the most recent one ended."),
          AgeColumn(),
          Column("IP", "string", "The pod's first IP address.", 1),
          Column("Node", "string", "The node the pod is bound to.", 1),
          Column("Nominated Node", "string", "The node preemption made room on.", 1),
          Column("Readiness Gates", "string", "Readiness gates whose condition is True.", 1),
      },
      PodCells);
}

}  // namespace converge::apiserver::printers
