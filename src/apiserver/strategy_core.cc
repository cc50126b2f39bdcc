// core/v1 strategies: namespaces, nodes, events, endpoints, persistentvolumeclaims, and the
// dispatch for the group (pods, services, configmaps and secrets live in strategy_core_*.cc).
// See strategy_core.h.
#include "apiserver/strategy_core.h"

#include <algorithm>
#include <map>

#include "api/labels.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::CopyField;
using sv::Get;
using sv::Index;
using sv::Key;
using sv::Spec;
using sv::Status;
using sv::Truthy;

namespace {

// ---------------------------------------------------------------------------------------------
// Namespaces

Causes ValidateNamespaceFinalizerName(const std::string& path, std::string_view name) {
  Causes out = sv::ValidateQualifiedNameField(path, name);
  if (name.find('/') == std::string_view::npos && name != "kubernetes" && name != "orphan" &&
      name != "foregroundDeletion") {
    out.push_back(FieldInvalidString(
        path, name, "name is neither a standard finalizer name nor is it fully qualified"));
  }
  return out;
}

class NamespaceStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_Namespace (the kubernetes.io/metadata.name label) and SetDefaults_NamespaceStatus.
  void Default(api::Object& obj) const override {
    // Copy first: the name views the metadata that SetLabel modifies.
    std::string name(obj.name());
    if (!name.empty()) obj.SetLabel("kubernetes.io/metadata.name", name);
    json::object& status = api::EnsureObject(obj.mutable_doc(), "status");
    if (api::Object::GetString(status, "phase").empty()) status["phase"] = "Active";
  }

  // Active, with the "kubernetes" finalizer appended when missing.
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object status;
    status["phase"] = "Active";
    obj.mutable_doc()["status"] = std::move(status);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    json::value& fin = spec["finalizers"];
    if (!fin.is_array()) fin = json::array();
    json::array& list = fin.get_array();
    if (std::none_of(list.begin(), list.end(), [](const json::value& v) {
          return v.is_string() && v.get_string() == "kubernetes";
        })) {
      list.emplace_back("kubernetes");
    }
  }

  // spec.finalizers only change through /finalize; status only through /status.
  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    Strategy::PrepareForUpdate(obj, old);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    CopyField(spec, Spec(old), "finalizers");
    if (spec.empty() && !Get(old, "spec")) obj.mutable_doc().erase("spec");
  }

  // namespaces/status keeps the client's metadata and status, and the stored spec.
  void PrepareForStatusUpdate(api::Object& obj, const api::Object& old) const override {
    CopyField(obj.mutable_doc(), old.doc(), "spec");
    sv::KeepServerManagedMetadata(obj, old);
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    if (const json::array* fin = AsArray(Get(Spec(obj), "finalizers"))) {
      for (const json::value& f : *fin) {
        sv::Append(out, ValidateNamespaceFinalizerName("spec.finalizers", AsString(&f)));
      }
    }
    return out;
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object&, const api::Object&) const override {
    return {};
  }
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object&) const override {
    std::string_view phase = api::Object::GetString(Status(obj), "phase");
    if (!obj.being_deleted()) {
      if (phase != "Active") {
        return {FieldInvalidString("status.Phase", phase,
                                   "may only be 'Active' if `deletionTimestamp` is empty")};
      }
    } else if (phase != "Terminating") {
      return {FieldInvalidString("status.Phase", phase,
                                 "may only be 'Terminating' if `deletionTimestamp` is not empty")};
    }
    return {};
  }
  // A namespace is removed once both its finalizer lists are empty; the namespace controller
  // empties spec.finalizers through /finalize after deleting the contents.
  bool ReadyToDelete(const api::Object& obj) const override {
    const json::array* spec_fin = AsArray(Get(Spec(obj), "finalizers"));
    return Strategy::ReadyToDelete(obj) && (!spec_fin || spec_fin->empty());
  }
  void PrepareForDelete(api::Object& obj) const override {
    api::EnsureObject(obj.mutable_doc(), "status")["phase"] = "Terminating";
  }
  NameRule name_rule() const override { return NameRule::kDnsLabel; }
};

// ---------------------------------------------------------------------------------------------
// Nodes

