// batch/v1 strategies: Job and CronJob.
//
// Upstream: pkg/apis/batch/v1/defaults.go, pkg/apis/batch/validation/validation.go and
// pkg/registry/batch/{job,cronjob}/strategy.go.
#include <set>

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
using sv::Truthy;

namespace {

constexpr std::string_view kControllerUidLabel = "batch.kubernetes.io/controller-uid";
constexpr std::string_view kJobNameLabel = "batch.kubernetes.io/job-name";
constexpr std::string_view kLegacyControllerUidLabel = "controller-uid";
constexpr std::string_view kLegacyJobNameLabel = "job-name";
constexpr int64_t kMaxParallelismForIndexedJob = 100000;

std::string Render(const json::value* v) {
  return sv::IsSet(v) ? json::serialize(*v) : std::string("null");
}

// The JobSpec defaults (SetDefaults_Job) for a spec object; `labels_from` receives the template
// labels when the owning object has none (Jobs only).
void DefaultJobSpec(json::object& spec) {
  bool has_completions = sv::IsSet(Get(spec, "completions"));
  bool has_parallelism = sv::IsSet(Get(spec, "parallelism"));
  if (!has_completions && !has_parallelism) {
    spec["completions"] = 1;
    spec["parallelism"] = 1;
  }
  if (!sv::IsSet(Get(spec, "parallelism"))) spec["parallelism"] = 1;
  if (!sv::IsSet(Get(spec, "backoffLimit"))) {
    spec["backoffLimit"] = sv::IsSet(Get(spec, "backoffLimitPerIndex")) ? 2147483647 : 6;
  }
  if (api::Object::GetString(spec, "completionMode").empty()) spec["completionMode"] = "NonIndexed";
  if (!sv::IsSet(Get(spec, "suspend"))) spec["suspend"] = false;
  bool has_failure_policy = sv::IsSet(Get(spec, "podFailurePolicy"));
  if (has_failure_policy) {
    json::value* rules = api::EnsureObject(spec, "podFailurePolicy").if_contains("rules");
    if (rules && rules->is_array()) {
      for (json::value& r : rules->get_array()) {
        json::value* conds =
            r.is_object() ? r.get_object().if_contains("onPodConditions") : nullptr;
        if (!conds || !conds->is_array()) continue;
        for (json::value& c : conds->get_array()) {
          if (c.is_object() && api::Object::GetString(c.get_object(), "status").empty()) {
            c.get_object()["status"] = "True";
          }
        }
      }
    }
  }
  if (api::Object::GetString(spec, "podReplacementPolicy").empty()) {
    spec["podReplacementPolicy"] = has_failure_policy ? "Failed" : "TerminatingOrFailed";
  }
  DefaultPodTemplateAt(spec, "template");
}

// validateJobSpec: the fields a Job and a CronJob's job template share. `path` is the spec's.
Causes ValidateJobSpecCommon(const json::object& spec, const std::string& path) {
  Causes out;
  for (std::string_view f : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                             "ttlSecondsAfterFinished", "backoffLimitPerIndex"}) {
    sv::Append(out, sv::NonNegative(Child(path, f), Get(spec, f)));
  }
  const json::value* max_failed = Get(spec, "maxFailedIndexes");
  bool has_per_index = sv::IsSet(Get(spec, "backoffLimitPerIndex"));
  if (sv::IsSet(max_failed)) {
    sv::Append(out, sv::NonNegative(Child(path, "maxFailedIndexes"), max_failed));
    if (!has_per_index) {
      out.push_back(
          FieldRequired(Child(path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified"));
    }
  }
  const json::value* mode = Get(spec, "completionMode");
  std::string_view m = AsString(mode);
  bool indexed = m == "Indexed";
  if (sv::IsSet(mode)) {
    if (m != "NonIndexed" && m != "Indexed") {
      out.push_back(
          FieldNotSupported(Child(path, "completionMode"), *mode, {"NonIndexed", "Indexed"}));
    }
    if (indexed) {
      const json::value* completions = Get(spec, "completions");
      if (!sv::IsSet(completions)) {
        out.push_back(FieldRequired(Child(path, "completions"), "when completion mode is Indexed"));
      }
      int64_t parallelism = AsInt(Get(spec, "parallelism")).value_or(0);
      if (parallelism > kMaxParallelismForIndexedJob) {
        out.push_back(sv::InvalidInt(Child(path, "parallelism"), parallelism,
                                     "must be less than or equal to 100000 when completion mode is "
                                     "Indexed"));
      }
      if (sv::IsSet(completions) && sv::IsSet(max_failed) &&
          AsInt(max_failed).value_or(0) > AsInt(completions).value_or(0)) {
        out.push_back(sv::InvalidInt(Child(path, "maxFailedIndexes"), AsInt(max_failed).value_or(0),
                                     "must be less than or equal to completions"));
      }
    }
  }
  if (!indexed) {
    if (has_per_index) {
      out.push_back(sv::InvalidInt(Child(path, "backoffLimitPerIndex"),
                                   AsInt(Get(spec, "backoffLimitPerIndex")).value_or(0),
                                   "requires indexed completion mode"));
    }
    if (sv::IsSet(max_failed)) {
      out.push_back(sv::InvalidInt(Child(path, "maxFailedIndexes"), AsInt(max_failed).value_or(0),
                                   "requires indexed completion mode"));
    }
  }
  bool has_failure_policy = sv::IsSet(Get(spec, "podFailurePolicy"));
  if (const json::value* prp = Get(spec, "podReplacementPolicy"); sv::IsSet(prp)) {
    std::string_view v = AsString(prp);
    if (has_failure_policy) {
      if (v != "Failed") {
        out.push_back(FieldNotSupported(Child(path, "podReplacementPolicy"), *prp, {"Failed"}));
      }
    } else if (v != "Failed" && v != "TerminatingOrFailed") {
      out.push_back(FieldNotSupported(Child(path, "podReplacementPolicy"), *prp,
                                      {"Failed", "TerminatingOrFailed"}));
    }
  }
  std::string tpath = Child(path, "template");
  sv::Append(out, ValidatePodTemplateSpec(Get(spec, "template"), tpath));
  // The pod template's restartPolicy defaults to Always, which a Job cannot use.
  std::string_view rp = AsString(api::Find(spec, {"template", "spec", "restartPolicy"}));
  std::string rpath = Child(Child(tpath, "spec"), "restartPolicy");
  if (rp == "Always" || rp.empty()) {
    out.push_back(FieldRequired(rpath, "valid values: \"OnFailure\", \"Never\""));
  } else if (rp != "OnFailure" && rp != "Never") {
    out.push_back(FieldNotSupported(rpath, json::value(rp), {"OnFailure", "Never"}));
  } else if (has_failure_policy && rp != "Never") {
    out.push_back(FieldInvalidString(
        rpath, rp, "only \"Never\" is supported when podFailurePolicy is specified"));
  }
  return out;
}

// ValidateHasLabel.
void HasLabel(Causes& out, const json::object& spec, std::string_view key, std::string_view want) {
  const json::value* labels = api::Find(spec, {"template", "metadata", "labels"});
  const json::object* lo = AsObject(labels);
  std::string path = sv::Key("spec.template.metadata.labels", key);
  auto it = lo ? lo->find(key) : json::object::const_iterator();
  if (!lo || it == lo->end()) {
    out.push_back(FieldRequired(path, "must be '" + std::string(want) + "'"));
  } else if (AsString(&it->value()) != want) {
    out.push_back(
        sv::InvalidRendered(path, sv::GoStringMap(labels), "must be '" + std::string(want) + "'"));
  }
}

Causes ValidateJob(const api::Object& job) {
  Causes out;
  const json::object& spec = Spec(job);
  const json::value* sel = Get(spec, "selector");
  // ValidateGeneratedSelector.
  if (!Truthy(Get(spec, "manualSelector")) && sv::IsSet(sel)) {
    if (job.uid().empty()) out.push_back(FieldRequired("metadata.uid"));
    HasLabel(out, spec, kControllerUidLabel, job.uid());
    HasLabel(out, spec, kJobNameLabel, job.name());
    HasLabel(out, spec, kLegacyControllerUidLabel, job.uid());
    HasLabel(out, spec, kLegacyJobNameLabel, job.name());
    json::object expected;
    expected[kControllerUidLabel] = job.uid();
    expected[kJobNameLabel] = job.name();
    expected[kLegacyControllerUidLabel] = job.uid();
    expected[kLegacyJobNameLabel] = job.name();
    auto parsed = api::LabelSelector::FromLabelSelector(sel);
    if (parsed.ok() && !parsed->Matches(&expected)) {
      out.push_back(sv::InvalidRendered("spec.selector", sv::GoLabelSelector(sel),
                                        "`selector` not auto-generated"));
    }
  }
  sv::Append(out, ValidateJobSpecCommon(spec, "spec"));
  if (!sv::IsSet(sel)) {
    out.push_back(FieldRequired("spec.selector"));
  } else {
    sv::Append(out, sv::ValidateLabelSelectorField("spec.selector", sel));
  }
  auto parsed = api::LabelSelector::FromLabelSelector(sv::IsSet(sel) ? sel : nullptr);
  const json::value* labels = api::Find(spec, {"template", "metadata", "labels"});
  if (parsed.ok() && !parsed->Matches(AsObject(labels))) {
    out.push_back(sv::InvalidRendered("spec.template.metadata.labels", sv::GoStringMap(labels),
                                      "`selector` does not match template `labels`"));
  }
  return out;
}

class JobStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_Job; the Job takes its template's labels when it has none.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    DefaultJobSpec(spec);
    const json::object* labels = AsObject(api::Find(spec, {"template", "metadata", "labels"}));
    const json::object* own = api::FindObject(obj.doc(), {"metadata", "labels"});
    if (labels && (!own || own->empty())) obj.mutable_metadata()["labels"] = *labels;
  }

  // Unless spec.manualSelector is true, the selector is generated from the uid (assigned by the
  // storage before this runs) and the template gets the labels it selects on.
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    if (Truthy(Get(spec, "manualSelector"))) return;
    json::object& tmpl = api::EnsureObject(spec, "template");
    json::object& labels = api::EnsureObject(api::EnsureObject(tmpl, "metadata"), "labels");
    std::string name(obj.name());
    std::string uid(obj.uid());
    for (std::string_view k : {kLegacyJobNameLabel, kJobNameLabel}) {
      if (!labels.contains(k)) labels[k] = name;
    }
    for (std::string_view k : {kLegacyControllerUidLabel, kControllerUidLabel}) {
      if (!labels.contains(k)) labels[k] = uid;
    }
    json::object& sel = api::EnsureObject(spec, "selector");
    json::object& match = api::EnsureObject(sel, "matchLabels");
    if (!match.contains(kControllerUidLabel)) match[kControllerUidLabel] = uid;
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateJob(obj);
  }

