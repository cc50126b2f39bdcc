// core/v1 strategies. See strategy_core.h.
#include "apiserver/strategy_core.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>

#include "api/labels.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_podspec.h"
#include "apiserver/strategy_util.h"
#include "util/base64.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::Index;
using sv::Key;

namespace {

std::optional<size_t> Base64DecodedSize(std::string_view in) {
  std::optional<std::string> d = util::Base64Decode(in);
  if (!d) return std::nullopt;
  return d->size();
}

const json::value* Get(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->value();
}
const json::value* Get(const api::Object& o, std::string_view key) {
  return Get(o.doc(), key);
}
const json::object& Spec(const api::Object& o) {
  static const json::object kEmpty;
  const json::object* s = AsObject(Get(o, "spec"));
  return s ? *s : kEmpty;
}
const json::object& Status(const api::Object& o) {
  static const json::object kEmpty;
  const json::object* s = AsObject(Get(o, "status"));
  return s ? *s : kEmpty;
}

// Copies `key` of `from` into `to` (or erases it from `to` when `from` lacks it).
void CopyField(json::object& to, const json::object& from, std::string_view key) {
  if (const json::value* v = Get(from, key)) {
    to[key] = *v;
  } else {
    to.erase(key);
  }
}

bool Truthy(const json::value* v) {
  return v && v->is_bool() && v->get_bool();
}

// ---------------------------------------------------------------------------------------------
// Pods

// updatablePodSpecFields, joined with "," as upstream prints them.
constexpr std::string_view kPodUpdatableFields =
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

// A readable stand-in for upstream's cmp.Diff of the two specs: the top-level spec fields that
// differ, old then new.
std::string SpecDiff(const json::object& old_spec, const json::object& new_spec) {
  std::string out = "  core.PodSpec{\n";
  std::set<std::string> keys;
  for (const auto& [k, v] : old_spec) keys.insert(std::string(k));
  for (const auto& [k, v] : new_spec) keys.insert(std::string(k));
  for (const std::string& k : keys) {
    const json::value* a = Get(old_spec, k);
    const json::value* b = Get(new_spec, k);
    if (a && b && *a == *b) continue;
    if (a) out += "- \t" + k + ": " + json::serialize(*a) + ",\n";
    if (b) out += "+ \t" + k + ": " + json::serialize(*b) + ",\n";
  }
  return out + "  }\n";
}

Causes ValidatePodUpdateRules(const api::Object& pod, const api::Object& old) {
  Causes out;
  const json::object& ns = Spec(pod);
  const json::object& os = Spec(old);
  for (std::string_view list : {"containers", "initContainers"}) {
    const json::array* nc = AsArray(Get(ns, list));
    const json::array* oc = AsArray(Get(os, list));
    size_t nn = nc ? nc->size() : 0;
    size_t on = oc ? oc->size() : 0;
    std::string path = Child("spec", list);
    if (nn != on) {
      out.push_back(FieldForbidden(path, "pod updates may not add or remove containers"));
      return out;
    }
    for (size_t i = 0; i < nn; ++i) {
      const json::object* c = AsObject(&(*nc)[i]);
      if (c && api::Object::GetString(*c, "image").empty()) {
        out.push_back(FieldRequired(Child(Index(path, i), "image")));
      }
    }
  }
  // activeDeadlineSeconds: may be set from nil, or lowered; never raised or removed.
  const json::value* nads = Get(ns, "activeDeadlineSeconds");
  const json::value* oads = Get(os, "activeDeadlineSeconds");
  if (sv::IsSet(nads)) {
    int64_t v = AsInt(nads).value_or(0);
    if (v < 0 || v > 2147483647) {
      out.push_back(sv::InvalidInt("spec.activeDeadlineSeconds", v,
                                   "must be between 0 and 2147483647, inclusive"));
      return out;
    }
    if (sv::IsSet(oads) && AsInt(oads).value_or(0) < v) {
      out.push_back(sv::InvalidInt("spec.activeDeadlineSeconds", v,
                                   "must be less than or equal to previous value"));
      return out;
    }
  } else if (sv::IsSet(oads)) {
    out.push_back(FieldInvalid("spec.activeDeadlineSeconds", json::value(nullptr),
                               "must not update from a positive integer to nil value"));
  }
  // Tolerations: existing ones may only change tolerationSeconds.
  const json::array* ot = AsArray(Get(os, "tolerations"));
  const json::array* nt = AsArray(Get(ns, "tolerations"));
  for (size_t i = 0; ot && i < ot->size(); ++i) {
    json::value want = (*ot)[i];
    bool found = false;
    for (size_t j = 0; nt && j < nt->size() && !found; ++j) {
      json::value a = want;
      json::value b = (*nt)[j];
      if (a.is_object()) a.get_object().erase("tolerationSeconds");
      if (b.is_object()) b.get_object().erase("tolerationSeconds");
      found = a == b;
    }
    if (!found) {
      out.push_back(FieldForbidden("spec.tolerations",
                                   "existing toleration can not be modified except its "
                                   "tolerationSeconds"));
      break;
    }
  }
  // Scheduling gates: only removals.
  const json::array* ng = AsArray(Get(ns, "schedulingGates"));
  const json::array* og = AsArray(Get(os, "schedulingGates"));
  std::set<std::string> old_gates;
  for (size_t i = 0; og && i < og->size(); ++i) {
    if (const json::object* g = AsObject(&(*og)[i])) {
      old_gates.insert(std::string(api::Object::GetString(*g, "name")));
    }
  }
  for (size_t i = 0; ng && i < ng->size(); ++i) {
    const json::object* g = AsObject(&(*ng)[i]);
    std::string name(g ? api::Object::GetString(*g, "name") : "");
    if (!old_gates.count(name)) {
      out.push_back(
          FieldForbidden(Child(Index("spec.schedulingGates", i), "name"),
                         "only deletion is allowed, but found new scheduling gate '" + name + "'"));
    }
  }
  if (ns == os) return out;

  // Everything else must be unchanged: put the updatable fields back to their old values and
  // compare what remains.
  json::object munged = ns;
  for (std::string_view list : {"containers", "initContainers"}) {
    json::value* nc = munged.if_contains(list);
    const json::array* oc = AsArray(Get(os, list));
    if (!nc || !nc->is_array() || !oc) continue;
    for (size_t i = 0; i < nc->get_array().size() && i < oc->size(); ++i) {
      json::value& c = nc->get_array()[i];
      const json::object* o = AsObject(&(*oc)[i]);
      if (c.is_object() && o) CopyField(c.get_object(), *o, "image");
    }
  }
  CopyField(munged, os, "activeDeadlineSeconds");
  CopyField(munged, os, "schedulingGates");
  CopyField(munged, os, "tolerations");
  std::optional<int64_t> old_grace = AsInt(Get(os, "terminationGracePeriodSeconds"));
  if (old_grace && *old_grace < 0 && AsInt(Get(munged, "terminationGracePeriodSeconds")) == 1) {
    munged["terminationGracePeriodSeconds"] = *old_grace;
  }
  if (og && !og->empty()) {
    // Gated pods may get node selectors and node affinity added before scheduling.
    CopyField(munged, os, "nodeSelector");
    if (json::value* aff = munged.if_contains("affinity"); aff && aff->is_object()) {
      const json::object* oaff = AsObject(Get(os, "affinity"));
      if (oaff) {
        CopyField(aff->get_object(), *oaff, "nodeAffinity");
      } else {
        aff->get_object().erase("nodeAffinity");
      }
      if (aff->get_object().empty() && !oaff) munged.erase("affinity");
    }
  }
  if (munged != os) {
    out.push_back(FieldForbidden("spec", "pod updates may not change fields other than " +
                                             std::string(kPodUpdatableFields) + "\n" +
                                             SpecDiff(os, munged)));
  }
  return out;
}

class PodStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  void Default(api::Object& obj) const override {
    DefaultPodSpec(api::EnsureObject(obj.mutable_doc(), "spec"), /*for_pod=*/true);
  }

