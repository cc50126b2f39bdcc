// NodeRuntime: the simulated container runtime of one node, as far as pods share it: the images
// present on the node and the queue they are pulled through, the pod IP range, and the resources
// admitted pods hold. The pod state machines (pod_machine.h) consult and update it.
//
// Image pulls are serialized per node by default, as upstream's kubelet does
// (serializeImagePulls: true): a pull starts when the previous one on the node has finished. A
// pull of an image another pod is already pulling joins that pull instead of queueing (the layers
// are shared), and pulling an image that is already present costs nothing but the wait.
//
// Pod IPs come from the node's /24: node index i owns 10.x.y.0/24 where x.y is 244.0 + i (so
// node 0 is 10.244.0.0/24, node 256 is 10.245.0.0/24; the 10/8 range holds 65,536 nodes); hosts
// .2–.254 are handed out round-robin (CNI host-local style: an address is not reused at once).
//
// Per pod (by uid) the runtime holds one entry of a flat map: its host byte and its admitted
// requests, and a bitset says which hosts are in use (a node-based map for each and a set of the
// hosts come to about 260 bytes per pod by their nodes' sizes, this to about 110; every pod of
// every simulated node has one).
//
// Thread-safety: none; owned by the kubelet's sync loop.
#pragma once

#include <boost/unordered/unordered_flat_map.hpp>

#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace converge::kubelet {

using WallTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

struct NodeAllocatable {
  int64_t cpu_milli = 16'000;
  int64_t memory_bytes = 64ll << 30;
  int64_t pods = 110;
};

struct NodeRuntimeOptions {
  std::string node_name;
  int node_index = 0;   // selects the pod CIDR
  std::string host_ip;  // the node's InternalIP: hostIP of its pods, podIP of hostNetwork pods
  NodeAllocatable allocatable;
  bool serialize_image_pulls = true;
};

class NodeRuntime {
 public:
  explicit NodeRuntime(NodeRuntimeOptions options);

  const std::string& node_name() const { return options_.node_name; }
  const std::string& host_ip() const { return options_.host_ip; }
  // "10.244.3.0/24".
  std::string PodCidr() const;

  // ---- images ----
  // The image (by normalized reference) is on the node at `now`.
  bool ImagePresent(const std::string& image, WallTime now) const;
  struct PullTicket {
    WallTime start;  // when the transfer starts (after waiting in the queue)
    WallTime done;   // when the pull finishes (successfully or not)
  };
  // Queues a pull requested at `now` that takes `duration` once started. `will_succeed` pulls
  // make the image present at `done`.
  PullTicket SchedulePull(const std::string& image, Duration duration, bool will_succeed,
                          WallTime now);
  size_t image_count() const { return images_.size(); }

  // ---- pod IPs ----
  // An address for pod `uid` (the same one when asked twice); nullopt when the range is full.
  std::optional<std::string> AllocateIp(const std::string& uid);
  // Takes `ip` for `uid` (a pod adopted after a kubelet restart); false when it is taken.
  bool ReserveIp(const std::string& uid, const std::string& ip);
  void ReleaseIp(const std::string& uid);

  // ---- admission ----
  struct Requests {
    int64_t cpu_milli = 0;
    int64_t memory_bytes = 0;
  };
  // Admits pod `uid` if its requests fit what is left; otherwise returns the rejection
  // (upstream's reason "OutOfpods"/"OutOfcpu"/"OutOfmemory" and message).
  struct Rejection {
    std::string reason;
    std::string message;  // "Node didn't have enough resource: cpu, requested: …"
  };
  std::optional<Rejection> Admit(const std::string& uid, Requests requests);
  void Release(const std::string& uid);
  size_t admitted_pods() const { return admitted_count_; }

 private:
  const NodeRuntimeOptions options_;
  struct ImageState {
    WallTime ready_at;  // present from this time (a pull in flight until then)
  };
  std::unordered_map<std::string, ImageState> images_;
  WallTime pull_queue_free_at_{};
  // What a pod holds: an address (host byte 2..254; 0: none) and admitted requests. An entry
  // lives while it holds either.
  struct PodHold {
    int host = 0;
    bool admitted = false;
    Requests requests;
  };
  // Drops `it`'s entry if it holds nothing any more.
  void EraseIfEmpty(boost::unordered_flat_map<std::string, PodHold>::iterator it);
  boost::unordered_flat_map<std::string, PodHold> pods_;  // by uid
  std::bitset<256> used_hosts_;
  int next_host_ = 2;
  size_t admitted_count_ = 0;
  Requests used_;
};

}  // namespace converge::kubelet
