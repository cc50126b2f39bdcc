// PodSpecView: what the kubelet keeps of a pod it runs — names, the containers with the behaviour
// their annotations choose, restart policy, grace periods, deletion and resource requests —
// extracted once from the API object, which is then dropped (a parsed Pod costs several KB;
// this costs a few hundred bytes, which is what lets one process carry 100k pods).
//
// Container behaviour (documented in docs/KUBELET.md) comes from annotations on the pod:
//
//   sim.converge.io/<field>               applies to every container of the pod
//   <container>.sim.converge.io/<field>   applies to that container and wins over the above
//
//   run-seconds              exit after this many seconds (decimal allowed)
//   exit-code                the exit code when it exits by itself (default 0)
//   crash-after-seconds      exit after this many seconds with exit-code (default 1)
//   readiness-delay-seconds  become ready this long after starting (default: the readiness
//                            probe's initialDelaySeconds, else 0)
//   ignore-sigterm           "true": keep running after SIGTERM until the grace period ends,
//                            then get killed (exit code 137)
//   shutdown-seconds         after SIGTERM, take this long to exit (default 0)
//   pull-seconds             how long pulling its image takes (default: the kubelet's option)
//   log-interval-seconds     one log line every this many seconds while running (default 10)
//
// Without run-seconds or crash-after-seconds, an init container exits 0 after 1 s, a container of
// a pod owned by a Job exits 0 after 1 s, and any other container runs until it is killed.
//
// Thread-safety: a value.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/types.h"
#include "util/shared_text.h"

namespace converge::kubelet {

using WallTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

inline constexpr std::string_view kAnnotationDomain = "sim.converge.io";

enum class PullPolicy { kAlways, kIfNotPresent, kNever };
enum class RestartPolicy { kAlways, kOnFailure, kNever };

struct ContainerBehavior {
  std::optional<Duration> run_for;  // exits by itself after this long; nullopt: until killed
  int exit_code = 0;
  Duration readiness_delay{0};
  bool ignore_sigterm = false;
  Duration shutdown_delay{0};
  std::optional<Duration> pull_duration;  // nullopt: the kubelet's default
  Duration log_interval = std::chrono::seconds(10);

  friend bool operator==(const ContainerBehavior&, const ContainerBehavior&) = default;
};

// Held twice for every container the kubelet runs (in the pod's view and in its ContainerRun).
// The name and image are the same in every pod of a workload, so they are shared
// (util::SharedText) rather than copied into each: an image reference is usually past
// std::string's 15 inline characters, which cost a heap copy per holder.
struct ContainerSpecView {
  util::SharedText name;
  util::SharedText image;
  PullPolicy pull_policy = PullPolicy::kIfNotPresent;
  ContainerBehavior behavior;
  bool sidecar = false;  // an init container with restartPolicy: Always

  friend bool operator==(const ContainerSpecView&, const ContainerSpecView&) = default;
};

struct PodSpecView {
  api::ObjectKey key;
  std::string uid;
  util::SharedText node_name;  // alike for the hundred-odd pods of a node
  std::vector<ContainerSpecView> init_containers;
  std::vector<ContainerSpecView> containers;
  RestartPolicy restart_policy = RestartPolicy::kAlways;
  bool host_network = false;
  int64_t termination_grace_seconds = 30;
  // Set once the pod is being deleted.
  std::optional<WallTime> deletion_timestamp;
  std::optional<int64_t> deletion_grace_seconds;
  // Sum of the app containers' requests (max with each init container's), for admission.
  int64_t cpu_request_milli = 0;
  int64_t memory_request_bytes = 0;

  bool being_deleted() const { return deletion_timestamp.has_value(); }
  // "name_namespace(uid)", upstream's format.Pod, used in kubelet messages.
  std::string FormatPod() const;
  const ContainerSpecView* FindContainer(std::string_view name) const;
};

// Builds the view of `pod`. Never fails: unparseable annotations are ignored (the default
// behaviour applies), as a real runtime ignores annotations it does not know.
PodSpecView MakePodSpecView(const api::Object& pod);

// Parses a resource quantity ("100m", "1.5", "2Gi", "1e3") into thousandths of a unit, rounded
// up; nullopt when malformed.
std::optional<int64_t> ParseQuantityMilli(std::string_view text);

}  // namespace converge::kubelet
