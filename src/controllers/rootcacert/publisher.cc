#include "controllers/rootcacert/publisher.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"
#include "client/controller.h"
#include "controllers/common/namespaces.h"
#include "controllers/common/queue_controller.h"
#include "controllers/common/reconcile_metrics.h"

namespace converge::controllers::rootcacert {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};

constexpr char kDescriptionAnnotation[] = "kubernetes.io/description";
constexpr char kDescription[] =
    "The cluster's CA certificate: clients in pods verify the API server with it when they reach "
    "it through the kubernetes service. Nothing else about it is promised.";

}  // namespace

std::optional<api::Object> DesiredRootCaConfigMap(const api::Object& ns_object,
                                                  const api::Object* current,
                                                  const std::string& ca_pem) {
  if (NamespaceTerminating(ns_object)) return std::nullopt;
  const json::object data{{kDataKey, ca_pem}};
  if (!current) {
    api::Object cm;
    cm.SetGvk({"", "v1", "ConfigMap"});
    cm.set_namespace(std::string(ns_object.name()));
    cm.set_name(kConfigMapName);
    cm.SetAnnotation(kDescriptionAnnotation, kDescription);
    cm.mutable_doc()["data"] = data;
    return cm;
  }
  // As upstream: the data is exactly the bundle (other keys go), and the description is there.
  const json::value* have = current->doc().if_contains("data");
  const bool described =
      !current->annotations().if_contains(kDescriptionAnnotation).as_string().empty();
  if (have && have->is_object() && have->get_object() == data && described) return std::nullopt;
  api::Object cm = *current;
  cm.mutable_doc()["data"] = data;
  if (!described) cm.SetAnnotation(kDescriptionAnnotation, kDescription);
  return cm;
}

namespace {

class Publisher final : public QueueController {
 public:
  util::Status Init(ControllerContext& ctx) {
    client::SharedInformer& namespaces = ctx.informers->InformerFor(kNamespaces);
    client::SharedInformer& configmaps = ctx.informers->InformerFor(kConfigMaps);
    const client::Indexer* ns_cache = &namespaces.indexer();
    const client::Indexer* cm_cache = &configmaps.indexer();
    client::RestClient* rest = ctx.client;

    client::ControllerOptions ro;
    ro.name = "root-ca-cert-publisher";
    ro.workers = 1;
    ro.clock = ctx.clock;
    ro.metrics = ctx.metrics;
    ro.wait_for_sync = {&namespaces, &configmaps};
    ro.recorder = ctx.recorder("root-ca-cert-publisher");
    ro.lookup = [ns_cache](const api::ObjectKey& k) { return ns_cache->Get(k); };
    ro.reconcile = InstrumentReconcile(
        "root-ca-cert-publisher", ctx.metrics, ctx.clock,
        [ns_cache, cm_cache, rest, ca = ctx.root_ca_pem](const api::ObjectKey& key,
                                                         std::stop_token) {
          api::ObjectPtr ns = ns_cache->Get(key);
          if (!ns) return client::ReconcileResult::Done();
          const std::string name(key.name);
          api::ObjectPtr current = cm_cache->Get({name, kConfigMapName});
          std::optional<api::Object> desired = DesiredRootCaConfigMap(*ns, current.get(), ca);
          if (!desired) return client::ReconcileResult::Done();
          util::Status s = current ? rest->Update(kConfigMaps, *desired).status()
                                   : rest->Create(kConfigMaps, name, *desired).status();
          // A namespace that started terminating refuses creates (Forbidden): its next event
          // settles it. A conflict or an AlreadyExists means the cache is behind: try again.
          if (s.ok() || client::IsForbidden(s) || client::IsNotFound(s)) {
            return client::ReconcileResult::Done();
          }
          return client::ReconcileResult::Error(s);
        });
    runner_ = std::make_unique<client::Controller>(std::move(ro));

    client::Controller* runner = runner_.get();
    auto cm_handler = std::make_shared<client::ResourceEventHandlerFuncs>();
    cm_handler->update = [runner](const api::ObjectPtr&, const api::ObjectPtr& o) {
      if (o->name() == kConfigMapName) runner->Enqueue({"", std::string(o->namespace_())});
    };
    cm_handler->del = [runner](const client::DeletedObject& d) {
      if (d.key.name == kConfigMapName) runner->Enqueue({"", std::string(d.key.ns)});
    };
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(namespaces, EnqueueNamespaces(runner)));
    CONVERGE_RETURN_IF_ERROR(handlers_.Add(configmaps, cm_handler));
    return util::Status();
  }
};

// Without a CA bundle there is nothing to publish.
class Idle final : public RunnableController {
 public:
  void Run(std::stop_token) override {}
};

}  // namespace

util::StatusOr<std::unique_ptr<RunnableController>> NewRootCaCertPublisher(ControllerContext& ctx) {
  if (ctx.root_ca_pem.empty()) {
    spdlog::info("root-ca-cert-publisher: no CA bundle (the API server is served without TLS)");
    return std::unique_ptr<RunnableController>(std::make_unique<Idle>());
  }
  return InitQueueController<Publisher>(ctx);
}

}  // namespace converge::controllers::rootcacert