Causes ValidateNodeCommon(const api::Object& node) {
  Causes out;
  if (const json::array* taints = AsArray(Get(Spec(node), "taints"))) {
    std::map<std::string, std::set<std::string>> unique;
    for (size_t i = 0; i < taints->size(); ++i) {
      const json::object* t = AsObject(&(*taints)[i]);
      if (!t) continue;
      // Upstream roots taint paths at "metadata" (sic).
      std::string ip = Index("metadata.taints", i);
      std::string_view key = api::Object::GetString(*t, "key");
      std::string_view value = api::Object::GetString(*t, "value");
      std::string_view effect = api::Object::GetString(*t, "effect");
      sv::Append(out, sv::ValidateQualifiedNameField(Child(ip, "key"), key));
      auto verrs = api::ValidateLabelValue(value);
      if (!verrs.empty()) {
        std::string joined;
        for (size_t j = 0; j < verrs.size(); ++j) joined += (j ? ";" : "") + verrs[j];
        out.push_back(FieldInvalidString(Child(ip, "value"), value, joined));
      }
      if (effect.empty()) {
        out.push_back(FieldRequired(Child(ip, "effect")));
      } else if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
        out.push_back(FieldNotSupported(Child(ip, "effect"), json::value(effect),
                                        {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
      }
      if (!unique[std::string(effect)].insert(std::string(key)).second) {
        StatusCause dup = FieldDuplicate(ip, json::value((*taints)[i]));
        dup.message += ": taints must be unique by key and effect pair";
        out.push_back(std::move(dup));
      }
    }
  }
  for (std::string_view list : {"capacity", "allocatable"}) {
    const json::object* res = AsObject(Get(Status(node), list));
    if (!res) continue;
    for (const auto& [name, qv] : *res) {
      std::string p = Child(Child("status", list), name);
      std::optional<sv::Quantity> q = sv::Quantity::FromJson(qv);
      if (!q) {
        out.push_back(FieldInvalid(p, qv, std::string(sv::kQuantityRegexError)));
      } else if (q->IsNegative()) {
        out.push_back(FieldInvalidString(p, q->String(), "must be greater than or equal to 0"));
      }
    }
  }
  if (const json::array* cidrs = AsArray(Get(Spec(node), "podCIDRs"))) {
    std::set<std::string> seen;
    for (size_t i = 0; i < cidrs->size(); ++i) {
      std::string c(AsString(&(*cidrs)[i]));
      std::string p = Index("spec.podCIDRs", i);
      size_t slash = c.find('/');
      if (slash == std::string::npos || !sv::IsValidIp(c.substr(0, slash)).empty()) {
        out.push_back(FieldInvalidString(
            p, c, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"));
      }
      if (!seen.insert(c).second) out.push_back(FieldDuplicate(p, json::value(c)));
    }
  }
  return out;
}

class NodeStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_NodeStatus: allocatable defaults to capacity.
  void Default(api::Object& obj) const override {
    json::value* st = obj.mutable_doc().if_contains("status");
    if (!st || !st->is_object()) return;
    json::object& status = st->get_object();
    if (!sv::IsSet(Get(status, "allocatable")) && sv::IsSet(Get(status, "capacity"))) {
      status["allocatable"] = status["capacity"];
    }
  }
  // Nodes register with their status: create keeps it (nodeStrategy.PrepareForCreate).
  void PrepareForCreate(api::Object&) const override {}

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateNodeCommon(obj);
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateNodeCommon(obj);
    const json::array* oc = AsArray(Get(Spec(old), "podCIDRs"));
    if (oc && !oc->empty()) {
      const json::array* nc = AsArray(Get(Spec(obj), "podCIDRs"));
      if (!nc || *nc != *oc) {
        out.push_back(FieldForbidden(
            "spec.podCIDRs", "node updates may not change podCIDR except from \"\" to valid"));
      }
    }
    std::string_view old_provider = api::Object::GetString(Spec(old), "providerID");
    if (!old_provider.empty() && old_provider != api::Object::GetString(Spec(obj), "providerID")) {
      out.push_back(FieldForbidden(
          "spec.providerID", "node updates may not change providerID except from \"\" to valid"));
    }
    if (api::Object::GetString(Spec(obj), "externalID") !=
        api::Object::GetString(Spec(old), "externalID")) {
      out.push_back(FieldForbidden("spec.externalID", "may not be updated"));
    }
    return out;
  }
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object& old) const override {
    return ValidateUpdate(obj, old);
  }
};

// ---------------------------------------------------------------------------------------------
// Events (core/v1): the legacy validation only, as upstream applies to v1 requests.

class CoreEventStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    const json::object& doc = obj.doc();
    std::string_view ns = obj.namespace_();
    std::string_view involved_ns = api::FindString(doc, {"involvedObject", "namespace"});
    std::string_view event_time = api::FindString(doc, {"eventTime"});
    if (event_time.empty()) {
      if (involved_ns.empty()) {
        if (!ns.empty() && ns != "default") {
          out.push_back(FieldInvalidString("involvedObject.namespace", involved_ns,
                                           "does not match event.namespace"));
        }
      } else if (ns != involved_ns) {
        out.push_back(FieldInvalidString("involvedObject.namespace", involved_ns,
                                         "does not match event.namespace"));
      }
    } else {
      if (involved_ns.empty() && ns != "default" && ns != "kube-system") {
        out.push_back(FieldInvalidString("involvedObject.namespace", involved_ns,
                                         "does not match event.namespace"));
      }
      std::string_view controller = api::FindString(doc, {"reportingComponent"});
      if (controller.empty()) out.push_back(FieldRequired("reportingComponent"));
      sv::Append(out, sv::ValidateQualifiedNameField("reportingComponent", controller));
      auto bounded = [&](std::string_view field, std::string_view v, size_t limit, bool required) {
        if (required && v.empty()) out.push_back(FieldRequired(std::string(field)));
        if (v.size() > limit) {
          out.push_back(FieldInvalidString(
              std::string(field), "", "can have at most " + std::to_string(limit) + " characters"));
        }
      };
      bounded("reportingInstance", api::FindString(doc, {"reportingInstance"}), 128, true);
      bounded("action", api::FindString(doc, {"action"}), 128, true);
      bounded("reason", api::FindString(doc, {"reason"}), 128, true);
      bounded("message", api::FindString(doc, {"message"}), 1024, false);
    }
    for (auto& m : IsDnsSubdomain(ns)) out.push_back(FieldInvalidString("namespace", ns, m));
    return out;
  }
  NameRule name_rule() const override { return NameRule::kNone; }
};

