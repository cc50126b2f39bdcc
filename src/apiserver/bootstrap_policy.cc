#include "apiserver/bootstrap_policy.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "api/embedded_data.h"
#include "api/labels.h"
#include "apiserver/rbac_authorizer.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

constexpr char kRbacGroupVersion[] = "rbac.authorization.k8s.io/v1";
constexpr char kAutoupdate[] = "rbac.authorization.kubernetes.io/autoupdate";
// Concurrent writers of the bootstrap objects: enough for the group commit to batch them.
constexpr int kReconcileThreads = 16;

api::Object MakeObject(std::string_view kind, const json::object& entry) {
  json::object doc;
  doc["apiVersion"] = kRbacGroupVersion;
  doc["kind"] = kind;
  json::object meta;
  meta["name"] = entry.at("name");
  if (const auto* ns = entry.if_contains("namespace")) meta["namespace"] = *ns;
  json::object labels;
  labels["kubernetes.io/bootstrapping"] = "rbac-defaults";
  if (const auto* l = entry.if_contains("labels"); l && l->is_object()) {
    for (const auto& [k, v] : l->get_object()) labels[k] = v;
  }
  meta["labels"] = std::move(labels);
  json::object annotations;
  annotations[kAutoupdate] = "true";
  meta["annotations"] = std::move(annotations);
  doc["metadata"] = std::move(meta);
  if (const auto* rules = entry.if_contains("rules")) {
    doc["rules"] = *rules;
  }
  if (const auto* agg = entry.if_contains("aggregationRule")) doc["aggregationRule"] = *agg;
  if (const auto* role = entry.if_contains("role")) {
    json::object ref;
    ref["apiGroup"] = "rbac.authorization.k8s.io";
    ref["kind"] = kind == "RoleBinding" && !entry.contains("clusterRole") ? "Role" : "ClusterRole";
    ref["name"] = *role;
    doc["roleRef"] = std::move(ref);
    doc["subjects"] = entry.at("subjects");
  }
  return api::Object(std::move(doc));
}

BootstrapPolicy Load() {
  BootstrapPolicy p;
  auto text = api::FindEmbeddedApiFile("bootstrap_policy.json");
  if (!text) return p;
  json::value v = json::parse(*text);
  const json::object& root = v.as_object();
  auto each = [&](std::string_view section, std::string_view kind, std::vector<api::Object>* out) {
    for (const auto& e : root.at(section).as_array())
      out->push_back(MakeObject(kind, e.as_object()));
  };
  each("clusterRoles", "ClusterRole", &p.cluster_roles);
  each("clusterRoleBindings", "ClusterRoleBinding", &p.cluster_role_bindings);
  each("roles", "Role", &p.roles);
  each("roleBindings", "RoleBinding", &p.role_bindings);
  return p;
}

// Adds every element of `from` missing in `into`; returns whether it added any.
bool UnionArray(json::object& into, std::string_view key, const json::array* from) {
  if (!from) return false;
  json::value& slot = into[key];
  if (!slot.is_array()) slot = json::array();
  json::array& arr = slot.get_array();
  bool changed = false;
  for (const auto& v : *from) {
    if (std::find(arr.begin(), arr.end(), v) == arr.end()) {
      arr.push_back(v);
      changed = true;
    }
  }
  return changed;
}

bool UnionMap(json::object& meta, std::string_view key, const json::object* from) {
  if (!from) return false;
  json::value& slot = meta[key];
  if (!slot.is_object()) slot = json::object();
  bool changed = false;
  for (const auto& [k, v] : *from) {
    if (!slot.get_object().contains(k)) {
      slot.get_object()[k] = v;
      changed = true;
    }
  }
  return changed;
}

// Creates `want` or adds what it lacks to the stored object.
util::Status Reconcile(ResourceStorage* storage, const api::Object& want) {
  const WriteContext ctx = [] {
    static const UserInfo system{"system:apiserver", "", {"system:masters"}, true};
    WriteContext c;
    c.user = &system;
    c.field_manager = "kube-apiserver";
    return c;
  }();
  std::string ns(want.namespace_());
  std::string name(want.name());
  auto created = storage->Create(ns, want, ctx);
  if (created.ok()) return util::Status();
  if (created.error().reason != "AlreadyExists") {
    return util::Internal("creating " + storage->info().kind + " " + name + ": " +
                          created.error().message);
  }
  auto r = storage->Update(
      ns, name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return want;
        if (api::FindString(current->doc(), {"metadata", "annotations", kAutoupdate}) == "false") {
          return *current;
        }
        api::Object next = *current;
        json::object& doc = next.mutable_doc();
        json::object& meta = doc["metadata"].as_object();
        UnionMap(meta, "labels", api::FindObject(want.doc(), {"metadata", "labels"}));
        UnionMap(meta, "annotations", api::FindObject(want.doc(), {"metadata", "annotations"}));
        if (!doc.contains("aggregationRule")) {
          UnionArray(doc, "rules", api::FindArray(want.doc(), {"rules"}));
        } else if (const auto* agg = want.doc().if_contains("aggregationRule")) {
          json::object& mine = doc["aggregationRule"].as_object();
          UnionArray(mine, "clusterRoleSelectors",
                     api::FindArray(agg->as_object(), {"clusterRoleSelectors"}));
        }
        if (want.doc().contains("subjects")) {
          UnionArray(doc, "subjects", api::FindArray(want.doc(), {"subjects"}));
        }
        return next;
      },
      ctx);
  if (!r.ok()) {
    return util::Internal("reconciling " + storage->info().kind + " " + name + ": " +
                          r.error().message);
  }
  return util::Status();
}

}  // namespace

