#include <gtest/gtest.h>

#include <string>

#include "api/custom_resource.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_scale.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

// A CRD with two versions: v1 (storage) with status and scale subresources, v1beta1 without.
std::vector<std::shared_ptr<const api::ResourceInfo>> Infos() {
  json::object crd = json::parse(R"({
    "metadata": {"name": "widgets.x.io"},
    "spec": {"group": "x.io", "scope": "Namespaced",
      "versions": [
        {"name": "v1", "served": true, "storage": true,
         "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                  "statusReplicasPath": ".status.replicas",
                                                  "labelSelectorPath": ".status.selector"}},
         "schema": {"openAPIV3Schema": {"type": "object", "properties": {
           "spec": {"type": "object", "properties": {
             "replicas": {"type": "integer"}, "color": {"type": "string", "default": "red"}}},
           "status": {"type": "object", "properties": {
             "replicas": {"type": "integer"}, "selector": {"type": "string"}}}}}}},
        {"name": "v1beta1", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object",
                                        "x-kubernetes-preserve-unknown-fields": true}}}]}})")
                         .as_object();
  json::object names = json::parse(R"({"plural": "widgets", "kind": "Widget"})").as_object();
  auto infos = api::CustomResourceInfos(crd, names, false);
  EXPECT_TRUE(infos.ok());
  std::vector<std::shared_ptr<const api::ResourceInfo>> out;
  for (auto& i : *infos) out.push_back(std::make_shared<const api::ResourceInfo>(std::move(i)));
  return out;
}

api::Object WidgetObject(const std::string& json_text) {
  return api::Object(json::parse(json_text).as_object());
}

TEST(CustomResourceStrategyTest, CreateStoresTheStorageVersionAndDropsStatus) {
  auto infos = Infos();
  auto beta = MakeStrategy(infos[1]);  // v1beta1 has no status subresource...
  auto v1 = MakeStrategy(infos[0]);
  api::Object w = WidgetObject(R"({"apiVersion": "x.io/v1beta1", "kind": "Widget",
                            "metadata": {"name": "a"}, "status": {"replicas": 2}})");
  beta->PrepareForCreate(w);
  EXPECT_EQ(w.api_version(), "x.io/v1");  // stored in the storage version
  EXPECT_EQ(w.generation(), 1);
  EXPECT_TRUE(w.doc().contains("status"));  // ...so status is kept
  api::Object s = WidgetObject(R"({"apiVersion": "x.io/v1", "kind": "Widget",
                            "metadata": {"name": "a"}, "status": {"replicas": 2}})");
  v1->PrepareForCreate(s);
  EXPECT_FALSE(s.doc().contains("status"));
}

TEST(CustomResourceStrategyTest, GenerationMovesWithSpecOnlyWhenStatusIsASubresource) {
  auto infos = Infos();
  auto v1 = MakeStrategy(infos[0]);
  auto beta = MakeStrategy(infos[1]);
  const api::Object old = WidgetObject(R"({"apiVersion": "x.io/v1", "kind": "Widget",
      "metadata": {"name": "a", "generation": 4}, "spec": {"replicas": 1, "color": "red"},
      "status": {"replicas": 1}})");
  struct Case {
    const char* name;
    const Strategy* strategy;
    const char* doc;
    int64_t want_generation;
    const char* want_status;
  } cases[] = {
      {"status change with subresource", v1.get(),
       R"({"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "a"},
           "spec": {"replicas": 1, "color": "red"}, "status": {"replicas": 9}})",
       4, R"({"replicas":1})"},
      {"spec change with subresource", v1.get(),
       R"({"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "a"},
           "spec": {"replicas": 2}, "status": {"replicas": 1}})",
       5, R"({"replicas":1})"},
      {"label change only", v1.get(),
       R"({"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "a", "labels": {"k": "v"}},
           "spec": {"replicas": 1}, "status": {"replicas": 1}})",
       4, R"({"replicas":1})"},
      {"status change without subresource", beta.get(),
       R"({"apiVersion": "x.io/v1", "kind": "Widget", "metadata": {"name": "a"},
           "spec": {"replicas": 1, "color": "red"}, "status": {"replicas": 9}})",
       5, R"({"replicas":9})"},
  };
  for (const Case& c : cases) {
    api::Object obj = WidgetObject(c.doc);
    c.strategy->PrepareForUpdate(obj, old);
    EXPECT_EQ(obj.generation(), c.want_generation) << c.name;
    EXPECT_EQ(json::serialize(obj.doc().at("status")), c.want_status) << c.name;
  }
}