  // PrepareForCreate: status is {phase: Pending, qosClass}; a pod with scheduling gates starts
  // with PodScheduled=False/SchedulingGated.
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    DefaultPodSpec(spec, /*for_pod=*/true);  // QoS is computed on defaulted resources
    json::object status;
    status["phase"] = "Pending";
    status["qosClass"] = ComputeQosClass(spec);
    const json::array* gates = AsArray(Get(spec, "schedulingGates"));
    if (gates && !gates->empty()) {
      json::object cond;
      cond["type"] = "PodScheduled";
      cond["status"] = "False";
      cond["reason"] = "SchedulingGated";
      cond["message"] = "Scheduling is blocked due to non-empty scheduling gates";
      status["conditions"] = json::array{std::move(cond)};
    }
    obj.mutable_doc()["status"] = std::move(status);
  }

  // pods/status: the client's object with the stored spec, owner references and deletion
  // timestamp; labels, annotations and the whole status come from the client. qosClass is
  // backfilled when the client dropped it.
  void PrepareForStatusUpdate(api::Object& obj, const api::Object& old) const override {
    json::object& doc = obj.mutable_doc();
    CopyField(doc, old.doc(), "spec");
    json::object& meta = obj.mutable_metadata();
    static const json::object kEmpty;
    const json::object& old_meta = old.metadata() ? *old.metadata() : kEmpty;
    CopyField(meta, old_meta, "ownerReferences");
    CopyField(meta, old_meta, "deletionTimestamp");
    if (json::value* st = doc.if_contains("status"); st && st->is_object()) {
      if (api::Object::GetString(st->get_object(), "qosClass").empty()) {
        if (const json::value* q = Get(Status(old), "qosClass")) st->get_object()["qosClass"] = *q;
      }
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out = ValidatePodSpec(Spec(obj), "spec", /*for_pod=*/true);
    const json::array* eph = AsArray(Get(Spec(obj), "ephemeralContainers"));
    if (eph && !eph->empty()) {
      out.push_back(FieldForbidden("spec.ephemeralContainers", "cannot be set on create"));
    }
    const json::array* gates = AsArray(Get(Spec(obj), "schedulingGates"));
    if (!api::Object::GetString(Spec(obj), "nodeName").empty() && gates && !gates->empty()) {
      out.push_back(FieldForbidden("spec.nodeName",
                                   "cannot be set until all schedulingGates have been cleared"));
    }
    return out;
  }

  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidatePodSpec(Spec(obj), "spec", /*for_pod=*/true);
    sv::Append(out, ValidatePodUpdateRules(obj, old));
    return out;
  }

  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object& old) const override {
    Causes out;
    const json::object& st = Status(obj);
    if (const json::array* conds = AsArray(Get(st, "conditions"))) {
      static const std::set<std::string_view> kSystem = {"PodScheduled", "Ready", "Initialized"};
      for (size_t i = 0; i < conds->size(); ++i) {
        const json::object* c = AsObject(&(*conds)[i]);
        std::string_view type = c ? api::Object::GetString(*c, "type") : "";
        if (kSystem.count(type)) continue;
        // Upstream roots this path at "metadata" (sic).
        sv::Append(out, sv::ValidateQualifiedNameField(
                            Child(Index("metadata.conditions", i), "Type"), type));
      }
    }
    if (api::Object::GetString(Spec(obj), "nodeName") !=
        api::Object::GetString(Spec(old), "nodeName")) {
      out.push_back(FieldForbidden("status.nodeName", "may not be changed directly"));
    }
    std::string_view nominated = api::Object::GetString(st, "nominatedNodeName");
    if (!nominated.empty() &&
        nominated != api::Object::GetString(Status(old), "nominatedNodeName")) {
      sv::Append(out, sv::ValidateDns1123Subdomain("status.nominatedNodeName", nominated));
    }
    std::string_view qos = api::Object::GetString(st, "qosClass");
    if (qos != api::Object::GetString(Status(old), "qosClass")) {
      out.push_back(FieldInvalidString("status.qosClass", qos, "field is immutable"));
    }
    // Containers that terminated may not run again unless the pod restarts them.
    std::string_view restart = api::Object::GetString(Spec(old), "restartPolicy");
    for (std::string_view list : {"containerStatuses", "initContainerStatuses"}) {
      if (restart == "Always") break;
      const json::array* olds = AsArray(Get(Status(old), list));
      const json::array* news = AsArray(Get(st, list));
      for (size_t i = 0; olds && news && i < olds->size(); ++i) {
        const json::object* o = AsObject(&(*olds)[i]);
        const json::object* term = o ? api::FindObject(*o, {"state", "terminated"}) : nullptr;
        if (!term) continue;
        if (AsInt(Get(*term, "exitCode")).value_or(0) != 0 && restart == "OnFailure") continue;
        std::string_view name = api::Object::GetString(*o, "name");
        for (const json::value& nv : *news) {
          const json::object* n = AsObject(&nv);
          if (n && api::Object::GetString(*n, "name") == name &&
              !api::FindObject(*n, {"state", "terminated"})) {
            out.push_back(FieldForbidden(Child(Index(Child("status", list), i), "state"),
                                         "may not be transitioned to non-terminated state"));
          }
        }
      }
    }
    if (const json::array* ips = AsArray(Get(st, "podIPs"))) {
      for (size_t i = 0; i < ips->size(); ++i) {
        const json::object* ip = AsObject(&(*ips)[i]);
        std::string_view v = ip ? api::Object::GetString(*ip, "ip") : "";
        for (auto& m : sv::IsValidIp(v)) {
          out.push_back(FieldInvalidString(Index("status.podIPs", i), v, m));
        }
      }
    }
    return out;
  }

  // CheckGracefulDelete: the requested period, else spec.terminationGracePeriodSeconds, else 0;
  // 0 for unscheduled and terminal pods; a negative period becomes 1.
  int64_t GracePeriod(const api::Object& obj, std::optional<int64_t> requested) const override {
    int64_t period =
        requested ? *requested : AsInt(Get(Spec(obj), "terminationGracePeriodSeconds")).value_or(0);
    if (api::Object::GetString(Spec(obj), "nodeName").empty()) period = 0;
    std::string_view phase = api::Object::GetString(Status(obj), "phase");
    if (phase == "Succeeded" || phase == "Failed") period = 0;
    if (period < 0) period = 1;
    return period;
  }
};

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
// Services

