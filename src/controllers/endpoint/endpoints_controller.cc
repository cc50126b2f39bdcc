#include "controllers/endpoint/endpoints_controller.h"

#include "client/api_errors.h"
#include "client/controller.h"
#include "client/index_funcs.h"
#include "controllers/common/queue_controller.h"
#include "controllers/common/reconcile_metrics.h"
#include "controllers/endpoint/decide.h"

namespace converge::controllers::endpoint {

namespace {

const api::GroupVersionResource kServices{"", "v1", "services"};
const api::GroupVersionResource kPods{"", "v1", "pods"};
const api::GroupVersionResource kEndpoints{"", "v1", "endpoints"};

class Runnable final : public QueueController {
 public:
  util::Status Init(ControllerContext& ctx) {
    client::SharedInformer& services = ctx.informers->InformerFor(kServices);
    client::SharedInformer& pods = ctx.informers->InformerFor(kPods);
    client::SharedInformer& endpoints = ctx.informers->InformerFor(kEndpoints);
    const client::Indexer* svc_cache = &services.indexer();
    const client::Indexer* pod_cache = &pods.indexer();
    const client::Indexer* eps_cache = &endpoints.indexer();
    client::RestClient* rest = ctx.client;

    client::ControllerOptions ro;
    ro.name = "endpoint";
    ro.workers = ctx.workers;
    ro.clock = ctx.clock;
    ro.metrics = ctx.metrics;
    ro.wait_for_sync = {&services, &pods, &endpoints};
    ro.recorder = ctx.recorder("endpoint-controller");
    ro.lookup = [svc_cache](const api::ObjectKey& k) { return svc_cache->Get(k); };
    ro.reconcile = InstrumentReconcile(
        "endpoint", ctx.metrics, ctx.clock,
        [svc_cache, pod_cache, eps_cache, rest](const api::ObjectKey& key, std::stop_token) {
          api::ObjectPtr svc = svc_cache->Get(key);
          api::ObjectPtr current = eps_cache->Get(key);
          if (!svc) {
            // The Service is gone: so are its Endpoints (unless someone else removed them).
            if (!current) return client::ReconcileResult::Done();
            util::Status s = rest->Delete(kEndpoints, key);
            if (s.ok() || client::IsNotFound(s)) return client::ReconcileResult::Done();
            return client::ReconcileResult::Error(s);
          }
          if (!HasSelector(*svc)) return client::ReconcileResult::Done();
          auto pods = pod_cache->ByIndex(client::kNamespaceIndex, key.ns);
          if (!pods.ok()) return client::ReconcileResult::Error(pods.status());
          std::optional<api::Object> desired = DesiredEndpoints(*svc, current.get(), *pods);
          if (!desired) return client::ReconcileResult::Done();
          util::Status s = current ? rest->Update(kEndpoints, *desired).status()
                                   : rest->Create(kEndpoints, key.ns, *desired).status();
          // A terminating namespace refuses creates (Forbidden): the Service goes with it. A
          // conflict or AlreadyExists means the cache is behind: try again.
          if (s.ok() || client::IsForbidden(s)) return client::ReconcileResult::Done();
          return client::ReconcileResult::Error(s);
        });
    runner_ = std::make_unique<client::Controller>(std::move(ro));

    client::Controller* runner = runner_.get();
    auto enqueue = [runner](const api::Object& o) { runner->Enqueue(o.key()); };
    auto svc_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    svc_handler->add = [enqueue](const api::ObjectPtr& o, bool) { enqueue(*o); };
    svc_handler->update = [enqueue](const api::ObjectPtr&, const api::ObjectPtr& o) {
      enqueue(*o);
    };
    svc_handler->del = [runner](const client::DeletedObject& d) { runner->Enqueue(d.key); };

    // The Services of the pod's namespace that select it.
    auto enqueue_selecting = [runner, svc_cache](const api::Object& pod) {
      auto in_ns = svc_cache->ByIndex(client::kNamespaceIndex, pod.namespace_());
      if (!in_ns.ok()) return;
      for (const api::ObjectPtr& svc : *in_ns) {
        if (Selects(*svc, pod)) runner->Enqueue(svc->key());
      }
    };
    auto pod_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    pod_handler->add = [enqueue_selecting](const api::ObjectPtr& o, bool) {
      enqueue_selecting(*o);
    };
    pod_handler->update = [enqueue_selecting](const api::ObjectPtr& old, const api::ObjectPtr& o) {
      enqueue_selecting(*o);
      const api::ObjectView was = old->labels();
      const api::ObjectView is = o->labels();
      if (was && (!is || !(was == is))) enqueue_selecting(*old);  // it may have left a selector
    };
    pod_handler->del = [enqueue_selecting](const client::DeletedObject& d) {
      if (d.object) enqueue_selecting(*d.object);
    };

    auto eps_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    eps_handler->del = [runner](const client::DeletedObject& d) { runner->Enqueue(d.key); };

    CONVERGE_RETURN_IF_ERROR(handlers_.Add(services, svc_handler));
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(pods, pod_handler));
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(endpoints, eps_handler));
    return util::Status();
  }
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> NewEndpointsController(ControllerContext& ctx) {
  return InitQueueController<Runnable>(ctx);
}

}  // namespace converge::controllers::endpoint
