#include "controllers/namespace/deletion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/time_format.h"

namespace converge::controllers::namespace_ {
namespace {

namespace json = boost::json;
using std::chrono::seconds;

api::Object Ns(bool deleting, std::string phase, std::vector<std::string> finalizers) {
  api::Object ns;
  ns.SetGvk({"", "v1", "Namespace"});
  ns.set_name("team");
  if (deleting) ns.mutable_metadata()["deletionTimestamp"] = "2024-05-01T10:00:00Z";
  json::array fin;
  for (const auto& f : finalizers) fin.push_back(json::value(f));
  ns.mutable_doc()["spec"] = json::object{{"finalizers", fin}};
  ns.mutable_doc()["status"] = json::object{{"phase", phase}};
  return ns;
}

TEST(NamespaceDeletionTest, Steps) {
  EXPECT_EQ(DecideStep(Ns(false, "Active", {"kubernetes"})), NamespaceStep::kIgnore);
  EXPECT_EQ(DecideStep(Ns(true, "Active", {"kubernetes"})), NamespaceStep::kSetTerminating);
  EXPECT_EQ(DecideStep(Ns(true, "Terminating", {"kubernetes"})), NamespaceStep::kDeleteContent);
  EXPECT_EQ(DecideStep(Ns(true, "Terminating", {})), NamespaceStep::kFinalized);
}

api::Object Pod(std::string phase, std::optional<int64_t> grace,
                std::vector<std::string> finalizers = {}) {
  api::Object p;
  p.set_name("p");
  json::object spec;
  if (grace) spec["terminationGracePeriodSeconds"] = *grace;
  p.mutable_doc()["spec"] = std::move(spec);
  p.mutable_doc()["status"] = json::object{{"phase", phase}};
  for (const auto& f : finalizers) p.AddFinalizer(f);
  return p;
}

PodTerminationEstimate EstimateOf(const std::vector<api::Object>& pods) {
  PodTerminationEstimate estimate;
  for (const api::Object& pod : pods) estimate.Add(pod);
  return estimate;
}

RemainingContent RemainingOf(const std::vector<api::Object>& items) {
  RemainingContent remaining;
  for (const api::Object& item : items) remaining.Add(item);
  return remaining;
}

TEST(NamespaceDeletionTest, PodTerminationEstimate) {
  const auto deleted = *util::ParseRfc3339("2024-05-01T10:00:00Z");
  PodTerminationEstimate pods = EstimateOf(
      {Pod("Running", 30), Pod("Pending", 5), Pod("Succeeded", 600), Pod("Running", std::nullopt)});
  EXPECT_EQ(pods.Seconds(deleted, deleted + seconds(10)), 30)
      << "the longest grace period of a pod still running";
  EXPECT_EQ(pods.Seconds(deleted, deleted + seconds(30)), 0) << "that much time has passed already";
  EXPECT_EQ(EstimateOf({Pod("Failed", 99)}).Seconds(deleted, deleted), 0);
}

TEST(NamespaceDeletionTest, RemainingContent) {
  api::GroupVersionResource cms{"", "v1", "configmaps"};
  ResourceResult none = SummarizeRemaining(cms, "team", RemainingOf({}), 0);
  EXPECT_EQ(none.num_remaining, 0);
  EXPECT_EQ(none.estimate_seconds, 0);
  EXPECT_TRUE(none.error.empty());

  ResourceResult held = SummarizeRemaining(
      cms, "team",
      RemainingOf({Pod("", std::nullopt, {"example.com/hold", "x"}), Pod("", std::nullopt, {"x"})}),
      0);
  EXPECT_EQ(held.num_remaining, 2);
  EXPECT_EQ(held.estimate_seconds, 15) << "finalizers get the finalizer estimate";
  EXPECT_EQ(held.finalizers_remaining,
            (std::map<std::string, int>{{"example.com/hold", 1}, {"x", 2}}));
  EXPECT_TRUE(held.error.empty());

  ResourceResult graceful =
      SummarizeRemaining({"", "v1", "pods"}, "team", RemainingOf({Pod("Running", 30)}), 30);
  EXPECT_EQ(graceful.estimate_seconds, 30);
  EXPECT_TRUE(graceful.error.empty());

  ResourceResult stuck = SummarizeRemaining({"apps", "v1", "deployments"}, "team",
                                            RemainingOf({Pod("", std::nullopt)}), 0);
  EXPECT_EQ(stuck.error,
            "unexpected items still remain in namespace: team for gvr: {apps v1 deployments}");
  EXPECT_EQ(stuck.num_remaining, 1);
}

TEST(NamespaceDeletionTest, SummarizeBuildsUpstreamsConditions) {
  ContentReport report;
  report.discovery_error = "unable to retrieve the complete list of server APIs: x/v1: boom";
  ResourceResult cms{{"", "v1", "configmaps"}, 15, 2, {{"example.com/hold", 2}}, ""};
  ResourceResult deps{{"apps", "v1", "deployments"}, 0, 1, {}, "unexpected items ..."};
  ResourceResult pods{{"", "v1", "pods"}, 30, 1, {{"a", 1}, {"example.com/hold", 1}}, ""};
  report.resources = {cms, deps, pods};
  ContentOutcome out = Summarize(report);
  EXPECT_EQ(out.estimate_seconds, 30);
  EXPECT_EQ(out.errors.size(), 2u);
  std::map<std::string, NamespaceCondition> by_type;
  for (const auto& c : out.failing) by_type[c.type] = c;
  ASSERT_EQ(by_type.size(), 4u);
  EXPECT_EQ(by_type["NamespaceDeletionDiscoveryFailure"].reason, "DiscoveryFailed");
  EXPECT_EQ(by_type["NamespaceContentRemaining"].reason, "SomeResourcesRemain");
  EXPECT_EQ(by_type["NamespaceContentRemaining"].message,
            "Some resources are remaining: configmaps. has 2 resource instances, "
            "deployments.apps has 1 resource instances, pods. has 1 resource instances");
  EXPECT_EQ(by_type["NamespaceFinalizersRemaining"].reason, "SomeFinalizersRemain");
  EXPECT_EQ(by_type["NamespaceFinalizersRemaining"].message,
            "Some content in the namespace has finalizers remaining: a in 1 resource instances, "
            "example.com/hold in 3 resource instances");
  EXPECT_EQ(by_type["NamespaceDeletionContentFailure"].reason, "ContentDeletionFailed");
  EXPECT_EQ(by_type["NamespaceDeletionContentFailure"].message,
            "Failed to delete all resource types, 1 remaining: unexpected items ...");
  EXPECT_EQ(by_type["NamespaceDeletionContentFailure"].status, "True");
}

TEST(NamespaceDeletionTest, UpdateConditionsSetsAllFiveAndFlipsTransitionTimesOnlyOnStatus) {
  json::object status{{"phase", "Terminating"}};
  EXPECT_TRUE(UpdateConditions(status, {}, "T1"));
  const json::array& c = status.at("conditions").as_array();
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(json::serialize(c[0]),
            R"({"type":"NamespaceDeletionDiscoveryFailure","status":"False",)"
            R"("lastTransitionTime":"T1","reason":"ResourcesDiscovered",)"
            R"("message":"All resources successfully discovered"})");
  EXPECT_EQ(c[1].at("reason"), "ParsedGroupVersions");
  EXPECT_EQ(c[2].at("message"), "All content successfully deleted, may be waiting on finalization");
  EXPECT_EQ(c[3].at("reason"), "ContentRemoved");
  EXPECT_EQ(c[4].at("reason"), "ContentHasNoFinalizers");
  EXPECT_FALSE(UpdateConditions(status, {}, "T2")) << "nothing changed: no write";

  NamespaceCondition remaining{"NamespaceContentRemaining", "True", "SomeResourcesRemain", "m1"};
  EXPECT_TRUE(UpdateConditions(status, {remaining}, "T3"));
  EXPECT_EQ(status.at("conditions").as_array()[3].at("lastTransitionTime"), "T3");
  remaining.message = "m2";
  EXPECT_TRUE(UpdateConditions(status, {remaining}, "T4"));
  EXPECT_EQ(status.at("conditions").as_array()[3].at("message"), "m2");
  EXPECT_EQ(status.at("conditions").as_array()[3].at("lastTransitionTime"), "T3")
      << "same status: the transition time stays";
  EXPECT_TRUE(UpdateConditions(status, {}, "T5"));
  EXPECT_EQ(status.at("conditions").as_array()[3].at("status"), "False");
  EXPECT_EQ(status.at("conditions").as_array()[3].at("lastTransitionTime"), "T5");
}

TEST(NamespaceDeletionTest, FinalizeRequestRemovesOnlyOurToken) {
  api::Object ns = Ns(true, "Terminating", {"z.example.com/x", "kubernetes", "a.example.com/y"});
  api::Object req = FinalizeRequest(ns, "kubernetes");
  EXPECT_EQ(json::serialize(*api::Find(req.doc(), {"spec", "finalizers"})),
            R"(["a.example.com/y","z.example.com/x"])");
  EXPECT_EQ(req.name(), "team");
}

}  // namespace
}  // namespace converge::controllers::namespace_