bool IsHeadless(const json::object& spec) {
  const json::array* ips = AsArray(Get(spec, "clusterIPs"));
  if (ips && !ips->empty()) return AsString(&(*ips)[0]) == "None";
  return api::Object::GetString(spec, "clusterIP") == "None";
}

// NormalizeClusterIPs: keep the singular and plural fields in step.
void NormalizeClusterIps(json::object& spec, const json::object* old_spec) {
  std::string_view ip = api::Object::GetString(spec, "clusterIP");
  const json::array* ips = AsArray(Get(spec, "clusterIPs"));
  if (!old_spec) {
    if (!ip.empty() && (!ips || ips->empty())) spec["clusterIPs"] = json::array{json::string(ip)};
    return;
  }
  std::string_view old_ip = api::Object::GetString(*old_spec, "clusterIP");
  const json::array* old_ips = AsArray(Get(*old_spec, "clusterIPs"));
  bool single_changed = ip != old_ip;
  bool plural_changed = (ips ? *ips : json::array()) != (old_ips ? *old_ips : json::array());
  if (single_changed && !plural_changed) {
    if (ip.empty()) {
      spec.erase("clusterIPs");
    } else if (ips && !ips->empty()) {
      json::array copy = *ips;
      copy[0] = json::string(ip);
      spec["clusterIPs"] = std::move(copy);
    } else {
      spec["clusterIPs"] = json::array{json::string(ip)};
    }
  }
}

// patchAllocatedValues: an update that leaves allocated values empty keeps the old ones.
void PatchAllocatedValues(json::object& spec, const json::object& old_spec) {
  auto needs_ip = [](const json::object& s) {
    return api::Object::GetString(s, "type") != "ExternalName";
  };
  if (needs_ip(old_spec) && needs_ip(spec)) {
    if (api::Object::GetString(spec, "clusterIP").empty()) CopyField(spec, old_spec, "clusterIP");
    const json::array* ips = AsArray(Get(spec, "clusterIPs"));
    const json::array* old_ips = AsArray(Get(old_spec, "clusterIPs"));
    if ((!ips || ips->empty()) && old_ips && !old_ips->empty()) spec["clusterIPs"] = *old_ips;
  }
  auto needs_node_port = [](const json::object& s) {
    std::string_view t = api::Object::GetString(s, "type");
    return t == "NodePort" || t == "LoadBalancer";
  };
  if (needs_node_port(old_spec) && needs_node_port(spec)) {
    // Ports match by name, protocol (TCP when unset: defaulting runs after this) and port.
    auto port_key = [](const json::object& p) {
      std::string_view proto = api::Object::GetString(p, "protocol");
      return std::string(api::Object::GetString(p, "name")) + "/" +
             std::string(proto.empty() ? "TCP" : proto) + "/" +
             std::to_string(AsInt(Get(p, "port")).value_or(0));
    };
    auto node_ports = [](const json::object& s) {
      std::set<int64_t> used;
      if (const json::array* ps = AsArray(Get(s, "ports"))) {
        for (const json::value& pv : *ps) {
          const json::object* p = AsObject(&pv);
          int64_t np = p ? AsInt(Get(*p, "nodePort")).value_or(0) : 0;
          if (np > 0) used.insert(np);
        }
      }
      return used;
    };
    std::map<std::string, int64_t> by_key;
    if (const json::array* op = AsArray(Get(old_spec, "ports"))) {
      for (const json::value& pv : *op) {
        if (const json::object* p = AsObject(&pv)) {
          by_key[port_key(*p)] = AsInt(Get(*p, "nodePort")).value_or(0);
        }
      }
    }
    // Values both versions use cannot be patched in.
    std::set<int64_t> old_used = node_ports(old_spec);
    std::set<int64_t> new_used = node_ports(spec);
    std::set<int64_t> used;
    std::set_intersection(old_used.begin(), old_used.end(), new_used.begin(), new_used.end(),
                          std::inserter(used, used.begin()));
    json::value* ports = spec.if_contains("ports");
    if (ports && ports->is_array()) {
      for (json::value& pv : ports->get_array()) {
        if (!pv.is_object()) continue;
        json::object& p = pv.get_object();
        if (AsInt(Get(p, "nodePort")).value_or(0) != 0) continue;
        auto it = by_key.find(port_key(p));
        if (it != by_key.end() && it->second > 0 && !used.count(it->second)) {
          p["nodePort"] = it->second;
        }
      }
    }
  }
  if (api::Object::GetString(spec, "externalTrafficPolicy") == "Local" &&
      AsInt(Get(spec, "healthCheckNodePort")).value_or(0) == 0) {
    CopyField(spec, old_spec, "healthCheckNodePort");
  }
}

