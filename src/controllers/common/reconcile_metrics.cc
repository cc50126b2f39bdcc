#include "controllers/common/reconcile_metrics.h"

#include <chrono>

namespace converge::controllers {

client::ReconcileFunc InstrumentReconcile(std::string controller, util::Registry* registry,
                                          util::Clock* clock, client::ReconcileFunc reconcile) {
  util::CounterFamily& total =
      registry->AddCounter({.name = "controller_runtime_reconcile_total",
                            .help = "Total number of reconciliations per controller",
                            .labels = {"controller", "result"}});
  util::CounterFamily& errors =
      registry->AddCounter({.name = "controller_runtime_reconcile_errors_total",
                            .help = "Total number of reconciliation errors per controller",
                            .labels = {"controller"}});
  util::HistogramFamily& time =
      registry->AddHistogram({.name = "controller_runtime_reconcile_time_seconds",
                              .help = "Length of time per reconciliation per controller",
                              .labels = {"controller"}});
  struct Children {
    util::Counter* success;
    util::Counter* error;
    util::Counter* requeue;
    util::Counter* requeue_after;
    util::Counter* errors;
    util::Histogram* time;
  };
  Children c{&total.WithLabelValues({controller, "success"}),
             &total.WithLabelValues({controller, "error"}),
             &total.WithLabelValues({controller, "requeue"}),
             &total.WithLabelValues({controller, "requeue_after"}),
             &errors.WithLabelValues({controller}),
             &time.WithLabelValues({controller})};
  return [c, clock, reconcile = std::move(reconcile)](const api::ObjectKey& key,
                                                      std::stop_token stop) {
    util::Clock::TimePoint start = clock->Now();
    client::ReconcileResult r = reconcile(key, std::move(stop));
    c.time->Observe(std::chrono::duration<double>(clock->Now() - start).count());
    if (!r.error.ok()) {
      c.error->Inc();
      c.errors->Inc();
    } else if (r.requeue_after.count() > 0) {
      c.requeue_after->Inc();
    } else if (r.requeue) {
      c.requeue->Inc();
    } else {
      c.success->Inc();
    }
    return r;
  };
}

}  // namespace converge::controllers
