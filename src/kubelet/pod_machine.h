// PodMachine: the lifecycle of one pod on a simulated node, as a deterministic state machine over
// explicit times. It decides; the kubelet (kubelet.h) acts: it feeds the machine the pod's spec
// and the time, and turns what comes out into status writes, events, log lines and the final
// DELETE. No I/O, no clock: table tests drive it with a FakeClock's times.
//
// The path of a pod (upstream kubelet's, with the simulated runtime's timings):
//
//   admission (pods/cpu/memory against allocatable; rejection → Failed "OutOfcpu")
//     → sandbox (pod IP from the node's range, PodReadyToStartContainers=True, startTime)
//     → init containers, one at a time, each to completion (a sidecar — restartPolicy: Always —
//       only has to start)
//     → app containers, all at once
//   and for every container start: image (present? pull through the node's queue; missing →
//   ErrImagePull, ImagePullBackOff 1 s later, retry after the backoff 10 s → 20 s → … 300 s),
//   then Created, Started; running until its behaviour (pod_spec.h) makes it exit; then, as
//   restartPolicy says, a restart 1 s later (the PLEG relist) — immediately the first time,
//   after CrashLoopBackOff (10 s doubling to 300 s, measured from finishedAt) the next times.
//   The pod ends Succeeded or Failed when no container will run again (upstream getPhase).
//
// Deletion (deletionTimestamp): every running container gets SIGTERM ("Stopping container" /
// Killing) and exits after its shutdown delay, or is killed (137) at the grace deadline when it
// ignores SIGTERM; nothing starts any more; once nothing runs the pod is terminal and
// wants_delete() tells the kubelet to send the final DELETE (gracePeriodSeconds=0, uid
// precondition) after writing the terminal status.
//
// Time: Advance(now) processes every transition due at or before `now`, each at its own due
// time (status timestamps are exact whatever the caller's granularity); NextDue() says when to
// call again.
//
// Thread-safety: none; one machine is driven by one thread.
#pragma once

#include <boost/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kubelet/flow_backoff.h"
#include "kubelet/node_runtime.h"
#include "kubelet/pod_spec.h"
#include "util/heap_optional.h"
#include "util/shared_text.h"

namespace converge::kubelet {

struct MachineOptions {
  // How long pulling an image takes when no annotation says (kept short: pod startup latency
  // is a headline figure, and upstream's e2e density tests use pre-pulled images).
  Duration default_pull_duration = std::chrono::milliseconds(200);
  // After a failed pull, the pod worker's next sync, when ErrImagePull becomes ImagePullBackOff.
  Duration sync_after_error = std::chrono::seconds(1);
  // After a container exits, the PLEG relist that notices it and restarts it (upstream relists
  // every second).
  Duration sync_after_exit = std::chrono::seconds(1);
  // Upstream kubelet's backoffs (flowcontrol.NewBackOff(10s, 300s) for both image pulls and
  // container restarts: MaxContainerBackOff is 5 minutes).
  Duration image_backoff_initial = std::chrono::seconds(10);
  Duration image_backoff_max = std::chrono::minutes(5);
  Duration crash_backoff_initial = std::chrono::seconds(10);
  Duration crash_backoff_max = std::chrono::minutes(5);
  // killContainer's minimumGracePeriodInSeconds: containers always get 2 s before SIGKILL.
  Duration minimum_grace = std::chrono::seconds(2);
};

struct KubeletEvent {
  std::string type;    // "Normal" or "Warning"
  std::string reason;  // "Pulling", "Started", "BackOff", ...
  std::string message;
  std::string field_path;  // "spec.containers{web}", or "" for the pod itself
  WallTime time;

  friend bool operator==(const KubeletEvent&, const KubeletEvent&) = default;
};

// A change in a container's process, for the log store (container_logs.h).
struct ContainerLogRecord {
  enum class Kind { kStarted, kSigterm, kExited };
  Kind kind = Kind::kStarted;
  util::SharedText container;
  int instance = 0;  // 1 for the first run, 2 after the first restart, ...
  WallTime time;
  // kStarted:
  std::string container_id;
  util::SharedText image;
  Duration log_interval{0};
  // kSigterm:
  bool ignored = false;
  // kExited:
  int exit_code = 0;
  bool killed = false;  // SIGKILL at the grace deadline: no last words
};

struct MachineOutput {
  std::vector<KubeletEvent> events;
  std::vector<ContainerLogRecord> logs;
};

enum class ContainerStage {
  kNotStarted,  // waiting for its turn (init containers run one at a time)
  kStarting,    // due to try to start: image, then create and start (also backoff waits)
  kPulling,     // an image pull in flight until `due`
  kRunning,
  kExited,   // terminated; a restart may be due
  kBlocked,  // cannot start until the spec changes (InvalidImageName, ErrImageNeverPull)
};

struct TerminatedState {
  int exit_code = 0;
  std::string reason;  // "Completed" or "Error"
  WallTime started_at;
  WallTime finished_at;
  std::string container_id;  // "converge-sim://<hex>"

