#include "kubelet/pod_machine.h"

#include <algorithm>

#include "kubelet/image_registry.h"
#include "util/time_format.h"

namespace converge::kubelet {

namespace {

namespace json = boost::json;

constexpr char kNormal[] = "Normal";
constexpr char kWarning[] = "Warning";

std::string QuoteName(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string JoinContainerNames(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += " ";
    out += names[i];
  }
  return out + "]";
}

// The rarely set texts of a container (util::HeapOptional: nothing on the heap while empty).
void SetRare(util::HeapOptional<std::string>& field, std::string text) {
  if (text.empty()) {
    field = std::nullopt;
  } else {
    field = std::move(text);
  }
}

const std::string& Rare(const util::HeapOptional<std::string>& field) {
  static const std::string* const empty = new std::string;
  return field ? *field : *empty;
}

void SetWaiting(ContainerRun& c, std::string_view reason, std::string message = {}) {
  c.waiting_reason = reason;
  SetRare(c.waiting_message, std::move(message));
}

std::optional<WallTime> Rfc3339(api::ObjectView o, std::string_view key) {
  return util::ParseRfc3339(api::Object::GetString(o, key));
}

}  // namespace

// One machine per pod: 150,000 pods are 150,000 of these. jemalloc's size classes here are 448,
// 512 and 640 bytes: keep it within 512 (the rare parts, backoffs, condition and rejection texts,
// are on the heap; the texts alike for a node's pods are shared).
static_assert(sizeof(PodMachine) <= 512, "PodMachine outgrew jemalloc's 512-byte size class");

namespace {
const MachineOptions kDefaultMachineOptions;
}  // namespace

void ConditionState::SetText(std::string_view reason, std::string_view message) {
  if (reason.empty() && message.empty()) {
    text.reset();
  } else if (!text || text->reason != reason || text->message != message) {
    text = Text{std::string(reason), std::string(message)};  // recomputed often, changed rarely
  }
}

PodMachine::Backoffs& PodMachine::backoffs() {
  if (!backoffs_) {
    backoffs_ = std::make_unique<Backoffs>(
        Backoffs{FlowBackoff(options_.image_backoff_initial, options_.image_backoff_max),
                 FlowBackoff(options_.crash_backoff_initial, options_.crash_backoff_max)});
  }
  return *backoffs_;
}

PodMachine::PodMachine(PodSpecView spec, const MachineOptions* options)
    : spec_(std::move(spec)), options_(options != nullptr ? *options : kDefaultMachineOptions) {
  const bool has_init = !spec_.init_containers.empty();
  for (const ContainerSpecView& s : spec_.init_containers) {
    ContainerRun c;
    c.spec = s;
    c.init = true;
    SetWaiting(c, "PodInitializing");
    init_.push_back(std::move(c));
  }
  for (const ContainerSpecView& s : spec_.containers) {
    ContainerRun c;
    c.spec = s;
    SetWaiting(c, has_init ? "PodInitializing" : "ContainerCreating");
    app_.push_back(std::move(c));
  }
}

std::string PodMachine::ContainerId(const ContainerRun& c) const {
  if (c.adopted_id) return *c.adopted_id;
  if (!c.derived_id) return "";
  return "converge-sim://" +
         HexId(spec_.uid + "/" + c.spec.name.str() + "/" + std::to_string(c.instance));
}

const ContainerRun* PodMachine::FindContainer(std::string_view name) const {
  for (const auto* list : {&app_, &init_}) {
    for (const ContainerRun& c : *list) {
      if (c.spec.name == name) return &c;
    }
  }
  return nullptr;
}

void PodMachine::Emit(MachineOutput* out, WallTime t, const ContainerRun* c, std::string type,
                      std::string reason, std::string message) const {
  if (!out) return;
  std::string path;
  if (c)
    path = std::string(c->init ? "spec.initContainers{" : "spec.containers{") + c->spec.name.str() +
           "}";
  out->events.push_back(
      {std::move(type), std::move(reason), std::move(message), std::move(path), t});
}

bool PodMachine::RestartWanted(const ContainerRun& c, int exit_code) const {
  if (stage_ == PodStage::kTerminating || stage_ == PodStage::kTerminal || spec_.being_deleted()) {
    return false;
  }
  if (c.init && c.spec.sidecar) return true;
  if (c.init) return exit_code != 0 && spec_.restart_policy != RestartPolicy::kNever;
  switch (spec_.restart_policy) {
    case RestartPolicy::kAlways: return true;
    case RestartPolicy::kOnFailure: return exit_code != 0;
    case RestartPolicy::kNever: return false;
  }
  return false;
}

// ---- admission ----

void PodMachine::Admit(NodeRuntime& node, WallTime t, MachineOutput* out) {
  decided_at_ = t;
  if (spec_.being_deleted()) {
    // Deleted before it ever ran: nothing to stop.
    BecomeTerminal(node, t);
    RecomputeConditions(t);
    return;
  }
  if (auto rejection =
          node.Admit(spec_.uid, {spec_.cpu_request_milli, spec_.memory_request_bytes})) {
    stage_ = PodStage::kTerminal;
    phase_ = "Failed";
    text_ = ConditionState::Text{rejection->reason, "Pod was rejected: " + rejection->message};
    Emit(out, t, nullptr, kWarning, rejection->reason, rejection->message);
    return;
  }
  admitted_ = true;
  host_ip_ = node.host_ip();
  if (spec_.host_network) {
    pod_ip_ = node.host_ip();
  } else if (auto ip = node.AllocateIp(spec_.uid)) {
    pod_ip_ = *ip;
  }
  start_time_ = t;
  stage_ = PodStage::kActive;
  Progress(node, t, out);
  ComputePhase();
  RecomputeConditions(t);
}

// ---- the clock ----

std::optional<WallTime> PodMachine::NextDue() const {
  std::optional<WallTime> best;
  for (const auto* list : {&init_, &app_}) {
    for (const ContainerRun& c : *list) {
      std::optional<WallTime> d;
      if (c.stage == ContainerStage::kRunning) {
        if (!c.ready && !c.init) d = c.ready_at;
        if (c.exit_at && (!d || *c.exit_at < *d)) d = c.exit_at;
      } else {
        d = c.due;
      }
      if (d && (!best || *d < *best)) best = d;
    }
  }
  return best;
}

void PodMachine::Advance(NodeRuntime& node, WallTime now, MachineOutput* out) {
  if (stage_ == PodStage::kNew) Admit(node, now, out);
  // Each step moves at least one container's due time forward or clears it; the bound only
  // guards against a bug turning into a hung sync loop.
  for (int guard = 0; guard < 100000; ++guard) {
    std::optional<WallTime> due = NextDue();
    if (!due || *due > now) return;
    ProcessAt(node, *due, out);
  }
}

void PodMachine::ProcessAt(NodeRuntime& node, WallTime t, MachineOutput* out) {
  for (auto* list : {&init_, &app_}) {
    for (ContainerRun& c : *list) ProcessContainer(c, node, t, out);
  }
  Progress(node, t, out);
  ComputePhase();
  RecomputeConditions(t);
}

void PodMachine::ProcessContainer(ContainerRun& c, NodeRuntime& node, WallTime t,
                                  MachineOutput* out) {
  switch (c.stage) {
    case ContainerStage::kRunning: {
      if (!c.ready && !c.init && c.ready_at <= t) c.ready = true;
      if (c.exit_at && *c.exit_at <= t) ExitContainer(c, *c.exit_at, out);
      return;
    }
    case ContainerStage::kStarting:
      if (c.due && *c.due <= t) AttemptStart(c, node, t, out);
      return;
    case ContainerStage::kPulling: {
      if (!c.due || *c.due > t) return;
      const std::string& image = c.spec.image;
      if (c.pull_fails) {
        std::string message =
            "Failed to pull image " + QuoteName(image) + ": " + Rare(c.pull_error);
        Emit(out, t, &c, kWarning, "Failed", message);
        Emit(out, t, &c, kWarning, "Failed", "Error: ErrImagePull");
        SetWaiting(c, "ErrImagePull", message);
        c.last_pull_error = c.pull_error;
        backoffs().image.Next(c.image_ref, t);
        c.stage = ContainerStage::kStarting;
        c.due = t + options_.sync_after_error;
        return;
      }
      if (backoffs_) backoffs_->image.Reset(c.image_ref);
      auto ref = ParseImageReference(image);
      Emit(out, t, &c, kNormal, "Pulled",
           "Successfully pulled image " + QuoteName(image) + " in " +
               GoDurationMillis(t - c.pull_started) + " (" +
               GoDurationMillis(t - c.pull_requested) + " including waiting). Image size: " +
               std::to_string(ref.ok() ? ImageSizeBytes(*ref) : 0) + " bytes.");
      StartContainer(c, t, out);
      return;
    }
    case ContainerStage::kExited:
      if (c.due && *c.due <= t) {
        c.due.reset();
        if (c.restart_wanted && RestartWanted(c, c.terminated ? c.terminated->exit_code : 0)) {
          c.restart_wanted = false;
          c.restarting = true;
          c.stage = ContainerStage::kStarting;
          c.due = t;
          AttemptStart(c, node, t, out);
        } else {
          c.restart_wanted = false;
        }
      }
      return;
    case ContainerStage::kNotStarted:
    case ContainerStage::kBlocked: return;
  }
}

// ---- starting a container ----

void PodMachine::AttemptStart(ContainerRun& c, NodeRuntime& node, WallTime t, MachineOutput* out) {
  c.due.reset();
  if (stage_ != PodStage::kActive) return;
  if (c.restarting) {
    const std::string key = CrashKey(c);
    const TerminatedState* last = c.terminated ? &*c.terminated : nullptr;
    if (!last && c.last_terminated) last = &*c.last_terminated;
    WallTime finished = last ? last->finished_at : t;
    if (c.terminated) {
      c.last_terminated = c.terminated;
      c.terminated.reset();
    }
    FlowBackoff& crash_backoff = backoffs().crash;
    if (crash_backoff.IsInBackOffSince(key, finished, t)) {
      std::string delay = GoDurationMillis(crash_backoff.Get(key));
      SetWaiting(c, "CrashLoopBackOff",
                 "back-off " + delay + " restarting failed container=" + c.spec.name.str() +
                     " pod=" + spec_.FormatPod());
      Emit(out, t, &c, kWarning, "BackOff",
           "Back-off restarting failed container " + c.spec.name.str() + " in pod " +
               spec_.FormatPod());
      c.due = finished + crash_backoff.Get(key);
      return;
    }
    crash_backoff.Next(key, finished);
    c.restarting = false;
    ++c.restart_count;
  }

  const std::string& image = c.spec.image;
  auto ref = ParseImageReference(image);
  if (!ref.ok()) {
    std::string message = InvalidImageNameMessage(image, ref.status());
    Emit(out, t, &c, kWarning, "InspectFailed", message);
    Emit(out, t, &c, kWarning, "Failed", "Error: InvalidImageName");
    SetWaiting(c, "InvalidImageName", message);
    c.stage = ContainerStage::kBlocked;
    return;
  }
  c.image_ref = ref->normalized;
  if (backoffs_ && backoffs_->image.IsInBackOffSinceUpdate(c.image_ref, t)) {
    Emit(out, t, &c, kNormal, "BackOff", "Back-off pulling image " + QuoteName(image));
    Emit(out, t, &c, kWarning, "Failed", "Error: ImagePullBackOff");
    SetWaiting(c, "ImagePullBackOff",
               "Back-off pulling image " + QuoteName(image) +
                   ": ErrImagePull: " + Rare(c.last_pull_error));
    WallTime end = t;
    backoffs_->image.EndOfBackOff(c.image_ref, &end);
    c.stage = ContainerStage::kStarting;
    c.due = end;
    return;
  }
  const bool present = node.ImagePresent(c.image_ref, t);
  if (c.spec.pull_policy == PullPolicy::kNever && !present) {
    std::string message =
        "Container image " + QuoteName(image) + " is not present with pull policy of Never";
    Emit(out, t, &c, kWarning, "ErrImageNeverPull", message);
    Emit(out, t, &c, kWarning, "Failed", "Error: ErrImageNeverPull");
    SetWaiting(c, "ErrImageNeverPull", message);
    c.stage = ContainerStage::kBlocked;
    return;
  }
  if (c.spec.pull_policy != PullPolicy::kAlways && present) {
    Emit(out, t, &c, kNormal, "Pulled",
         "Container image " + QuoteName(image) + " already present on machine");
    StartContainer(c, t, out);
    return;
  }
  std::string error;
  const bool exists = ImageExists(*ref, &error);
  Duration duration = c.spec.behavior.pull_duration.value_or(options_.default_pull_duration);
  NodeRuntime::PullTicket ticket = node.SchedulePull(c.image_ref, duration, exists, t);
  Emit(out, t, &c, kNormal, "Pulling", "Pulling image " + QuoteName(image));
  c.stage = ContainerStage::kPulling;
  c.pull_requested = t;
  c.pull_started = ticket.start;
  c.pull_fails = !exists;
  SetRare(c.pull_error, error);
  c.due = ticket.done;
  if (ticket.done <= t) ProcessContainer(c, node, t, out);
}

void PodMachine::StartContainer(ContainerRun& c, WallTime t, MachineOutput* out) {
  ++c.instance;
  auto ref = ParseImageReference(c.spec.image.str());
  if (ref.ok()) {
    c.image_ref = ref->normalized;
    c.image_id = ImageId(*ref);
  }
  c.adopted_id.reset();
  c.derived_id = true;
  Emit(out, t, &c, kNormal, "Created", "Created container: " + c.spec.name.str());
  Emit(out, t, &c, kNormal, "Started", "Started container " + c.spec.name.str());
  c.stage = ContainerStage::kRunning;
  c.due.reset();
  c.waiting_reason = "";
  c.waiting_message = std::nullopt;
  c.terminated.reset();
  c.started_at = t;
  c.ready = false;
  c.ready_at = t + c.spec.behavior.readiness_delay;
  c.killing = false;
  c.exit_reason = {};
  if (c.spec.behavior.run_for) {
    c.exit_at = t + *c.spec.behavior.run_for;
    c.exit_code = c.spec.behavior.exit_code;
  } else {
    c.exit_at.reset();
    c.exit_code = 0;
  }
  if (out) {
    ContainerLogRecord r;
    r.kind = ContainerLogRecord::Kind::kStarted;
    r.container = c.spec.name;
    r.instance = c.instance;
    r.time = t;
    r.container_id = ContainerId(c);
    r.image = c.spec.image;
    r.log_interval = c.spec.behavior.log_interval;
    out->logs.push_back(std::move(r));
  }
}

void PodMachine::ExitContainer(ContainerRun& c, WallTime t, MachineOutput* out) {
  TerminatedState term;
  term.exit_code = c.exit_code;
  term.reason = !c.exit_reason.empty() ? c.exit_reason : (c.exit_code == 0 ? "Completed" : "Error");
  term.started_at = c.started_at;
  term.finished_at = t;
  term.container_id = ContainerId(c);
  if (out) {
    ContainerLogRecord r;
    r.kind = ContainerLogRecord::Kind::kExited;
    r.container = c.spec.name;
    r.instance = c.instance;
    r.time = t;
    r.exit_code = c.exit_code;
    r.killed = c.exit_code == 137 && c.killing;
    out->logs.push_back(std::move(r));
  }
  c.terminated = std::move(term);
  c.stage = ContainerStage::kExited;
  c.ready = false;
  c.exit_at.reset();
  c.restart_wanted = !c.killing && RestartWanted(c, c.exit_code);
  c.due = c.restart_wanted ? std::optional<WallTime>(t + options_.sync_after_exit) : std::nullopt;
}

void PodMachine::Kill(ContainerRun& c, WallTime t, WallTime deadline, MachineOutput* out,
                      const std::string& event_message) {
  if (c.stage != ContainerStage::kRunning || c.killing) return;
  Emit(out, t, &c, kNormal, "Killing", event_message);
  c.killing = true;
  const ContainerBehavior& b = c.spec.behavior;
  WallTime exit_by_sigterm = t + b.shutdown_delay;
  if (b.ignore_sigterm || exit_by_sigterm >= deadline) {
    if (!c.exit_at || *c.exit_at > deadline) {
      c.exit_at = deadline;
      c.exit_code = 137;
      c.exit_reason = "Error";
    }
  } else if (!c.exit_at || *c.exit_at > exit_by_sigterm) {
    c.exit_at = exit_by_sigterm;
    c.exit_code = 0;
    c.exit_reason = "Completed";
  }
  if (out) {
    ContainerLogRecord r;
    r.kind = ContainerLogRecord::Kind::kSigterm;
    r.container = c.spec.name;
    r.instance = c.instance;
    r.time = t;
    r.ignored = b.ignore_sigterm;
    out->logs.push_back(std::move(r));
  }
}

// ---- pod-level progress ----

void PodMachine::Progress(NodeRuntime& node, WallTime t, MachineOutput* out) {
  if (stage_ == PodStage::kActive) {
    // Init containers in order; a failed one with restartPolicy Never fails the pod.
    while (next_init_ < init_.size()) {
      ContainerRun& c = init_[next_init_];
      if (c.spec.sidecar ? c.running() || c.instance > 0 : c.succeeded()) {
        ++next_init_;
        continue;
      }
      if (c.stage == ContainerStage::kNotStarted) {
        c.stage = ContainerStage::kStarting;
        c.due = t;
        AttemptStart(c, node, t, out);
        if (c.spec.sidecar ? c.running() : c.succeeded()) continue;
      }
      if (!c.spec.sidecar && c.stage == ContainerStage::kExited && !c.restart_wanted &&
          c.terminated && c.terminated->exit_code != 0) {
        // Init failure with restartPolicy Never: the pod has failed.
        for (ContainerRun& s : init_) {
          if (s.running())
            Kill(s, t, t + options_.minimum_grace, out, "Stopping container " + s.spec.name.str());
        }
        stage_ = PodStage::kTerminating;
        kill_deadline_ = t + options_.minimum_grace;
      }
      break;
    }
    if (stage_ == PodStage::kActive && next_init_ == init_.size() && !apps_started_) {
      apps_started_ = true;
      for (ContainerRun& c : app_) {
        if (c.stage == ContainerStage::kNotStarted) {
          c.stage = ContainerStage::kStarting;
          c.due = t;
          AttemptStart(c, node, t, out);
        }
      }
    }
    // Completion: no app container will run again.
    if (stage_ == PodStage::kActive && apps_started_ && !app_.empty()) {
      bool done = true;
      for (const ContainerRun& c : app_) {
        if (c.stage != ContainerStage::kExited || c.restart_wanted) done = false;
      }
      if (done) {
        // Sidecars are stopped once the main containers are done.
        for (ContainerRun& s : init_) {
          if (s.running())
            Kill(s, t, t + options_.minimum_grace, out, "Stopping container " + s.spec.name.str());
        }
        stage_ = PodStage::kTerminating;
        kill_deadline_ = t + options_.minimum_grace;
      }
    }
  }
  if (stage_ == PodStage::kTerminating) {
    for (const auto* list : {&init_, &app_}) {
      for (const ContainerRun& c : *list) {
        if (c.running()) return;
      }
    }
    BecomeTerminal(node, t);
  }
}

void PodMachine::BeginTermination(NodeRuntime& node, WallTime t, MachineOutput* out) {
  if (stage_ == PodStage::kNew || stage_ == PodStage::kTerminal) {
    if (stage_ == PodStage::kNew) BecomeTerminal(node, t);
    return;
  }
  int64_t grace_seconds = spec_.deletion_grace_seconds.value_or(spec_.termination_grace_seconds);
  Duration grace = std::max<Duration>(std::chrono::seconds(grace_seconds), options_.minimum_grace);
  WallTime deadline = t + grace;
  if (stage_ == PodStage::kTerminating) deadline = std::min(deadline, kill_deadline_);
  stage_ = PodStage::kTerminating;
  kill_deadline_ = deadline;
  for (auto* list : {&app_, &init_}) {
    for (ContainerRun& c : *list) {
      if (c.running()) {
        Kill(c, t, deadline, out, "Stopping container " + c.spec.name.str());
      } else if (c.stage != ContainerStage::kExited) {
        c.due.reset();  // nothing starts any more
      } else {
        c.restart_wanted = false;
        c.due.reset();
      }
    }
  }
  Progress(node, t, out);
}

void PodMachine::BecomeTerminal(NodeRuntime& node, WallTime) {
  stage_ = PodStage::kTerminal;
  for (auto* list : {&init_, &app_}) {
    for (ContainerRun& c : *list) {
      c.due.reset();
      c.restart_wanted = false;
      c.ready = false;
    }
  }
  if (admitted_) {
    node.ReleaseIp(spec_.uid);
    node.Release(spec_.uid);
    admitted_ = false;
  }
}

// ---- phase and conditions ----

// Upstream's getPhase over the containers' states.
void PodMachine::ComputePhase() {
  if (!reason().empty() && stage_ == PodStage::kTerminal && !admitted_ && !start_time_) {
    phase_ = "Failed";  // rejected at admission
    return;
  }
  if (stage_ == PodStage::kNew) {
    phase_ = "Pending";
    return;
  }
  const bool terminal = stage_ == PodStage::kTerminal;
  int pending_init = 0;
  int failed_init = 0;
  for (const ContainerRun& c : init_) {
    if (c.spec.sidecar) {
      if (c.instance == 0) ++pending_init;
      continue;
    }
    if (c.running()) {
      ++pending_init;
    } else if (c.stage == ContainerStage::kExited && c.terminated) {
      if (c.terminated->exit_code != 0) ++failed_init;
    } else if (c.last_terminated && c.last_terminated->exit_code != 0) {
      ++failed_init;
    } else {
      ++pending_init;
    }
  }
  int running = 0;
  int waiting = 0;
  int stopped = 0;
  int succeeded = 0;
  bool any_app_started = false;
  for (const ContainerRun& c : app_) {
    if (c.instance > 0) any_app_started = true;
    if (c.running()) {
      ++running;
    } else if (c.stage == ContainerStage::kExited && c.terminated) {
      ++stopped;
      if (c.terminated->exit_code == 0) ++succeeded;
    } else if (c.last_terminated) {
      ++stopped;
    } else {
      ++waiting;
    }
  }
  if (failed_init > 0 && spec_.restart_policy == RestartPolicy::kNever) {
    phase_ = "Failed";
    return;
  }
  if (terminal) {
    // A pod that will never run again is Succeeded only when every container succeeded.
    phase_ = (stopped > 0 && stopped == succeeded && waiting == 0 && running == 0) ? "Succeeded"
                                                                                   : "Failed";
    return;
  }
  if ((pending_init > 0 && !any_app_started) || waiting > 0) {
    phase_ = "Pending";
  } else if (running > 0) {
    phase_ = "Running";
  } else if (stopped > 0) {
    if (spec_.restart_policy == RestartPolicy::kAlways) {
      phase_ = "Running";
    } else if (stopped == succeeded) {
      phase_ = "Succeeded";
    } else if (spec_.restart_policy == RestartPolicy::kNever) {
      phase_ = "Failed";
    } else {
      phase_ = "Running";
    }
  } else {
    phase_ = "Pending";
  }
}

void PodMachine::RecomputeConditions(WallTime t) {
  auto set = [t](ConditionState& c, bool status, std::string reason, std::string message) {
    if (!c.set || c.status != status) c.last_transition = t;
    c.set = true;
    c.status = status;
    c.SetText(reason, message);
  };
  if (!start_time_ && stage_ == PodStage::kTerminal) return;  // rejected: no conditions
  const bool sandbox = stage_ == PodStage::kActive || stage_ == PodStage::kTerminating;
  set(cond_ready_to_start_, sandbox, "", "");

  std::vector<std::string> incomplete;
  for (const ContainerRun& c : init_) {
    bool done = c.spec.sidecar ? c.instance > 0
                               : (c.terminated && c.terminated->exit_code == 0 &&
                                  c.stage == ContainerStage::kExited);
    if (!done) incomplete.push_back(c.spec.name);
  }
  if (phase_ == "Succeeded" && !init_.empty()) {
    set(cond_initialized_, true, "PodCompleted", "");
  } else if (incomplete.empty()) {
    set(cond_initialized_, true, "", "");
  } else {
    set(cond_initialized_, false, "ContainersNotInitialized",
        "containers with incomplete status: " + JoinContainerNames(incomplete));
  }

  std::vector<std::string> unready;
  for (const ContainerRun& c : init_) {
    if (c.spec.sidecar && !c.running()) unready.push_back(c.spec.name);
  }
  for (const ContainerRun& c : app_) {
    if (!(c.running() && c.ready)) unready.push_back(c.spec.name);
  }
  if (phase_ == "Succeeded") {
    set(cond_containers_ready_, false, "PodCompleted", "");
    set(cond_ready_, false, "PodCompleted", "");
  } else if (unready.empty()) {
    set(cond_containers_ready_, true, "", "");
    set(cond_ready_, true, "", "");
  } else {
    std::string message = "containers with unready status: " + JoinContainerNames(unready);
    set(cond_containers_ready_, false, "ContainersNotReady", message);
    set(cond_ready_, false, "ContainersNotReady", message);
  }
}

// ---- changes from the API ----

void PodMachine::Update(PodSpecView spec, NodeRuntime& node, WallTime now, MachineOutput* out) {
  Advance(node, now, out);
  const bool deletion_started = spec.being_deleted() && !spec_.being_deleted();
  const bool grace_shortened = spec.being_deleted() && spec_.being_deleted() &&
                               spec.deletion_grace_seconds < spec_.deletion_grace_seconds;
  std::vector<ContainerSpecView> old_app = spec_.containers;
  spec_ = std::move(spec);
  // Behaviour and image changes (the other container fields are immutable).
  for (size_t i = 0; i < app_.size() && i < spec_.containers.size(); ++i) {
    ContainerRun& c = app_[i];
    const ContainerSpecView& next = spec_.containers[i];
    const bool image_changed = next.image != c.spec.image;
    c.spec = next;
    if (!image_changed || stage_ != PodStage::kActive || deletion_started) continue;
    if (c.running()) {
      Emit(out, now, &c, kNormal, "Killing",
           "Container " + c.spec.name.str() + " definition changed, will be restarted");
      c.killing = true;
      c.exit_code = 0;
      c.exit_reason = "Completed";
      ExitContainer(c, now, out);
    }
    if (c.stage != ContainerStage::kNotStarted) {
      // Restarted regardless of restartPolicy, without crash backoff (a new definition).
      c.restart_wanted = false;
      c.restarting = false;
      if (c.terminated) {
        c.last_terminated = c.terminated;
        c.terminated.reset();
        ++c.restart_count;
      }
      SetWaiting(c, "ContainerCreating");
      c.stage = ContainerStage::kStarting;
      c.due = now;
    }
  }
  for (size_t i = 0; i < init_.size() && i < spec_.init_containers.size(); ++i) {
    init_[i].spec = spec_.init_containers[i];
  }
  if (deletion_started || grace_shortened) BeginTermination(node, now, out);
  Advance(node, now, out);
  ComputePhase();
  RecomputeConditions(now);
}

void PodMachine::Remove(NodeRuntime& node, WallTime now, MachineOutput* out) {
  for (auto* list : {&app_, &init_}) {
    for (ContainerRun& c : *list) {
      if (!c.running()) continue;
      if (!c.killing)
        Emit(out, now, &c, kNormal, "Killing", "Stopping container " + c.spec.name.str());
      c.killing = true;
      c.exit_code = 137;
      c.exit_reason = "Error";
      ExitContainer(c, now, out);
    }
  }
  BecomeTerminal(node, now);
}

// ---- adoption after a kubelet restart ----

void PodMachine::Adopt(const json::object& status, NodeRuntime& node, WallTime now,
                       MachineOutput* out) {
  std::string_view phase = api::Object::GetString(status, "phase");
  auto start = Rfc3339(status, "startTime");
  if (!start) return;  // never admitted: start from scratch
  start_time_ = *start;
  decided_at_ = *start;
  host_ip_ = node.host_ip();
  pod_ip_ = std::string(api::Object::GetString(status, "podIP"));
  const bool terminal = phase == "Succeeded" || phase == "Failed";
  if (!terminal) {
    if (node.Admit(spec_.uid, {spec_.cpu_request_milli, spec_.memory_request_bytes})) {
      return;  // no longer fits: start over (admission will reject it)
    }
    admitted_ = true;
    if (!spec_.host_network && !pod_ip_.empty() && !node.ReserveIp(spec_.uid, pod_ip_)) {
      pod_ip_ = node.AllocateIp(spec_.uid).value_or("");
    }
  }
  auto adopt_list = [&](std::vector<ContainerRun>& runs, std::string_view key) {
    api::ArrayView statuses = api::FindArray(status, {key});
    if (!statuses) return;
    for (ContainerRun& c : runs) {
      for (const api::View v : *statuses) {
        if (!v.is_object()) continue;
        const api::ObjectView s = v.get_object();
        if (api::Object::GetString(s, "name") != c.spec.name) continue;
        c.restart_count = static_cast<int>(api::FindInt(s, {"restartCount"}));
        c.instance = c.restart_count;
        c.image_id = api::Object::GetString(s, "imageID");
        c.image_ref = api::Object::GetString(s, "image");
        if (api::ObjectView last = api::FindObject(s, {"lastState", "terminated"})) {
          TerminatedState lt;
          lt.exit_code = static_cast<int>(api::FindInt(*last, {"exitCode"}));
          lt.reason = std::string(api::Object::GetString(*last, "reason"));
          lt.started_at = Rfc3339(*last, "startedAt").value_or(now);
          lt.finished_at = Rfc3339(*last, "finishedAt").value_or(now);
          lt.container_id = std::string(api::Object::GetString(*last, "containerID"));
          c.last_terminated = lt;
        }
        if (api::ObjectView running = api::FindObject(s, {"state", "running"})) {
          c.instance = c.restart_count + 1;
          c.stage = ContainerStage::kRunning;
          SetRare(c.adopted_id, std::string(api::Object::GetString(s, "containerID")));
          c.started_at = Rfc3339(*running, "startedAt").value_or(now);
          c.ready_at = c.started_at + c.spec.behavior.readiness_delay;
          c.ready = api::FindBool(s, {"ready"}) || c.ready_at <= now;
          c.waiting_reason = "";
          if (c.spec.behavior.run_for) {
            c.exit_at = c.started_at + *c.spec.behavior.run_for;
            c.exit_code = c.spec.behavior.exit_code;
          }
          if (out) {
            ContainerLogRecord r;
            r.kind = ContainerLogRecord::Kind::kStarted;
            r.container = c.spec.name;
            r.instance = c.instance;
            r.time = c.started_at;
            r.container_id = ContainerId(c);
            r.image = c.spec.image;
            r.log_interval = c.spec.behavior.log_interval;
            out->logs.push_back(std::move(r));
          }
        } else if (api::ObjectView term = api::FindObject(s, {"state", "terminated"})) {
          TerminatedState ts;
          ts.exit_code = static_cast<int>(api::FindInt(*term, {"exitCode"}));
          ts.reason = std::string(api::Object::GetString(*term, "reason"));
          ts.started_at = Rfc3339(*term, "startedAt").value_or(now);
          ts.finished_at = Rfc3339(*term, "finishedAt").value_or(now);
          ts.container_id = std::string(api::Object::GetString(*term, "containerID"));
          c.instance = c.restart_count + 1;
          SetRare(c.adopted_id, ts.container_id);
          c.terminated = ts;
          c.stage = ContainerStage::kExited;
          c.waiting_reason = "";
          c.restart_wanted = !terminal && RestartWanted(c, ts.exit_code);
          if (c.restart_wanted) c.due = now;
        } else if (!terminal && c.last_terminated) {
          // Waiting to restart (CrashLoopBackOff): restart now, without backoff history.
          c.stage = ContainerStage::kStarting;
          c.due = now;
        }
      }
    }
  };
  adopt_list(init_, "initContainerStatuses");
  adopt_list(app_, "containerStatuses");
  if (terminal) {
    stage_ = PodStage::kTerminal;
    phase_ = phase == "Succeeded" ? "Succeeded" : "Failed";
    std::string_view reason = api::Object::GetString(status, "reason");
    std::string_view message = api::Object::GetString(status, "message");
    if (!reason.empty() || !message.empty()) {
      text_ = ConditionState::Text{std::string(reason), std::string(message)};
    }
    for (auto* list : {&init_, &app_}) {
      for (ContainerRun& c : *list) c.due.reset();
    }
  } else {
    stage_ = PodStage::kActive;
    next_init_ = 0;
    while (next_init_ < init_.size() &&
           (init_[next_init_].spec.sidecar ? init_[next_init_].instance > 0
                                           : init_[next_init_].succeeded())) {
      ++next_init_;
    }
    apps_started_ = false;
    if (spec_.being_deleted()) {
      // Deleted while no kubelet ran it (an evicted pod on a node that was down): stop what the
      // previous kubelet left running, then the final delete.
      BeginTermination(node, now, out);
    } else {
      // Launches whatever has not started yet; adopted containers keep their state.
      Progress(node, now, out);
    }
  }
  // Conditions keep the transition times the status recorded.
  if (api::ArrayView conds = api::FindArray(status, {"conditions"})) {
    for (const api::View v : *conds) {
      if (!v.is_object()) continue;
      const api::ObjectView c = v.get_object();
      std::string_view type = api::Object::GetString(c, "type");
      ConditionState* target = type == "PodReadyToStartContainers" ? &cond_ready_to_start_
                               : type == "Initialized"             ? &cond_initialized_
                               : type == "ContainersReady"         ? &cond_containers_ready_
                               : type == "Ready"                   ? &cond_ready_
                                                                   : nullptr;
      if (!target) continue;
      target->set = true;
      target->status = api::Object::GetString(c, "status") == "True";
      target->last_transition = Rfc3339(c, "lastTransitionTime").value_or(now);
      target->SetText(api::Object::GetString(c, "reason"), api::Object::GetString(c, "message"));
    }
  }
  ComputePhase();
  RecomputeConditions(now);
}

}  // namespace converge::kubelet
