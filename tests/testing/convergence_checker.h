// ConvergenceChecker: watches a namespace's Pods, ReplicaSets and Deployments while a test runs
// (faults and all) and checks the seed's claims (§十一, §十二) against everything it saw.
//
// It is an ordinary API client: it lists, watches from the list's resourceVersion, resumes from
// its last resourceVersion when a watch ends, relists after 410 Expired, and keeps retrying
// (re-reading the kubeconfig, since a restarted server may listen on a new port) while the
// server is down. Every event and every relist is recorded with its revision; Violations()
// replays them in revision order — resourceVersion is one global revision, so the replay sees
// the store's states in the order they happened, whatever order the three watches delivered
// them in. A relist is a snapshot: the replay learns the state at its revision, not how it got
// there.
//
// Invariants (Violations):
//   1. No ReplicaSet ever has more live pods than its spec.replicas: checked when each pod is
//      created, against the ReplicaSet's spec at that revision, or the spec that one replaced
//      (the controller's cache may be one spec change behind, never more: see spec_at) — a
//      controller with a stale cache that creates a pod twice fails this. A pod is live unless it
//      is terminating (deletionTimestamp) or finished (phase Succeeded/Failed), as the ReplicaSet
//      controller counts. Across a relist, whose pods were created at unknown revisions, the bound
//      is the largest spec.replicas the ReplicaSet had since the previous observation.
//   2. maxSurge: whenever a Deployment's status says it has acted on its current spec
//      (observedGeneration == generation), the spec.replicas of its ReplicaSets add up to at
//      most spec.replicas + maxSurge (maxSurge resolved against spec.replicas, percentages
//      rounded up, as upstream).
//   3. Accounting: pods created − pods deleted (as observed) = the pods a fresh list returns at
//      the end, pod for pod (a watch that lost an event, or a leaked pod, fails this), and that
//      equals the sum of the Deployments' spec.replicas (nothing leaked, nothing duplicated).
//   4. Every Deployment ends with observedGeneration = generation and replicas, updatedReplicas,
//      readyReplicas and availableReplicas = spec.replicas; every pod is owned by its
//      Deployment's newest ReplicaSet; old ReplicaSets are scaled to zero.
// Quiet (CheckQuiet): once converged, no component writes anything in a window, besides the
// writes a healthy idle cluster makes by design: Leases (node heartbeats, leader election),
// Events, and node status (kubelet heartbeats). Measured from the API server's
// apiserver_request_total counters, so no-op writes count too.
//
// Thread-safety: Start/Stop from the test thread; the other methods may be called any time.
#pragma once

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace converge::testing {

struct ConvergenceCheckerOptions {
  // Read again whenever the server cannot be reached.
  std::string kubeconfig_path;
  std::string ns = "default";
};

class ConvergenceChecker {
 public:
  explicit ConvergenceChecker(ConvergenceCheckerOptions options);
  ~ConvergenceChecker();
  ConvergenceChecker(const ConvergenceChecker&) = delete;
  ConvergenceChecker& operator=(const ConvergenceChecker&) = delete;

  // Starts the three watchers; returns once each has listed once (false after 60 s).
  bool Start();
  void Stop();

  // Polls (fresh lists) until invariant 4's final state holds and every node is Ready without
  // not-ready/unreachable taints and no pod is terminating, or `timeout` passes; on failure
  // `why` says what was still missing.
  bool WaitConverged(std::chrono::seconds timeout, std::string* why = nullptr);

  // Invariants 1-4 over what was recorded so far (call after WaitConverged). Empty = all hold.
  std::vector<std::string> Violations();

  // Writes the API server served during `window` outside the expected ones (see above), as
  // "VERB resource[/subresource] xN". Empty = quiet.
  std::vector<std::string> CheckQuiet(std::chrono::milliseconds window);

  struct Stats {
    int64_t events = 0;   // watch events recorded
    int64_t resumes = 0;  // watches re-established from a resourceVersion
    int64_t relists = 0;  // lists after the first one of each kind (410 or startup failures)
  };
  Stats stats() const;

  enum class Kind { kPod, kReplicaSet, kDeployment };

 private:
  struct Record {
    int64_t revision = 0;
    Kind kind = Kind::kPod;
    bool snapshot = false;
    std::string type;                        // ADDED, MODIFIED, DELETED (events)
    boost::json::object object;              // events
    std::vector<boost::json::object> items;  // snapshots
    // Snapshots: the resourceVersion the watcher had before it relisted (0 for its first list).
    // Between gap_from and revision this kind's events are unknown to the replay.
    int64_t gap_from = 0;
    int64_t seq = 0;
  };

  void WatchLoop(Kind kind);
  void Add(Record r);

  const ConvergenceCheckerOptions options_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;

  mutable std::mutex mu_;
  std::vector<Record> records_;  // guarded by mu_
  int listed_ = 0;               // kinds listed at least once; guarded by mu_
  Stats stats_;                  // guarded by mu_
};

}  // namespace converge::testing
