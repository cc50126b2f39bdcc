// Reconciler: carries out Decide's plans (decide.h) through the API and the cloud.
//
// One reconcile of a key:
//   1. read the object from the cache (level-based: not from the event that woke us);
//   2. observe: list the cloud's load balancers tagged with the object's UID — always, before
//      anything is created. That lookup is what recovers a create that was performed but not
//      acknowledged (a timeout, a crash of this process between the call and the status write):
//      the load balancer is found and adopted instead of created again;
//   3. decide the next step, do it, fold its outcome into the snapshot, decide again (at most
//      kMaxSteps steps; the queue brings the key back if more remain).
// A cloud failure ends the reconcile with an error, so the key is retried with the work queue's
// per-key exponential backoff; a conflict on the object (stale cache) does the same.
//
// Thread-safety: Reconcile may run concurrently for different keys (the work queue never runs
// one key twice at a time).
#pragma once

#include <stop_token>

#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/indexer.h"
#include "client/rest_client.h"
#include "cloud.h"
#include "decide.h"
#include "util/clock.h"

namespace lboperator {

namespace client = converge::client;

struct ReconcilerOptions {
  client::RestClient* client = nullptr;       // required
  const client::Indexer* cache = nullptr;     // required: the LoadBalancer informer's cache
  CloudApi* cloud = nullptr;                  // required
  client::EventRecorder* recorder = nullptr;  // optional
  util::Clock* clock = nullptr;               // nullptr: util::RealClock()
  DecideOptions decide;
};

class Reconciler {
 public:
  explicit Reconciler(ReconcilerOptions options);

  client::ReconcileResult Reconcile(const api::ObjectKey& key, std::stop_token stop);

  // Steps per reconcile; a healthy create takes four (finalizer, create, status, nothing).
  static constexpr int kMaxSteps = 8;

 private:
  CloudObservation Observe(const api::Object& obj, std::stop_token stop);
  void Event(const api::Object& obj, std::string_view type, std::string_view reason,
             std::string message);

  const ReconcilerOptions options_;
  util::Clock* const clock_;
};

}  // namespace lboperator
