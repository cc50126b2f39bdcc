// The garbage collector, namespace, Job and TTL-after-finished controllers against a live
// `converge apiserver`, run in-process through the controller-manager library. The test plays
// the kubelet (it sets pod phases). The garbage-collector cases are upstream's conformance tests
// (test/e2e/apimachinery/garbage_collector.go) with hand-made owner references.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "controllers/manager/controller_manager.h"
#include "controllers/namespace/namespace_controller.h"
#include "lifecycle_test_util.h"

namespace converge::lifecycle_test {
namespace {

class LifecycleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::ServerProcess();
    ASSERT_TRUE(server_->Start());
    manager_client_ = ClientFor(*server_).release();
    ASSERT_NE(manager_client_, nullptr);
    controllers::ControllerManagerOptions o;
    o.client = manager_client_;
    o.controllers = {"garbagecollector", "namespace", "job", "ttl-after-finished"};
    o.leader_elect = false;
    manager_ = new controllers::ControllerManager(o);
    stop_ = new std::stop_source();
    runner_ = new std::thread([] {
      util::Status s = manager_->Run(stop_->get_token());
      // Cancelled: the suite ended before the caches synced (a test that needs no controller
      // running alone in its process); anything else is the manager failing.
      if (!s.ok() && s.code() != util::Code::kCancelled) ADD_FAILURE() << s.ToString();
    });
  }
  static void TearDownTestSuite() {
    stop_->request_stop();
    runner_->join();
    delete runner_;
    delete manager_;
    delete stop_;
    delete manager_client_;
    delete server_;
  }

  void SetUp() override {
    client_ = ClientFor(*server_);
    ASSERT_NE(client_, nullptr);
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "lc-";
    for (char c : name) ns_ += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    ns_ = ns_.substr(0, 60);
    api::Object ns;
    ns.SetGvk({"", "v1", "Namespace"});
    ns.set_name(ns_);
    auto created = client_->Create(kNamespaces, "", ns);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  api::Object Create(const api::GroupVersionResource& gvr, const api::Object& obj) {
    auto created = client_->Create(gvr, ns_, obj);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : api::Object();
  }
  void Delete(const api::GroupVersionResource& gvr, const api::Object& obj, std::string policy) {
    client::DeleteOptions o;
    o.propagation_policy = std::move(policy);
    o.precondition_uid = std::string(obj.uid());
    util::Status s = client_->Delete(gvr, {ns_, std::string(obj.name())}, o);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::optional<api::Object> Get(const api::GroupVersionResource& gvr, const std::string& name) {
    auto got = client_->Get(gvr, {ns_, name});
    if (!got.ok()) return std::nullopt;
    return *got;
  }
  // The kubelet's part: the pod ran and ended in `phase`.
  void FinishPod(const api::Object& pod, const std::string& phase) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      auto current = client_->Get(kPods, pod.key());
      ASSERT_TRUE(current.ok()) << current.status().ToString();
      json::object& st = api::EnsureObject(current->mutable_doc(), "status");
      st["phase"] = phase;
      std::string now = "2024-01-01T00:00:00Z";
      st["containerStatuses"] = json::array{json::object{
          {"name", "c"},
          {"image", "busybox"},
          {"imageID", ""},
          {"ready", false},
          {"restartCount", 0},
          {"state",
           json::object{{"terminated", json::object{{"exitCode", phase == "Succeeded" ? 0 : 1},
                                                    {"startedAt", now},
                                                    {"finishedAt", now}}}}}}};
      auto updated = client_->UpdateStatus(kPods, *current);
      if (updated.ok()) return;
      ASSERT_TRUE(client::IsConflict(updated.status())) << updated.status().ToString();
    }
    FAIL() << "could not set the phase of " << pod.name();
  }
  std::vector<api::Object> PodsOfJob(const std::string& job) {
    client::ListOptions o;
    o.label_selector = "batch.kubernetes.io/job-name=" + job;
    auto list = client_->List(kPods, ns_, o);
    return list.ok() ? list->items : std::vector<api::Object>{};
  }
  static const json::object* FindCondition(const api::Object& obj, std::string_view type) {
    const json::array* conds = api::FindArray(obj.doc(), {"status", "conditions"});
    if (conds == nullptr) return nullptr;
    for (const json::value& c : *conds) {
      if (c.is_object() && api::Object::GetString(c.get_object(), "type") == type) {
        return &c.get_object();
      }
    }
    return nullptr;
  }
  static bool ConditionTrue(const api::Object& obj, std::string_view type) {
    const json::object* c = FindCondition(obj, type);
    return c != nullptr && api::Object::GetString(*c, "status") == "True";
  }
  // Returns once the garbage collector's graph holds every pod created so far in the namespace:
  // a pod created after them whose owner never existed is collected only after the collector has
  // seen it, and its pod watch delivered the earlier pods first.
  void WaitUntilTheCollectorHasSeenThePods() {
    json::object ghost{{"apiVersion", "apps/v1"},
                       {"kind", "ReplicaSet"},
                       {"name", "ghost"},
                       {"uid", "uid-ghost-" + ns_}};
    Create(kPods, PodObject("sentinel", {ghost}));
    ASSERT_TRUE(WaitFor([&] { return !Get(kPods, "sentinel"); }))
        << "the collector never collected a pod whose owner does not exist";
  }