const BootstrapPolicy& DefaultBootstrapPolicy() {
  static const BootstrapPolicy* policy = new BootstrapPolicy(Load());
  return *policy;
}

std::vector<PolicyRule> NodeRules() {
  for (const api::Object& cr : DefaultBootstrapPolicy().cluster_roles) {
    if (cr.name() == "system:node") return RulesFromJson(api::FindArray(cr.doc(), {"rules"}));
  }
  return {};
}

util::Status ReconcileBootstrapPolicy(APIServer& server) {
  const BootstrapPolicy& p = DefaultBootstrapPolicy();
  const std::string g = "rbac.authorization.k8s.io";
  ResourceStorage* cluster_roles = server.Storage({g, "v1", "clusterroles"});
  ResourceStorage* cluster_role_bindings = server.Storage({g, "v1", "clusterrolebindings"});
  ResourceStorage* roles = server.Storage({g, "v1", "roles"});
  ResourceStorage* role_bindings = server.Storage({g, "v1", "rolebindings"});
  if (!cluster_roles || !cluster_role_bindings || !roles || !role_bindings) {
    return util::Internal("RBAC resources are not registered");
  }
  // The objects are independent: reconcile them concurrently, so that the store's group commit
  // makes a few durable commits of the ~120 writes of a first start instead of one each (that
  // was most of an empty server's time to /readyz).
  std::vector<std::pair<ResourceStorage*, const api::Object*>> work;
  for (const auto& o : p.cluster_roles) work.emplace_back(cluster_roles, &o);
  for (const auto& o : p.cluster_role_bindings) work.emplace_back(cluster_role_bindings, &o);
  for (const auto& o : p.roles) work.emplace_back(roles, &o);
  for (const auto& o : p.role_bindings) work.emplace_back(role_bindings, &o);
  {
    std::atomic<size_t> next{0};
    std::mutex mu;
    util::Status first_error;  // guarded by mu
    auto worker = [&] {
      for (size_t i = next++; i < work.size(); i = next++) {
        util::Status s = Reconcile(work[i].first, *work[i].second);
        if (s.ok()) continue;
        std::lock_guard lock(mu);
        if (first_error.ok()) first_error = std::move(s);
      }
    };
    std::vector<std::jthread> threads;
    for (int t = 1; t < kReconcileThreads; ++t) threads.emplace_back(worker);
    worker();
    threads.clear();  // joins
    CONVERGE_RETURN_IF_ERROR(first_error);
  }

  // Aggregation: write each aggregated ClusterRole's effective rules (from the stored roles).
  ListOptions all;
  auto listed = cluster_roles->List(all);
  if (!listed.ok()) return util::Internal("listing clusterroles: " + listed.error().message);
  std::vector<json::object> docs;
  for (const auto& item : listed->items) {
    auto parsed = item->Parse();
    if (parsed.ok()) docs.push_back(parsed->doc());
  }
  auto policy = RbacPolicy::Build(docs, {}, {}, {});
  for (const json::object& d : docs) {
    if (!d.contains("aggregationRule")) continue;
    std::string name(api::FindString(d, {"metadata", "name"}));
    const std::vector<PolicyRule>* effective = policy->RoleRules({"ClusterRole", name}, "");
    if (!effective || *effective == RulesFromJson(api::FindArray(d, {"rules"}))) continue;
    json::array rules = RulesToJson(*effective);
    const WriteContext ctx = [] {
      static const UserInfo system{"system:apiserver", "", {"system:masters"}, true};
      WriteContext c;
      c.user = &system;
      c.field_manager = "clusterrole-aggregation-controller";
      return c;
    }();
    auto r = cluster_roles->Update(
        "", name,
        [&](const api::Object* current) -> ApiOr<api::Object> {
          if (!current) return NotFound({g, "clusterroles"}, name);
          api::Object next = *current;
          next.mutable_doc()["rules"] = rules;
          return next;
        },
        ctx);
    if (!r.ok()) spdlog::warn("aggregating clusterrole {}: {}", name, r.error().message);
  }
  return util::Status();
}

}  // namespace converge::apiserver
