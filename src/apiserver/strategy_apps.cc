// apps/v1 strategies: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision.
//
// Upstream: pkg/apis/apps/v1/defaults.go, pkg/apis/apps/validation/validation.go and
// pkg/registry/apps/*/strategy.go. apps/v1 selectors are immutable; the pod template is
// defaulted and validated as core's (strategy_podspec.h).
#include <charconv>
#include <map>

#include "api/labels.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_podspec.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::Get;
using sv::Spec;
using sv::Status;

namespace {

const json::value* TemplateLabels(const json::object& spec) {
  return api::Find(spec, {"template", "metadata", "labels"});
}
void SetIntIfMissing(json::object& o, std::string_view key, int64_t v) {
  if (!sv::IsSet(Get(o, key))) o[key] = v;
}

// The selector checks every replicated workload shares: required, valid, not empty, and (when
// it parses) matching the template's labels. `what` names the kind in the empty-selector message
// ("deployment" for ReplicaSets too, as upstream says).
Causes ValidateSelectorAndTemplateLabels(const json::object& spec, std::string_view what,
                                         bool check_template_match = true) {
  Causes out;
  const json::value* sel = Get(spec, "selector");
  if (!sv::IsSet(sel)) {
    out.push_back(FieldRequired("spec.selector"));
  } else {
    sv::Append(out, sv::ValidateLabelSelectorField("spec.selector", sel));
    const json::object* so = AsObject(sel);
    size_t n = 0;
    if (so) {
      if (const json::object* ml = AsObject(Get(*so, "matchLabels"))) n += ml->size();
      if (const json::array* me = sv::AsArray(Get(*so, "matchExpressions"))) n += me->size();
    }
    if (n == 0) {
      out.push_back(sv::InvalidRendered("spec.selector", sv::GoLabelSelector(sel),
                                        "empty selector is invalid for " + std::string(what)));
    }
  }
  if (!check_template_match) return out;
  auto parsed = api::LabelSelector::FromLabelSelector(sv::IsSet(sel) ? sel : nullptr);
  if (!parsed.ok()) {
    out.push_back(
        sv::InvalidRendered("spec.selector", sv::GoLabelSelector(sel), "invalid label selector"));
  } else if (!parsed->Empty()) {
    const json::object* labels = AsObject(TemplateLabels(spec));
    if (!parsed->Matches(labels)) {
      out.push_back(sv::InvalidRendered("spec.template.metadata.labels",
                                        sv::GoStringMap(TemplateLabels(spec)),
                                        "`selector` does not match template `labels`"));
    }
  }
  return out;
}

// ValidatePodTemplateSpecForReplicaSet's template part: pod template validation, restartPolicy
// Always, no activeDeadlineSeconds.
Causes ValidateReplicatedTemplate(const json::object& spec, std::string_view kind) {
  Causes out = ValidatePodTemplateSpec(Get(spec, "template"), "spec.template");
  const json::value* rp = api::Find(spec, {"template", "spec", "restartPolicy"});
  std::string_view policy = AsString(rp);
  if (policy != "Always") {
    out.push_back(
        FieldNotSupported("spec.template.spec.restartPolicy", json::value(policy), {"Always"}));
  }
  if (sv::IsSet(api::Find(spec, {"template", "spec", "activeDeadlineSeconds"}))) {
    out.push_back(
        FieldForbidden("spec.template.spec.activeDeadlineSeconds",
                       "activeDeadlineSeconds in " + std::string(kind) + " is not Supported"));
  }
  return out;
}

// ValidatePositiveIntOrPercent.
Causes ValidateIntOrPercent(const std::string& path, const json::value* v) {
  Causes out;
  std::optional<sv::IntOrPercent> p = sv::ParseIntOrString(v);
  if (!p) return out;
  if (p->is_string) {
    for (auto& m : sv::IsValidPercent(p->str_val)) {
      out.push_back(sv::InvalidRendered(path, sv::GoIntOrString(v), m));
    }
  } else if (p->int_val < 0) {
    out.push_back(sv::InvalidInt(path, p->int_val, "must be greater than or equal to 0"));
  }
  return out;
}

// IsNotMoreThan100Percent.
Causes NotMoreThan100Percent(const std::string& path, const json::value* v) {
  std::optional<sv::IntOrPercent> p = sv::ParseIntOrString(v);
  if (!p || !p->is_string || !sv::IsValidPercent(p->str_val).empty()) return {};
  if (sv::IntOrPercentValue(*p) <= 100) return {};
  return {sv::InvalidRendered(path, sv::GoIntOrString(v), "must not be greater than 100%")};
}

int64_t IntOrPercentOf(const json::value* v) {
  std::optional<sv::IntOrPercent> p = sv::ParseIntOrString(v);
  return p ? sv::IntOrPercentValue(*p) : 0;
}

void SelectorImmutable(Causes& out, const api::Object& obj, const api::Object& old) {
  const json::value* now = Get(Spec(obj), "selector");
  sv::Immutable(out, "spec.selector", now, Get(Spec(old), "selector"), sv::GoLabelSelector(now));
}

// Status counters that must be non-negative and bounded by status.replicas.
Causes ValidateReplicaCounts(const json::object& st, std::initializer_list<std::string_view> counts,
                             std::initializer_list<std::string_view> bounded,
                             std::string_view available_vs_ready_msg) {
  Causes out;
  for (std::string_view f : counts)
    sv::Append(out, sv::NonNegative(Child("status", f), Get(st, f)));
  int64_t replicas = AsInt(Get(st, "replicas")).value_or(0);
  for (std::string_view f : bounded) {
    int64_t v = AsInt(Get(st, f)).value_or(0);
    if (v > replicas) {
      out.push_back(
          sv::InvalidInt(Child("status", f), v, "cannot be greater than status.replicas"));
    }
  }
  int64_t available = AsInt(Get(st, "availableReplicas")).value_or(0);
  if (available > AsInt(Get(st, "readyReplicas")).value_or(0)) {
    out.push_back(
        sv::InvalidInt("status.availableReplicas", available, std::string(available_vs_ready_msg)));
  }
  return out;
}

void CollisionCountNotDecremented(Causes& out, const api::Object& obj, const api::Object& old) {
  std::optional<int64_t> now = AsInt(Get(Status(obj), "collisionCount"));
  std::optional<int64_t> before = AsInt(Get(Status(old), "collisionCount"));
  if (before && (!now || *now < *before)) {
    out.push_back(
        sv::InvalidInt("status.collisionCount", now.value_or(0), "cannot be decremented"));
  }
}

// ---------------------------------------------------------------------------------------------
// Deployments

Causes ValidateDeploymentSpec(const json::object& spec) {
  Causes out = sv::NonNegative("spec.replicas", Get(spec, "replicas"));
  sv::Append(out, ValidateSelectorAndTemplateLabels(spec, "deployment"));
  if (api::LabelSelector::FromLabelSelector(Get(spec, "selector")).ok()) {
    sv::Append(out, ValidateReplicatedTemplate(spec, "ReplicaSet"));
  }
  // ValidateDeploymentStrategy.
  static const json::object kEmpty;
  const json::object* strategy = AsObject(Get(spec, "strategy"));
  if (!strategy) strategy = &kEmpty;
  std::string_view type = api::Object::GetString(*strategy, "type");
  const json::value* ru = Get(*strategy, "rollingUpdate");
  if (type == "Recreate") {
    if (sv::IsSet(ru)) {
      out.push_back(FieldForbidden("spec.strategy.rollingUpdate",
                                   "may not be specified when strategy `type` is 'Recreate'"));
    }
  } else if (type == "RollingUpdate") {
    const json::object* r = AsObject(ru);
    if (!r) {
      out.push_back(FieldRequired("spec.strategy.rollingUpdate",
                                  "this should be defaulted and never be nil"));
    } else {
      const json::value* mu = Get(*r, "maxUnavailable");
      const json::value* ms = Get(*r, "maxSurge");
      sv::Append(out, ValidateIntOrPercent("spec.strategy.rollingUpdate.maxUnavailable", mu));
      sv::Append(out, ValidateIntOrPercent("spec.strategy.rollingUpdate.maxSurge", ms));
      if (IntOrPercentOf(mu) == 0 && IntOrPercentOf(ms) == 0) {
        out.push_back(sv::InvalidRendered("spec.strategy.rollingUpdate.maxUnavailable",
                                          sv::GoIntOrString(mu),
                                          "may not be 0 when `maxSurge` is 0"));
      }
      sv::Append(out, NotMoreThan100Percent("spec.strategy.rollingUpdate.maxUnavailable", mu));
    }
  } else {
    std::string rendered = "apps.DeploymentStrategy{Type:\"" + std::string(type) +
                           "\", RollingUpdate:" +
                           (sv::IsSet(ru) ? json::serialize(*ru)
                                          : std::string("(*apps.RollingUpdateDeployment)(nil)")) +
                           "}";
    out.push_back(
        {"FieldValueNotSupported",
         "Unsupported value: " + rendered + ": supported values: \"Recreate\", \"RollingUpdate\"",
         "spec.strategy"});
  }
  sv::Append(out, sv::NonNegative("spec.minReadySeconds", Get(spec, "minReadySeconds")));
  sv::Append(out, sv::NonNegative("spec.revisionHistoryLimit", Get(spec, "revisionHistoryLimit")));
  if (const json::value* pds = Get(spec, "progressDeadlineSeconds"); sv::IsSet(pds)) {
    sv::Append(out, sv::NonNegative("spec.progressDeadlineSeconds", pds));
    int64_t v = AsInt(pds).value_or(0);
    if (v <= AsInt(Get(spec, "minReadySeconds")).value_or(0)) {
      out.push_back(sv::InvalidInt("spec.progressDeadlineSeconds", v,
                                   "must be greater than minReadySeconds"));
    }
  }
  return out;
}

class DeploymentStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_Deployment.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    SetIntIfMissing(spec, "replicas", 1);
    json::object& strategy = api::EnsureObject(spec, "strategy");
    if (api::Object::GetString(strategy, "type").empty()) strategy["type"] = "RollingUpdate";
    if (api::Object::GetString(strategy, "type") == "RollingUpdate") {
      json::object& ru = api::EnsureObject(strategy, "rollingUpdate");
      if (!sv::IsSet(Get(ru, "maxUnavailable"))) ru["maxUnavailable"] = "25%";
      if (!sv::IsSet(Get(ru, "maxSurge"))) ru["maxSurge"] = "25%";
    }
    SetIntIfMissing(spec, "revisionHistoryLimit", 10);
    SetIntIfMissing(spec, "progressDeadlineSeconds", 600);
    DefaultPodTemplateAt(spec, "template");
  }

  // Upstream's deploymentStatusStrategy resets only spec and labels: annotations go through
  // /status, which is how the Deployment controller records the revision it rolled out
  // (deployment.kubernetes.io/revision) without bumping the generation.
  void PrepareForStatusUpdate(api::Object& obj, const api::Object& old) const override {
    std::optional<json::value> annotations;
    if (auto it = obj.mutable_metadata().find("annotations"); it != obj.mutable_metadata().end()) {
      annotations = it->value();
    }
    Strategy::PrepareForStatusUpdate(obj, old);
    if (annotations) {
      obj.mutable_metadata()["annotations"] = std::move(*annotations);
    } else {
      obj.mutable_metadata().erase("annotations");
    }
  }

  // The generation moves with the spec and with annotations (they are copied to ReplicaSets).
  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    Strategy::PrepareForUpdate(obj, old);
    const json::object* a = api::FindObject(obj.doc(), {"metadata", "annotations"});
    const json::object* b = api::FindObject(old.doc(), {"metadata", "annotations"});
    bool annotations_changed = (a ? *a : json::object()) != (b ? *b : json::object());
    if (annotations_changed && obj.generation() == old.generation()) {
      obj.set_generation(old.generation() + 1);
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateDeploymentSpec(Spec(obj));
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateDeploymentSpec(Spec(obj));
    SelectorImmutable(out, obj, old);
    return out;
  }
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object& old) const override {
    const json::object& st = Status(obj);
    Causes out =
        ValidateReplicaCounts(st,
                              {"observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                               "availableReplicas", "unavailableReplicas", "collisionCount"},
                              {"updatedReplicas", "readyReplicas", "availableReplicas"},
                              "cannot be greater than readyReplicas");
    CollisionCountNotDecremented(out, obj, old);
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// ReplicaSets

Causes ValidateReplicaSetSpec(const json::object& spec) {
  Causes out = sv::NonNegative("spec.replicas", Get(spec, "replicas"));
  sv::Append(out, sv::NonNegative("spec.minReadySeconds", Get(spec, "minReadySeconds")));
  sv::Append(out, ValidateSelectorAndTemplateLabels(spec, "deployment"));
  if (api::LabelSelector::FromLabelSelector(Get(spec, "selector")).ok()) {
    sv::Append(out, ValidateReplicatedTemplate(spec, "ReplicaSet"));
  }
  return out;
}

class ReplicaSetStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    SetIntIfMissing(spec, "replicas", 1);
    DefaultPodTemplateAt(spec, "template");
  }
  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateReplicaSetSpec(Spec(obj));
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateReplicaSetSpec(Spec(obj));
    SelectorImmutable(out, obj, old);
    return out;
  }
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object&) const override {
    return ValidateReplicaCounts(Status(obj),
                                 {"replicas", "fullyLabeledReplicas", "readyReplicas",
                                  "availableReplicas", "observedGeneration"},
                                 {"fullyLabeledReplicas", "readyReplicas", "availableReplicas"},
                                 "cannot be greater than readyReplicas");
  }
};