  static testing::ServerProcess* server_;
  static client::RestClient* manager_client_;
  static controllers::ControllerManager* manager_;
  static std::stop_source* stop_;
  static std::thread* runner_;
  std::unique_ptr<client::RestClient> client_;
  std::string ns_;
};

testing::ServerProcess* LifecycleTest::server_ = nullptr;
client::RestClient* LifecycleTest::manager_client_ = nullptr;
controllers::ControllerManager* LifecycleTest::manager_ = nullptr;
std::stop_source* LifecycleTest::stop_ = nullptr;
std::thread* LifecycleTest::runner_ = nullptr;

// ---- garbage collector ----

// "should delete pods created by rc when not orphaning"
TEST_F(LifecycleTest, GcDeletesPodsWhenNotOrphaning) {
  api::Object rs = Create(kReplicaSets, ReplicaSetObject("simpletest-rs", "bg"));
  Create(kPods, PodObject("p1", {OwnerRef(rs)}));
  Create(kPods, PodObject("p2", {OwnerRef(rs)}));
  Create(kConfigMaps, ConfigMapObject("owned", {OwnerRef(rs, false, false)}));
  Delete(kReplicaSets, rs, "Background");
  EXPECT_TRUE(WaitFor([&] {
    return Count(*client_, kPods, ns_) == 0 && Count(*client_, kReplicaSets, ns_) == 0 &&
           !Get(kConfigMaps, "owned");
  })) << "pods left: "
      << Count(*client_, kPods, ns_);
}

// The controllers read the pods their informers hold (compact, api/json_view.h) through views:
// none builds a pod's Boost.JSON tree, which would bring back the memory compact objects save.
TEST_F(LifecycleTest, ControllersReadPodsWithoutBuildingTheirTrees) {
  api::Object rs = Create(kReplicaSets, ReplicaSetObject("readers-rs", "readers"));
  const uint64_t before = api::CompactMaterializations();
  constexpr int kCount = 20;
  for (int i = 0; i < kCount; ++i)
    Create(kPods, PodObject("p" + std::to_string(i), {OwnerRef(rs)}));
  WaitUntilTheCollectorHasSeenThePods();
  // A few other objects may be built (the ReplicaSet); one per pod would be a reader on doc().
  EXPECT_LT(api::CompactMaterializations() - before, 5u);
}

// "should orphan pods created by rc if delete options say so"
TEST_F(LifecycleTest, GcOrphansPodsIfDeleteOptionsSaySo) {
  api::Object rs = Create(kReplicaSets, ReplicaSetObject("simpletest-rs", "orphan"));
  for (int i = 0; i < 5; ++i) Create(kPods, PodObject("p" + std::to_string(i), {OwnerRef(rs)}));
  // A dependent the collector sees only after orphaning has a dangling owner: it is collected.
  WaitUntilTheCollectorHasSeenThePods();
  Delete(kReplicaSets, rs, "Orphan");
  ASSERT_TRUE(WaitFor([&] { return Count(*client_, kReplicaSets, ns_) == 0; }))
      << "the orphan finalizer was never removed";
  auto pods = client_->List(kPods, ns_);
  ASSERT_TRUE(pods.ok());
  EXPECT_EQ(pods->items.size(), 5u);
  for (const api::Object& p : pods->items) {
    EXPECT_EQ(p.owner_references(), nullptr) << p.name() << " still names its owner";
    EXPECT_FALSE(p.being_deleted());
  }
}