  // ValidateJobSpecUpdate.
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out = ValidateJob(obj);
    const json::object& ns = Spec(obj);
    const json::object& os = Spec(old);
    // Completions: immutable, except that an Indexed Job may scale completions with parallelism.
    const json::value* nc = Get(ns, "completions");
    const json::value* oc = Get(os, "completions");
    bool completions_changed = sv::IsSet(nc) != sv::IsSet(oc) || (sv::IsSet(nc) && *nc != *oc);
    if (completions_changed) {
      if (AsString(Get(ns, "completionMode")) != "Indexed") {
        out.push_back(FieldInvalid("spec.completions", sv::IsSet(nc) ? *nc : json::value(),
                                   "field is immutable"));
      } else if (sv::IsSet(nc) && AsInt(nc) != AsInt(Get(ns, "parallelism"))) {
        out.push_back(FieldInvalid("spec.completions", *nc,
                                   "can only be modified in tandem with spec.parallelism"));
      }
    }
    const json::value* sel = Get(ns, "selector");
    sv::Immutable(out, "spec.selector", sel, Get(os, "selector"), sv::GoLabelSelector(sel));
    // The template is immutable, except the scheduling directives of a suspended Job that has not
    // started yet.
    json::value nt = Get(ns, "template") ? *Get(ns, "template") : json::value();
    json::value ot = Get(os, "template") ? *Get(os, "template") : json::value();
    bool suspended = Truthy(Get(os, "suspend"));
    bool not_started = !sv::IsSet(api::Find(old.doc(), {"status", "startTime"}));
    if (suspended && not_started && nt.is_object() && ot.is_object()) {
      json::object& o = ot.get_object();
      const json::object& n = nt.get_object();
      json::object& om = api::EnsureObject(o, "metadata");
      const json::object* nm = AsObject(Get(n, "metadata"));
      for (std::string_view f : {"labels", "annotations"}) {
        if (nm && Get(*nm, f)) {
          om[f] = *Get(*nm, f);
        } else {
          om.erase(f);
        }
      }
      if (!nm && om.empty()) o.erase("metadata");
      const json::object* nspec = AsObject(Get(n, "spec"));
      json::object& ospec = api::EnsureObject(o, "spec");
      for (std::string_view f : {"nodeSelector", "tolerations", "schedulingGates", "affinity"}) {
        if (nspec && Get(*nspec, f)) {
          ospec[f] = *Get(*nspec, f);
        } else {
          ospec.erase(f);
        }
      }
    }
    if (nt != ot) {
      out.push_back(
          sv::InvalidRendered("spec.template", Render(Get(ns, "template")), "field is immutable"));
    }
    for (std::string_view f : {"completionMode", "podFailurePolicy", "backoffLimitPerIndex",
                               "managedBy", "successPolicy"}) {
      const json::value* now = Get(ns, f);
      std::string rendered = now && now->is_string() ? json::serialize(*now) : Render(now);
      sv::Immutable(out, Child("spec", f), now, Get(os, f), rendered);
    }
    return out;
  }

  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object&) const override {
    Causes out;
    const json::value* st = Get(obj.doc(), "status");
    const json::object* so = AsObject(st);
    if (!so) return out;
    for (std::string_view f : {"active", "succeeded", "failed", "ready", "terminating"}) {
      sv::Append(out, sv::NonNegative(Child("status", f), Get(*so, f)));
    }
    return out;
  }

  // batch/v1 Jobs orphan their pods unless the client asks otherwise (kubectl asks Background).
  std::string_view DefaultPropagationPolicy() const override { return "Orphan"; }
};

