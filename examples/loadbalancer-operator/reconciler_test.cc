// The whole reconcile through fakes: the API (a FakeTransport that keeps LoadBalancer objects,
// enforces resourceVersions and finalizers) and the cloud (FakeCloud).
#include "reconciler.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>

#include "client/fake_transport.h"
#include "fake_cloud.h"
#include "test_objects.h"

namespace lboperator {
namespace {

namespace json = boost::json;
using client::FakeTransport;
using client::HttpRequest;
using client::HttpResponse;

constexpr const char* kPrefix = "/apis/lb.converge.io/v1/namespaces/";

// The API server's part: LoadBalancer objects by name, written with PUT (object or status).
class FakeApi {
 public:
  FakeApi() {
    transport_ = std::make_shared<FakeTransport>(
        [this](const HttpRequest& r) -> util::StatusOr<HttpResponse> { return Handle(r); });
    client_ =
        std::make_unique<client::RestClient>(client::RestClientOptions{.transport = transport_});
  }

  void Put(api::Object obj) {
    std::lock_guard lock(mu_);
    objects_[std::string(obj.name())] = std::move(obj);
  }
  std::optional<api::Object> Get(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = objects_.find(name);
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  // The informer catching up: the cache becomes what the API holds.
  void SyncCache() {
    std::lock_guard lock(mu_);
    std::vector<api::ObjectPtr> all;
    for (const auto& [n, o] : objects_) all.push_back(std::make_shared<const api::Object>(o));
    cache_.Replace(std::move(all));
  }
  // A user's delete: the object stays, marked, while finalizers remain.
  void MarkDeleted(const std::string& name) {
    std::lock_guard lock(mu_);
    api::Object& o = objects_.at(name);
    o.mutable_metadata()["deletionTimestamp"] = "2026-11-29T15:00:00Z";
    Bump(o);
  }

  client::RestClient* client() { return client_.get(); }
  client::Indexer* cache() { return &cache_; }
  int writes() const { return writes_; }

 private:
  static void Bump(api::Object& o) {
    o.set_resource_version(std::to_string(std::stoll(std::string(o.resource_version())) + 1));
  }
  static HttpResponse Error(int code, std::string reason) {
    return FakeTransport::Json(code, json::serialize(json::object{{"kind", "Status"},
                                                                  {"apiVersion", "v1"},
                                                                  {"status", "Failure"},
                                                                  {"reason", reason},
                                                                  {"code", code},
                                                                  {"message", reason}}));
  }

  HttpResponse Handle(const HttpRequest& r) {
    std::lock_guard lock(mu_);
    if (r.method != "PUT" || !r.path.starts_with(kPrefix)) return Error(405, "MethodNotAllowed");
    std::string rest =
        r.path.substr(std::string(kPrefix).size());  // ns/loadbalancers/name[/status]
    const bool status = rest.ends_with("/status");
    if (status) rest.resize(rest.size() - 7);
    std::string name = rest.substr(rest.rfind('/') + 1);
    auto it = objects_.find(name);
    if (it == objects_.end()) return Error(404, "NotFound");
    util::StatusOr<api::Object> in = api::Object::Parse(r.body);
    if (!in.ok()) return Error(400, "BadRequest");
    if (in->resource_version() != it->second.resource_version()) return Error(409, "Conflict");
    ++writes_;
    api::Object& stored = it->second;
    if (status) {
      stored.mutable_doc()["status"] =
          in->doc().contains("status") ? in->doc().at("status") : json::value(json::object{});
    } else {
      stored.mutable_doc()["spec"] = in->doc().at("spec");
      json::object& meta = stored.mutable_metadata();
      if (const json::array* f = api::FindArray(in->doc(), {"metadata", "finalizers"})) {
        meta["finalizers"] = *f;
      } else {
        meta.erase("finalizers");
      }
      if (stored.being_deleted() &&
          (stored.finalizers() == nullptr || stored.finalizers()->empty())) {
        api::Object gone = stored;
        objects_.erase(it);
        return FakeTransport::Json(200, gone.Serialize());
      }
    }
    Bump(stored);
    return FakeTransport::Json(200, stored.Serialize());
  }

  std::shared_ptr<FakeTransport> transport_;
  std::unique_ptr<client::RestClient> client_;
  client::Indexer cache_;
  std::mutex mu_;
  std::map<std::string, api::Object> objects_;  // guarded by mu_
  int writes_ = 0;                              // guarded by mu_
};

class ReconcilerTest : public ::testing::Test {
 protected:
  ReconcilerTest()
      : reconciler_({.client = api_.client(),
                     .cache = api_.cache(),
                     .cloud = &cloud_,
                     .clock = &clock_,
                     .decide = {.resync = std::chrono::seconds(60)}}) {}

