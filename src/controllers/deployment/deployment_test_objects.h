// Builders of Deployments and their ReplicaSets for the Deployment controller's tests
// (header-only; tests only).
#pragma once

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <string>

#include "api/object.h"
#include "controllers/common/owner_refs.h"
#include "controllers/common/template_hash.h"
#include "controllers/common/test_objects.h"
#include "controllers/deployment/decide.h"
#include "controllers/deployment/deployment_util.h"
#include "util/time_format.h"

namespace converge::controllers::deployment::testing {

using controllers::testing::At;

struct DeploymentSpec {
  std::string name = "web";
  std::string uid = "d-uid";
  int64_t replicas = 3;
  std::string image = "nginx:1";
  std::string strategy = "RollingUpdate";
  boost::json::value max_surge = "25%";
  boost::json::value max_unavailable = "25%";
  int64_t generation = 1;
  bool paused = false;
  int64_t progress_deadline = 600;
  int64_t revision_history_limit = 10;
  std::optional<boost::json::object> status;
  std::map<std::string, std::string> annotations;
};

inline boost::json::object PodTemplateFor(const std::string& image) {
  boost::json::object container{{"name", "c"}, {"image", image}};
  return boost::json::object{
      {"metadata", boost::json::object{{"labels", boost::json::object{{"app", "web"}}}}},
      {"spec", boost::json::object{{"containers", boost::json::array{container}}}}};
}

inline api::ObjectPtr MakeDeployment(const DeploymentSpec& s) {
  api::Object d;
  d.SetGvk({"apps", "v1", "Deployment"});
  d.set_name(s.name);
  d.set_namespace("default");
  d.set_uid(s.uid);
  d.set_resource_version("20");
  d.set_generation(s.generation);
  d.mutable_metadata()["creationTimestamp"] = util::FormatRfc3339(At(0));
  for (const auto& [k, v] : s.annotations) d.SetAnnotation(k, v);
  boost::json::object strategy{{"type", s.strategy}};
  if (s.strategy == "RollingUpdate") {
    strategy["rollingUpdate"] =
        boost::json::object{{"maxSurge", s.max_surge}, {"maxUnavailable", s.max_unavailable}};
  }
  boost::json::object spec{
      {"replicas", s.replicas},
      {"selector", boost::json::object{{"matchLabels", boost::json::object{{"app", "web"}}}}},
      {"template", PodTemplateFor(s.image)},
      {"strategy", strategy},
      {"progressDeadlineSeconds", s.progress_deadline},
      {"revisionHistoryLimit", s.revision_history_limit},
  };
  if (s.paused) spec["paused"] = true;
  d.mutable_doc()["spec"] = std::move(spec);
  if (s.status) d.mutable_doc()["status"] = *s.status;
  return std::make_shared<const api::Object>(std::move(d));
}

struct OwnedReplicaSet {
  std::string image = "nginx:1";
  int64_t replicas = 3;         // spec
  int64_t status_replicas = 3;  // pods it has
  int64_t available = 3;
  int revision = 1;
  int created = 0;               // seconds after T0
  int64_t desired = -1;          // desired-replicas annotation; -1: the spec
  int64_t max = -1;              // max-replicas annotation; -1: desired + 1
  std::string revision_history;  // "" for none
};

inline std::string HashOf(const std::string& image) {
  return ComputeHash(PodTemplateFor(image), std::nullopt);
}
inline std::string RsName(const std::string& image) {
  return "web-" + HashOf(image);
}

// A ReplicaSet the Deployment `d` created for `image`, as the server would hold it.
inline api::ObjectPtr MakeOwnedReplicaSet(const api::Object& d, const OwnedReplicaSet& s) {
  std::string hash = HashOf(s.image);
  boost::json::object tmpl = PodTemplateFor(s.image);
  tmpl["metadata"].as_object()["labels"].as_object()["pod-template-hash"] = hash;
  api::Object rs;
  rs.SetGvk({"apps", "v1", "ReplicaSet"});
  rs.set_name("web-" + hash);
  rs.set_namespace("default");
  rs.set_uid("uid-" + hash);
  rs.set_resource_version("30");
  rs.set_generation(1);
  rs.mutable_metadata()["creationTimestamp"] = util::FormatRfc3339(At(s.created));
  rs.mutable_metadata()["labels"] = tmpl["metadata"].as_object()["labels"];
  rs.mutable_metadata()["ownerReferences"] =
      boost::json::array{NewControllerRef(d, kDeploymentKind).ToJson()};
  int64_t desired = s.desired >= 0 ? s.desired : s.replicas;
  rs.SetAnnotation(kRevisionAnnotation, std::to_string(s.revision));
  rs.SetAnnotation(kDesiredReplicasAnnotation, std::to_string(desired));
  rs.SetAnnotation(kMaxReplicasAnnotation, std::to_string(s.max >= 0 ? s.max : desired + 1));
  if (!s.revision_history.empty()) rs.SetAnnotation(kRevisionHistoryAnnotation, s.revision_history);
  rs.mutable_doc()["spec"] = boost::json::object{
      {"replicas", s.replicas},
      {"minReadySeconds", 0},
      {"selector",
       boost::json::object{
           {"matchLabels", boost::json::object{{"app", "web"}, {"pod-template-hash", hash}}}}},
      {"template", tmpl}};
  boost::json::object status{{"replicas", s.status_replicas}, {"observedGeneration", 1}};
  if (s.status_replicas > 0) status["fullyLabeledReplicas"] = s.status_replicas;
  if (s.available > 0) {
    status["readyReplicas"] = s.available;
    status["availableReplicas"] = s.available;
  }
  rs.mutable_doc()["status"] = std::move(status);
  return std::make_shared<const api::Object>(std::move(rs));
}

}  // namespace converge::controllers::deployment::testing