Causes ValidateServiceSpec(const api::Object& svc) {
  Causes out;
  const json::object& spec = Spec(svc);
  std::string_view type = api::Object::GetString(spec, "type");
  const json::array* ports = AsArray(Get(spec, "ports"));
  bool headless = IsHeadless(spec);
  if ((!ports || ports->empty()) && !headless && type != "ExternalName") {
    out.push_back(FieldRequired("spec.ports"));
  }
  const json::array* cluster_ips = AsArray(Get(spec, "clusterIPs"));
  if (type == "LoadBalancer" || type == "NodePort") {
    if (headless) {
      out.push_back(
          FieldInvalidString("spec.clusterIPs[0]", "None",
                             "may not be set to 'None' for " + std::string(type) + " services"));
    }
  } else if (type == "ExternalName") {
    if (cluster_ips && !cluster_ips->empty()) {
      out.push_back(FieldForbidden("spec.clusterIPs", "may not be set for ExternalName services"));
    }
    const json::array* fams = AsArray(Get(spec, "ipFamilies"));
    if (fams && !fams->empty()) {
      out.push_back(FieldForbidden("spec.ipFamilies", "may not be set for ExternalName services"));
    }
    if (sv::IsSet(Get(spec, "ipFamilyPolicy"))) {
      out.push_back(
          FieldForbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"));
    }
    std::string_view cname = api::Object::GetString(spec, "externalName");
    if (!cname.empty() && cname.back() == '.') cname.remove_suffix(1);
    if (cname.empty()) {
      out.push_back(FieldRequired("spec.externalName"));
    } else {
      sv::Append(out, sv::ValidateDns1123Subdomain("spec.externalName", cname));
    }
  }
  std::set<std::string> port_names;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const json::object* p = AsObject(&(*ports)[i]);
    if (!p) continue;
    std::string pp = Index("spec.ports", i);
    std::string_view name = api::Object::GetString(*p, "name");
    if (ports->size() > 1 && name.empty()) {
      out.push_back(FieldRequired(Child(pp, "name")));
    } else if (!name.empty()) {
      sv::Append(out, sv::ValidateDns1123Label(Child(pp, "name"), name));
      if (!port_names.insert(std::string(name)).second) {
        out.push_back(FieldDuplicate(Child(pp, "name"), json::value(name)));
      }
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
    const json::value* tp = Get(*p, "targetPort");
    std::string tpp = Child(pp, "targetPort");
    if (tp && tp->is_string()) {
      for (auto& m : sv::IsValidPortName(tp->get_string())) {
        out.push_back(FieldInvalidString(tpp, tp->get_string(), m));
      }
    } else {
      int64_t n = AsInt(tp).value_or(0);
      for (auto& m : sv::IsValidPortNum(n)) out.push_back(sv::InvalidInt(tpp, n, m));
    }
    if (const json::value* ap = Get(*p, "appProtocol"); sv::IsSet(ap)) {
      sv::Append(out, sv::ValidateQualifiedNameField(Child(pp, "appProtocol"), AsString(ap)));
    }
  }
  sv::Append(out, sv::ValidateLabelsField("spec.selector", Get(spec, "selector")));
  std::string_view affinity = api::Object::GetString(spec, "sessionAffinity");
  if (affinity.empty()) {
    out.push_back(FieldRequired("spec.sessionAffinity"));
  } else if (affinity != "ClientIP" && affinity != "None") {
    out.push_back(
        FieldNotSupported("spec.sessionAffinity", json::value(affinity), {"ClientIP", "None"}));
  }
  if (affinity == "ClientIP") {
    const json::value* timeout =
        api::Find(spec, {"sessionAffinityConfig", "clientIP", "timeoutSeconds"});
    if (!sv::IsSet(timeout)) {
      out.push_back(FieldRequired("spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                                  "when session affinity type is ClientIP"));
    } else {
      int64_t t = AsInt(timeout).value_or(0);
      if (t <= 0 || t > 86400) {
        out.push_back(sv::InvalidInt("spec.sessionAffinityConfig.clientIP.timeoutSeconds", t,
                                     "must be greater than 0 and less than 86400"));
      }
    }
  } else if (affinity == "None" && sv::IsSet(Get(spec, "sessionAffinityConfig"))) {
    out.push_back(FieldForbidden("spec.sessionAffinityConfig",
                                 "must not be set when session affinity is None"));
  }

  // ValidateServiceClusterIPsRelatedFields.
  std::string_view ip = api::Object::GetString(spec, "clusterIP");
  size_t nips = cluster_ips ? cluster_ips->size() : 0;
  if (!ip.empty()) {
    if (nips == 0) {
      out.push_back(FieldRequired("spec.clusterIPs"));
    } else if (AsString(&(*cluster_ips)[0]) != ip) {
      out.push_back(sv::InvalidRendered("spec.clusterIPs",
                                        sv::GoStringSlice(Get(spec, "clusterIPs")),
                                        "first value must match `clusterIP`"));
    }
  } else if (nips != 0) {
    out.push_back(sv::InvalidRendered("spec.clusterIPs", sv::GoStringSlice(Get(spec, "clusterIPs")),
                                      "must be empty when `clusterIP` is not specified"));
  }
  const json::array* families = AsArray(Get(spec, "ipFamilies"));
  std::set<std::string> seen_families;
  for (size_t i = 0; families && i < families->size(); ++i) {
    std::string f(AsString(&(*families)[i]));
    if (f != "IPv4" && f != "IPv6") {
      out.push_back(
          FieldNotSupported(Index("spec.ipFamilies", i), (*families)[i], {"IPv4", "IPv6"}));
    }
    if (!seen_families.insert(f).second) {
      out.push_back(FieldDuplicate(Index("spec.ipFamilies", i), (*families)[i]));
    }
  }
  if (const json::value* pol = Get(spec, "ipFamilyPolicy"); sv::IsSet(pol)) {
    std::string_view p = AsString(pol);
    if (p != "SingleStack" && p != "PreferDualStack" && p != "RequireDualStack") {
      out.push_back(FieldNotSupported("spec.ipFamilyPolicy", *pol,
                                      {"PreferDualStack", "RequireDualStack", "SingleStack"}));
    }
  }
  bool bad_ips = false;
  for (size_t i = 0; i < nips; ++i) {
    std::string_view v = AsString(&(*cluster_ips)[i]);
    if (i == 0 && v == "None") {
      if (nips > 1) {
        bad_ips = true;
        out.push_back(sv::InvalidRendered("spec.clusterIPs",
                                          sv::GoStringSlice(Get(spec, "clusterIPs")),
                                          "'None' must be the first and only value"));
      }
      continue;
    }
    for (auto& m : sv::IsValidIp(v)) {
      bad_ips = true;
      out.push_back(FieldInvalidString(Index("spec.clusterIPs", i), v, m));
    }
  }
  if (nips > 2) {
    out.push_back(sv::InvalidRendered("spec.clusterIPs", sv::GoStringSlice(Get(spec, "clusterIPs")),
                                      "may only hold up to 2 values"));
  }
  if (!bad_ips && nips == 2 &&
      sv::IsIpv6(AsString(&(*cluster_ips)[0])) == sv::IsIpv6(AsString(&(*cluster_ips)[1]))) {
    out.push_back(sv::InvalidRendered("spec.clusterIPs", sv::GoStringSlice(Get(spec, "clusterIPs")),
                                      "may specify no more than one IP for each IP family"));
  }
  if (!bad_ips && !headless && families) {
    for (size_t i = 0; i < nips && i < families->size(); ++i) {
      std::string_view v = AsString(&(*cluster_ips)[i]);
      std::string_view f = AsString(&(*families)[i]);
      if (f == "IPv4" && sv::IsIpv6(v)) {
        out.push_back(FieldInvalidString(
            Index("spec.clusterIPs", i), v,
            "expected an IPv4 value as indicated by `ipFamilies[" + std::to_string(i) + "]`"));
      }
      if (f == "IPv6" && !sv::IsIpv6(v)) {
        out.push_back(FieldInvalidString(
            Index("spec.clusterIPs", i), v,
            "expected an IPv6 value as indicated by `ipFamilies[" + std::to_string(i) + "]`"));
      }
    }
  }

  if (type.empty()) {
    out.push_back(FieldRequired("spec.type"));
  } else if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" &&
             type != "ExternalName") {
    out.push_back(FieldNotSupported("spec.type", json::value(type),
                                    {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  }
  std::set<std::string> node_ports;
  std::set<std::string> port_keys;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const json::object* p = AsObject(&(*ports)[i]);
    if (!p) continue;
    std::string pp = Index("spec.ports", i);
    int64_t np = AsInt(Get(*p, "nodePort")).value_or(0);
    std::string_view proto = api::Object::GetString(*p, "protocol");
    if (type == "ClusterIP" && np != 0) {
      out.push_back(
          FieldForbidden(Child(pp, "nodePort"), "may not be used when `type` is 'ClusterIP'"));
    }
    if (np != 0 && !node_ports.insert(std::string(proto) + "/" + std::to_string(np)).second) {
      out.push_back(FieldDuplicate(Child(pp, "nodePort"), json::value(np)));
    }
    int64_t port = AsInt(Get(*p, "port")).value_or(0);
    if (!port_keys.insert(std::string(proto) + "/" + std::to_string(port)).second) {
      out.push_back({"FieldValueDuplicate",
                     "Duplicate value: core.ServicePort{Name:\"\", Protocol:\"" +
                         std::string(proto) +
                         "\", AppProtocol:(*string)(nil), Port:" + std::to_string(port) +
                         ", TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, "
                         "NodePort:0}",
                     pp});
    }
  }
  if (type == "LoadBalancer" && !sv::IsSet(Get(spec, "allocateLoadBalancerNodePorts"))) {
    out.push_back(FieldRequired("allocateLoadBalancerNodePorts"));
  }
  if (sv::IsSet(Get(spec, "allocateLoadBalancerNodePorts")) && type != "LoadBalancer") {
    out.push_back(FieldForbidden("spec.allocateLoadBalancerNodePorts",
                                 "may only be used when `type` is 'LoadBalancer'"));
  }
  bool external = type == "NodePort" || type == "LoadBalancer";
  std::string_view etp = api::Object::GetString(spec, "externalTrafficPolicy");
  if (!external) {
    if (!etp.empty()) {
      out.push_back(FieldInvalidString("spec.externalTrafficPolicy", etp,
                                       "may only be set for externally-accessible services"));
    }
  } else if (etp.empty()) {
    out.push_back(FieldRequired("spec.externalTrafficPolicy"));
  } else if (etp != "Cluster" && etp != "Local") {
    out.push_back(
        FieldNotSupported("spec.externalTrafficPolicy", json::value(etp), {"Cluster", "Local"}));
  }
  const json::value* itp = Get(spec, "internalTrafficPolicy");
  if (!sv::IsSet(itp)) {
    if (type == "NodePort" || type == "LoadBalancer" || type == "ClusterIP") {
      out.push_back(FieldRequired("spec.internalTrafficPolicy"));
    }
  } else if (AsString(itp) != "Cluster" && AsString(itp) != "Local") {
    out.push_back(FieldNotSupported("spec.internalTrafficPolicy", *itp, {"Cluster", "Local"}));
  }
  return out;
}

class ServiceStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_Service.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    if (api::Object::GetString(spec, "sessionAffinity").empty()) spec["sessionAffinity"] = "None";
    if (api::Object::GetString(spec, "type").empty()) spec["type"] = "ClusterIP";
    std::string type(api::Object::GetString(spec, "type"));
    if (json::value* ports = spec.if_contains("ports"); ports && ports->is_array()) {
      for (json::value& pv : ports->get_array()) {
        if (!pv.is_object()) continue;
        json::object& p = pv.get_object();
        if (api::Object::GetString(p, "protocol").empty()) p["protocol"] = "TCP";
        const json::value* tp = Get(p, "targetPort");
        bool unset = !sv::IsSet(tp) || (tp->is_string() && tp->get_string().empty()) ||
                     (!tp->is_string() && AsInt(tp).value_or(0) == 0);
        if (unset && Get(p, "port")) p["targetPort"] = *Get(p, "port");
      }
    }
    if ((type == "NodePort" || type == "LoadBalancer") &&
        api::Object::GetString(spec, "externalTrafficPolicy").empty()) {
      spec["externalTrafficPolicy"] = "Cluster";
    }
    if (type != "ExternalName" && !sv::IsSet(Get(spec, "internalTrafficPolicy"))) {
      spec["internalTrafficPolicy"] = "Cluster";
    }
    if (api::Object::GetString(spec, "sessionAffinity") == "ClientIP" &&
        !sv::IsSet(api::Find(spec, {"sessionAffinityConfig", "clientIP", "timeoutSeconds"}))) {
      json::object& cfg = api::EnsureObject(spec, "sessionAffinityConfig");
      api::EnsureObject(cfg, "clientIP")["timeoutSeconds"] = 10800;
    }
    if (type == "LoadBalancer" && !sv::IsSet(Get(spec, "allocateLoadBalancerNodePorts"))) {
      spec["allocateLoadBalancerNodePorts"] = true;
    }
  }

  // Status is cleared; clusterIPs follows clusterIP; a service that gets cluster IPs is
  // single-stack IPv4 unless it says otherwise (what the allocator decides on a one-family
  // cluster). The clusterIP itself is allocated by the storage layer (AllocateClusterIp).
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    NormalizeClusterIps(spec, nullptr);
    std::string_view type = api::Object::GetString(spec, "type");
    if (type != "ExternalName") {
      if (!sv::IsSet(Get(spec, "ipFamilyPolicy"))) spec["ipFamilyPolicy"] = "SingleStack";
      const json::array* fams = AsArray(Get(spec, "ipFamilies"));
      if (!fams || fams->empty()) {
        std::string_view ip = api::Object::GetString(spec, "clusterIP");
        spec["ipFamilies"] = json::array{sv::IsIpv6(ip) ? "IPv6" : "IPv4"};
      }
    }
  }

  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    Strategy::PrepareForUpdate(obj, old);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    PatchAllocatedValues(spec, Spec(old));
    NormalizeClusterIps(spec, &Spec(old));
    const json::object& os = Spec(old);
    if (api::Object::GetString(spec, "type") != "ExternalName") {
      if (!sv::IsSet(Get(spec, "ipFamilyPolicy"))) CopyField(spec, os, "ipFamilyPolicy");
      const json::array* fams = AsArray(Get(spec, "ipFamilies"));
      if (!fams || fams->empty()) CopyField(spec, os, "ipFamilies");
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateServiceSpec(obj);
  }

  // validateUpgradeDowngradeClusterIPs, then the whole service.
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out;
    const json::object& ns = Spec(obj);
    const json::object& os = Spec(old);
    bool external_name = api::Object::GetString(ns, "type") == "ExternalName" ||
                         api::Object::GetString(os, "type") == "ExternalName";
    if (!external_name && !(IsHeadless(ns) && IsHeadless(os))) {
      const json::array* ni = AsArray(Get(ns, "clusterIPs"));
      const json::array* oi = AsArray(Get(os, "clusterIPs"));
      size_t nn = ni ? ni->size() : 0;
      size_t on = oi ? oi->size() : 0;
      std::string rendered = sv::GoStringSlice(Get(ns, "clusterIPs"));
      if (nn == on) {
        for (size_t i = 0; i < on; ++i) {
          if ((*oi)[i] != (*ni)[i]) {
            out.push_back(sv::InvalidRendered(Index("spec.clusterIPs", i), rendered,
                                              "may not change once set"));
          }
        }
      } else if (on > nn) {
        if (nn == 0) {
          out.push_back(sv::InvalidRendered("spec.clusterIPs[0]", rendered,
                                            "primary clusterIP can not be unset"));
        } else if ((*ni)[0] != (*oi)[0]) {
          out.push_back(
              sv::InvalidRendered("spec.clusterIPs[0]", rendered, "may not change once set"));
        }
        if (nn == 1 && api::Object::GetString(ns, "ipFamilyPolicy") != "SingleStack") {
          out.push_back(sv::InvalidRendered("spec.clusterIPs[0]", rendered,
                                            "`ipFamilyPolicy` must be set to 'SingleStack' when "
                                            "releasing the secondary clusterIP"));
        }
      } else if (on > 0 && (*ni)[0] != (*oi)[0]) {
        out.push_back(
            sv::InvalidRendered("spec.clusterIPs[0]", rendered, "may not change once set"));
      }
    }
    sv::Append(out, ValidateServiceSpec(obj));
    return out;
  }
  NameRule name_rule() const override { return NameRule::kDns1035Label; }
};

