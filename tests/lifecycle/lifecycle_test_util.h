// Shared pieces of the lifecycle suites: a live `converge apiserver` (reached through its
// kubeconfig), a RestClient for it, object builders and a patient wait.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "api/object.h"
#include "client/api_errors.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "testing/server.h"

namespace converge::lifecycle_test {

namespace json = boost::json;

inline const api::GroupVersionResource kPods{"", "v1", "pods"};
inline const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
inline const api::GroupVersionResource kSecrets{"", "v1", "secrets"};
inline const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
inline const api::GroupVersionResource kReplicaSets{"apps", "v1", "replicasets"};
inline const api::GroupVersionResource kDeployments{"apps", "v1", "deployments"};
inline const api::GroupVersionResource kJobs{"batch", "v1", "jobs"};

// Waits for `done` (polled every 100 ms) for up to `limit`. Generous limits: they bound a
// failing test, they never measure a passing one.
inline bool WaitFor(const std::function<bool()>& done,
                    std::chrono::seconds limit = std::chrono::seconds(90)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

inline std::unique_ptr<client::RestClient> ClientFor(const testing::ServerProcess& server) {
  auto config = client::LoadRestConfig(server.kubeconfig_path());
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  if (!config.ok()) return nullptr;
  auto rest = client::RestClient::ForConfig(*config);
  EXPECT_TRUE(rest.ok()) << rest.status().ToString();
  return rest.ok() ? std::move(*rest) : nullptr;
}

inline json::object OwnerRef(const api::Object& owner, bool block = true, bool controller = true) {
  json::object r{{"apiVersion", owner.api_version()},
                 {"kind", owner.kind()},
                 {"name", owner.name()},
                 {"uid", owner.uid()}};
  if (controller) r["controller"] = true;
  if (block) r["blockOwnerDeletion"] = true;
  return r;
}

inline api::Object PodObject(const std::string& name, std::vector<json::object> owners = {},
                             std::vector<std::string> finalizers = {}) {
  api::Object p;
  p.SetGvk({"", "v1", "Pod"});
  p.set_name(name);
  json::array refs;
  for (auto& o : owners) refs.push_back(std::move(o));
  if (!refs.empty()) p.mutable_metadata()["ownerReferences"] = std::move(refs);
  for (const auto& f : finalizers) p.AddFinalizer(f);
  p.mutable_doc()["spec"] = json::parse(
      R"({"terminationGracePeriodSeconds":0,"containers":[{"name":"c","image":"nginx"}]})");
  return p;
}

inline api::Object ConfigMapObject(const std::string& name, std::vector<json::object> owners = {},
                                   std::vector<std::string> finalizers = {}) {
  api::Object c;
  c.SetGvk({"", "v1", "ConfigMap"});
  c.set_name(name);
  json::array refs;
  for (auto& o : owners) refs.push_back(std::move(o));
  if (!refs.empty()) c.mutable_metadata()["ownerReferences"] = std::move(refs);
  for (const auto& f : finalizers) c.AddFinalizer(f);
  c.mutable_doc()["data"] = json::object{{"k", "v"}};
  return c;
}

inline api::Object ReplicaSetObject(const std::string& name, const std::string& app,
                                    std::vector<json::object> owners = {}) {
  api::Object rs;
  rs.SetGvk({"apps", "v1", "ReplicaSet"});
  rs.set_name(name);
  json::array refs;
  for (auto& o : owners) refs.push_back(std::move(o));
  if (!refs.empty()) rs.mutable_metadata()["ownerReferences"] = std::move(refs);
  // replicas 0: no ReplicaSet controller is needed for these tests; the pods are hand-made.
  rs.mutable_doc()["spec"] =
      json::parse(R"({"replicas":0,"selector":{"matchLabels":{"app":")" + app +
                  R"("}},"template":{"metadata":{"labels":{"app":")" + app +
                  R"("}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}})");
  return rs;
}

inline bool Exists(client::RestClient& c, const api::GroupVersionResource& gvr,
                   const api::ObjectKey& key) {
  auto got = c.Get(gvr, key);
  return got.ok();
}

inline bool Gone(client::RestClient& c, const api::GroupVersionResource& gvr,
                 const api::ObjectKey& key) {
  auto got = c.Get(gvr, key);
  return !got.ok() && client::IsNotFound(got.status());
}

inline size_t Count(client::RestClient& c, const api::GroupVersionResource& gvr,
                    const std::string& ns) {
  auto list = c.List(gvr, ns);
  return list.ok() ? list->items.size() : static_cast<size_t>(-1);
}

}  // namespace converge::lifecycle_test
