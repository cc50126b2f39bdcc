// Workload printers: apps (deployments, replicasets, statefulsets, daemonsets,
// controllerrevisions), batch (jobs, cronjobs) and policy (poddisruptionbudgets).
#include <algorithm>
#include <string>

#include "apiserver/printers.h"
#include "util/time_format.h"

namespace converge::apiserver::printers {

namespace {

const json::value* Field(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->value();
}

// spec.replicas, defaulted to 1 as the v1 API does.
int64_t Replicas(const json::object& spec) {
  return Int(spec, "replicas", 1);
}

const json::object& TemplateSpec(const json::object& spec) {
  return Sub(Sub(spec, "template"), "spec");
}

TableColumn ContainersColumn() {
  return Column("Containers", "string", "Container names of the pod template.", 1);
}
TableColumn ImagesColumn() {
  return Column("Images", "string", "Container images of the pod template.", 1);
}
TableColumn SelectorColumn() {
  return Column("Selector", "string", "The label selector for the pods.", 1);
}

void AppendContainers(json::array& cells, const json::object& pod_spec) {
  auto [names, images] = ContainerCells(pod_spec);
  cells.emplace_back(names);
  cells.emplace_back(images);
}

// --- apps ----------------------------------------------------------------------------------------

json::array DeploymentCells(const api::Object& d, TimePoint now) {
  const json::object& spec = Sub(d.doc(), "spec");
  const json::object& status = Sub(d.doc(), "status");
  json::array cells;
  cells.emplace_back(d.name());
  cells.emplace_back(std::to_string(Int(status, "readyReplicas")) + "/" +
                     std::to_string(Replicas(spec)));
  cells.emplace_back(Int(status, "updatedReplicas"));
  cells.emplace_back(Int(status, "availableReplicas"));
  cells.emplace_back(AgeOf(d, now));
  AppendContainers(cells, TemplateSpec(spec));
  cells.emplace_back(SelectorString(Field(spec, "selector")));
  return cells;
}

json::array ReplicaSetCells(const api::Object& rs, TimePoint now) {
  const json::object& spec = Sub(rs.doc(), "spec");
  const json::object& status = Sub(rs.doc(), "status");
  json::array cells;
  cells.emplace_back(rs.name());
  cells.emplace_back(Replicas(spec));
  cells.emplace_back(Int(status, "replicas"));
  cells.emplace_back(Int(status, "readyReplicas"));
  cells.emplace_back(AgeOf(rs, now));
  AppendContainers(cells, TemplateSpec(spec));
  cells.emplace_back(FormatLabelSelector(Field(spec, "selector")));
  return cells;
}

json::array StatefulSetCells(const api::Object& ss, TimePoint now) {
  const json::object& spec = Sub(ss.doc(), "spec");
  json::array cells;
  cells.emplace_back(ss.name());
  cells.emplace_back(std::to_string(Int(Sub(ss.doc(), "status"), "readyReplicas")) + "/" +
                     std::to_string(Replicas(spec)));
  cells.emplace_back(AgeOf(ss, now));
  AppendContainers(cells, TemplateSpec(spec));
  return cells;
}

json::array DaemonSetCells(const api::Object& ds, TimePoint now) {
  const json::object& spec = Sub(ds.doc(), "spec");
  const json::object& status = Sub(ds.doc(), "status");
  json::array cells;
  cells.emplace_back(ds.name());
  cells.emplace_back(Int(status, "desiredNumberScheduled"));
  cells.emplace_back(Int(status, "currentNumberScheduled"));
  cells.emplace_back(Int(status, "numberReady"));
  cells.emplace_back(Int(status, "updatedNumberScheduled"));
  cells.emplace_back(Int(status, "numberAvailable"));
  cells.emplace_back(FormatLabels(Sub(TemplateSpec(spec), "nodeSelector")));
  cells.emplace_back(AgeOf(ds, now));
  AppendContainers(cells, TemplateSpec(spec));
  cells.emplace_back(FormatLabelSelector(Field(spec, "selector")));
  return cells;
}

std::string ToLowerCopy(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "statefulset.apps/web" for the controlling owner, "<none>" without one.
std::string ControllerName(const api::Object& obj) {
  const json::array* refs = api::FindArray(obj.doc(), {"metadata", "ownerReferences"});
  if (!refs) return "<none>";
  for (const json::value& v : *refs) {
    if (!v.is_object() || !Bool(v.get_object(), "controller")) continue;
    const json::object& ref = v.get_object();
    std::string_view api_version = Str(ref, "apiVersion");
    auto slash = api_version.find('/');
    std::string_view group =
        slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
    std::string kind(Str(ref, "kind"));
    if (kind.empty() && group.empty()) return std::string(Str(ref, "name"));
    std::string group_kind = group.empty() ? kind : kind + "." + std::string(group);
    return ToLowerCopy(group_kind) + "/" + std::string(Str(ref, "name"));
  }
  return "<none>";
}

json::array ControllerRevisionCells(const api::Object& cr, TimePoint now) {
  json::array cells;
  cells.emplace_back(cr.name());
  cells.emplace_back(ControllerName(cr));
  cells.emplace_back(Int(cr.doc(), "revision"));
  cells.emplace_back(AgeOf(cr, now));
  return cells;
}

// --- batch ---------------------------------------------------------------------------------------

// The status of the first condition of `type`, "True" meaning it holds.
bool JobCondition(const json::object& status, std::string_view type) {
  for (const json::object* c : Objects(status, "conditions")) {
    if (Str(*c, "type") == type) return Str(*c, "status") == "True";
  }
  return false;
}

json::array JobCells(const api::Object& job, TimePoint now) {
  const json::object& spec = Sub(job.doc(), "spec");
  const json::object& status = Sub(job.doc(), "status");
  const int64_t succeeded = Int(status, "succeeded");
  std::string completions;
  if (Has(spec, "completions")) {
    completions = std::to_string(succeeded) + "/" + std::to_string(Int(spec, "completions"));
  } else if (int64_t parallelism = Int(spec, "parallelism"); parallelism > 1) {
    completions = std::to_string(succeeded) + "/1 of " + std::to_string(parallelism);
  } else {
    completions = std::to_string(succeeded) + "/1";
  }

  // Running jobs count up to now; finished ones show start → completion.
  std::string duration;
  auto start = util::ParseRfc3339(Str(status, "startTime"));
  if (start) {
    auto end = util::ParseRfc3339(Str(status, "completionTime"));
    duration = util::HumanDuration((end ? *end : now) - *start);
  }

  std::string state;
  if (JobCondition(status, "Complete")) {
    state = "Complete";
  } else if (JobCondition(status, "Failed")) {
    state = "Failed";
  } else if (job.being_deleted()) {
    state = "Terminating";
  } else if (JobCondition(status, "Suspended")) {
    state = "Suspended";
  } else if (JobCondition(status, "FailureTarget")) {
    state = "FailureTarget";
  } else {
    state = "Running";
  }

  json::array cells;
  cells.emplace_back(job.name());
  cells.emplace_back(state);
  cells.emplace_back(completions);
  cells.emplace_back(duration);
  cells.emplace_back(AgeOf(job, now));
  AppendContainers(cells, TemplateSpec(spec));
  cells.emplace_back(FormatLabelSelector(Field(spec, "selector")));
  return cells;
}

json::array CronJobCells(const api::Object& cj, TimePoint now) {
  const json::object& spec = Sub(cj.doc(), "spec");
  const json::object& status = Sub(cj.doc(), "status");
  const json::object& job_spec = Sub(Sub(spec, "jobTemplate"), "spec");
  std::string last_schedule = "<none>";
  if (Has(status, "lastScheduleTime")) {
    last_schedule = TimestampSince(Str(status, "lastScheduleTime"), now);
  }
  json::array cells;
  cells.emplace_back(cj.name());
  cells.emplace_back(Str(spec, "schedule"));
  cells.emplace_back(Has(spec, "timeZone") ? std::string(Str(spec, "timeZone")) : "<none>");
  // suspend defaults to false; upstream prints the bool as a string.
  cells.emplace_back(Bool(spec, "suspend") ? "True" : "False");
  cells.emplace_back(Count(status, "active"));
  cells.emplace_back(last_schedule);
  cells.emplace_back(AgeOf(cj, now));
  AppendContainers(cells, TemplateSpec(job_spec));
  cells.emplace_back(FormatLabelSelector(Field(job_spec, "selector")));
  return cells;
}

// --- policy --------------------------------------------------------------------------------------

// An IntOrString as upstream's String(): "2" or "50%"; "N/A" when unset.
std::string IntOrString(const json::object& o, std::string_view key) {
  const json::value* v = Field(o, key);
  if (!v || v->is_null()) return "N/A";
  if (v->is_string()) return std::string(v->get_string());
  return std::to_string(Int(o, key));
}

json::array PdbCells(const api::Object& pdb, TimePoint now) {
  const json::object& spec = Sub(pdb.doc(), "spec");
  json::array cells;
  cells.emplace_back(pdb.name());
  cells.emplace_back(IntOrString(spec, "minAvailable"));
  cells.emplace_back(IntOrString(spec, "maxUnavailable"));
  cells.emplace_back(Int(Sub(pdb.doc(), "status"), "disruptionsAllowed"));
  cells.emplace_back(AgeOf(pdb, now));
  return cells;
}

}  // namespace

void AddWorkloadPrinters(PrinterMap& map) {
  map[{"apps", "deployments"}] = MakePrinter(
      {
          NameColumn(),
          Column("Ready", "string", "Ready pods out of desired replicas."),
          Column("Up-to-date", "string", "Pods running the latest template."),
          Column("Available", "string", "Pods available to users (ready for minReadySeconds)."),
          AgeColumn(),
          ContainersColumn(),
          ImagesColumn(),
          SelectorColumn(),
      },
      DeploymentCells);

  map[{"apps", "replicasets"}] = MakePrinter(
      {
          NameColumn(),
          Column("Desired", "integer", "Desired number of pods."),
          Column("Current", "integer", "Pods that currently exist."),
          Column("Ready", "integer", "Pods that are ready."),
          AgeColumn(),
          ContainersColumn(),
          ImagesColumn(),
          SelectorColumn(),
      },
      ReplicaSetCells);

  map[{"apps", "statefulsets"}] = MakePrinter(
      {
          NameColumn(),
          Column("Ready", "string", "Ready pods out of desired replicas."),
          AgeColumn(),
          ContainersColumn(),
          ImagesColumn(),
      },
      StatefulSetCells);

  map[{"apps", "daemonsets"}] = MakePrinter(
      {
          NameColumn(),
          Column("Desired", "integer", "Nodes that should run the daemon pod."),
          Column("Current", "integer", "Nodes running at least one daemon pod."),
          Column("Ready", "integer", "Nodes whose daemon pod is ready."),
          Column("Up-to-date", "integer", "Nodes running the latest template."),
          Column("Available", "integer", "Nodes whose daemon pod is available."),
          Column("Node Selector", "string", "The pod template's node selector."),
          AgeColumn(),
          ContainersColumn(),
          ImagesColumn(),
          SelectorColumn(),
      },
      DaemonSetCells);

  map[{"apps", "controllerrevisions"}] = MakePrinter(
      {
          NameColumn(),
          Column("Controller", "string", "The controlling owner, as kind.group/name."),
          Column("Revision", "string", "The revision number."),
          AgeColumn(),
      },
      ControllerRevisionCells);

  map[{"batch", "jobs"}] = MakePrinter(
      {
          NameColumn(),
          Column("Status", "string", "Complete, Failed, Terminating, Suspended or Running."),
          Column("Completions", "string", "Succeeded pods out of the completions wanted."),
          Column("Duration", "string", "How long the job ran (or has been running)."),
          AgeColumn(),
          ContainersColumn(),
          ImagesColumn(),
          SelectorColumn(),
      },
      JobCells);

  map[{"batch", "cronjobs"}] = MakePrinter(
      {
          NameColumn(),
          Column("Schedule", "string", "The cron schedule."),
          Column("Timezone", "string", "The schedule's time zone."),
          Column("Suspend", "boolean", "Whether new runs are suspended."),
          Column("Active", "integer", "Jobs currently running."),
          Column("Last Schedule", "string", "Time since a job was last scheduled."),
          AgeColumn(),
          ContainersColumn(),
          ImagesColumn(),
          SelectorColumn(),
      },
      CronJobCells);

  map[{"policy", "poddisruptionbudgets"}] = MakePrinter(
      {
          NameColumn(),
          Column("Min Available", "string", "Pods that must stay available."),
          Column("Max Unavailable", "string", "Pods that may be unavailable."),
          Column("Allowed Disruptions", "integer", "Pods that may be disrupted right now."),
          AgeColumn(),
      },
      PdbCells);
}

}  // namespace converge::apiserver::printers