// ---------------------------------------------------------------------------------------------
// ConfigMaps and Secrets

constexpr size_t kMaxSecretSize = 1024 * 1024;

class ConfigMapStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    size_t total = 0;
    const json::object* data = AsObject(Get(obj, "data"));
    const json::object* binary = AsObject(Get(obj, "binaryData"));
    for (const auto& [key, value] : data ? *data : json::object()) {
      for (auto& m : sv::IsConfigMapKey(key)) {
        out.push_back(FieldInvalidString(Key("data", key), key, m));
      }
      if (binary && binary->contains(key)) {
        out.push_back(
            FieldInvalidString(Key("data", key), key, "duplicate of key present in binaryData"));
      }
      total += AsString(&value).size();
    }
    for (const auto& [key, value] : binary ? *binary : json::object()) {
      for (auto& m : sv::IsConfigMapKey(key)) {
        out.push_back(FieldInvalidString(Key("binaryData", key), key, m));
      }
      total += Base64DecodedSize(AsString(&value)).value_or(AsString(&value).size());
    }
    if (total > kMaxSecretSize) out.push_back(FieldTooLong("", kMaxSecretSize));
    return out;
  }

  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out;
    if (Truthy(Get(old, "immutable"))) {
      if (!Truthy(Get(obj, "immutable"))) {
        out.push_back(FieldForbidden("immutable", "field is immutable when `immutable` is set"));
      }
      for (std::string_view f : {"data", "binaryData"}) {
        const json::object* a = AsObject(Get(obj, f));
        const json::object* b = AsObject(Get(old, f));
        bool same = (a ? *a : json::object()) == (b ? *b : json::object());
        if (!same) {
          out.push_back(
              FieldForbidden(std::string(f), "field is immutable when `immutable` is set"));
        }
      }
    }
    sv::Append(out, Validate(obj));
    return out;
  }
};

class SecretStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // Type Opaque; stringData is merged into data (base64) and dropped, as the v1 conversion does.
  void Default(api::Object& obj) const override {
    json::object& doc = obj.mutable_doc();
    if (api::Object::GetString(doc, "type").empty()) doc["type"] = "Opaque";
    if (const json::object* sd = AsObject(Get(doc, "stringData"))) {
      json::object& data = api::EnsureObject(doc, "data");
      for (const auto& [k, v] : *sd) data[k] = util::Base64Encode(AsString(&v));
    }
    doc.erase("stringData");
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    const json::object* data = AsObject(Get(obj, "data"));
    size_t total = 0;
    for (const auto& [key, value] : data ? *data : json::object()) {
      for (auto& m : sv::IsConfigMapKey(key)) {
        out.push_back(FieldInvalidString(Key("data", key), key, m));
      }
      std::optional<size_t> n = Base64DecodedSize(AsString(&value));
      if (!n) {
        out.push_back(FieldInvalidString(Key("data", key), "<secret contents redacted>",
                                         "illegal base64 data"));
      }
      total += n.value_or(0);
    }
    if (total > kMaxSecretSize) out.push_back(FieldTooLong("data", kMaxSecretSize));
    std::string_view type = api::Object::GetString(obj.doc(), "type");
    auto has = [&](std::string_view k) { return data && data->contains(k); };
    if (type == "kubernetes.io/service-account-token") {
      if (!obj.annotation("kubernetes.io/service-account.name").value_or("").size()) {
        out.push_back(FieldRequired("metadata.annotations[kubernetes.io/service-account.name]"));
      }
    } else if (type == "kubernetes.io/dockercfg") {
      if (!has(".dockercfg")) out.push_back(FieldRequired("data[.dockercfg]"));
    } else if (type == "kubernetes.io/dockerconfigjson") {
      if (!has(".dockerconfigjson")) out.push_back(FieldRequired("data[.dockerconfigjson]"));
    } else if (type == "kubernetes.io/basic-auth") {
      if (!has("username") && !has("password")) {
        out.push_back(FieldRequired("data[username]"));
        out.push_back(FieldRequired("data[password]"));
      }
    } else if (type == "kubernetes.io/ssh-auth") {
      if (AsString(data ? Get(*data, "ssh-privatekey") : nullptr).empty()) {
        out.push_back(FieldRequired("data[ssh-privatekey]"));
      }
    } else if (type == "kubernetes.io/tls") {
      if (!has("tls.crt")) out.push_back(FieldRequired("data[tls.crt]"));
      if (!has("tls.key")) out.push_back(FieldRequired("data[tls.key]"));
    }
    return out;
  }

  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out;
    std::string_view type = api::Object::GetString(obj.doc(), "type");
    if (type != api::Object::GetString(old.doc(), "type")) {
      out.push_back(FieldInvalidString("type", type, "field is immutable"));
    }
    if (Truthy(Get(old, "immutable"))) {
      if (!Truthy(Get(obj, "immutable"))) {
        out.push_back(FieldForbidden("immutable", "field is immutable when `immutable` is set"));
      }
      const json::object* a = AsObject(Get(obj, "data"));
      const json::object* b = AsObject(Get(old, "data"));
      if ((a ? *a : json::object()) != (b ? *b : json::object())) {
        out.push_back(FieldForbidden("data", "field is immutable when `immutable` is set"));
      }
    }
    sv::Append(out, Validate(obj));
    return out;
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

