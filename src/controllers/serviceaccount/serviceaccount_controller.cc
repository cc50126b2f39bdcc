#include "controllers/serviceaccount/serviceaccount_controller.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"
#include "client/controller.h"
#include "controllers/common/namespaces.h"
#include "controllers/common/queue_controller.h"
#include "controllers/common/reconcile_metrics.h"
#include "controllers/serviceaccount/decide.h"

namespace converge::controllers::serviceaccount {

namespace {

const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
const api::GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};

class Runnable final : public QueueController {
 public:
  util::Status Init(ControllerContext& ctx) {
    client::SharedInformer& namespaces = ctx.informers->InformerFor(kNamespaces);
    client::SharedInformer& accounts = ctx.informers->InformerFor(kServiceAccounts);
    const client::Indexer* ns_cache = &namespaces.indexer();
    const client::Indexer* sa_cache = &accounts.indexer();
    client::RestClient* rest = ctx.client;
    client::EventRecorder* recorder = ctx.recorder("serviceaccount-controller");

    client::ControllerOptions ro;
    ro.name = "serviceaccount";
    ro.workers = 1;
    ro.clock = ctx.clock;
    ro.metrics = ctx.metrics;
    ro.wait_for_sync = {&namespaces, &accounts};
    ro.recorder = recorder;
    ro.lookup = [ns_cache](const api::ObjectKey& k) { return ns_cache->Get(k); };
    ro.reconcile = InstrumentReconcile(
        "serviceaccount", ctx.metrics, ctx.clock,
        [ns_cache, sa_cache, rest](const api::ObjectKey& key, std::stop_token) {
          api::ObjectPtr ns = ns_cache->Get(key);
          if (!ns) return client::ReconcileResult::Done();
          const std::string name(key.name);
          std::vector<std::string> missing =
              MissingServiceAccounts(*ns, {"default"}, [&](const std::string& sa) {
                return sa_cache->Get({name, sa}) != nullptr;
              });
          for (const auto& sa : missing) {
            auto created = rest->Create(kServiceAccounts, name, NewServiceAccount(name, sa));
            if (!created.ok() && !client::IsAlreadyExists(created.status())) {
              // A namespace that started terminating meanwhile refuses creates (Forbidden): the
              // next namespace event settles it.
              if (client::IsForbidden(created.status())) continue;
              return client::ReconcileResult::Error(created.status());
            }
          }
          return client::ReconcileResult::Done();
        });
    runner_ = std::make_unique<client::Controller>(std::move(ro));

    client::Controller* runner = runner_.get();
    auto sa_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    sa_handler->del = [runner](const client::DeletedObject& d) {
      runner->Enqueue({"", std::string(d.key.ns)});
    };
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(namespaces, EnqueueNamespaces(runner)));
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(accounts, sa_handler));
    return util::Status();
  }
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> NewServiceAccountController(
    ControllerContext& ctx) {
  return InitQueueController<Runnable>(ctx);
}

}  // namespace converge::controllers::serviceaccount
