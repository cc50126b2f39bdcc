// Decide: the LoadBalancer operator's logic as a pure function — from what the operator knows
// (the object from the cache, what the cloud reported for the object's UID tag) to the ONE next
// step. The reconciler (reconciler.h) carries the step out, folds its outcome into the snapshot
// and decides again, until the step is kNothing. Every step is safe to repeat: that is what makes
// a crash, a timeout or a stale cache harmless.
//
// The order of steps, and why:
//   1. object gone from the cache                 → nothing (the finalizer guarantees we saw its
//                                                   deletion while the load balancer existed)
//   2. being deleted:  cloud unreachable          → status CloudUnavailable; retry with backoff
//                      load balancers tagged      → delete them, one per step
//                      none left                  → remove the finalizer
//   3. no finalizer                               → add it, BEFORE anything exists in the cloud
//   4. cloud unreachable (lookup failed)          → status CloudUnavailable (keeping the last
//                                                   known id and address); retry with backoff
//   5. spec invalid                               → status InvalidSpec; no retry until it changes
//   6. several tagged (a leak from elsewhere)     → delete all but the one status names (else
//                                                   the oldest)
//   7. none tagged                                → create, with idempotency key and tags from
//                                                   the UID (a lost answer is found by the tag
//                                                   lookup that precedes every create)
//   8. ports differ                               → update them
//   9. status differs                             → write status (externalID, address,
//                                                   observedGeneration, Ready)
//  10. otherwise                                  → nothing; poll while provisioning, else
//                                                   resync later (drift: a load balancer deleted
//                                                   behind our back is recreated)
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "cloud.h"
#include "loadbalancer.h"

namespace lboperator {

// What the cloud said about the object's UID tag.
struct CloudObservation {
  util::Status error;                       // the lookup failed: the cloud's state is unknown
  std::vector<ExternalLoadBalancer> found;  // oldest first
};

struct Snapshot {
  api::ObjectPtr object;  // from the cache; null when gone
  CloudObservation cloud;
  std::string now;  // RFC 3339: lastTransitionTime of conditions that change
};

struct Plan {
  enum class Action {
    kNothing,
    kAddFinalizer,
    kRemoveFinalizer,
    kCreate,
    kUpdatePorts,
    kDelete,
    kUpdateStatus,
  };
  Action action = Action::kNothing;
  CreateRequest create;       // kCreate
  std::string target_id;      // kUpdatePorts, kDelete
  std::vector<Port> ports;    // kUpdatePorts
  LoadBalancerStatus status;  // kUpdateStatus
  // kNothing: why the object is not done yet. kUnavailable: retry with backoff;
  // kInvalidArgument: terminal until the spec changes. OK: done.
  util::Status error;
  // kNothing with OK error: check again after this long (zero: only on the next event).
  std::chrono::milliseconds requeue_after{0};
  std::string why;  // for logs and events
};

struct DecideOptions {
  // While a load balancer is provisioning, look again this often.
  std::chrono::milliseconds provisioning_poll{std::chrono::seconds(1)};
  // When all is well, look again this often (detects load balancers deleted behind our back).
  std::chrono::milliseconds resync{std::chrono::seconds(60)};
};

Plan Decide(const Snapshot& snapshot, const DecideOptions& options = {});

// The create request for an object: name "<namespace>-<name>", the spec's ports, the spec's tags
// plus the operator's (UID, namespace/name, managed-by), idempotency key "lb-<uid>".
CreateRequest DesiredCreate(const api::Object& obj, const LoadBalancerSpec& spec);

// Whether an update of the object needs a reconcile: the spec (generation), deletion or
// finalizers changed. Status-only updates — ours — do not.
bool NeedsReconcile(const api::Object& old_obj, const api::Object& new_obj);

}  // namespace lboperator
