// LoadBalancer objects for the operator's tests.
#pragma once

#include <boost/json.hpp>

#include "loadbalancer.h"

namespace lboperator::testing {

struct ObjectOptions {
  std::string ns = "default";
  std::string name = "web";
  std::string uid = "uid-1";
  int64_t generation = 1;
  std::string resource_version = "10";
  bool finalizer = true;
  bool deleting = false;
  const char* ports = R"([{"port":80,"protocol":"TCP"}])";
  const char* status = nullptr;  // JSON
};

inline api::Object LoadBalancerObject(const ObjectOptions& o = {}) {
  api::Object obj;
  obj.SetGvk(kLoadBalancerKind);
  obj.set_namespace(o.ns);
  obj.set_name(o.name);
  obj.set_uid(o.uid);
  obj.set_generation(o.generation);
  obj.set_resource_version(o.resource_version);
  if (o.finalizer) obj.AddFinalizer(kFinalizer);
  if (o.deleting) obj.mutable_metadata()["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  obj.mutable_doc()["spec"] = boost::json::object{{"ports", boost::json::parse(o.ports)}};
  if (o.status != nullptr) obj.mutable_doc()["status"] = boost::json::parse(o.status);
  return obj;
}

inline api::ObjectPtr LoadBalancerPtr(const ObjectOptions& o = {}) {
  return std::make_shared<const api::Object>(LoadBalancerObject(o));
}

inline ExternalLoadBalancer External(std::string id, std::string state = "active",
                                     std::vector<Port> ports = {{80, "TCP"}}) {
  return {.id = id,
          .name = "default-web",
          .tags = {{kTagUid, "uid-1"}},
          .ports = std::move(ports),
          .address = "100.64.0.9",
          .state = std::move(state)};
}

}  // namespace lboperator::testing