std::optional<ApiError> BindPod(api::Object& pod, const api::Object& binding,
                                std::string_view now) {
  Causes causes;
  std::string_view kind = api::FindString(binding.doc(), {"target", "kind"});
  if (!kind.empty() && kind != "Node") {
    causes.push_back(FieldNotSupported("target.kind", json::value(kind), {"Node", "<empty>"}));
  }
  std::string node(api::FindString(binding.doc(), {"target", "name"}));
  if (node.empty()) causes.push_back(FieldRequired("target.name"));
  if (!causes.empty()) return Invalid({"", "v1", "Binding"}, binding.name(), std::move(causes));

  std::string name(pod.name());
  const api::GroupResource gr{"", "pods/binding"};
  if (pod.being_deleted()) {
    return Conflict(gr, name, "pod " + name + " is being deleted, cannot be assigned to a host");
  }
  if (!binding.uid().empty() && binding.uid() != pod.uid()) {
    return Conflict(gr, name,
                    "UID in precondition: " + std::string(binding.uid()) +
                        ", UID in object meta: " + std::string(pod.uid()));
  }
  if (!binding.resource_version().empty() && binding.resource_version() != pod.resource_version()) {
    return Conflict(gr, name,
                    "ResourceVersion in precondition: " + std::string(binding.resource_version()) +
                        ", ResourceVersion in object meta: " + std::string(pod.resource_version()));
  }
  std::string_view assigned = api::Object::GetString(Spec(pod), "nodeName");
  if (!assigned.empty()) {
    return Conflict(
        gr, name, "pod " + name + " is already assigned to node \"" + std::string(assigned) + "\"");
  }
  const json::array* gates = AsArray(Get(Spec(pod), "schedulingGates"));
  if (gates && !gates->empty()) {
    return Conflict(gr, name, "pod " + name + " has non-empty .spec.schedulingGates");
  }
  api::EnsureObject(pod.mutable_doc(), "spec")["nodeName"] = node;
  if (const json::object* ann = binding.annotations()) {
    for (const auto& [k, v] : *ann) pod.SetAnnotation(k, AsString(&v));
  }
  // UpdatePodCondition: a new or changed PodScheduled condition moves lastTransitionTime.
  json::object& status = api::EnsureObject(pod.mutable_doc(), "status");
  json::value& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  json::object* existing = nullptr;
  for (json::value& c : conds.get_array()) {
    if (c.is_object() && api::Object::GetString(c.get_object(), "type") == "PodScheduled") {
      existing = &c.get_object();
    }
  }
  if (!existing) {
    json::object cond;
    cond["type"] = "PodScheduled";
    cond["status"] = "True";
    cond["lastProbeTime"] = nullptr;
    cond["lastTransitionTime"] = now;
    conds.get_array().emplace_back(std::move(cond));
  } else {
    if (api::Object::GetString(*existing, "status") != "True") {
      (*existing)["lastTransitionTime"] = now;
    }
    (*existing)["status"] = "True";
    existing->erase("reason");
    existing->erase("message");
  }
  return std::nullopt;
}

