// Builders of Pod and Node objects for the scheduler's tests.
#pragma once

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/object.h"
#include "scheduler/node_info.h"
#include "scheduler/pod_info.h"

namespace converge::scheduler::testing {

namespace json = boost::json;

// A pod with one container requesting `cpu` and `memory` (empty: not requested).
class PodBuilder {
 public:
  explicit PodBuilder(std::string name, std::string ns = "default") {
    doc_ = json::object{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         json::object{
             {"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
        {"spec", json::object{{"schedulerName", "default-scheduler"},
                              {"containers",
                               json::array{json::object{{"name", "c"}, {"image", "nginx"}}}}}}};
  }
  PodBuilder& Req(std::string cpu, std::string memory = "") {
    json::object requests;
    if (!cpu.empty()) requests["cpu"] = cpu;
    if (!memory.empty()) requests["memory"] = memory;
    Container(0)["resources"] = json::object{{"requests", requests}};
    return *this;
  }
  // Appends a container with these requests (json object literal).
  PodBuilder& AddContainer(json::object requests) {
    Spec()["containers"].as_array().push_back(
        json::object{{"name", "c" + std::to_string(Spec()["containers"].as_array().size())},
                     {"resources", json::object{{"requests", std::move(requests)}}}});
    return *this;
  }
  PodBuilder& AddInit(json::object requests, bool sidecar = false) {
    json::value& inits = Spec()["initContainers"];
    if (!inits.is_array()) inits = json::array();
    json::object c{{"name", "i" + std::to_string(inits.as_array().size())},
                   {"resources", json::object{{"requests", std::move(requests)}}}};
    if (sidecar) c["restartPolicy"] = "Always";
    inits.as_array().push_back(std::move(c));
    return *this;
  }
  PodBuilder& Set(std::string_view key, json::value v) {
    Spec()[key] = std::move(v);
    return *this;
  }
  PodBuilder& NodeSelector(json::object sel) { return Set("nodeSelector", std::move(sel)); }
  PodBuilder& Tolerations(json::array t) { return Set("tolerations", std::move(t)); }
  PodBuilder& Priority(int p) { return Set("priority", p); }
  PodBuilder& Node(std::string n) { return Set("nodeName", json::string(n)); }
  PodBuilder& SchedulerName(std::string n) { return Set("schedulerName", json::string(n)); }
  PodBuilder& RequiredAffinity(json::array terms) {
    return Set(
        "affinity",
        json::object{{"nodeAffinity",
                      json::object{{"requiredDuringSchedulingIgnoredDuringExecution",
                                    json::object{{"nodeSelectorTerms", std::move(terms)}}}}}});
  }
  PodBuilder& PreferredAffinity(json::array terms) {
    return Set("affinity",
               json::object{
                   {"nodeAffinity", json::object{{"preferredDuringSchedulingIgnoredDuringExecution",
                                                  std::move(terms)}}}});
  }
  PodBuilder& ResourceVersion(std::string rv) {
    doc_["metadata"].as_object()["resourceVersion"] = std::move(rv);
    return *this;
  }
  PodBuilder& Deleting() {
    doc_["metadata"].as_object()["deletionTimestamp"] = "2024-01-01T00:00:00Z";
    return *this;
  }

  api::ObjectPtr Object() const { return std::make_shared<const api::Object>(doc_); }
  PodInfoPtr Info() const { return NewPodInfo(Object()); }

 private:
  json::object& Spec() { return doc_["spec"].as_object(); }
  json::object& Container(size_t i) { return Spec()["containers"].as_array()[i].as_object(); }
  json::object doc_;
};

class NodeBuilder {
 public:
  NodeBuilder(std::string name, std::string cpu, std::string memory, std::string pods = "110") {
    doc_ = json::object{
        {"apiVersion", "v1"},
        {"kind", "Node"},
        {"metadata", json::object{{"name", name},
                                  {"resourceVersion", "1"},
                                  {"labels", json::object{{"kubernetes.io/hostname", name}}}}},
        {"spec", json::object{}},
        {"status",
         json::object{
             {"allocatable", json::object{{"cpu", cpu}, {"memory", memory}, {"pods", pods}}},
             {"conditions", json::array{json::object{{"type", "Ready"}, {"status", "True"}}}}}}};
  }
  NodeBuilder& Label(std::string k, std::string v) {
    doc_["metadata"].as_object()["labels"].as_object()[k] = v;
    return *this;
  }
  NodeBuilder& Taint(std::string key, std::string value, std::string effect) {
    json::value& t = doc_["spec"].as_object()["taints"];
    if (!t.is_array()) t = json::array();
    json::object taint{{"key", key}, {"effect", effect}};
    if (!value.empty()) taint["value"] = value;
    t.as_array().push_back(std::move(taint));
    return *this;
  }
  NodeBuilder& Unschedulable() {
    doc_["spec"].as_object()["unschedulable"] = true;
    return *this;
  }
  NodeBuilder& Allocatable(std::string key, std::string v) {
    doc_["status"].as_object()["allocatable"].as_object()[key] = v;
    return *this;
  }
  NodeBuilder& ResourceVersion(std::string rv) {
    doc_["metadata"].as_object()["resourceVersion"] = std::move(rv);
    return *this;
  }

  api::ObjectPtr Object() const { return std::make_shared<const api::Object>(doc_); }
  NodeFactsPtr Facts() const { return NewNodeFacts(Object()); }
  // A NodeInfo holding `pods`.
  NodeInfo Info(const std::vector<PodInfoPtr>& pods = {}) const {
    NodeInfo n;
    n.node = Facts();
    for (const PodInfoPtr& p : pods) n.AddPod(p);
    return n;
  }

 private:
  json::object doc_;
};

}  // namespace converge::scheduler::testing
