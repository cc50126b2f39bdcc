// OrphanSweeper: deletes cloud load balancers this operator made whose object no longer exists.
//
// The finalizer and the lookup before every create (reconciler.h) leave one window open: a call
// still in flight when the operator gave up on it (the cloud performs it after the client's
// timeout) can land after the object's deletion looked and found nothing. Real clouds have that
// window too. The sweep closes it: periodically, list every load balancer tagged
// managed-by=loadbalancer-operator, THEN read the cache, and delete those whose UID tag names no
// object in it.
//
// Why the order makes it safe: a load balancer can only exist if some reconcile asked for it, and
// reconciles only run for objects in the cache, which carry our finalizer before any create. An
// object leaves the cache only after its finalizer is removed, i.e. after its deletion ran. So
// a load balancer listed at T1 whose UID is not in the cache at T2 > T1 belongs to an object
// that is gone for good.
//
// Thread-safety: Run on one thread; SweepOnce is not reentrant.
#pragma once

#include <chrono>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "client/shared_informer.h"
#include "cloud.h"
#include "util/clock.h"

namespace lboperator {

namespace client = converge::client;

// The load balancers among `managed` whose UID tag is not in `live_uids` (pure). With a
// non-empty `ns`, only those whose object tag is in that namespace (an operator restricted to a
// namespace must not judge others).
std::vector<ExternalLoadBalancer> FindOrphans(const std::vector<ExternalLoadBalancer>& managed,
                                              const std::set<std::string>& live_uids,
                                              const std::string& ns);

struct OrphanSweeperOptions {
  CloudApi* cloud = nullptr;                         // required
  const client::SharedInformer* informer = nullptr;  // required: the LoadBalancer informer
  std::string ns;                                    // the operator's namespace; "" = all
  std::chrono::milliseconds interval{std::chrono::seconds(30)};
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
};

class OrphanSweeper {
 public:
  explicit OrphanSweeper(OrphanSweeperOptions options);

  // Sweeps every interval until stop (the first sweep after one interval, once the cache has
  // synced).
  void Run(std::stop_token stop);
  // One sweep; returns how many load balancers it deleted. Errors (cloud down) are logged and
  // the sweep is simply tried again next time.
  int SweepOnce(std::stop_token stop);

 private:
  const OrphanSweeperOptions options_;
  util::Clock* const clock_;
};

}  // namespace lboperator
