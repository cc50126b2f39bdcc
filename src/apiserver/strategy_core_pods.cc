// core/v1 Pod strategy and pods/binding. See strategy_core.h.
#include <set>

#include "apiserver/strategy.h"
#include "apiserver/strategy_core.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_podspec.h"
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
    const json::object& old_meta = sv::Metadata(old);
    CopyField(meta, old_meta, "ownerReferences");
    sv::KeepServerManagedMetadata(obj, old);
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

}  // namespace

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
  if (const json::object* ann = api::FindObject(binding.doc(), {"metadata", "annotations"})) {
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

std::shared_ptr<const Strategy> MakeCorePodStrategy(ResourceInfoPtr info) {
  if (!info->gvr.group.empty() || info->gvr.resource != "pods") return nullptr;
  return std::make_shared<PodStrategy>(std::move(info));
}

}  // namespace converge::apiserver
