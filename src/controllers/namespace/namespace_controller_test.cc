// The namespace controller's whole sync against an in-memory API: discovery, DeleteCollection,
// the remaining-content conditions, waiting on a finalizer, then /finalize.
#include "controllers/namespace/namespace_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <mutex>

#include "client/api_errors.h"
#include "util/time_format.h"

namespace converge::controllers::namespace_ {
namespace {

namespace json = boost::json;

// Namespaced objects per resource, namespaces by name. DeleteCollection removes objects without
// finalizers and marks the others, as the API server does.
class FakeNamespaceClient final : public NamespaceClient {
 public:
  std::map<std::string, api::Object> namespaces;
  // resource name → objects
  std::map<std::string, std::vector<api::Object>> content;
  std::vector<api::ResourceInfo> resources;
  std::vector<std::string> failed_groups;  // discovery failures to report
  std::set<std::string> no_delete_collection;
  int status_writes = 0;
  int finalize_calls = 0;
  // Called with the resource at each deletecollection (a test's hook).
  std::function<void(const std::string& resource)> on_delete_collection;

  util::StatusOr<api::Object> GetNamespace(const std::string& name) override {
    auto it = namespaces.find(name);
    if (it == namespaces.end()) return util::NotFound("namespaces \"" + name + "\" not found");
    return it->second;
  }
  util::StatusOr<api::Object> UpdateNamespaceStatus(const api::Object& ns) override {
    ++status_writes;
    api::Object& stored = namespaces.at(std::string(ns.name()));
    stored.mutable_doc()["status"] = *api::Find(ns.doc(), {"status"});
    return stored;
  }
  util::StatusOr<api::Object> FinalizeNamespace(const api::Object& ns) override {
    ++finalize_calls;
    api::Object& stored = namespaces.at(std::string(ns.name()));
    stored.mutable_doc()["spec"] = *api::Find(ns.doc(), {"spec"});
    api::Object out = stored;
    const json::array* fin = api::FindArray(stored.doc(), {"spec", "finalizers"});
    if (stored.being_deleted() && (fin == nullptr || fin->empty())) {
      namespaces.erase(std::string(ns.name()));
    }
    return out;
  }
  util::StatusOr<discovery::DiscoveryResult> Discover() override {
    discovery::DiscoveryResult r;
    r.resources = resources;
    for (const auto& g : failed_groups) r.failed_groups[g] = "the server is currently unable";
    return r;
  }
  util::Status DeleteCollection(const api::GroupVersionResource& gvr, const std::string&,
                                std::stop_token) override {
    if (on_delete_collection) on_delete_collection(gvr.resource);
    if (no_delete_collection.count(gvr.resource)) {
      return util::Status(util::Code::kUnimplemented, "not allowed").WithReason("MethodNotAllowed");
    }
    auto& objs = content[gvr.resource];
    std::vector<api::Object> kept;
    for (api::Object& o : objs) {
      if (o.finalizers() != nullptr && !o.finalizers()->empty()) {
        o.mutable_metadata()["deletionTimestamp"] = "2024-05-01T10:00:00Z";
        kept.push_back(o);
      }
    }
    objs = kept;
    return util::Status();
  }
  util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                      std::stop_token) override {
    auto& objs = content[gvr.resource];
    std::erase_if(objs, [&](const api::Object& o) { return o.name() == key.name; });
    return util::Status();
  }
  util::Status ListEach(const api::GroupVersionResource& gvr, const std::string&,
                        std::stop_token stop,
                        const std::function<void(const api::Object&)>& fn) override {
    if (stop.stop_requested()) return util::Status(util::Code::kCancelled, "stopping");
    for (const api::Object& o : content[gvr.resource]) fn(o);
    return util::Status();
  }
};

api::ResourceInfo Resource(std::string group, std::string resource, bool namespaced = true) {
  api::ResourceInfo r;
  r.gvr = {std::move(group), "v1", std::move(resource)};
  r.namespaced = namespaced;
  r.verbs = {"create", "delete", "deletecollection", "get", "list", "watch"};
  return r;
}

api::Object Obj(std::string name, std::vector<std::string> finalizers = {}) {
  api::Object o;
  o.set_name(name);
  o.set_namespace("team");
  for (const auto& f : finalizers) o.AddFinalizer(f);
  return o;
}

class NamespaceSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api::Object ns;
    ns.SetGvk({"", "v1", "Namespace"});
    ns.set_name("team");
    ns.set_uid("ns-uid");
    ns.mutable_metadata()["deletionTimestamp"] = "2024-05-01T10:00:00Z";
    ns.mutable_doc()["spec"] = json::object{{"finalizers", json::array{"kubernetes"}}};
    ns.mutable_doc()["status"] = json::object{{"phase", "Active"}};
    fake_.namespaces["team"] = ns;
    fake_.resources = {Resource("", "configmaps"), Resource("apps", "deployments"),
                       Resource("", "nodes", /*namespaced=*/false)};
    controller_ = std::make_unique<NamespaceController>(NamespaceControllerOptions{
        .client = &fake_, .clock = &clock_, .metrics = &registry_, .queue_name = ""});
  }

  const json::object* Condition(std::string_view type) {
    const json::array* conds =
        api::FindArray(fake_.namespaces.at("team").doc(), {"status", "conditions"});
    if (conds == nullptr) return nullptr;
    for (const json::value& c : *conds) {
      if (c.at("type").as_string() == type) return &c.as_object();
    }
    return nullptr;
  }

  util::FakeClock clock_;
  util::Registry registry_;
  FakeNamespaceClient fake_;
  std::unique_ptr<NamespaceController> controller_;
};