// "should keep the rc around until all its pods are deleted if the deleteOptions says so"
TEST_F(LifecycleTest, GcKeepsTheOwnerUntilItsPodsAreDeletedInTheForeground) {
  api::Object rs = Create(kReplicaSets, ReplicaSetObject("simpletest-rs", "fg"));
  for (int i = 0; i < 4; ++i) Create(kPods, PodObject("p" + std::to_string(i), {OwnerRef(rs)}));
  // One dependent is held by someone else's finalizer: the owner must wait for it.
  api::Object held = Create(kPods, PodObject("held", {OwnerRef(rs)}, {"example.com/hold"}));
  // Upstream's collector, and ours, lets a foreground owner go once its graph shows no blocking
  // dependent: one it has not seen yet does not hold it.
  WaitUntilTheCollectorHasSeenThePods();
  Delete(kReplicaSets, rs, "Foreground");
  ASSERT_TRUE(WaitFor([&] { return Count(*client_, kPods, ns_) == 1; }));
  std::optional<api::Object> owner = Get(kReplicaSets, "simpletest-rs");
  ASSERT_TRUE(owner) << "deleted before its blocking dependent";
  EXPECT_TRUE(owner->being_deleted());
  EXPECT_TRUE(owner->HasFinalizer("foregroundDeletion"));
  std::optional<api::Object> h = Get(kPods, "held");
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->being_deleted());

  auto patched = client_->Patch(kPods, held.key(), client::PatchType::kMerge,
                                R"({"metadata":{"finalizers":null}})");
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_TRUE(WaitFor(
      [&] { return Count(*client_, kPods, ns_) == 0 && !Get(kReplicaSets, "simpletest-rs"); }));
}

// "should not delete dependents that have both valid owner and owner that's waiting for
// dependents to be deleted"
TEST_F(LifecycleTest, GcKeepsDependentsThatHaveAnotherValidOwner) {
  api::Object doomed = Create(kReplicaSets, ReplicaSetObject("simpletest-rs-to-be-deleted", "d"));
  api::Object stays = Create(kReplicaSets, ReplicaSetObject("simpletest-rs-to-stay", "s"));
  for (int i = 0; i < 6; ++i) Create(kPods, PodObject("p" + std::to_string(i), {OwnerRef(doomed)}));
  // Half of the pods get the second owner, by strategic merge as upstream's test does.
  std::string patch = R"({"metadata":{"ownerReferences":[{"apiVersion":"apps/v1",)"
                      R"("kind":"ReplicaSet","name":"simpletest-rs-to-stay","uid":")" +
                      std::string(stays.uid()) + R"("}]}})";
  for (int i = 0; i < 3; ++i) {
    auto r = client_->Patch(kPods, {ns_, "p" + std::to_string(i)},
                            client::PatchType::kStrategicMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->owner_references()->size(), 2u);
  }
  Delete(kReplicaSets, doomed, "Foreground");
  ASSERT_TRUE(WaitFor([&] { return !Get(kReplicaSets, "simpletest-rs-to-be-deleted"); }));
  ASSERT_TRUE(WaitFor([&] { return Count(*client_, kPods, ns_) == 3; }));
  auto pods = client_->List(kPods, ns_);
  ASSERT_TRUE(pods.ok());
  for (const api::Object& p : pods->items) {
    EXPECT_FALSE(p.being_deleted()) << p.name();
    ASSERT_NE(p.owner_references(), nullptr);
    ASSERT_EQ(p.owner_references()->size(), 1u) << p.name();
    EXPECT_EQ(api::Object::GetString(p.owner_references()->at(0).as_object(), "uid"), stays.uid());
  }
}

// "should not be blocked by dependency circle"
TEST_F(LifecycleTest, GcIsNotBlockedByADependencyCircle) {
  api::Object p1 = Create(kPods, PodObject("pod1"));
  api::Object p2 = Create(kPods, PodObject("pod2"));
  api::Object p3 = Create(kPods, PodObject("pod3"));
  auto link = [&](const api::Object& dep, const api::Object& owner) {
    std::string patch = R"({"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod",)"
                        R"("name":")" +
                        std::string(owner.name()) + R"(","uid":")" + std::string(owner.uid()) +
                        R"(","controller":true,"blockOwnerDeletion":true}]}})";
    auto r = client_->Patch(kPods, dep.key(), client::PatchType::kStrategicMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  };
  link(p1, p3);
  link(p2, p1);
  link(p3, p2);
  Delete(kPods, p1, "Foreground");
  EXPECT_TRUE(WaitFor([&] { return Count(*client_, kPods, ns_) == 0; }))
      << Count(*client_, kPods, ns_) << " pods left";
}

