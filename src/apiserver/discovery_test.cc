#include "apiserver/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/builtin_resources.h"
#include "api/field_validation.h"
#include "api/schema_registry.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using ::testing::ElementsAre;

constexpr std::string_view kKubectlAccept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

struct NegotiateCase {
  std::string accept;
  DiscoveryFormat want;
};

class Negotiate : public ::testing::TestWithParam<NegotiateCase> {};

TEST_P(Negotiate, PicksTheFirstFormatWeServe) {
  EXPECT_EQ(NegotiateDiscoveryFormat(GetParam().accept), GetParam().want) << GetParam().accept;
}

INSTANTIATE_TEST_SUITE_P(
    Accepts, Negotiate,
    ::testing::Values(
        NegotiateCase{std::string(kKubectlAccept), DiscoveryFormat::kAggregatedV2},
        NegotiateCase{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
                      "application/json",
                      DiscoveryFormat::kAggregatedV2Beta1},
        NegotiateCase{"application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList",
                      DiscoveryFormat::kAggregatedV2},
        NegotiateCase{"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;"
                      "as=APIGroupDiscoveryList,application/json",
                      DiscoveryFormat::kLegacy},
        NegotiateCase{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
                      DiscoveryFormat::kLegacy},
        NegotiateCase{"application/json", DiscoveryFormat::kLegacy},
        NegotiateCase{"application/json, */*", DiscoveryFormat::kLegacy},
        NegotiateCase{"", DiscoveryFormat::kLegacy}));

class BuiltinDiscovery : public ::testing::Test {
 protected:
  void SetUp() override { api::LoadBuiltins(&registry_); }
  json::object Parse(const std::string& s) { return json::parse(s).as_object(); }
  const json::object* Find(const json::array& items, std::string_view key, std::string_view value) {
    for (const json::value& v : items) {
      const json::value* k = v.as_object().if_contains(key);
      if (k && k->is_string() && k->get_string() == value) return &v.as_object();
    }
    return nullptr;
  }
  api::ResourceRegistry registry_;
};

TEST_F(BuiltinDiscovery, AggregatedGroupsMatchWhatKubectlReads) {
  json::object list = Parse(RenderAggregatedDiscovery(*registry_.Snapshot(), DiscoveryRoot::kGroups,
                                                      DiscoveryFormat::kAggregatedV2));
  EXPECT_EQ(list["kind"], "APIGroupDiscoveryList");
  EXPECT_EQ(list["apiVersion"], "apidiscovery.k8s.io/v2");
  const json::array& items = list["items"].as_array();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].at("metadata").at("name"), "apps");  // upstream's group priority
  for (const json::value& item : items) {
    EXPECT_NE(item.at("metadata").at("name"), "") << "the core group belongs to /api";
  }
  const json::object& v1 = items[0].at("versions").at(0).as_object();
  EXPECT_EQ(v1.at("version"), "v1");
  EXPECT_EQ(v1.at("freshness"), "Current");
  const json::object* deployments = Find(v1.at("resources").as_array(), "resource", "deployments");
  ASSERT_NE(deployments, nullptr);
  EXPECT_EQ(json::value(*deployments), json::parse(R"({
    "resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},
    "scope":"Namespaced","singularResource":"deployment",
    "verbs":["create","delete","deletecollection","get","list","patch","update","watch"],
    "shortNames":["deploy"],"categories":["all"],
    "subresources":[
      {"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},
       "verbs":["get","patch","update"]},
      {"subresource":"status","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},
       "verbs":["get","patch","update"]}]})"));
  // Resources are sorted by name.
  std::vector<std::string> names;
  for (const json::value& r : v1.at("resources").as_array()) {
    names.emplace_back(r.at("resource").as_string());
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const json::object* batch = nullptr;
  for (const json::value& item : items) {
    if (item.at("metadata").at("name") == "batch") batch = &item.as_object();
  }
  ASSERT_NE(batch, nullptr);
  const json::object* jobs =
      Find(batch->at("versions").at(0).at("resources").as_array(), "resource", "jobs");
  ASSERT_NE(jobs, nullptr);
  EXPECT_FALSE(jobs->contains("shortNames"));
  EXPECT_EQ(jobs->at("categories"), json::parse(R"(["all"])"));
}