TEST_F(NamespaceSyncTest, EmptiesTheNamespaceWaitsForFinalizersThenFinalizes) {
  fake_.content["configmaps"] = {Obj("a"), Obj("held", {"example.com/hold"})};
  fake_.content["deployments"] = {Obj("d")};
  fake_.content["nodes"] = {Obj("cluster-scoped-is-not-ours")};

  client::ReconcileResult r = controller_->Sync("team");
  ASSERT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_EQ(r.requeue_after, std::chrono::seconds(15 / 2 + 1)) << "the finalizer estimate";
  EXPECT_EQ(api::FindString(fake_.namespaces.at("team").doc(), {"status", "phase"}), "Terminating");
  EXPECT_TRUE(fake_.content["deployments"].empty());
  ASSERT_EQ(fake_.content["configmaps"].size(), 1u);
  EXPECT_TRUE(fake_.content["configmaps"][0].being_deleted());
  EXPECT_EQ(fake_.content["nodes"].size(), 1u);
  EXPECT_EQ(fake_.finalize_calls, 0);
  ASSERT_NE(Condition("NamespaceContentRemaining"), nullptr);
  EXPECT_EQ(Condition("NamespaceContentRemaining")->at("message"),
            "Some resources are remaining: configmaps. has 1 resource instances");
  EXPECT_EQ(Condition("NamespaceFinalizersRemaining")->at("message"),
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 "
            "resource instances");
  EXPECT_EQ(Condition("NamespaceDeletionDiscoveryFailure")->at("status"), "False");

  // Nothing changed: no status write.
  int writes = fake_.status_writes;
  r = controller_->Sync("team");
  EXPECT_EQ(fake_.status_writes, writes);
  EXPECT_EQ(fake_.finalize_calls, 0);

  // The finalizer's owner finishes; the namespace goes.
  fake_.content["configmaps"].clear();
  r = controller_->Sync("team");
  ASSERT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_EQ(r.requeue_after, util::Clock::Duration::zero());
  EXPECT_EQ(fake_.finalize_calls, 1);
  EXPECT_EQ(fake_.namespaces.count("team"), 0u);
  // A sync of a gone namespace is a no-op.
  EXPECT_TRUE(controller_->Sync("team").error.ok());
}

TEST_F(NamespaceSyncTest, AStopCutsTheSyncShortWithoutReportingAFailure) {
  // The controller shuts down while it deletes the last resource's content: the sync ends (to be
  // retried by the next run) and writes no condition about what it did not finish.
  fake_.content["configmaps"] = {Obj("a")};
  fake_.content["deployments"] = {Obj("d")};
  std::stop_source stop;
  fake_.on_delete_collection = [&](const std::string& resource) {
    if (resource == "deployments") stop.request_stop();
  };
  client::ReconcileResult r = controller_->Sync("team", stop.get_token());
  EXPECT_FALSE(r.error.ok());
  EXPECT_EQ(fake_.finalize_calls, 0);
  EXPECT_EQ(Condition("NamespaceDeletionContentFailure"), nullptr);
  EXPECT_EQ(Condition("NamespaceContentRemaining"), nullptr);
}

TEST_F(NamespaceSyncTest, DiscoveryFailureIsReportedAndRetried) {
  fake_.failed_groups = {"metrics.k8s.io/v1beta1"};
  client::ReconcileResult r = controller_->Sync("team");
  EXPECT_FALSE(r.error.ok()) << "retried with backoff";
  EXPECT_EQ(fake_.finalize_calls, 0) << "never finalized on a partial picture";
  ASSERT_NE(Condition("NamespaceDeletionDiscoveryFailure"), nullptr);
  EXPECT_EQ(Condition("NamespaceDeletionDiscoveryFailure")->at("status"), "True");
  EXPECT_EQ(Condition("NamespaceDeletionDiscoveryFailure")->at("reason"), "DiscoveryFailed");
  EXPECT_EQ(Condition("NamespaceDeletionDiscoveryFailure")->at("message"),
            "Discovery failed for some groups, 1 failing: unable to retrieve the complete list "
            "of server APIs: metrics.k8s.io/v1beta1: the server is currently unable");
  fake_.failed_groups.clear();
  r = controller_->Sync("team");
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(fake_.finalize_calls, 1);
}

TEST_F(NamespaceSyncTest, FallsBackToDeletingOneByOne) {
  fake_.no_delete_collection = {"deployments"};
  fake_.content["deployments"] = {Obj("d1"), Obj("d2")};
  client::ReconcileResult r = controller_->Sync("team");
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_TRUE(fake_.content["deployments"].empty());
  EXPECT_EQ(fake_.finalize_calls, 1);
}

TEST_F(NamespaceSyncTest, NamespaceNotBeingDeletedIsLeftAlone) {
  fake_.namespaces["team"].mutable_metadata().erase("deletionTimestamp");
  fake_.content["configmaps"] = {Obj("a")};
  EXPECT_TRUE(controller_->Sync("team").error.ok());
  EXPECT_EQ(fake_.content["configmaps"].size(), 1u);
  EXPECT_EQ(fake_.status_writes, 0);
}

}  // namespace
}  // namespace converge::controllers::namespace_