// ---------------------------------------------------------------------------------------------
// Endpoints and PersistentVolumeClaims

class EndpointsStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  void Default(api::Object& obj) const override {
    json::value* subsets = obj.mutable_doc().if_contains("subsets");
    if (!subsets || !subsets->is_array()) return;
    for (json::value& s : subsets->get_array()) {
      json::value* ports = s.is_object() ? s.get_object().if_contains("ports") : nullptr;
      if (!ports || !ports->is_array()) continue;
      for (json::value& p : ports->get_array()) {
        if (p.is_object() && api::Object::GetString(p.get_object(), "protocol").empty()) {
          p.get_object()["protocol"] = "TCP";
        }
      }
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    const json::array* subsets = AsArray(Get(obj, "subsets"));
    for (size_t i = 0; subsets && i < subsets->size(); ++i) {
      const json::object* s = AsObject(&(*subsets)[i]);
      if (!s) continue;
      std::string sp = Index("subsets", i);
      const json::array* addrs = AsArray(Get(*s, "addresses"));
      const json::array* not_ready = AsArray(Get(*s, "notReadyAddresses"));
      if ((!addrs || addrs->empty()) && (!not_ready || not_ready->empty())) {
        out.push_back(FieldRequired(sp, "must specify `addresses` or `notReadyAddresses`"));
      }
      for (auto [list, name] :
           {std::pair{addrs, "addresses"}, std::pair{not_ready, "notReadyAddresses"}}) {
        for (size_t j = 0; list && j < list->size(); ++j) {
          const json::object* a = AsObject(&(*list)[j]);
          std::string_view ip = a ? api::Object::GetString(*a, "ip") : "";
          for (auto& m : sv::IsValidIp(ip)) {
            out.push_back(FieldInvalidString(Child(Index(Child(sp, name), j), "ip"), ip, m));
          }
        }
      }
      const json::array* ports = AsArray(Get(*s, "ports"));
      for (size_t j = 0; ports && j < ports->size(); ++j) {
        const json::object* p = AsObject(&(*ports)[j]);
        if (!p) continue;
        std::string pp = Index(Child(sp, "ports"), j);
        std::string_view name = api::Object::GetString(*p, "name");
        if (ports->size() > 1 && name.empty()) {
          out.push_back(FieldRequired(Child(pp, "name")));
        } else if (!name.empty()) {
          sv::Append(out, sv::ValidateDns1123Label(Child(pp, "name"), name));
        }
        int64_t port = AsInt(Get(*p, "port")).value_or(0);
        for (auto& m : sv::IsValidPortNum(port))
          out.push_back(sv::InvalidInt(Child(pp, "port"), port, m));
        std::string_view proto = api::Object::GetString(*p, "protocol");
        if (proto.empty()) {
          out.push_back(FieldRequired(Child(pp, "protocol")));
        } else if (proto != "TCP" && proto != "UDP" && proto != "SCTP") {
          out.push_back(
              FieldNotSupported(Child(pp, "protocol"), json::value(proto), {"SCTP", "TCP", "UDP"}));
        }
      }
    }
    return out;
  }
};

class PvcStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    if (api::Object::GetString(spec, "volumeMode").empty()) spec["volumeMode"] = "Filesystem";
  }
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object status;
    status["phase"] = "Pending";
    obj.mutable_doc()["status"] = std::move(status);
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    const json::object& spec = Spec(obj);
    const json::array* modes = AsArray(Get(spec, "accessModes"));
    if (!modes || modes->empty()) {
      out.push_back(FieldRequired("spec.accessModes", "at least 1 access mode is required"));
    }
    for (size_t i = 0; modes && i < modes->size(); ++i) {
      std::string_view m = AsString(&(*modes)[i]);
      if (m != "ReadWriteOnce" && m != "ReadOnlyMany" && m != "ReadWriteMany" &&
          m != "ReadWriteOncePod") {
        out.push_back(FieldNotSupported(
            "spec.accessModes", (*modes)[i],
            {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}));
      }
    }
    if (const json::value* sel = Get(spec, "selector")) {
      sv::Append(out, sv::ValidateLabelSelectorField("spec.selector", sel));
    }
    const json::value* storage = api::Find(spec, {"resources", "requests", "storage"});
    if (!storage) {
      out.push_back(FieldRequired("spec.resources[storage]"));
    } else {
      std::optional<sv::Quantity> q = sv::Quantity::FromJson(*storage);
      static const sv::Quantity kZero = *sv::Quantity::Parse("0");
      if (!q) {
        out.push_back(FieldInvalid("spec.resources[storage]", *storage,
                                   std::string(sv::kQuantityRegexError)));
      } else if (q->Compare(kZero) <= 0) {
        out.push_back(FieldInvalidString("spec.resources[storage]", q->String(),
                                         "must be greater than zero"));
      }
    }
    return out;
  }

  // Claims are immutable but for volumeName (set once) and storage requests (resizing).
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = Validate(obj);
    json::object a = Spec(obj);
    json::object b = Spec(old);
    if (api::Object::GetString(b, "volumeName").empty()) CopyField(b, a, "volumeName");
    for (json::object* s : {&a, &b}) {
      if (json::value* r = s->if_contains("resources"); r && r->is_object()) {
        if (json::value* req = r->get_object().if_contains("requests"); req && req->is_object()) {
          req->get_object().erase("storage");
        }
      }
      s->erase("volumeAttributesClassName");
    }
    if (a != b) {
      out.push_back(FieldForbidden("spec",
                                   "spec is immutable after creation except resources.requests and "
                                   "volumeAttributesClassName for bound claims"));
    }
    return out;
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Exported helpers

void PrepareNamespaceFinalize(api::Object& obj, const api::Object& old) {
  CopyField(obj.mutable_doc(), old.doc(), "status");
}

std::vector<StatusCause> ValidateNamespaceFinalize(const api::Object& obj, const api::Object&) {
  Causes out;
  if (const json::array* fin = AsArray(Get(Spec(obj), "finalizers"))) {
    for (size_t i = 0; i < fin->size(); ++i) {
      sv::Append(out,
                 ValidateNamespaceFinalizerName(Index("spec.finalizers", i), AsString(&(*fin)[i])));
    }
  }
  return out;
}

std::shared_ptr<const Strategy> MakeCoreStrategy(ResourceInfoPtr info) {
  if (!info->gvr.group.empty()) return nullptr;
  for (auto make : {MakeCorePodStrategy, MakeCoreServiceStrategy, MakeCoreConfigStrategy}) {
    if (std::shared_ptr<const Strategy> s = make(info)) return s;
  }
  const std::string& r = info->gvr.resource;
  if (r == "namespaces") return std::make_shared<NamespaceStrategy>(std::move(info));
  if (r == "nodes") return std::make_shared<NodeStrategy>(std::move(info));
  if (r == "events") return std::make_shared<CoreEventStrategy>(std::move(info));
  if (r == "endpoints") return std::make_shared<EndpointsStrategy>(std::move(info));
  if (r == "persistentvolumeclaims") return std::make_shared<PvcStrategy>(std::move(info));
  if (r == "serviceaccounts") return std::make_shared<Strategy>(std::move(info));
  return nullptr;
}

}  // namespace converge::apiserver