// ---------------------------------------------------------------------------------------------
// StatefulSets

Causes ValidateStatefulSetSpec(const json::object& spec) {
  Causes out;
  std::string_view pmp = api::Object::GetString(spec, "podManagementPolicy");
  if (pmp.empty()) {
    out.push_back(FieldRequired("spec.podManagementPolicy"));
  } else if (pmp != "OrderedReady" && pmp != "Parallel") {
    out.push_back(FieldInvalidString("spec.podManagementPolicy", pmp,
                                     "must be 'OrderedReady' or 'Parallel'"));
  }
  const json::object* us = AsObject(Get(spec, "updateStrategy"));
  std::string_view ut = us ? api::Object::GetString(*us, "type") : "";
  const json::value* ru = us ? Get(*us, "rollingUpdate") : nullptr;
  if (ut.empty()) {
    out.push_back(FieldRequired("spec.updateStrategy"));
  } else if (ut == "OnDelete") {
    if (sv::IsSet(ru)) {
      out.push_back(FieldInvalid("spec.updateStrategy.rollingUpdate", *ru,
                                 "only allowed for updateStrategy 'RollingUpdate'"));
    }
  } else if (ut == "RollingUpdate") {
    if (const json::object* r = AsObject(ru)) {
      sv::Append(out, sv::NonNegative("spec.updateStrategy.rollingUpdate.partition",
                                      Get(*r, "partition")));
      if (const json::value* mu = Get(*r, "maxUnavailable"); sv::IsSet(mu)) {
        std::string p = "spec.updateStrategy.rollingUpdate.maxUnavailable";
        sv::Append(out, ValidateIntOrPercent(p, mu));
        if (IntOrPercentOf(mu) == 0)
          out.push_back(sv::InvalidRendered(p, sv::GoIntOrString(mu), "cannot be 0"));
        sv::Append(out, NotMoreThan100Percent(p, mu));
      }
    }
  } else {
    out.push_back(FieldInvalid("spec.updateStrategy", us ? json::value(*us) : json::value(),
                               "must be 'RollingUpdate' or 'OnDelete'"));
  }
  if (const json::object* pvc = AsObject(Get(spec, "persistentVolumeClaimRetentionPolicy"))) {
    for (std::string_view f : {"whenDeleted", "whenScaled"}) {
      std::string_view v = api::Object::GetString(*pvc, f);
      if (v != "Retain" && v != "Delete") {
        out.push_back(FieldNotSupported(Child("spec.persistentVolumeClaimRetentionPolicy", f),
                                        json::value(v), {"Retain", "Delete"}));
      }
    }
  }
  sv::Append(out, sv::NonNegative("spec.replicas", Get(spec, "replicas")));
  sv::Append(out, sv::NonNegative("spec.minReadySeconds", Get(spec, "minReadySeconds")));
  if (const json::value* start = api::Find(spec, {"ordinals", "start"})) {
    sv::Append(out, sv::NonNegative("spec.ordinals.start", start));
  }
  // The template's labels and annotations are validated, not its pod spec (upstream's TODO).
  sv::Append(out, ValidateSelectorAndTemplateLabels(spec, "statefulset"));
  const json::value* meta = api::Find(spec, {"template", "metadata"});
  if (const json::object* m = AsObject(meta)) {
    sv::Append(out, sv::ValidateLabelsField("spec.template.labels", Get(*m, "labels")));
    sv::Append(out,
               sv::ValidateAnnotationsField("spec.template.annotations", Get(*m, "annotations")));
  }
  std::string_view rp = AsString(api::Find(spec, {"template", "spec", "restartPolicy"}));
  if (rp != "Always") {
    out.push_back(
        FieldNotSupported("spec.template.spec.restartPolicy", json::value(rp), {"Always"}));
  }
  if (sv::IsSet(api::Find(spec, {"template", "spec", "activeDeadlineSeconds"}))) {
    out.push_back(FieldForbidden("spec.template.spec.activeDeadlineSeconds",
                                 "activeDeadlineSeconds in StatefulSet is not Supported"));
  }
  return out;
}

class StatefulSetStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_StatefulSet (StatefulSetAutoDeletePVC is on in 1.32).
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    if (api::Object::GetString(spec, "podManagementPolicy").empty()) {
      spec["podManagementPolicy"] = "OrderedReady";
    }
    json::object& us = api::EnsureObject(spec, "updateStrategy");
    if (api::Object::GetString(us, "type").empty()) {
      us["type"] = "RollingUpdate";
      api::EnsureObject(us, "rollingUpdate");
    }
    if (api::Object::GetString(us, "type") == "RollingUpdate") {
      if (json::value* ru = us.if_contains("rollingUpdate"); ru && ru->is_object()) {
        SetIntIfMissing(ru->get_object(), "partition", 0);
      }
    }
    json::object& pvc = api::EnsureObject(spec, "persistentVolumeClaimRetentionPolicy");
    if (api::Object::GetString(pvc, "whenDeleted").empty()) pvc["whenDeleted"] = "Retain";
    if (api::Object::GetString(pvc, "whenScaled").empty()) pvc["whenScaled"] = "Retain";
    SetIntIfMissing(spec, "replicas", 1);
    SetIntIfMissing(spec, "revisionHistoryLimit", 10);
    DefaultPodTemplateAt(spec, "template");
    if (json::value* vct = spec.if_contains("volumeClaimTemplates"); vct && vct->is_array()) {
      for (json::value& t : vct->get_array()) {
        if (!t.is_object()) continue;
        json::object& ts = api::EnsureObject(t.get_object(), "spec");
        if (api::Object::GetString(ts, "volumeMode").empty()) ts["volumeMode"] = "Filesystem";
      }
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateStatefulSetSpec(Spec(obj));
  }
  // Only replicas, ordinals, template, updateStrategy, persistentVolumeClaimRetentionPolicy and
  // minReadySeconds may change.
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateStatefulSetSpec(Spec(obj));
    json::object a = Spec(obj);
    json::object b = Spec(old);
    for (std::string_view f : {"replicas", "ordinals", "template", "updateStrategy",
                               "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}) {
      a.erase(f);
      b.erase(f);
    }
    if (a != b) {
      out.push_back(FieldForbidden(
          "spec",
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
          "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
          "forbidden"));
    }
    return out;
  }
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object& old) const override {
    Causes out = ValidateReplicaCounts(
        Status(obj),
        {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas",
         "observedGeneration", "collisionCount"},
        {"readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
        "cannot be greater than status.readyReplicas");
    CollisionCountNotDecremented(out, obj, old);
    return out;
  }
  NameRule name_rule() const override { return NameRule::kDnsLabel; }
};

