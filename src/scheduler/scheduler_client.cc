#include "scheduler/scheduler_client.h"

#include "client/api_errors.h"

namespace converge::scheduler {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kPods{"", "v1", "pods"};

}  // namespace

util::Status RestSchedulerClient::Bind(const PodInfo& pod, const std::string& node) {
  json::object binding;
  binding["apiVersion"] = "v1";
  binding["kind"] = "Binding";
  binding["metadata"] =
      json::object{{"name", pod.key.name}, {"namespace", pod.key.ns}, {"uid", pod.uid}};
  binding["target"] = json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}};
  client::HttpRequest req;
  req.method = "POST";
  req.path = client::ResourcePath(kPods, pod.key.ns, pod.key.name, "binding");
  req.headers = {{"content-type", "application/json"}, {"accept", "application/json"}};
  req.body = json::serialize(binding);
  return client_->Do(std::move(req)).status();
}

util::Status RestSchedulerClient::PatchPodStatus(const PodInfo& pod, const std::string& patch) {
  client::PatchOptions o;
  o.subresource = "status";
  return client_->Patch(kPods, pod.key, client::PatchType::kStrategicMerge, patch, o).status();
}

util::Status RestSchedulerClient::EvictVictim(const PodInfo& victim, std::string_view message) {
  // Upstream: a DisruptionTarget condition (reason PreemptionByScheduler), then a delete.
  json::object cond{{"type", "DisruptionTarget"},
                    {"status", "True"},
                    {"reason", "PreemptionByScheduler"},
                    {"message", message}};
  json::object patch{{"metadata", json::object{{"uid", victim.uid}}},
                     {"status", json::object{{"conditions", json::array{cond}}}}};
  client::PatchOptions po;
  po.subresource = "status";
  util::Status s =
      client_
          ->Patch(kPods, victim.key, client::PatchType::kStrategicMerge, json::serialize(patch), po)
          .status();
  if (!s.ok() && !client::IsNotFound(s)) return s;
  client::DeleteOptions d;
  d.precondition_uid = victim.uid;
  s = client_->Delete(kPods, victim.key, d);
  if (!s.ok() && !client::IsNotFound(s)) return s;
  return util::Status();
}

}  // namespace converge::scheduler
