// Builders of Pods and owners for controller unit tests (header-only; tests only).
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "api/object.h"
#include "controllers/common/owner_refs.h"
#include "util/clock.h"
#include "util/time_format.h"

namespace converge::controllers::testing {

// A fixed wall-clock origin for tests: 2025-01-01T00:00:00Z.
inline util::Clock::WallTime T0() {
  return util::Clock::WallTime(std::chrono::seconds(1735689600));
}
inline util::Clock::WallTime At(int seconds) {
  return T0() + std::chrono::seconds(seconds);
}

struct PodSpec {
  std::string name;
  std::string ns = "default";
  std::map<std::string, std::string> labels = {{"app", "web"}};
  std::string phase = "Running";   // "" for unset
  std::optional<int> ready_since;  // seconds after T0; nullopt: not ready
  std::string node;
  int restarts = 0;
  int created = 0;  // seconds after T0
  bool deleting = false;
  std::optional<OwnerRef> owner;
  std::string uid;  // default: "uid-<name>"
  std::map<std::string, std::string> annotations;
};

inline api::ObjectPtr MakePod(const PodSpec& s) {
  api::Object pod;
  pod.SetGvk({"", "v1", "Pod"});
  pod.set_name(s.name);
  pod.set_namespace(s.ns);
  pod.set_uid(s.uid.empty() ? "uid-" + s.name : s.uid);
  pod.set_resource_version("1");
  for (const auto& [k, v] : s.labels) pod.SetLabel(k, v);
  for (const auto& [k, v] : s.annotations) pod.SetAnnotation(k, v);
  pod.mutable_metadata()["creationTimestamp"] = util::FormatRfc3339(At(s.created));
  if (s.deleting) pod.mutable_metadata()["deletionTimestamp"] = util::FormatRfc3339(At(s.created));
  if (s.owner) pod.mutable_metadata()["ownerReferences"] = boost::json::array{s.owner->ToJson()};
  boost::json::object spec;
  spec["containers"] = boost::json::array{boost::json::object{{"name", "c"}, {"image", "i"}}};
  if (!s.node.empty()) spec["nodeName"] = s.node;
  pod.mutable_doc()["spec"] = std::move(spec);
  boost::json::object status;
  if (!s.phase.empty()) status["phase"] = s.phase;
  boost::json::object ready{{"type", "Ready"}, {"status", s.ready_since ? "True" : "False"}};
  if (s.ready_since) ready["lastTransitionTime"] = util::FormatRfc3339(At(*s.ready_since));
  status["conditions"] = boost::json::array{ready};
  status["containerStatuses"] = boost::json::array{boost::json::object{
      {"name", "c"}, {"ready", s.ready_since.has_value()}, {"restartCount", s.restarts}}};
  pod.mutable_doc()["status"] = std::move(status);
  return std::make_shared<const api::Object>(std::move(pod));
}

// A minimal owner object with a uid (for controller references).
inline api::Object MakeOwner(std::string kind, std::string name, std::string uid,
                             std::string ns = "default") {
  api::Object o;
  o.SetGvk({"apps", "v1", std::move(kind)});
  o.set_name(name);
  o.set_namespace(ns);
  o.set_uid(uid);
  return o;
}

struct ReplicaSetSpec {
  std::string name = "web";
  std::string ns = "default";
  std::string uid = "rs-uid";
  int64_t replicas = 3;
  std::map<std::string, std::string> selector = {{"app", "web"}};
  std::map<std::string, std::string> template_labels = {{"app", "web"}};
  int64_t min_ready_seconds = 0;
  int64_t generation = 1;
  std::optional<boost::json::object> status;
  std::optional<OwnerRef> owner;
  bool deleting = false;
};

inline api::ObjectPtr MakeReplicaSet(const ReplicaSetSpec& s) {
  api::Object rs;
  rs.SetGvk({"apps", "v1", "ReplicaSet"});
  rs.set_name(s.name);
  rs.set_namespace(s.ns);
  rs.set_uid(s.uid);
  rs.set_resource_version("10");
  rs.set_generation(s.generation);
  rs.mutable_metadata()["creationTimestamp"] = util::FormatRfc3339(T0());
  if (s.deleting) rs.mutable_metadata()["deletionTimestamp"] = util::FormatRfc3339(T0());
  if (s.owner) rs.mutable_metadata()["ownerReferences"] = boost::json::array{s.owner->ToJson()};
  boost::json::object match;
  for (const auto& [k, v] : s.selector) match[k] = v;
  boost::json::object labels;
  for (const auto& [k, v] : s.template_labels) labels[k] = v;
  boost::json::object spec;
  spec["replicas"] = s.replicas;
  spec["minReadySeconds"] = s.min_ready_seconds;
  spec["selector"] = boost::json::object{{"matchLabels", match}};
  boost::json::object container{{"name", "c"}, {"image", "nginx"}};
  boost::json::object pod_spec{{"containers", boost::json::array{container}}};
  spec["template"] = boost::json::object{{"metadata", boost::json::object{{"labels", labels}}},
                                         {"spec", pod_spec}};
  rs.mutable_doc()["spec"] = std::move(spec);
  if (s.status) rs.mutable_doc()["status"] = *s.status;
  return std::make_shared<const api::Object>(std::move(rs));
}

}  // namespace converge::controllers::testing
