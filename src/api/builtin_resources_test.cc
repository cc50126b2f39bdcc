#include "api/builtin_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "api/schema_registry.h"

namespace converge::api {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::shared_ptr<const ResourceInfo> Get(const ResourceRegistry& r, std::string group,
                                        std::string resource) {
  auto info = r.Find({group, "v1", resource});
  EXPECT_NE(info, nullptr) << group << "/" << resource;
  return info;
}

class Builtins : public ::testing::Test {
 protected:
  void SetUp() override { LoadBuiltins(&registry_); }
  ResourceRegistry registry_;
};

TEST_F(Builtins, EveryResourceHasTypesAndUniqueGvr) {
  std::set<GroupVersionResource> seen;
  for (const auto& r : registry_.Snapshot()->resources) {
    EXPECT_TRUE(seen.insert(r->gvr).second) << r->gvr.resource;
    ASSERT_NE(r->schema, nullptr) << r->gvr.resource;
    EXPECT_TRUE(r->schema->name.ends_with("." + r->kind)) << r->schema->name;
    if (r->HasVerb("list")) {
      ASSERT_NE(r->list_schema, nullptr) << r->gvr.resource;
      EXPECT_NE(r->list_schema->Field("items"), nullptr);
    }
    EXPECT_FALSE(r->verbs.empty());
    EXPECT_TRUE(std::is_sorted(r->verbs.begin(), r->verbs.end())) << r->gvr.resource;
    for (const auto& s : r->subresources) EXPECT_NE(s.schema, nullptr) << s.name;
    if (r->HasVerb("get")) {
      EXPECT_TRUE(r->storage_prefix.starts_with("/registry/")) << r->gvr.resource;
    }
  }
  EXPECT_GE(seen.size(), 28u);
}

TEST_F(Builtins, DiscoveryFactsMatchUpstream) {
  auto pods = Get(registry_, "", "pods");
  EXPECT_THAT(pods->short_names, ElementsAre("po"));
  EXPECT_THAT(pods->categories, ElementsAre("all"));
  EXPECT_TRUE(pods->namespaced);
  EXPECT_EQ(pods->storage_prefix, "/registry/pods");
  const SubresourceInfo* eviction = pods->Subresource("eviction");
  ASSERT_NE(eviction, nullptr);
  EXPECT_EQ(eviction->response_kind, (GroupVersionKind{"policy", "v1", "Eviction"}));

  auto deploy = Get(registry_, "apps", "deployments");
  EXPECT_THAT(deploy->short_names, ElementsAre("deploy"));
  EXPECT_EQ(deploy->list_kind, "DeploymentList");
  EXPECT_EQ(deploy->storage_version, "v1");
  const SubresourceInfo* scale = deploy->Subresource("scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->response_kind, (GroupVersionKind{"autoscaling", "v1", "Scale"}));
  EXPECT_THAT(scale->verbs, ElementsAre("get", "patch", "update"));
  EXPECT_EQ(scale->schema->name, "io.k8s.api.autoscaling.v1.Scale");
  EXPECT_EQ(deploy->Subresource("status")->response_kind,
            (GroupVersionKind{"apps", "v1", "Deployment"}));

  auto ns = Get(registry_, "", "namespaces");
  EXPECT_FALSE(ns->namespaced);
  EXPECT_FALSE(ns->HasVerb("deletecollection"));
  EXPECT_NE(ns->Subresource("finalize"), nullptr);

  EXPECT_EQ(Get(registry_, "", "nodes")->storage_prefix, "/registry/nodes");
  EXPECT_EQ(Get(registry_, "events.k8s.io", "events")->storage_prefix,
            Get(registry_, "", "events")->storage_prefix);
  auto jobs = Get(registry_, "batch", "jobs");
  EXPECT_THAT(jobs->short_names, IsEmpty());
  EXPECT_THAT(jobs->categories, ElementsAre("all"));
  EXPECT_THAT(Get(registry_, "coordination.k8s.io", "leases")->short_names, IsEmpty());
  EXPECT_THAT(Get(registry_, "apiextensions.k8s.io", "customresourcedefinitions")->short_names,
              ElementsAre("crd", "crds"));
  auto sar = Get(registry_, "authorization.k8s.io", "subjectaccessreviews");
  EXPECT_THAT(sar->verbs, ElementsAre("create"));
  EXPECT_TRUE(sar->storage_prefix.empty());
  EXPECT_THAT(Get(registry_, "", "events")->selectable_fields,
              ::testing::Contains("involvedObject.uid"));
}

TEST_F(Builtins, GroupsInDiscoveryOrderCoreFirst) {
  auto table = registry_.Snapshot();
  ASSERT_FALSE(table->groups.empty());
  EXPECT_EQ(table->groups[0], "");
  EXPECT_EQ(table->groups[1], "apps");
  std::set<std::string> unique(table->groups.begin(), table->groups.end());
  EXPECT_EQ(unique.size(), table->groups.size());
}

struct ResolveCase {
  std::string input;
  std::optional<std::string> group;
  std::string want_group;
  std::string want_resource;  // empty: not found
};

class Resolve : public Builtins, public ::testing::WithParamInterface<ResolveCase> {};

TEST_P(Resolve, FindsWhatUsersType) {
  const ResolveCase& c = GetParam();
  auto r =
      c.group ? registry_.Resolve(c.input, std::string_view(*c.group)) : registry_.Resolve(c.input);
  if (c.want_resource.empty()) {
    EXPECT_EQ(r, nullptr);
    return;
  }
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->gvr.group, c.want_group);
  EXPECT_EQ(r->gvr.resource, c.want_resource);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Resolve,
    ::testing::Values(ResolveCase{"deploy", {}, "apps", "deployments"},
                      ResolveCase{"Deployment", {}, "apps", "deployments"},
                      ResolveCase{"DEPLOYMENTS", {}, "apps", "deployments"},
                      ResolveCase{"rs", {}, "apps", "replicasets"},
                      ResolveCase{"po", {}, "", "pods"}, ResolveCase{"pod", {}, "", "pods"},
                      ResolveCase{"events", {}, "", "events"},  // core wins over events.k8s.io
                      ResolveCase{"ev", std::string("events.k8s.io"), "events.k8s.io", "events"},
                      ResolveCase{"crd", {}, "apiextensions.k8s.io", "customresourcedefinitions"},
                      ResolveCase{"nosuch", {}, "", ""},
                      ResolveCase{"pods", std::string("apps"), "", ""}));

TEST(ResourceRegistry, UpsertReplacesAndRemoveDropsEmptyGroups) {
  ResourceRegistry reg;
  ResourceInfo a;
  a.gvr = {"example.com", "v1", "widgets"};
  a.kind = "Widget";
  reg.Upsert({a});
  auto before = reg.Snapshot();
  a.kind = "Widget2";
  reg.Upsert({a});
  EXPECT_EQ(before->resources[0]->kind, "Widget");  // old snapshots are unchanged
  auto after = reg.Snapshot();
  ASSERT_EQ(after->resources.size(), 1u);
  EXPECT_EQ(after->resources[0]->kind, "Widget2");
  EXPECT_THAT(after->groups, ElementsAre("example.com"));
  EXPECT_NE(reg.FindByKind({"example.com", "v1", "Widget2"}), nullptr);
  reg.Remove({"example.com", "widgets"});
  EXPECT_THAT(reg.Snapshot()->resources, IsEmpty());
  EXPECT_THAT(reg.Snapshot()->groups, IsEmpty());
}

TEST(BuiltinTypeForKind, KnowsRootsSubresourcesAndOptions) {
  EXPECT_EQ(BuiltinTypeForKind({"apps", "v1", "Deployment"})->name,
            "io.k8s.api.apps.v1.Deployment");
  EXPECT_EQ(BuiltinTypeForKind({"autoscaling", "v1", "Scale"})->name,
            "io.k8s.api.autoscaling.v1.Scale");
  EXPECT_EQ(BuiltinTypeForKind({"apps", "v1", "DeleteOptions"})->name,
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  EXPECT_EQ(BuiltinTypeForKind({"meta.k8s.io", "v1", "DeleteOptions"})->name,
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions");
  EXPECT_EQ(BuiltinTypeForKind({"", "v1", "PodList"})->name, "io.k8s.api.core.v1.PodList");
  EXPECT_EQ(BuiltinTypeForKind({"apps", "v1", "Nope"}), nullptr);
  EXPECT_EQ(BuiltinTypeForKind({"apps", "v2", "Deployment"}), nullptr);
}

}  // namespace
}  // namespace converge::api
