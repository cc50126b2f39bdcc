#include "apiserver/openapi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <functional>

#include "api/builtin_resources.h"
#include "api/schema_registry.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using ::testing::Contains;
using ::testing::StartsWith;

class OpenApi : public ::testing::Test {
 protected:
  void SetUp() override { api::LoadBuiltins(&registry_); }

  json::object Doc(const api::GroupVersion& gv) {
    auto body = RenderOpenApiGroupVersion(*registry_.Snapshot(), api::BuiltinSchemas(), gv);
    EXPECT_TRUE(body.has_value());
    return body ? json::parse(*body).as_object() : json::object();
  }
  static const json::object& Schema(const json::object& doc, std::string_view name) {
    return doc.at("components").at("schemas").at(name).as_object();
  }
  static std::vector<std::string> ParamNames(const json::object& op) {
    std::vector<std::string> names;
    if (const json::value* ps = op.if_contains("parameters")) {
      for (const json::value& p : ps->as_array()) names.emplace_back(p.at("name").as_string());
    }
    return names;
  }

  api::ResourceRegistry registry_;
};

// What kubectl apply/create/replace need (FINDINGS.md section 5): the item path's PATCH operation
// names the kind and takes fieldValidation, and accepts strategic merge patches.
TEST_F(OpenApi, PatchOperationCarriesWhatKubectlChecks) {
  json::object doc = Doc({"apps", "v1"});
  EXPECT_EQ(doc["openapi"], "3.0.0");
  const json::object& item =
      doc.at("paths").at("/apis/apps/v1/namespaces/{namespace}/deployments/{name}").as_object();
  const json::object& patch = item.at("patch").as_object();
  EXPECT_EQ(patch.at("x-kubernetes-group-version-kind"),
            json::parse(R"({"group":"apps","kind":"Deployment","version":"v1"})"));
  EXPECT_EQ(patch.at("x-kubernetes-action"), "patch");
  EXPECT_THAT(ParamNames(patch), Contains("fieldValidation"));
  EXPECT_THAT(ParamNames(patch), Contains("force"));
  const json::object& content = patch.at("requestBody").at("content").as_object();
  for (std::string_view ct :
       {"application/apply-patch+yaml", "application/json-patch+json",
        "application/merge-patch+json", "application/strategic-merge-patch+json"}) {
    EXPECT_TRUE(content.contains(ct)) << ct;
  }
  EXPECT_THAT(ParamNames(item.at("put").as_object()), Contains("fieldValidation"));
  EXPECT_EQ(item.at("delete").at("x-kubernetes-action"), "delete");
  EXPECT_EQ(item.at("get").at("x-kubernetes-action"), "get");
  const json::object& coll =
      doc.at("paths").at("/apis/apps/v1/namespaces/{namespace}/deployments").as_object();
  EXPECT_THAT(ParamNames(coll.at("post").as_object()), Contains("fieldValidation"));
  EXPECT_EQ(coll.at("get").at("x-kubernetes-action"), "list");
  EXPECT_EQ(coll.at("delete").at("x-kubernetes-action"), "deletecollection");
  EXPECT_TRUE(doc.at("paths").as_object().contains("/apis/apps/v1/deployments"));
  const json::object& scale =
      doc.at("paths")
          .at("/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale")
          .as_object();
  EXPECT_EQ(scale.at("patch").at("x-kubernetes-group-version-kind"),
            json::parse(R"({"group":"autoscaling","kind":"Scale","version":"v1"})"));
}

