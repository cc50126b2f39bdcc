#include "apiserver/kubernetes_service.h"

#include <set>

#include "apiserver/server.h"
#include "apiserver/strategy_core.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

constexpr char kNamespace[] = "default";
constexpr char kName[] = "kubernetes";

WriteContext SystemContext() {
  static const UserInfo system{"system:apiserver", "", {"system:masters"}, true};
  WriteContext c;
  c.user = &system;
  c.field_manager = "kube-apiserver";
  return c;
}

// The first address of the service range, unless a Service other than this one holds it.
std::string ClusterIp(ResourceStorage& services) {
  std::optional<std::string> first = AllocateClusterIp({});
  if (!first) return "";
  for (const auto& svc : services.cache()->List({}).items) {
    auto parsed = svc->Parse();
    if (!parsed.ok()) continue;
    const api::Object& o = *parsed;
    if (o.namespace_() == kNamespace && o.name() == kName) continue;
    if (api::FindString(o.doc(), {"spec", "clusterIP"}) == *first) return "";
  }
  return *first;
}

// Creates `want`, or writes its `field` (and labels) over the stored object.
util::Status ReconcileObject(ResourceStorage& storage, const api::Object& want, const char* field) {
  auto created = storage.Create(kNamespace, want, SystemContext());
  if (created.ok()) return util::Status();
  if (created.error().reason != "AlreadyExists") {
    return util::Internal("creating " + storage.info().kind +
                          " default/kubernetes: " + created.error().message);
  }
  auto r = storage.Update(
      kNamespace, kName,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return want;
        api::Object next = *current;
        for (const auto& [k, v] : *want.labels()) next.SetLabel(k, v.as_string());
        json::object& doc = next.mutable_doc();
        const json::value& wanted = want.doc().at(field);
        if (std::string_view(field) == "spec") {
          // The ports only: the rest of the spec (cluster IP, defaults) stays as stored.
          api::EnsureObject(doc, "spec")["ports"] = wanted.at("ports");
        } else {
          doc[field] = wanted;
        }
        return next;
      },
      SystemContext());
  if (!r.ok()) {
    return util::Internal("reconciling " + storage.info().kind +
                          " default/kubernetes: " + r.error().message);
  }
  return util::Status();
}

}  // namespace

util::Status ReconcileKubernetesService(APIServer& server, const std::string& ip, int port) {
  ResourceStorage* services = server.Storage({"", "v1", "services"});
  ResourceStorage* endpoints = server.Storage({"", "v1", "endpoints"});
  if (!services || !endpoints) return util::Internal("services or endpoints are not registered");

  api::Object svc;
  svc.SetGvk({"", "v1", "Service"});
  svc.set_namespace(kNamespace);
  svc.set_name(kName);
  svc.SetLabel("component", "apiserver");
  svc.SetLabel("provider", "kubernetes");
  json::object spec{
      {"type", "ClusterIP"},
      {"sessionAffinity", "None"},
      {"ports", json::array{json::object{
                    {"name", "https"}, {"port", 443}, {"protocol", "TCP"}, {"targetPort", port}}}}};
  if (std::string cluster_ip = ClusterIp(*services); !cluster_ip.empty()) {
    spec["clusterIP"] = cluster_ip;
    spec["clusterIPs"] = json::array{json::string(cluster_ip)};
  }
  svc.mutable_doc()["spec"] = std::move(spec);
  CONVERGE_RETURN_IF_ERROR(ReconcileObject(*services, svc, "spec"));

  api::Object eps;
  eps.SetGvk({"", "v1", "Endpoints"});
  eps.set_namespace(kNamespace);
  eps.set_name(kName);
  // Upstream's label: the EndpointSlice mirroring controller leaves these Endpoints alone.
  eps.SetLabel("endpointslice.kubernetes.io/skip-mirror", "true");
  eps.mutable_doc()["subsets"] = json::array{json::object{
      {"addresses", json::array{json::object{{"ip", ip}}}},
      {"ports",
       json::array{json::object{{"name", "https"}, {"port", port}, {"protocol", "TCP"}}}}}};
  return ReconcileObject(*endpoints, eps, "subsets");
}

}  // namespace converge::apiserver