  friend bool operator==(const TerminatedState&, const TerminatedState&) = default;
};

// One container of a pod machine, held for every container of every pod on every simulated node:
// the rare parts (terminations, error messages) are on the heap, the image's names are shared
// with every container that runs the same image (util::SharedText), and the small fields are
// grouped, which keeps it within 320 bytes (a static_assert below holds it there).
struct ContainerRun {
  ContainerSpecView spec;
  std::optional<WallTime> due;
  // Shown while not running and not terminated; one of a few reasons, shared.
  util::SharedText waiting_reason;
  util::HeapOptional<std::string> waiting_message;  // set with some reasons (ErrImagePull...)
  // The image as a runtime reports it, once started: normalized reference and imageID.
  util::SharedText image_ref;
  util::SharedText image_id;
  // A pull in flight.
  WallTime pull_requested;
  WallTime pull_started;
  util::HeapOptional<std::string> pull_error;  // when the pull in flight will fail
  util::HeapOptional<std::string> last_pull_error;
  // The running (or last) instance. Its container ID is not held but derived from the pod's uid,
  // the name and the instance (PodMachine::ContainerId): 80 bytes less for every container. Only
  // an ID taken over from a previous kubelet's status is kept as text.
  util::HeapOptional<std::string> adopted_id;
  WallTime started_at;
  WallTime ready_at;
  std::optional<WallTime> exit_at;
  std::string_view exit_reason;  // "" → from exit_code; else a literal ("Completed", "Error")
  // Exits.
  util::HeapOptional<TerminatedState> terminated;       // the current state, when exited
  util::HeapOptional<TerminatedState> last_terminated;  // lastState
  ContainerStage stage = ContainerStage::kNotStarted;
  int exit_code = 0;  // when it exits at exit_at
  int restart_count = 0;
  int instance = 0;
  bool init = false;
  bool pull_fails = false;
  bool ready = false;
  bool killing = false;         // SIGTERM sent
  bool restart_wanted = false;  // kExited: a restart is due
  bool restarting = false;      // kStarting: crash backoff applies before starting
  bool derived_id = false;      // started by this machine: its ID is derived

  bool running() const { return stage == ContainerStage::kRunning; }
  // An init container that completed (exit 0, no restart coming).
  bool succeeded() const {
    return stage == ContainerStage::kExited && terminated && terminated->exit_code == 0 &&
           !restart_wanted;
  }
};
// 320 is a jemalloc size class; one byte more costs 64 (the 384 class) per container.
static_assert(sizeof(ContainerRun) <= 320);

enum class PodStage {
  kNew,          // not yet admitted
  kActive,       // admitted: sandbox up, containers starting/running
  kTerminating,  // deletion in progress: containers stopping
  kTerminal,     // nothing runs any more (Succeeded, Failed or rejected)
};

// One of a pod's conditions. Most carry no reason or message (a ready pod's none at all), so the
// two strings are held on the heap only when there is one.
struct ConditionState {
  struct Text {
    std::string reason;
    std::string message;
    friend bool operator==(const Text&, const Text&) = default;
  };

  WallTime last_transition;
  util::HeapOptional<Text> text;
  bool status = false;
  bool set = false;  // ever computed

  std::string_view reason() const { return text ? std::string_view(text->reason) : ""; }
  std::string_view message() const { return text ? std::string_view(text->message) : ""; }
  void SetText(std::string_view reason, std::string_view message);

  friend bool operator==(const ConditionState&, const ConditionState&) = default;
};

class PodMachine {
 public:
  // `options` (not owned) must outlive the machine; nullptr: MachineOptions' defaults.
  explicit PodMachine(PodSpecView spec, const MachineOptions* options = nullptr);

  // Takes over the state a previous kubelet reported (the pod's status) instead of starting
  // from scratch: running containers keep running, exited ones keep their exit. Call before
  // the first Advance, with `now` the time the pod is first seen. A status without startTime
  // (never admitted) changes nothing.
  void Adopt(const boost::json::object& status, NodeRuntime& node, WallTime now,
             MachineOutput* out);

  // Advances to `now`, then applies a newer view of the pod: deletion starts termination; a
  // changed image restarts that container (upstream: "definition changed").
  void Update(PodSpecView spec, NodeRuntime& node, WallTime now, MachineOutput* out);

  // Processes every transition due at or before `now` (admission first, if not yet done).
  void Advance(NodeRuntime& node, WallTime now, MachineOutput* out);