// ---------------------------------------------------------------------------------------------
// CronJobs

// A standard five-field cron schedule or a descriptor (@hourly, @every 1h, ...), as
// robfig/cron's ParseStandard accepts. Returns the parser's message on failure.
std::optional<std::string> CronScheduleError(std::string_view schedule) {
  if (!schedule.empty() && schedule[0] == '@') {
    static const std::set<std::string_view> kDescriptors = {
        "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"};
    if (kDescriptors.count(schedule) || schedule.substr(0, 7) == "@every ") return std::nullopt;
    return "unrecognized descriptor: " + std::string(schedule);
  }
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < schedule.size()) {
    while (i < schedule.size() && (schedule[i] == ' ' || schedule[i] == '\t')) ++i;
    size_t start = i;
    while (i < schedule.size() && schedule[i] != ' ' && schedule[i] != '\t') ++i;
    if (i > start) fields.push_back(schedule.substr(start, i - start));
  }
  if (fields.size() != 5) {
    return "Expected exactly 5 fields, found " + std::to_string(fields.size()) + ": " +
           std::string(schedule);
  }
  for (std::string_view f : fields) {
    for (char c : f) {
      bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '*' || c == '/' || c == ',' ||
                c == '-' || c == '?';
      if (!ok) return "Failed to parse field: " + std::string(f);
    }
  }
  return std::nullopt;
}