  client::ReconcileResult Reconcile() {
    api_.SyncCache();
    return reconciler_.Reconcile({"default", "web"}, {});
  }
  LoadBalancerStatus Status() { return ParseStatus(*api_.Get("web")); }
  std::string ReadyReason() {
    const LoadBalancerStatus status = Status();
    const Condition* c = FindCondition(status, "Ready");
    return c != nullptr ? c->reason : "";
  }

  util::FakeClock clock_;
  FakeApi api_;
  FakeCloud cloud_;
  Reconciler reconciler_;
};

TEST_F(ReconcilerTest, NewObjectGetsFinalizerOneLoadBalancerAndReadyStatus) {
  api_.Put(testing::LoadBalancerObject({.finalizer = false}));
  client::ReconcileResult r = Reconcile();
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_EQ(r.requeue_after, std::chrono::seconds(60));
  ASSERT_TRUE(api_.Get("web")->HasFinalizer(kFinalizer));
  std::vector<ExternalLoadBalancer> all = cloud_.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].tags.at(kTagUid), "uid-1");
  LoadBalancerStatus s = Status();
  EXPECT_EQ(s.external_id, all[0].id);
  EXPECT_EQ(s.address, all[0].address);
  EXPECT_EQ(s.observed_generation, 1);
  EXPECT_EQ(ReadyReason(), kReasonAvailable);