  // The pod left the API (our final DELETE, or a force deletion): whatever still runs is killed
  // and the node's resources are freed.
  void Remove(NodeRuntime& node, WallTime now, MachineOutput* out);

  // When Advance next has something to do; nullopt when nothing is scheduled.
  std::optional<WallTime> NextDue() const;

  // Terminal after a deletion: the final DELETE may be sent (after the terminal status).
  bool wants_delete() const { return stage_ == PodStage::kTerminal && spec_.being_deleted(); }

  // ---- the state, for the status builder (pod_status.h) and the log server ----
  const PodSpecView& spec() const { return spec_; }
  PodStage stage() const { return stage_; }
  std::string_view phase() const { return phase_; }
  // The pod's status reason and message: a rejection at admission ("OutOfcpu"), or those of
  // the terminal status a previous kubelet reported.
  std::string_view reason() const { return text_ ? std::string_view(text_->reason) : ""; }
  std::string_view message() const { return text_ ? std::string_view(text_->message) : ""; }
  const std::string& pod_ip() const { return pod_ip_; }
  const std::string& host_ip() const { return host_ip_; }
  std::optional<WallTime> start_time() const { return start_time_; }
  // When admission decided (admitted or rejected); the epoch before that.
  WallTime decided_at() const { return decided_at_; }
  const std::vector<ContainerRun>& init_containers() const { return init_; }
  const std::vector<ContainerRun>& containers() const { return app_; }
  const ContainerRun* FindContainer(std::string_view name) const;
  // The ID of `c`'s current (or last) instance, "converge-sim://<64 hex digits>", or the one
  // adopted with it; "" before its first start.
  std::string ContainerId(const ContainerRun& c) const;
  // PodReadyToStartContainers, Initialized, ContainersReady, Ready.
  const ConditionState& ready_to_start() const { return cond_ready_to_start_; }
  const ConditionState& initialized() const { return cond_initialized_; }
  const ConditionState& containers_ready() const { return cond_containers_ready_; }
  const ConditionState& ready() const { return cond_ready_; }

 private:
  void Admit(NodeRuntime& node, WallTime t, MachineOutput* out);
  // One step at time t: containers due, then the pod-level consequences.
  void ProcessAt(NodeRuntime& node, WallTime t, MachineOutput* out);
  void ProcessContainer(ContainerRun& c, NodeRuntime& node, WallTime t, MachineOutput* out);
  void AttemptStart(ContainerRun& c, NodeRuntime& node, WallTime t, MachineOutput* out);
  void StartContainer(ContainerRun& c, WallTime t, MachineOutput* out);
  void ExitContainer(ContainerRun& c, WallTime t, MachineOutput* out);
  void Kill(ContainerRun& c, WallTime t, WallTime deadline, MachineOutput* out,
            const std::string& event_message);
  void BeginTermination(NodeRuntime& node, WallTime t, MachineOutput* out);
  void Progress(NodeRuntime& node, WallTime t, MachineOutput* out);
  void BecomeTerminal(NodeRuntime& node, WallTime t);
  void ComputePhase();
  void RecomputeConditions(WallTime t);
  void Emit(MachineOutput* out, WallTime t, const ContainerRun* c, std::string type,
            std::string reason, std::string message) const;
  std::string CrashKey(const ContainerRun& c) const {
    return c.spec.name.str() + "@" + c.spec.image.str();
  }
  bool RestartWanted(const ContainerRun& c, int exit_code) const;

  PodSpecView spec_;
  const MachineOptions& options_;
  PodStage stage_ = PodStage::kNew;
  bool admitted_ = false;      // holds the node's resources and an IP
  bool apps_started_ = false;  // initialization finished; app containers launched
  // Always one of upstream's phase literals ("Pending", "Running", "Succeeded", "Failed").
  std::string_view phase_ = "Pending";
  util::HeapOptional<ConditionState::Text> text_;  // reason() and message(); most pods have none
  std::string pod_ip_;
  util::SharedText host_ip_;  // the node's, alike for all its pods
  std::optional<WallTime> start_time_;
  WallTime decided_at_{};
  std::vector<ContainerRun> init_;
  std::vector<ContainerRun> app_;
  size_t next_init_ = 0;  // the first init container not yet done
  WallTime kill_deadline_{};
  // The image-pull and crash backoffs, made by the first pull failure or restart: most pods
  // never have either.
  struct Backoffs {
    FlowBackoff image;
    FlowBackoff crash;
  };
  Backoffs& backoffs();
  std::unique_ptr<Backoffs> backoffs_;
  ConditionState cond_ready_to_start_;
  ConditionState cond_initialized_;
  ConditionState cond_containers_ready_;
  ConditionState cond_ready_;
};

}  // namespace converge::kubelet
