// The v1 PodStatus a simulated kubelet reports for a PodMachine, the strategic-merge patch that
// writes it to pods/status, and the comparison that decides whether a write is needed at all.
//
// The status has upstream's shape, so that kubectl's printers and describe read it as they read
// a real kubelet's: phase; conditions PodReadyToStartContainers, Initialized, Ready,
// ContainersReady and PodScheduled (in that order, lastProbeTime null); hostIP(s), podIP(s),
// startTime; containerStatuses and initContainerStatuses with containerID, image (normalized
// once pulled), imageID, state (waiting/running/terminated with reasons), lastState,
// restartCount, started and ready. A pod rejected at admission gets phase Failed, reason and
// message (upstream's rejectPod) and keeps PodScheduled.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "api/json_view.h"
#include "kubelet/pod_machine.h"
#include "util/heap_optional.h"

namespace converge::kubelet {

// The status for `machine`. `pod_scheduled_time` is the lastTransitionTime of the pod's
// PodScheduled condition as the API has it (the kubelet keeps it), or "" to use startTime.
boost::json::object BuildPodStatus(const PodMachine& machine, std::string_view pod_scheduled_time);

// The body of the strategic-merge patch on pods/status that sets `status` for the pod with
// `uid` (metadata.uid makes it apply to that incarnation only; $setElementOrder keeps the
// conditions in upstream's order). Members the status lacks are sent as null where an earlier
// status may have set them: the pod's reason and message, and each condition's.
std::string BuildStatusPatch(std::string_view uid, const boost::json::object& status);

// A fingerprint of the kubelet-owned parts of a status: equal fingerprints mean writing one over
// the other changes nothing a reader could see. Key order, empty strings/objects, lastProbeTime
// and conditions of types the kubelet does not own are ignored; conditions compare by type.
uint64_t StatusFingerprint(api::ObjectView status);

// The lastTransitionTime of the PodScheduled condition in `status`, or "".
std::string PodScheduledTime(api::ObjectView status);

// A PodScheduledTime as the kubelet keeps it for every pod, to echo in its status writes: a time
// when the text is RFC 3339 in whole seconds (what API servers write; 8 bytes, not a 20-character
// string on the heap), else the text verbatim.
class ScheduledTime {
 public:
  ScheduledTime() = default;
  explicit ScheduledTime(std::string_view text);

  bool empty() const { return at_ == WallTime{} && !verbatim_; }
  // The text it was made from ("" for none).
  std::string text() const;

 private:
  WallTime at_{};  // the epoch: none, or the text is verbatim_
  util::HeapOptional<std::string> verbatim_;
};

// A 64-bit hash of `v`'s canonical form: objects' members in key order, members that are "", {},
// [] or null (or objects of only such members) dropped, arrays in order, an integer the same
// whether signed or unsigned. Values with equal canonical forms hash alike; others differ but for
// a collision of the hash.
uint64_t CanonicalHash(const boost::json::value& v);

}  // namespace converge::kubelet