TEST_F(LifecycleTest, GcCollectsObjectsWhoseOwnerNeverExisted) {
  json::object ghost{{"apiVersion", "apps/v1"},
                     {"kind", "ReplicaSet"},
                     {"name", "ghost"},
                     {"uid", "00000000-0000-0000-0000-000000000000"}};
  api::Object rs = Create(kReplicaSets, ReplicaSetObject("real", "real"));
  Create(kConfigMaps, ConfigMapObject("dangling", {ghost}));
  Create(kConfigMaps, ConfigMapObject("half", {ghost, OwnerRef(rs, false, false)}));
  EXPECT_TRUE(WaitFor([&] { return !Get(kConfigMaps, "dangling"); }));
  EXPECT_TRUE(WaitFor([&] {
    auto half = Get(kConfigMaps, "half");
    return half && half->owner_references() != nullptr && half->owner_references()->size() == 1;
  })) << "the dangling reference is dropped, the object kept";
}

// ---- namespace controller ----

TEST_F(LifecycleTest, DeletingANamespaceEmptiesItThenRemovesIt) {
  api::Object rs = Create(kReplicaSets, ReplicaSetObject("rs", "ns"));
  Create(kPods, PodObject("owned", {OwnerRef(rs)}));
  Create(kPods, PodObject("loose"));
  Create(kConfigMaps, ConfigMapObject("cm"));
  api::Object held = Create(kConfigMaps, ConfigMapObject("held", {}, {"example.com/hold"}));
  api::Object secret;
  secret.SetGvk({"", "v1", "Secret"});
  secret.set_name("s");
  secret.mutable_doc()["stringData"] = json::object{{"k", "v"}};
  Create(kSecrets, secret);

  ASSERT_TRUE(client_->Delete(kNamespaces, {"", ns_}).ok());
  ASSERT_TRUE(WaitFor([&] {
    return Count(*client_, kPods, ns_) == 0 && Count(*client_, kReplicaSets, ns_) == 0 &&
           Count(*client_, kSecrets, ns_) == 0 && Count(*client_, kConfigMaps, ns_) == 1;
  }));
  // The held ConfigMap keeps the namespace, and the conditions say why.
  api::Object ns;
  ASSERT_TRUE(WaitFor([&] {
    auto got = client_->Get(kNamespaces, {"", ns_});
    if (!got.ok()) return false;
    ns = *got;
    return ConditionTrue(ns, "NamespaceFinalizersRemaining");
  }));
  EXPECT_EQ(api::FindString(ns.doc(), {"status", "phase"}), "Terminating");
  EXPECT_EQ(api::Object::GetString(*FindCondition(ns, "NamespaceFinalizersRemaining"), "message"),
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 "
            "resource instances");
  EXPECT_EQ(api::Object::GetString(*FindCondition(ns, "NamespaceContentRemaining"), "message"),
            "Some resources are remaining: configmaps. has 1 resource instances");
  EXPECT_EQ(
      api::Object::GetString(*FindCondition(ns, "NamespaceDeletionDiscoveryFailure"), "status"),
      "False");
  auto cm = Get(kConfigMaps, "held");
  ASSERT_TRUE(cm);
  EXPECT_TRUE(cm->being_deleted());

  auto patched = client_->Patch(kConfigMaps, held.key(), client::PatchType::kMerge,
                                R"({"metadata":{"finalizers":null}})");
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_TRUE(WaitFor([&] {
    return Gone(*client_, kNamespaces, {"", ns_});
  })) << "the namespace was never finalized";
}

TEST_F(LifecycleTest, TheNamespaceControllerListsAPageAtATimeAndStopsBetweenPages) {
  // A namespace of 100,000 pods is listed (for the termination estimate and what remains) a page
  // at a time, never whole; a stop (the controller shutting down) ends the listing between pages.
  for (int i = 0; i < 7; ++i) Create(kConfigMaps, ConfigMapObject("paged-" + std::to_string(i)));
  controllers::namespace_::RestNamespaceClient paged(client_.get(), /*page_size=*/3);
  std::set<std::string> seen;
  util::Status listed = paged.ListEach(kConfigMaps, ns_, {}, [&](const api::Object& cm) {
    if (cm.name().starts_with("paged-")) seen.insert(std::string(cm.name()));
  });
  ASSERT_TRUE(listed.ok()) << listed.ToString();
  EXPECT_EQ(seen.size(), 7u) << "every page was read";

  std::stop_source stop;
  int visited = 0;
  listed = paged.ListEach(kConfigMaps, ns_, stop.get_token(), [&](const api::Object&) {
    ++visited;
    stop.request_stop();
  });
  EXPECT_EQ(listed.code(), util::Code::kCancelled) << listed.ToString();
  EXPECT_EQ(visited, 3) << "the first page is delivered whole, the next one is never asked for";
}