std::optional<std::string> AllocateClusterIp(const std::set<std::string>& used,
                                             std::string_view cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string base(cidr.substr(0, slash));
  int bits = -1;
  auto [p, ec] = std::from_chars(cidr.data() + slash + 1, cidr.data() + cidr.size(), bits);
  if (ec != std::errc() || p != cidr.data() + cidr.size() || bits < 8 || bits > 30) {
    return std::nullopt;
  }
  in_addr addr{};
  if (inet_pton(AF_INET, base.c_str(), &addr) != 1) return std::nullopt;
  uint32_t network = ntohl(addr.s_addr) & (bits == 0 ? 0 : ~((1u << (32 - bits)) - 1));
  uint32_t size = 1u << (32 - bits);
  std::set<uint32_t> taken;
  for (const std::string& u : used) {
    in_addr a{};
    if (inet_pton(AF_INET, u.c_str(), &a) == 1) taken.insert(ntohl(a.s_addr));
  }
  for (uint32_t off = 1; off + 1 < size; ++off) {
    uint32_t candidate = network + off;
    if (taken.count(candidate)) continue;
    in_addr out{};
    out.s_addr = htonl(candidate);
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &out, buf, sizeof(buf));
    return std::string(buf);
  }
  return std::nullopt;
}

bool ServiceNeedsClusterIp(const api::Object& svc) {
  const json::object& spec = Spec(svc);
  return api::Object::GetString(spec, "type") != "ExternalName" && !IsHeadless(spec) &&
         api::Object::GetString(spec, "clusterIP").empty();
}

void AssignClusterIp(api::Object& svc, std::string_view ip) {
  json::object& spec = api::EnsureObject(svc.mutable_doc(), "spec");
  spec["clusterIP"] = ip;
  spec["clusterIPs"] = json::array{json::string(ip)};
}

std::shared_ptr<const Strategy> MakeCoreStrategy(ResourceInfoPtr info) {
  if (!info->gvr.group.empty()) return nullptr;
  const std::string& r = info->gvr.resource;
  if (r == "pods") return std::make_shared<PodStrategy>(std::move(info));
  if (r == "namespaces") return std::make_shared<NamespaceStrategy>(std::move(info));
  if (r == "nodes") return std::make_shared<NodeStrategy>(std::move(info));
  if (r == "services") return std::make_shared<ServiceStrategy>(std::move(info));
  if (r == "configmaps") return std::make_shared<ConfigMapStrategy>(std::move(info));
  if (r == "secrets") return std::make_shared<SecretStrategy>(std::move(info));
  if (r == "events") return std::make_shared<CoreEventStrategy>(std::move(info));
  if (r == "endpoints") return std::make_shared<EndpointsStrategy>(std::move(info));
  if (r == "persistentvolumeclaims") return std::make_shared<PvcStrategy>(std::move(info));
  if (r == "serviceaccounts") return std::make_shared<Strategy>(std::move(info));
  return nullptr;
}

}  // namespace converge::apiserver