Causes ValidateCronJob(const api::Object& cj, bool create) {
  Causes out;
  if (create && cj.name().size() > 52) {
    out.push_back(
        FieldInvalidString("metadata.name", cj.name(), "must be no more than 52 characters"));
  }
  const json::object& spec = Spec(cj);
  std::string_view schedule = api::Object::GetString(spec, "schedule");
  if (schedule.empty()) {
    out.push_back(FieldRequired("spec.schedule"));
  } else {
    if (std::optional<std::string> err = CronScheduleError(schedule)) {
      out.push_back(FieldInvalidString("spec.schedule", schedule, *err));
    }
    if (schedule.find("TZ") != std::string_view::npos) {
      out.push_back(FieldInvalidString("spec.schedule", schedule,
                                       "cannot use TZ or CRON_TZ in schedule, use timeZone field "
                                       "instead"));
    }
  }
  sv::Append(out,
             sv::NonNegative("spec.startingDeadlineSeconds", Get(spec, "startingDeadlineSeconds")));
  std::string_view cp = api::Object::GetString(spec, "concurrencyPolicy");
  if (cp.empty()) {
    out.push_back(FieldRequired("spec.concurrencyPolicy"));
  } else if (cp != "Allow" && cp != "Forbid" && cp != "Replace") {
    out.push_back(FieldNotSupported("spec.concurrencyPolicy", json::value(cp),
                                    {"Allow", "Forbid", "Replace"}));
  }
  static const json::object kEmpty;
  const json::object* jt_spec = AsObject(api::Find(spec, {"jobTemplate", "spec"}));
  const json::object& js = jt_spec ? *jt_spec : kEmpty;
  sv::Append(out, ValidateJobSpecCommon(js, "spec.jobTemplate.spec"));
  if (const json::value* sel = Get(js, "selector"); sv::IsSet(sel)) {
    out.push_back(sv::InvalidRendered("spec.jobTemplate.spec.selector", sv::GoLabelSelector(sel),
                                      "`selector` will be auto-generated"));
  }
  if (Truthy(Get(js, "manualSelector"))) {
    out.push_back(FieldNotSupported("spec.jobTemplate.spec.manualSelector", json::value(true),
                                    {"nil", "false"}));
  }
  sv::Append(out, sv::NonNegative("spec.successfulJobsHistoryLimit",
                                  Get(spec, "successfulJobsHistoryLimit")));
  sv::Append(out,
             sv::NonNegative("spec.failedJobsHistoryLimit", Get(spec, "failedJobsHistoryLimit")));
  return out;
}

class CronJobStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_CronJob; the job template's pod template gets the PodSpec defaults.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    if (api::Object::GetString(spec, "concurrencyPolicy").empty())
      spec["concurrencyPolicy"] = "Allow";
    if (!sv::IsSet(Get(spec, "suspend"))) spec["suspend"] = false;
    if (!sv::IsSet(Get(spec, "successfulJobsHistoryLimit"))) spec["successfulJobsHistoryLimit"] = 3;
    if (!sv::IsSet(Get(spec, "failedJobsHistoryLimit"))) spec["failedJobsHistoryLimit"] = 1;
    json::value* jt = spec.if_contains("jobTemplate");
    if (jt && jt->is_object()) {
      json::value* js = jt->get_object().if_contains("spec");
      if (js && js->is_object()) DefaultPodTemplateAt(js->get_object(), "template");
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateCronJob(obj, /*create=*/true);
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object&) const override {
    return ValidateCronJob(obj, /*create=*/false);
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakeBatchStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "batch") return nullptr;
  if (info->gvr.resource == "jobs") return std::make_shared<JobStrategy>(std::move(info));
  if (info->gvr.resource == "cronjobs") return std::make_shared<CronJobStrategy>(std::move(info));
  return nullptr;
}

}  // namespace converge::apiserver