// ---- Job and TTL-after-finished controllers ----

api::Object JobObject(const std::string& name, json::object spec) {
  api::Object j;
  j.SetGvk({"batch", "v1", "Job"});
  j.set_name(name);
  spec["template"] = json::parse(R"({"spec":{"restartPolicy":"Never",
      "containers":[{"name":"c","image":"busybox","command":["true"]}]}})");
  j.mutable_doc()["spec"] = std::move(spec);
  return j;
}

TEST_F(LifecycleTest, JobCompletes) {
  Create(kJobs, JobObject("pi", {{"completions", 3}, {"parallelism", 2}}));
  std::set<std::string> finished;
  ASSERT_TRUE(WaitFor([&] {
    // Act as the kubelet: every pod the controller starts runs and succeeds.
    for (const api::Object& p : PodsOfJob("pi")) {
      if (finished.insert(std::string(p.name())).second) FinishPod(p, "Succeeded");
    }
    auto job = Get(kJobs, "pi");
    return job && ConditionTrue(*job, "Complete");
  })) << "pods started: "
      << finished.size();
  api::Object job = *Get(kJobs, "pi");
  EXPECT_EQ(api::FindInt(job.doc(), {"status", "succeeded"}), 3);
  EXPECT_TRUE(ConditionTrue(job, "SuccessCriteriaMet"));
  EXPECT_FALSE(api::FindString(job.doc(), {"status", "completionTime"}).empty());
  EXPECT_FALSE(api::FindString(job.doc(), {"status", "startTime"}).empty());
  EXPECT_EQ(finished.size(), 3u) << "no extra pods";
  for (const api::Object& p : PodsOfJob("pi")) {
    EXPECT_FALSE(p.HasFinalizer("batch.kubernetes.io/job-tracking")) << p.name();
  }
}

TEST_F(LifecycleTest, JobFailsAtItsBackoffLimit) {
  Create(kJobs, JobObject("fails", {{"completions", 1}, {"backoffLimit", 0}}));
  ASSERT_TRUE(WaitFor([&] { return PodsOfJob("fails").size() == 1; }));
  FinishPod(PodsOfJob("fails")[0], "Failed");
  ASSERT_TRUE(WaitFor([&] {
    auto job = Get(kJobs, "fails");
    return job && ConditionTrue(*job, "Failed");
  }));
  api::Object job = *Get(kJobs, "fails");
  EXPECT_EQ(api::Object::GetString(*FindCondition(job, "Failed"), "reason"),
            "BackoffLimitExceeded");
  EXPECT_TRUE(ConditionTrue(job, "FailureTarget"));
  EXPECT_EQ(api::FindInt(job.doc(), {"status", "failed"}), 1);
  EXPECT_EQ(PodsOfJob("fails").size(), 1u) << "no replacement after the limit";
}

TEST_F(LifecycleTest, FinishedJobIsDeletedAfterItsTtl) {
  Create(kJobs, JobObject("short-lived", {{"completions", 1}, {"ttlSecondsAfterFinished", 0}}));
  ASSERT_TRUE(WaitFor([&] { return PodsOfJob("short-lived").size() == 1; }));
  FinishPod(PodsOfJob("short-lived")[0], "Succeeded");
  EXPECT_TRUE(WaitFor([&] { return !Get(kJobs, "short-lived"); }));
  // Foreground deletion by the TTL controller takes the pods with it.
  EXPECT_TRUE(WaitFor([&] { return PodsOfJob("short-lived").empty(); }));
}

TEST_F(LifecycleTest, DeletedJobsPodsLoseTheirTrackingFinalizer) {
  api::Object job = Create(kJobs, JobObject("deleted", {{"completions", 1}, {"parallelism", 1}}));
  ASSERT_TRUE(WaitFor([&] { return PodsOfJob("deleted").size() == 1; }));
  Delete(kJobs, job, "Background");
  EXPECT_TRUE(WaitFor([&] { return PodsOfJob("deleted").empty(); }))
      << "the pod is stuck on its tracking finalizer";
}

}  // namespace
}  // namespace converge::lifecycle_test
