// Reconcile metrics for a controller (the names controller-runtime uses, so that dashboards
// written for it work):
//   controller_runtime_reconcile_total{controller, result}   result: success | error | requeue |
//                                                             requeue_after
//   controller_runtime_reconcile_errors_total{controller}
//   controller_runtime_reconcile_time_seconds{controller}    (histogram)
// The work queue's own metrics (depth, adds, latency, retries) come from client::Controller.
//
// Thread-safety: the returned function is safe to call concurrently.
#pragma once

#include <string>

#include "client/controller.h"
#include "util/clock.h"
#include "util/metrics.h"

namespace converge::controllers {

// Wraps `reconcile` so that every call is counted and timed under `controller`.
client::ReconcileFunc InstrumentReconcile(std::string controller, util::Registry* registry,
                                          util::Clock* clock, client::ReconcileFunc reconcile);

}  // namespace converge::controllers