TEST(CustomResourceStrategyTest, DefaultPrunesAndDefaults) {
  auto v1 = MakeStrategy(Infos()[0]);
  api::Object w = WidgetObject(R"({"apiVersion": "x.io/v1", "kind": "Widget",
      "metadata": {"name": "a", "bogus": 1}, "spec": {"replicas": 1, "extra": true}})");
  v1->Default(w);
  EXPECT_EQ(json::serialize(w.doc().at("spec")), R"({"replicas":1,"color":"red"})");
  EXPECT_EQ(json::serialize(w.doc().at("metadata")), R"({"name":"a"})");
}

TEST(CustomResourceStrategyTest, ValidatesSchemaAndScaleReplicas) {
  auto v1 = MakeStrategy(Infos()[0]);
  api::Object w = WidgetObject(R"({"apiVersion": "x.io/v1", "kind": "Widget",
      "metadata": {"name": "a"}, "spec": {"replicas": -1, "color": 3}})");
  auto causes = v1->Validate(w);
  std::string got;
  for (const auto& c : causes) got += c.field + ": " + c.message + "\n";
  EXPECT_EQ(got,
            "spec.color: Invalid value: \"integer\": spec.color in body must be of type string: "
            "\"integer\"\n"
            ".spec.replicas: Invalid value: -1: should be a non-negative integer\n");
}

TEST(CustomResourceScaleTest, ReadsAndWritesTheCrdPaths) {
  api::CustomResourceScale paths{".spec.size.replicas", ".status.replicas", ".status.selector"};
  api::Object w = WidgetObject(R"({"apiVersion": "x.io/v1", "kind": "Widget",
      "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7"},
      "status": {"replicas": 2, "selector": "app=a"}})");
  api::Object scale = CustomResourceScaleOf(w, paths);
  EXPECT_EQ(
      json::serialize(scale.doc()),
      R"({"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"a","namespace":"ns",)"
      R"("resourceVersion":"7"},"spec":{},"status":{"replicas":2,"selector":"app=a"}})");
  api::Object desired = scale;
  desired.mutable_doc()["spec"] = json::object{{"replicas", 5}};
  ASSERT_FALSE(ApplyCustomResourceScale(w, desired, paths).has_value());
  EXPECT_EQ(json::serialize(w.doc().at("spec")), R"({"size":{"replicas":5}})");
  desired.mutable_doc()["spec"] = json::object{{"replicas", -1}};
  auto err = ApplyCustomResourceScale(w, desired, paths);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, 422);
  EXPECT_EQ(err->message,
            R"(Scale.autoscaling "a" is invalid: spec.replicas: Invalid value: -1: must be )"
            "greater than or equal to 0");
}

TEST(CustomResourceScaleTest, ClusterScopedKindsScaleWithoutANamespace) {
  // apiextensions' ValidateScale checks the replica count only (the built-in kinds' checks
  // metadata too, and they are all namespaced).
  api::CustomResourceScale paths{".spec.replicas", ".status.replicas", ""};
  api::Object w = WidgetObject(R"({"apiVersion": "x.io/v1", "kind": "Widget",
      "metadata": {"name": "a", "resourceVersion": "7"}, "spec": {"replicas": 1}})");
  api::Object desired = CustomResourceScaleOf(w, paths);
  desired.mutable_doc()["spec"] = json::object{{"replicas", 3}};
  ASSERT_FALSE(ApplyCustomResourceScale(w, desired, paths).has_value());
  EXPECT_EQ(json::serialize(w.doc().at("spec")), R"({"replicas":3})");
}

}  // namespace
}  // namespace converge::apiserver
