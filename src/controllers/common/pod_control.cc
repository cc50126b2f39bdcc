#include "controllers/common/pod_control.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"

namespace converge::controllers {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kPods{"", "v1", "pods"};

}  // namespace

api::Object PodFromTemplate(const json::object& pod_template, const api::Object& owner,
                            const OwnerRef& controller_ref, std::string_view generate_name) {
  api::Object pod;
  pod.SetGvk({"", "v1", "Pod"});
  json::object& meta = pod.mutable_metadata();
  if (api::ObjectView tm = api::FindObject(pod_template, {"metadata"})) {
    for (std::string_view field : {"labels", "annotations", "finalizers"}) {
      if (const api::View v = tm->if_contains(field)) meta[field] = api::ToJson(v);
    }
  }
  meta["generateName"] =
      generate_name.empty() ? std::string(owner.name()) + "-" : std::string(generate_name);
  meta["ownerReferences"] = json::array{controller_ref.ToJson()};
  if (api::ObjectView spec = api::FindObject(pod_template, {"spec"})) {
    pod.mutable_doc()["spec"] = api::ToJson(spec);
  } else {
    pod.mutable_doc()["spec"] = json::object();
  }
  return pod;
}

bool IsNamespaceTerminating(const util::Status& s) {
  return client::IsForbidden(s) &&
         s.message().find("because it is being terminated") != std::string::npos;
}

util::Status RealPodControl::CreatePod(std::string_view ns, const json::object& pod_template,
                                       const api::Object& owner, const OwnerRef& controller_ref,
                                       std::string_view generate_name) {
  api::Object pod = PodFromTemplate(pod_template, owner, controller_ref, generate_name);
  if (pod.labels().empty()) {
    return util::InvalidArgument("unable to create pods, no labels");
  }
  auto created = client_->Create(kPods, ns, pod);
  if (!created.ok()) {
    if (!IsNamespaceTerminating(created.status())) {
      recorder_->Event(owner, client::kEventTypeWarning, kFailedCreatePodReason,
                       "Error creating: " + created.status().message());
    }
    return created.status();
  }
  recorder_->Event(owner, client::kEventTypeNormal, kSuccessfulCreatePodReason,
                   "Created pod: " + std::string(created->name()));
  return util::Status();
}

util::Status RealPodControl::DeletePod(std::string_view ns, std::string_view name,
                                       const api::Object& owner) {
  util::Status s = client_->Delete(kPods, {std::string(ns), std::string(name)});
  if (!s.ok()) {
    if (client::IsNotFound(s)) return s;
    recorder_->Event(owner, client::kEventTypeWarning, kFailedDeletePodReason,
                     "Error deleting: " + s.message());
    return s.WithContext("unable to delete pods");
  }
  recorder_->Event(owner, client::kEventTypeNormal, kSuccessfulDeletePodReason,
                   "Deleted pod: " + std::string(name));
  return util::Status();
}

util::Status RealPodControl::PatchPod(std::string_view ns, std::string_view name,
                                      std::string_view patch) {
  return client_
      ->Patch(kPods, {std::string(ns), std::string(name)}, client::PatchType::kStrategicMerge,
              patch)
      .status();
}

}  // namespace converge::controllers