TEST_F(BuiltinDiscovery, AggregatedCoreHasOnlyTheCoreGroup) {
  json::object list = Parse(RenderAggregatedDiscovery(*registry_.Snapshot(), DiscoveryRoot::kCore,
                                                      DiscoveryFormat::kAggregatedV2Beta1));
  EXPECT_EQ(list["apiVersion"], "apidiscovery.k8s.io/v2beta1");
  ASSERT_EQ(list["items"].as_array().size(), 1u);
  const json::object& core = list["items"].at(0).as_object();
  EXPECT_FALSE(core.at("metadata").as_object().contains("name"));
  const json::array& resources = core.at("versions").at(0).at("resources").as_array();
  const json::object* pods = Find(resources, "resource", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(pods->at("shortNames"), json::parse(R"(["po"])"));
  EXPECT_EQ(pods->at("responseKind"), json::parse(R"({"group":"","version":"v1","kind":"Pod"})"));
  const json::object* ns = Find(resources, "resource", "namespaces");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(ns->at("scope"), "Cluster");
  for (std::string_view r :
       {"events", "nodes", "configmaps", "secrets", "services", "serviceaccounts", "endpoints"}) {
    EXPECT_NE(Find(resources, "resource", r), nullptr) << r;
  }
}

TEST_F(BuiltinDiscovery, LegacyDocuments) {
  auto table = registry_.Snapshot();
  EXPECT_EQ(json::parse(RenderApiVersions(*table, "10.0.0.1:6443")), json::parse(R"({
    "kind":"APIVersions","versions":["v1"],
    "serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"10.0.0.1:6443"}]})"));

  json::object groups = Parse(RenderApiGroupList(*table));
  EXPECT_EQ(groups["kind"], "APIGroupList");
  const json::array& gs = groups["groups"].as_array();
  ASSERT_FALSE(gs.empty());
  EXPECT_EQ(gs[0], json::parse(R"({"name":"apps","versions":[{"groupVersion":"apps/v1",
    "version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}})"));

  auto apps = RenderApiGroup(*table, "apps");
  ASSERT_TRUE(apps.has_value());
  EXPECT_EQ(Parse(*apps)["kind"], "APIGroup");
  EXPECT_FALSE(RenderApiGroup(*table, "nosuch.example.com").has_value());
  EXPECT_FALSE(RenderApiGroup(*table, "").has_value());
}

TEST_F(BuiltinDiscovery, LegacyResourceListWithSubresources) {
  auto list = RenderApiResourceList(*registry_.Snapshot(), {"apps", "v1"});
  ASSERT_TRUE(list.has_value());
  json::object o = Parse(*list);
  EXPECT_EQ(o["kind"], "APIResourceList");
  EXPECT_EQ(o["groupVersion"], "apps/v1");
  const json::array& rs = o["resources"].as_array();
  std::vector<std::string> names;
  for (const json::value& r : rs) names.emplace_back(r.at("name").as_string());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const json::object* scale = Find(rs, "name", "deployments/scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(json::value(*scale), json::parse(R"({"name":"deployments/scale","singularName":"",
    "namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale",
    "verbs":["get","patch","update"]})"));
  const json::object* status = Find(rs, "name", "deployments/status");
  ASSERT_NE(status, nullptr);
  EXPECT_FALSE(status->contains("group"));
  EXPECT_EQ(status->at("kind"), "Deployment");
  const json::object* deploy = Find(rs, "name", "deployments");
  ASSERT_NE(deploy, nullptr);
  EXPECT_EQ(deploy->at("storageVersionHash"), "8aSe+NMegvE=");

  auto core = RenderApiResourceList(*registry_.Snapshot(), {"", "v1"});
  ASSERT_TRUE(core.has_value());
  json::object core_list = Parse(*core);
  const json::object* pods = Find(core_list["resources"].as_array(), "name", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(pods->at("storageVersionHash"), "xPOwRZ+Yhw8=");  // what a real cluster reports
  EXPECT_FALSE(RenderApiResourceList(*registry_.Snapshot(), {"apps", "v2"}).has_value());
}

// Every document decodes strictly (no unknown fields, right JSON types) as upstream's own types.
TEST_F(BuiltinDiscovery, DocumentsMatchUpstreamTypes) {
  auto table = registry_.Snapshot();
  auto check = [](const std::string& body, std::string_view type) {
    const api::TypeSchema* t = api::BuiltinSchemas().FindType(type);
    ASSERT_NE(t, nullptr) << type;
    auto decoded = api::DecodeJsonBody(body, *t, api::FieldValidation::kStrict);
    EXPECT_TRUE(decoded.ok()) << type << ": " << decoded.status().ToString();
  };
  for (auto format : {DiscoveryFormat::kAggregatedV2, DiscoveryFormat::kAggregatedV2Beta1}) {
    for (auto root : {DiscoveryRoot::kCore, DiscoveryRoot::kGroups}) {
      check(RenderAggregatedDiscovery(*table, root, format),
            "io.k8s.api.apidiscovery.v2.APIGroupDiscoveryList");
    }
  }
  check(RenderApiVersions(*table, "127.0.0.1:1"),
        "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions");
  check(RenderApiGroupList(*table), "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList");
  check(*RenderApiGroup(*table, "apps"), "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup");
  for (const auto& r : table->resources) {
    check(*RenderApiResourceList(*table, r->gvr.Gv()),
          "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList");
  }
}

TEST(StorageVersionHash, MatchesUpstream) {
  EXPECT_EQ(StorageVersionHash("", "v1", "Pod"), "xPOwRZ+Yhw8=");
  EXPECT_EQ(StorageVersionHash("apps", "v1", "Deployment"), "8aSe+NMegvE=");
}

api::ResourceInfo Widget(std::string version) {
  api::ResourceInfo r;
  r.gvr = {"example.com", std::move(version), "widgets"};
  r.kind = "Widget";
  r.singular = "widget";
  r.verbs = {"get", "list"};
  return r;
}

TEST(Discovery, VersionsInKubernetesPriorityOrder) {
  api::ResourceRegistry reg;
  reg.Upsert({Widget("v1alpha1"), Widget("foo"), Widget("v1"), Widget("v1beta1"), Widget("v2"),
              Widget("v1beta2"), Widget("v10")});
  json::object g = json::parse(*RenderApiGroup(*reg.Snapshot(), "example.com")).as_object();
  std::vector<std::string> versions;
  for (const json::value& v : g["versions"].as_array()) {
    versions.emplace_back(v.at("version").as_string());
  }
  EXPECT_THAT(versions, ElementsAre("v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"));
  EXPECT_EQ(g["preferredVersion"].at("version"), "v10");
}

TEST(DiscoveryService, CachesPerSnapshotAndFollowsRegistryChanges) {
  api::ResourceRegistry reg;
  api::LoadBuiltins(&reg);
  DiscoveryService svc(&reg, {.server_address = "127.0.0.1:1"});
  DiscoveryDocument a = svc.Root(DiscoveryRoot::kGroups, kKubectlAccept);
  EXPECT_EQ(a.content_type, kAggregatedDiscoveryV2ContentType);
  DiscoveryDocument b = svc.Root(DiscoveryRoot::kGroups, kKubectlAccept);
  EXPECT_EQ(a.body, b.body);  // the same rendered bytes
  EXPECT_EQ(a.etag, b.etag);
  EXPECT_EQ(svc.Root(DiscoveryRoot::kGroups, "application/json").content_type, kJsonContentType);
  EXPECT_FALSE(svc.Group("example.com").has_value());

  reg.Upsert({Widget("v1")});
  DiscoveryDocument c = svc.Root(DiscoveryRoot::kGroups, kKubectlAccept);
  EXPECT_NE(c.body, a.body);
  EXPECT_NE(c.etag, a.etag);
  EXPECT_NE(c.body->find("\"widgets\""), std::string::npos);
  ASSERT_TRUE(svc.Group("example.com").has_value());
  ASSERT_TRUE(svc.ResourceList({"example.com", "v1"}).has_value());
  EXPECT_NE(svc.ResourceList({"example.com", "v1"})->body->find("\"Widget\""), std::string::npos);
}

}  // namespace
}  // namespace converge::apiserver