TEST_F(OpenApi, ComponentSchemasCarryTypesAndMarkers) {
  json::object doc = Doc({"apps", "v1"});
  const json::object& deployment = Schema(doc, "io.k8s.api.apps.v1.Deployment");
  EXPECT_EQ(deployment.at("type"), "object");
  EXPECT_EQ(deployment.at("x-kubernetes-group-version-kind"),
            json::parse(R"([{"group":"apps","kind":"Deployment","version":"v1"}])"));
  EXPECT_EQ(
      deployment.at("properties").at("spec"),
      json::parse(
          R"({"allOf":[{"$ref":"#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]})"));

  const json::object& spec = Schema(doc, "io.k8s.api.apps.v1.DeploymentSpec");
  EXPECT_EQ(spec.at("properties").at("replicas"),
            json::parse(R"({"type":"integer","format":"int32"})"));
  EXPECT_EQ(spec.at("properties").at("strategy").at("x-kubernetes-patch-strategy"), "retainKeys");

  const json::object& pod_spec = Schema(doc, "io.k8s.api.core.v1.PodSpec");
  EXPECT_EQ(pod_spec.at("properties").at("containers"), json::parse(R"({
    "type":"array","items":{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.core.v1.Container"}]},
    "x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
    "x-kubernetes-patch-strategy":"merge","x-kubernetes-patch-merge-key":"name"})"));
  EXPECT_EQ(pod_spec.at("properties").at("nodeSelector"), json::parse(R"({
    "type":"object","additionalProperties":{"type":"string"},"x-kubernetes-map-type":"atomic"})"));
  EXPECT_EQ(Schema(doc, "io.k8s.api.core.v1.ContainerPort").at("properties").at("protocol"),
            json::parse(R"({"type":"string","default":"TCP"})"));
  // Inline embeds are flattened, as in JSON.
  EXPECT_TRUE(
      Schema(doc, "io.k8s.api.core.v1.Volume").at("properties").as_object().contains("emptyDir"));

  EXPECT_EQ(Schema(doc, "io.k8s.apimachinery.pkg.apis.meta.v1.Time"),
            json::parse(R"({"type":"string","format":"date-time"})"));
  EXPECT_EQ(Schema(doc, "io.k8s.apimachinery.pkg.util.intstr.IntOrString")
                .at("x-kubernetes-int-or-string"),
            true);
  EXPECT_TRUE(Schema(doc, "io.k8s.apimachinery.pkg.api.resource.Quantity").contains("oneOf"));
  EXPECT_EQ(Schema(doc, "io.k8s.apimachinery.pkg.runtime.RawExtension"),
            json::parse(R"({"type":"object"})"));
  EXPECT_EQ(Schema(doc, "io.k8s.api.core.v1.ObjectFieldSelector").at("x-kubernetes-map-type"),
            "atomic");
  EXPECT_EQ(Schema(doc, "io.k8s.api.apps.v1.DeploymentList").at("x-kubernetes-group-version-kind"),
            json::parse(R"([{"group":"apps","kind":"DeploymentList","version":"v1"}])"));
  EXPECT_EQ(Schema(doc, "io.k8s.api.autoscaling.v1.Scale").at("x-kubernetes-group-version-kind"),
            json::parse(R"([{"group":"autoscaling","kind":"Scale","version":"v1"}])"));
  EXPECT_THAT(Schema(doc, "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
                  .at("x-kubernetes-group-version-kind")
                  .as_array(),
              Contains(json::parse(R"({"group":"apps","kind":"DeleteOptions","version":"v1"})")));
}

// Every $ref of every document resolves within that document.
TEST_F(OpenApi, EveryReferenceResolves) {
  std::set<api::GroupVersion> gvs;
  for (const auto& r : registry_.Snapshot()->resources) gvs.insert(r->gvr.Gv());
  for (const api::GroupVersion& gv : gvs) {
    json::object doc = Doc(gv);
    const json::object& schemas = doc.at("components").at("schemas").as_object();
    size_t refs = 0;
    std::function<void(const json::value&)> walk = [&](const json::value& v) {
      if (v.is_object()) {
        for (const auto& [k, child] : v.get_object()) {
          if (k == "$ref") {
            ++refs;
            std::string_view ref = child.as_string();
            ASSERT_THAT(std::string(ref), StartsWith("#/components/schemas/"));
            EXPECT_TRUE(schemas.contains(ref.substr(21))) << gv.ApiVersion() << ": " << ref;
          } else {
            walk(child);
          }
        }
      } else if (v.is_array()) {
        for (const json::value& e : v.get_array()) walk(e);
      }
    };
    walk(doc);
    EXPECT_GT(refs, 10u) << gv.ApiVersion();
  }
}

TEST_F(OpenApi, CoreDocumentHasSubresourcesAndClusterScopedPaths) {
  json::object doc = Doc({"", "v1"});
  const json::object& paths = doc.at("paths").as_object();
  const json::object& log = paths.at("/api/v1/namespaces/{namespace}/pods/{name}/log").as_object();
  EXPECT_TRUE(
      log.at("get").at("responses").at("200").at("content").as_object().contains("text/plain"));
  const json::object& eviction =
      paths.at("/api/v1/namespaces/{namespace}/pods/{name}/eviction").as_object();
  EXPECT_EQ(eviction.at("post").at("x-kubernetes-group-version-kind"),
            json::parse(R"({"group":"policy","kind":"Eviction","version":"v1"})"));
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{name}"));
  EXPECT_TRUE(paths.contains("/api/v1/namespaces/{name}/finalize"));
  EXPECT_FALSE(
      paths.at("/api/v1/namespaces").as_object().contains("delete"));  // no deletecollection
  EXPECT_EQ(paths.at("/api/v1/nodes/{name}").at("patch").at("x-kubernetes-group-version-kind"),
            json::parse(R"({"group":"","kind":"Node","version":"v1"})"));
  EXPECT_FALSE(
      RenderOpenApiGroupVersion(*registry_.Snapshot(), api::BuiltinSchemas(), {"apps", "v2"})
          .has_value());
}

TEST_F(OpenApi, ReviewsAreCreateOnly) {
  json::object doc = Doc({"authorization.k8s.io", "v1"});
  const json::object& paths = doc.at("paths").as_object();
  const json::object& sar =
      paths.at("/apis/authorization.k8s.io/v1/subjectaccessreviews").as_object();
  EXPECT_TRUE(sar.contains("post"));
  EXPECT_FALSE(sar.contains("get"));
  EXPECT_FALSE(paths.contains("/apis/authorization.k8s.io/v1/subjectaccessreviews/{name}"));
}

TEST(OpenApiService, IndexHashesDocumentsAndFollowsRegistryChanges) {
  api::ResourceRegistry reg;
  api::LoadBuiltins(&reg);
  OpenApiService svc(&reg, &api::BuiltinSchemas());
  json::object index = json::parse(*svc.Index().body).as_object();
  const json::object& paths = index.at("paths").as_object();
  EXPECT_TRUE(paths.contains("api/v1"));
  ASSERT_TRUE(paths.contains("apis/apps/v1"));
  std::string url(paths.at("apis/apps/v1").at("serverRelativeURL").as_string());
  EXPECT_THAT(url, StartsWith("/openapi/v3/apis/apps/v1?hash="));
  EXPECT_EQ(url.size(), std::string("/openapi/v3/apis/apps/v1?hash=").size() + 128);

  auto apps = svc.GroupVersion("apis/apps/v1");
  ASSERT_TRUE(apps.has_value());
  EXPECT_EQ(svc.GroupVersion("/apis/apps/v1?hash=whatever")->body, apps->body);
  EXPECT_FALSE(svc.GroupVersion("apis/nosuch/v1").has_value());

  api::ResourceInfo widget;
  widget.gvr = {"apps", "v1", "widgets"};
  widget.kind = "Widget";
  widget.verbs = {"get"};
  widget.schema = api::BuiltinSchemas().FindType("io.k8s.api.apps.v1.Deployment");
  reg.Upsert({widget});
  auto changed = svc.GroupVersion("apis/apps/v1");
  ASSERT_TRUE(changed.has_value());
  EXPECT_NE(changed->body, apps->body);
  EXPECT_NE(changed->body->find("/apis/apps/v1/namespaces/{namespace}/widgets/{name}"),
            std::string::npos);
  json::object index2 = json::parse(*svc.Index().body).as_object();
  EXPECT_NE(index2.at("paths").at("apis/apps/v1").at("serverRelativeURL").as_string(), url);
  EXPECT_EQ(index2.at("paths").at("api/v1"), paths.at("api/v1"));
}

}  // namespace
}  // namespace converge::apiserver
