// Decide is pure: tables of snapshots and the step each must produce.
#include "decide.h"

#include <gtest/gtest.h>

#include "test_objects.h"

namespace lboperator {
namespace {

using Action = Plan::Action;
using testing::External;
using testing::LoadBalancerPtr;

constexpr const char* kNow = "2026-11-29T15:00:00Z";
constexpr const char* kReadyStatus = R"({"externalID":"lb-1","address":"100.64.0.9",
  "observedGeneration":1,"conditions":[{"type":"Ready","status":"True","reason":"Available",
  "message":"load balancer lb-1 serves 100.64.0.9","lastTransitionTime":"2026-01-01T00:00:00Z",
  "observedGeneration":1}]})";

Snapshot Snap(api::ObjectPtr obj, std::vector<ExternalLoadBalancer> found = {},
              util::Status error = {}) {
  return {
      .object = std::move(obj), .cloud = {.error = error, .found = std::move(found)}, .now = kNow};
}

TEST(DecideTest, Table) {
  const util::Status down = util::Unavailable("cloud answered 503");
  struct Case {
    const char* name;
    Snapshot snapshot;
    Action want;
    std::string target_id = "";
    util::Code want_error = util::Code::kOk;
  };
  const Case cases[] = {
      {"object gone", Snap(nullptr), Action::kNothing},
      {"new object: finalizer first, before anything exists in the cloud",
       Snap(LoadBalancerPtr({.finalizer = false})), Action::kAddFinalizer},
      {"finalizer, nothing found: create", Snap(LoadBalancerPtr()), Action::kCreate},
      {"found (a create whose answer was lost): adopt it, write status",
       Snap(LoadBalancerPtr(), {External("lb-1")}), Action::kUpdateStatus},
      {"found and status says so: nothing",
       Snap(LoadBalancerPtr({.status = kReadyStatus}), {External("lb-1")}), Action::kNothing},
      {"ports differ: update",
       Snap(LoadBalancerPtr({.status = kReadyStatus}),
            {External("lb-1", "active", {{443, "TCP"}})}),
       Action::kUpdatePorts, "lb-1"},
      {"duplicates: delete all but the oldest",
       Snap(LoadBalancerPtr(), {External("lb-1"), External("lb-2")}), Action::kDelete, "lb-2"},
      {"duplicates: keep the one status names",
       Snap(LoadBalancerPtr({.status = R"({"externalID":"lb-2"})"}),
            {External("lb-1"), External("lb-2")}),
       Action::kDelete, "lb-1"},
      {"status names one that is gone: create again",
       Snap(LoadBalancerPtr({.status = kReadyStatus})), Action::kCreate},
      {"cloud down: say so in status", Snap(LoadBalancerPtr(), {}, down), Action::kUpdateStatus, "",
       util::Code::kUnavailable},
      {"cloud down, status already says so: back off",
       Snap(LoadBalancerPtr({.status = R"({"observedGeneration":1,"conditions":[{"type":"Ready",
         "status":"False","reason":"CloudUnavailable","message":"the cloud API is unavailable; retrying with backoff",
         "lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}]})"}),
            {}, down),
       Action::kNothing, "", util::Code::kUnavailable},
      {"cloud down, no finalizer yet: the finalizer needs no cloud",
       Snap(LoadBalancerPtr({.finalizer = false}), {}, down), Action::kAddFinalizer},
      {"deleting: delete what is tagged",
       Snap(LoadBalancerPtr({.deleting = true}), {External("lb-1")}), Action::kDelete, "lb-1"},
      {"deleting, nothing left: release the object", Snap(LoadBalancerPtr({.deleting = true})),
       Action::kRemoveFinalizer},
      {"deleting, cloud down: keep the finalizer",
       Snap(LoadBalancerPtr({.deleting = true}), {}, down), Action::kUpdateStatus, "",
       util::Code::kUnavailable},
      {"deleting without our finalizer: nothing",
       Snap(LoadBalancerPtr({.finalizer = false, .deleting = true})), Action::kNothing},
      {"invalid spec: say so, do not retry", Snap(LoadBalancerPtr({.ports = "[]"})),
       Action::kUpdateStatus, "", util::Code::kInvalidArgument},
  };
  for (const Case& c : cases) {
    Plan p = Decide(c.snapshot);
    EXPECT_EQ(p.action, c.want) << c.name;
    EXPECT_EQ(p.target_id, c.target_id) << c.name;
    EXPECT_EQ(p.error.code(), c.want_error) << c.name << ": " << p.error.ToString();
  }
}

TEST(DecideTest, CreateCarriesTheUidAsTagAndIdempotencyKey) {
  Plan p =
      Decide(Snap(LoadBalancerPtr({.ports = R"([{"port":80},{"port":53,"protocol":"UDP"}])"})));
  ASSERT_EQ(p.action, Action::kCreate);
  EXPECT_EQ(p.create.idempotency_key, "lb-uid-1");
  EXPECT_EQ(p.create.tags.at(kTagUid), "uid-1");
  EXPECT_EQ(p.create.tags.at(kTagObject), "default/web");
  EXPECT_EQ(p.create.tags.at(kTagManagedBy), kManagedByValue);
  EXPECT_EQ(p.create.name, "default-web");
  EXPECT_EQ(p.create.ports, (std::vector<Port>{{80, "TCP"}, {53, "UDP"}}));
}