// ---------------------------------------------------------------------------------------------
// DaemonSets

constexpr std::string_view kTemplateGenerationAnnotation =
    "deprecated.daemonset.template.generation";

Causes ValidateDaemonSetSpec(const json::object& spec) {
  Causes out = sv::ValidateLabelSelectorField("spec.selector", Get(spec, "selector"));
  const json::value* sel = Get(spec, "selector");
  auto parsed = api::LabelSelector::FromLabelSelector(sv::IsSet(sel) ? sel : nullptr);
  if (parsed.ok() && !parsed->Matches(AsObject(TemplateLabels(spec)))) {
    out.push_back(sv::InvalidRendered("spec.template.metadata.labels",
                                      sv::GoStringMap(TemplateLabels(spec)),
                                      "`selector` does not match template `labels`"));
  }
  if (const json::object* so = AsObject(sel)) {
    size_t n = 0;
    if (const json::object* ml = AsObject(Get(*so, "matchLabels"))) n += ml->size();
    if (const json::array* me = sv::AsArray(Get(*so, "matchExpressions"))) n += me->size();
    if (n == 0) {
      out.push_back(sv::InvalidRendered("spec.selector", sv::GoLabelSelector(sel),
                                        "empty selector is invalid for daemonset"));
    }
  }
  sv::Append(out, ValidateReplicatedTemplate(spec, "DaemonSet"));
  sv::Append(out, sv::NonNegative("spec.minReadySeconds", Get(spec, "minReadySeconds")));
  const json::object* us = AsObject(Get(spec, "updateStrategy"));
  std::string_view type = us ? api::Object::GetString(*us, "type") : "";
  if (type == "RollingUpdate") {
    const json::object* ru = AsObject(Get(*us, "rollingUpdate"));
    if (!ru) {
      out.push_back(FieldRequired("spec.updateStrategy.rollingUpdate"));
    } else {
      std::string p = "spec.updateStrategy.rollingUpdate";
      const json::value* mu = Get(*ru, "maxUnavailable");
      const json::value* ms = Get(*ru, "maxSurge");
      sv::Append(out, ValidateIntOrPercent(Child(p, "maxUnavailable"), mu));
      sv::Append(out, ValidateIntOrPercent(Child(p, "maxSurge"), ms));
      sv::Append(out, NotMoreThan100Percent(Child(p, "maxUnavailable"), mu));
      sv::Append(out, NotMoreThan100Percent(Child(p, "maxSurge"), ms));
      bool has_unavailable = IntOrPercentOf(mu) != 0;
      bool has_surge = IntOrPercentOf(ms) != 0;
      if (has_unavailable && has_surge) {
        out.push_back(sv::InvalidRendered(Child(p, "maxSurge"), sv::GoIntOrString(ms),
                                          "may not be set when maxUnavailable is non-zero"));
      } else if (!has_unavailable && !has_surge) {
        out.push_back(FieldRequired(Child(p, "maxUnavailable"), "cannot be 0 when maxSurge is 0"));
      }
    }
  } else if (type != "OnDelete") {
    std::string rendered = "apps.DaemonSetUpdateStrategy{Type:\"" + std::string(type) +
                           "\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}";
    out.push_back(
        {"FieldValueNotSupported",
         "Unsupported value: " + rendered + ": supported values: \"RollingUpdate\", \"OnDelete\"",
         "spec.updateStrategy"});
  }
  sv::Append(out, sv::NonNegative("spec.revisionHistoryLimit", Get(spec, "revisionHistoryLimit")));
  return out;
}

class DaemonSetStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_DaemonSet.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    json::object& us = api::EnsureObject(spec, "updateStrategy");
    if (api::Object::GetString(us, "type").empty()) us["type"] = "RollingUpdate";
    if (api::Object::GetString(us, "type") == "RollingUpdate") {
      json::object& ru = api::EnsureObject(us, "rollingUpdate");
      if (!sv::IsSet(Get(ru, "maxUnavailable"))) ru["maxUnavailable"] = 1;
      if (!sv::IsSet(Get(ru, "maxSurge"))) ru["maxSurge"] = 0;
    }
    SetIntIfMissing(spec, "revisionHistoryLimit", 10);
    DefaultPodTemplateAt(spec, "template");
  }

  // The template generation (kept in an annotation in apps/v1) starts at 1.
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    obj.SetAnnotation(kTemplateGenerationAnnotation, "1");
  }
  // ... and moves when the template changes.
  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    Strategy::PrepareForUpdate(obj, old);
    std::string gen(old.annotation(kTemplateGenerationAnnotation).value_or("1"));
    const json::value* a = Get(Spec(obj), "template");
    const json::value* b = Get(Spec(old), "template");
    if ((a && b && *a != *b) || (!a) != (!b)) {
      int64_t n = 1;
      std::from_chars(gen.data(), gen.data() + gen.size(), n);
      gen = std::to_string(n + 1);
    }
    obj.SetAnnotation(kTemplateGenerationAnnotation, gen);
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateDaemonSetSpec(Spec(obj));
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateDaemonSetSpec(Spec(obj));
    SelectorImmutable(out, obj, old);
    return out;
  }
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object& old) const override {
    Causes out;
    for (std::string_view f :
         {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
          "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
          "collisionCount"}) {
      sv::Append(out, sv::NonNegative(Child("status", f), Get(Status(obj), f)));
    }
    CollisionCountNotDecremented(out, obj, old);
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// ControllerRevisions

class ControllerRevisionStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    Causes out;
    if (!sv::IsSet(Get(obj.doc(), "data"))) {
      out.push_back(FieldRequired("data", "data is mandatory"));
    }
    sv::Append(out, sv::NonNegative("revision", Get(obj.doc(), "revision")));
    return out;
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = Validate(obj);
    const json::value* now = Get(obj.doc(), "data");
    sv::Immutable(out, "data", now, Get(old.doc(), "data"),
                  now ? json::serialize(*now) : std::string("null"));
    return out;
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakeAppsStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "apps") return nullptr;
  const std::string& r = info->gvr.resource;
  if (r == "deployments") return std::make_shared<DeploymentStrategy>(std::move(info));
  if (r == "replicasets") return std::make_shared<ReplicaSetStrategy>(std::move(info));
  if (r == "statefulsets") return std::make_shared<StatefulSetStrategy>(std::move(info));
  if (r == "daemonsets") return std::make_shared<DaemonSetStrategy>(std::move(info));
  if (r == "controllerrevisions") {
    return std::make_shared<ControllerRevisionStrategy>(std::move(info));
  }
  return nullptr;
}

}  // namespace converge::apiserver