  // Again: nothing changes, nothing is written.
  const int writes = api_.writes();
  r = Reconcile();
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(api_.writes(), writes);
  EXPECT_EQ(cloud_.creates(), 1);
}

TEST_F(ReconcilerTest, CreatePerformedButNotAcknowledgedIsFoundNotRepeated) {
  api_.Put(testing::LoadBalancerObject());
  cloud_.TimeoutAfterNext(1);
  client::ReconcileResult r = Reconcile();
  EXPECT_EQ(r.error.code(), util::Code::kUnavailable) << r.error.ToString();
  EXPECT_EQ(ReadyReason(), kReasonCloudUnavailable);
  ASSERT_EQ(cloud_.All().size(), 1u);  // it was created after all

  r = Reconcile();
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_EQ(cloud_.create_calls(), 1);  // found by its tag: no second create call at all
  EXPECT_EQ(Status().external_id, cloud_.All()[0].id);
  EXPECT_EQ(ReadyReason(), kReasonAvailable);
}

TEST_F(ReconcilerTest, OutageBacksOffWithStatusThenRecovers) {
  api_.Put(testing::LoadBalancerObject());
  cloud_.SetDown(true);
  for (int i = 0; i < 3; ++i) {
    client::ReconcileResult r = Reconcile();
    EXPECT_EQ(r.error.code(), util::Code::kUnavailable);  // the queue backs off
    EXPECT_FALSE(r.terminal);
  }
  EXPECT_EQ(ReadyReason(), kReasonCloudUnavailable);
  EXPECT_TRUE(cloud_.All().empty());
  cloud_.SetDown(false);
  client::ReconcileResult r = Reconcile();
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(cloud_.All().size(), 1u);
  EXPECT_EQ(ReadyReason(), kReasonAvailable);
}

TEST_F(ReconcilerTest, ProvisioningIsPolledUntilActive) {
  api_.Put(testing::LoadBalancerObject());
  cloud_.SetProvisioning(true);
  client::ReconcileResult r = Reconcile();
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(r.requeue_after, std::chrono::seconds(1));
  EXPECT_EQ(ReadyReason(), kReasonProvisioning);
  cloud_.Activate(cloud_.All()[0].id);
  r = Reconcile();
  EXPECT_EQ(ReadyReason(), kReasonAvailable);
  EXPECT_EQ(r.requeue_after, std::chrono::seconds(60));
}

TEST_F(ReconcilerTest, DeletionRemovesTheLoadBalancerThenTheFinalizer) {
  api_.Put(testing::LoadBalancerObject());
  ASSERT_TRUE(Reconcile().error.ok());
  ASSERT_EQ(cloud_.All().size(), 1u);
  api_.MarkDeleted("web");
  client::ReconcileResult r = Reconcile();
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_TRUE(cloud_.All().empty());
  EXPECT_FALSE(api_.Get("web").has_value());  // finalizer gone, object gone
}

TEST_F(ReconcilerTest, DeletedMidCreationLeaksNothing) {
  api_.Put(testing::LoadBalancerObject());
  cloud_.TimeoutAfterNext(1);  // the create lands, its answer does not
  EXPECT_FALSE(Reconcile().error.ok());
  api_.MarkDeleted("web");
  cloud_.FailNext(1, util::Unavailable("burst"));  // and the cloud hiccups during the delete
  EXPECT_FALSE(Reconcile().error.ok());
  EXPECT_TRUE(api_.Get("web").has_value());  // the finalizer holds it while the cloud is down
  client::ReconcileResult r = Reconcile();
  EXPECT_TRUE(r.error.ok()) << r.error.ToString();
  EXPECT_TRUE(cloud_.All().empty());
  EXPECT_FALSE(api_.Get("web").has_value());
}

TEST_F(ReconcilerTest, DuplicatesAreRemovedKeepingOne) {
  api_.Put(testing::LoadBalancerObject());
  cloud_.Inject(testing::External(""));
  cloud_.Inject(testing::External(""));
  EXPECT_TRUE(Reconcile().error.ok());
  ASSERT_EQ(cloud_.All().size(), 1u);
  EXPECT_EQ(Status().external_id, cloud_.All()[0].id);
  EXPECT_EQ(cloud_.creates(), 0);
}

TEST_F(ReconcilerTest, LoadBalancerDeletedBehindOurBackIsRecreated) {
  api_.Put(testing::LoadBalancerObject());
  ASSERT_TRUE(Reconcile().error.ok());
  const std::string first = Status().external_id;
  cloud_.Remove(first);
  ASSERT_TRUE(Reconcile().error.ok());
  ASSERT_EQ(cloud_.All().size(), 1u);
  EXPECT_NE(Status().external_id, first);
  EXPECT_EQ(Status().external_id, cloud_.All()[0].id);
}

TEST_F(ReconcilerTest, PortChangesReachTheCloudAndObservedGenerationFollows) {
  api_.Put(testing::LoadBalancerObject());
  ASSERT_TRUE(Reconcile().error.ok());
  api::Object changed = *api_.Get("web");
  changed.mutable_doc()["spec"].as_object()["ports"] = json::parse(R"([{"port":443}])");
  changed.set_generation(2);
  api_.Put(changed);
  ASSERT_TRUE(Reconcile().error.ok());
  EXPECT_EQ(cloud_.All()[0].ports, (std::vector<Port>{{443, "TCP"}}));
  EXPECT_EQ(Status().observed_generation, 2);
}

TEST_F(ReconcilerTest, StaleCacheConflictIsRetried) {
  api_.Put(testing::LoadBalancerObject({.finalizer = false}));
  api_.SyncCache();
  // Someone writes after the cache was filled: our update is conditional on the old version.
  api::Object newer = *api_.Get("web");
  newer.set_resource_version("11");
  api_.Put(newer);
  client::ReconcileResult r = reconciler_.Reconcile({"default", "web"}, {});
  EXPECT_EQ(r.error.code(), util::Code::kAborted) << r.error.ToString();
  EXPECT_TRUE(cloud_.All().empty());
}

TEST_F(ReconcilerTest, InvalidSpecIsTerminalAndCreatesNothing) {
  api_.Put(testing::LoadBalancerObject({.ports = "[]"}));
  client::ReconcileResult r = Reconcile();
  EXPECT_TRUE(r.terminal);
  EXPECT_EQ(ReadyReason(), kReasonInvalidSpec);
  EXPECT_TRUE(cloud_.All().empty());
}

}  // namespace
}  // namespace lboperator