TEST(DecideTest, StatusRecordsIdAddressGenerationAndReadiness) {
  Plan p = Decide(Snap(LoadBalancerPtr({.generation = 4}), {External("lb-1")}));
  ASSERT_EQ(p.action, Action::kUpdateStatus);
  EXPECT_EQ(p.status.external_id, "lb-1");
  EXPECT_EQ(p.status.address, "100.64.0.9");
  EXPECT_EQ(p.status.observed_generation, 4);
  const Condition* ready = FindCondition(p.status, "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, "True");
  EXPECT_EQ(ready->reason, kReasonAvailable);
  EXPECT_EQ(ready->last_transition_time, kNow);
  EXPECT_EQ(ready->observed_generation, 4);

  Plan provisioning = Decide(Snap(LoadBalancerPtr(), {External("lb-1", "provisioning")}));
  ASSERT_EQ(provisioning.action, Action::kUpdateStatus);
  EXPECT_EQ(FindCondition(provisioning.status, "Ready")->reason, kReasonProvisioning);
  EXPECT_EQ(FindCondition(provisioning.status, "Ready")->status, "False");
}

TEST(DecideTest, RequeuesWhileProvisioningAndResyncsWhenReady) {
  DecideOptions o{.provisioning_poll = std::chrono::milliseconds(250),
                  .resync = std::chrono::seconds(30)};
  EXPECT_EQ(
      Decide(Snap(LoadBalancerPtr({.status = kReadyStatus}), {External("lb-1")}), o).requeue_after,
      std::chrono::seconds(30));
  // Status already says Provisioning: nothing to write, look again soon.
  Snapshot s = Snap(LoadBalancerPtr(), {External("lb-1", "provisioning")});
  Plan write = Decide(s, o);
  api::Object with_status = *s.object;
  with_status.mutable_doc()["status"] = StatusToJson(write.status);
  s.object = std::make_shared<const api::Object>(with_status);
  Plan p = Decide(s, o);
  EXPECT_EQ(p.action, Action::kNothing);
  EXPECT_EQ(p.requeue_after, std::chrono::milliseconds(250));
}

TEST(DecideTest, CloudOutageKeepsTheLastKnownAddressAndTheTransitionTimeMovesOnlyOnFlips) {
  Plan p = Decide(
      Snap(LoadBalancerPtr({.status = kReadyStatus}), {}, util::DeadlineExceeded("timeout")));
  ASSERT_EQ(p.action, Action::kUpdateStatus);
  EXPECT_EQ(p.status.external_id, "lb-1");
  EXPECT_EQ(p.status.address, "100.64.0.9");
  const Condition* ready = FindCondition(p.status, "Ready");
  EXPECT_EQ(ready->status, "False");
  EXPECT_EQ(ready->reason, kReasonCloudUnavailable);
  EXPECT_EQ(ready->last_transition_time, kNow);  // True → False

  // Provisioning → Available is False → True; Provisioning → CloudUnavailable stays False.
  const char* provisioning = R"({"externalID":"lb-1","address":"100.64.0.9","observedGeneration":1,
    "conditions":[{"type":"Ready","status":"False","reason":"Provisioning","message":"m",
    "lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}]})";
  Plan still_false =
      Decide(Snap(LoadBalancerPtr({.status = provisioning}), {}, util::Unavailable("503")));
  EXPECT_EQ(FindCondition(still_false.status, "Ready")->last_transition_time,
            "2026-01-01T00:00:00Z");
}

TEST(NeedsReconcileTest, StatusOnlyUpdatesDoNotCount) {
  api::Object a = testing::LoadBalancerObject();
  api::Object status_only = a;
  status_only.set_resource_version("11");
  status_only.mutable_doc()["status"] = boost::json::parse(kReadyStatus);
  EXPECT_FALSE(NeedsReconcile(a, status_only));
  EXPECT_TRUE(NeedsReconcile(a, testing::LoadBalancerObject({.generation = 2})));
  EXPECT_TRUE(NeedsReconcile(a, testing::LoadBalancerObject({.deleting = true})));
  EXPECT_TRUE(NeedsReconcile(a, testing::LoadBalancerObject({.finalizer = false})));
}

TEST(ParseSpecTest, Table) {
  struct Case {
    const char* name;
    const char* ports;
    bool ok;
  };
  const Case cases[] = {
      {"one port", R"([{"port":80}])", true},
      {"tcp and udp on one number",
       R"([{"port":53,"protocol":"TCP"},{"port":53,"protocol":"UDP"}])", true},
      {"none", "[]", false},
      {"zero", R"([{"port":0}])", false},
      {"too large", R"([{"port":65536}])", false},
      {"bad protocol", R"([{"port":80,"protocol":"HTTP"}])", false},
      {"duplicate", R"([{"port":80},{"port":80,"protocol":"TCP"}])", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseSpec(testing::LoadBalancerObject({.ports = c.ports})).ok(), c.ok) << c.name;
  }
  api::Object reserved = testing::LoadBalancerObject();
  reserved.mutable_doc()["spec"].as_object()["tags"] =
      boost::json::object{{"lb.converge.io/uid", "forged"}};
  EXPECT_FALSE(ParseSpec(reserved).ok());
}

}  // namespace
}  // namespace lboperator
