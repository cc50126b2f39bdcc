#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controllers/job/decide.h"
#include "util/time_format.h"

namespace converge::controllers::job {
namespace {

namespace json = boost::json;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const util::Clock::WallTime kT0 = *util::ParseRfc3339("2024-05-01T10:00:00Z");

api::ObjectPtr MakeJob(json::object spec, json::object status = {}, bool deleting = false) {
  api::Object j;
  j.SetGvk({"batch", "v1", "Job"});
  j.set_name("job");
  j.set_namespace("ns");
  j.set_uid("job-uid");
  j.set_resource_version("5");
  if (!spec.contains("parallelism")) spec["parallelism"] = 1;
  if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
  if (!spec.contains("template")) {
    spec["template"] = json::parse(R"({"metadata":{"labels":{"app":"x"}},
        "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}})");
  }
  j.mutable_doc()["spec"] = std::move(spec);
  if (!status.empty()) j.mutable_doc()["status"] = std::move(status);
  if (deleting) j.mutable_metadata()["deletionTimestamp"] = "2024-05-01T09:00:00Z";
  return std::make_shared<const api::Object>(std::move(j));
}

struct PodSpec {
  std::string name;
  std::string phase = "Running";
  bool finalizer = true;
  bool ready = false;
  bool deleting = false;
  int index = -1;
  std::string finished_at;  // container finishedAt
  int restarts = 0;
};

PodInfo MakePod(const PodSpec& s) {
  api::Object p;
  p.SetGvk({"", "v1", "Pod"});
  p.set_name(s.name);
  p.set_namespace("ns");
  p.set_uid("uid-" + s.name);
  p.mutable_metadata()["creationTimestamp"] = "2024-05-01T09:00:00Z";
  if (s.finalizer) p.AddFinalizer(kTrackingFinalizer);
  if (s.deleting) p.mutable_metadata()["deletionTimestamp"] = "2024-05-01T09:59:00Z";
  if (s.index >= 0) p.SetAnnotation(kCompletionIndexAnnotation, std::to_string(s.index));
  json::object status{{"phase", s.phase}};
  status["conditions"] =
      json::array{json::object{{"type", "Ready"}, {"status", s.ready ? "True" : "False"}}};
  json::object cs{{"name", "c"}, {"restartCount", s.restarts}};
  if (!s.finished_at.empty()) {
    cs["state"] = json::object{{"terminated", json::object{{"finishedAt", s.finished_at}}}};
  }
  status["containerStatuses"] = json::array{cs};
  p.mutable_doc()["status"] = std::move(status);
  return ParsePod(std::make_shared<const api::Object>(std::move(p)));
}

JobSnapshot Snap(api::ObjectPtr job, std::vector<PodSpec> pods, util::Clock::WallTime now = kT0,
                 BackoffRecord backoff = {}) {
  JobSnapshot s;
  s.job = std::move(job);
  for (const PodSpec& p : pods) s.pods.push_back(MakePod(p));
  s.now = now;
  s.backoff = backoff;
  return s;
}

// ---- backoff ----

TEST(BackoffTest, RecordCountsFailuresSinceTheLastSuccess) {
  auto t = [](int s) { return kT0 + seconds(s); };
  struct Case {
    std::string name;
    BackoffRecord old;
    std::vector<util::Clock::WallTime> succeeded, failed;
    BackoffRecord want;
  };
  std::vector<Case> cases = {
      {"NothingNew", {2, t(5)}, {}, {}, {2, t(5)}},
      {"FailuresAdd", {1, t(5)}, {}, {t(20), t(10)}, {3, t(20)}},
      {"SuccessResets", {4, t(5)}, {t(30)}, {}, {0, std::nullopt}},
      {"OnlyFailuresAfterTheSuccessCount", {4, t(5)}, {t(30)}, {t(10), t(40), t(50)}, {2, t(50)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(NextBackoffRecord(c.old, c.succeeded, c.failed), c.want);
  }
}

TEST(BackoffTest, ExponentialFromTenSecondsCappedAtSixMinutes) {
  struct Case {
    int failures;
    int elapsed_s;
    int want_s;
  };
  // 10 s·2^(n-1): 10, 20, 40, 80, 160, 320, then the 360 s cap.
  std::vector<Case> cases = {{0, 0, 0},    {1, 0, 10},    {1, 4, 6},   {1, 10, 0},
                             {2, 0, 20},   {3, 0, 40},    {6, 0, 320}, {7, 0, 360},
                             {30, 0, 360}, {30, 300, 60}, {30, 400, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.failures) + " failures, " + std::to_string(c.elapsed_s) + " s");
    BackoffRecord r{c.failures, kT0};
    EXPECT_EQ(RemainingBackoff(r, kT0 + seconds(c.elapsed_s)), seconds(c.want_s));
  }
}

// ---- Decide ----

TEST(JobDecideTest, NewJobStartsUpToParallelismAndRemainingCompletions) {
  struct Case {
    std::string name;
    json::object spec;
    int32_t want_creates;
  };
  std::vector<Case> cases = {
      {"Default", {{"completions", 1}}, 1},
      {"ParallelismBounds", {{"completions", 5}, {"parallelism", 3}}, 3},
      {"CompletionsBound", {{"completions", 2}, {"parallelism", 4}}, 2},
      {"NoCompletionsUsesParallelism", {{"parallelism", 4}}, 4},
      {"ZeroParallelism", {{"completions", 3}, {"parallelism", 0}}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SyncDecision d = Decide(Snap(MakeJob(c.spec), {}));
    EXPECT_EQ(d.creates, c.want_creates);
    EXPECT_TRUE(d.set_start_time);
    EXPECT_FALSE(d.finished);
    EXPECT_THAT(d.deletes, IsEmpty());
  }
}

TEST(JobDecideTest, PodAccounting) {
  json::object status{
      {"succeeded", 2},
      {"failed", 1},
      {"startTime", "2024-05-01T09:00:00Z"},
      {"uncountedTerminatedPods", json::object{{"succeeded", json::array{"uid-s-uncounted"}}}}};
  SyncDecision d = Decide(Snap(MakeJob({{"completions", 10}, {"parallelism", 3}}, status),
                               {{.name = "run", .ready = true},
                                {.name = "pending", .phase = "Pending"},
                                {.name = "s-uncounted", .phase = "Succeeded"},
                                {.name = "s-new", .phase = "Succeeded"},
                                {.name = "s-old", .phase = "Succeeded", .finalizer = false},
                                {.name = "f-new", .phase = "Failed"},
                                {.name = "gone", .deleting = true}}));
  EXPECT_EQ(d.active, 2);
  EXPECT_EQ(d.ready, 1);
  EXPECT_EQ(d.terminating, 1);
  // status 2 + uncounted 1 + new 1 (the pod without finalizer was counted already).
  EXPECT_EQ(d.succeeded, 4);
  // status 1 + f-new + the deleted pod (deleted before finishing counts as failed).
  EXPECT_EQ(d.failed, 3);
  EXPECT_FALSE(d.set_start_time);
  EXPECT_EQ(d.creates, 1) << "3 wanted, 2 active";
  EXPECT_FALSE(d.finished);
}

TEST(JobDecideTest, PodFailureBackoffDelaysReplacements) {
  // One new failure that finished 4 s ago: the replacement waits 6 s more.
  SyncDecision d =
      Decide(Snap(MakeJob({{"completions", 1}}, {{"startTime", "2024-05-01T09:00:00Z"}}),
                  {{.name = "f", .phase = "Failed", .finished_at = "2024-05-01T09:59:56Z"}}));
  EXPECT_EQ(d.failed, 1);
  EXPECT_EQ(d.backoff.failures_after_last_success, 1);
  EXPECT_EQ(d.creates, 0);
  ASSERT_TRUE(d.requeue_after);
  EXPECT_EQ(*d.requeue_after, seconds(6));
  // Ten seconds after the failure: created.
  SyncDecision later = Decide(Snap(
      MakeJob({{"completions", 1}}, {{"startTime", "2024-05-01T09:00:00Z"}}),
      {{.name = "f", .phase = "Failed", .finished_at = "2024-05-01T09:59:56Z"}}, kT0 + seconds(6)));
  EXPECT_EQ(later.creates, 1);
}

TEST(JobDecideTest, BackoffLimitExceededFailsAndDeletesActivePods) {
  SyncDecision d =
      Decide(Snap(MakeJob({{"completions", 5}, {"parallelism", 2}, {"backoffLimit", 1}},
                          {{"failed", 1}, {"startTime", "2024-05-01T09:00:00Z"}}),
                  {{.name = "f", .phase = "Failed"}, {.name = "run", .ready = true}}));
  ASSERT_TRUE(d.finished);
  EXPECT_EQ(d.finished->type, "FailureTarget");
  EXPECT_EQ(d.finished->reason, "BackoffLimitExceeded");
  EXPECT_EQ(d.finished->message, "Job has reached the specified backoff limit");
  EXPECT_THAT(d.deletes, ElementsAre("run"));
  EXPECT_FALSE(d.remove_finalizer_before_delete) << "counted first, then released";
  EXPECT_EQ(d.creates, 0);
}

TEST(JobDecideTest, OnFailureRestartsCountTowardsTheBackoffLimit) {
  json::object spec{{"completions", 1}, {"backoffLimit", 2}};
  spec["template"] = json::parse(R"({"spec":{"restartPolicy":"OnFailure",
      "containers":[{"name":"c","image":"x"}]}})");
  SyncDecision d = Decide(Snap(MakeJob(spec), {{.name = "p", .restarts = 2}}));
  ASSERT_TRUE(d.finished);
  EXPECT_EQ(d.finished->reason, "BackoffLimitExceeded");
}

TEST(JobDecideTest, ActiveDeadline) {
  json::object status{{"startTime", "2024-05-01T09:59:00Z"}};
  SyncDecision before = Decide(
      Snap(MakeJob({{"completions", 1}, {"activeDeadlineSeconds", 100}}, status), {{.name = "p"}}));
  EXPECT_FALSE(before.finished);
  ASSERT_TRUE(before.requeue_after);
  EXPECT_EQ(*before.requeue_after, seconds(40)) << "re-checked when the deadline passes";
  SyncDecision after = Decide(
      Snap(MakeJob({{"completions", 1}, {"activeDeadlineSeconds", 60}}, status), {{.name = "p"}}));
  ASSERT_TRUE(after.finished);
  EXPECT_EQ(after.finished->reason, "DeadlineExceeded");
  EXPECT_EQ(after.finished->message, "Job was active longer than specified deadline");
  EXPECT_THAT(after.deletes, ElementsAre("p"));
}

TEST(JobDecideTest, SuspendDeletesActivePodsAndDoesNotStartTheClock) {
  SyncDecision d = Decide(Snap(MakeJob({{"completions", 3}, {"parallelism", 2}, {"suspend", true}}),
                               {{.name = "a"}, {.name = "b", .phase = "Succeeded"}}));
  EXPECT_THAT(d.deletes, ElementsAre("a"));
  EXPECT_TRUE(d.remove_finalizer_before_delete);
  EXPECT_FALSE(d.set_start_time);
  EXPECT_EQ(d.creates, 0);
}

TEST(JobDecideTest, ExcessPodsGoLeastAdvancedFirst) {
  SyncDecision d = Decide(Snap(
      MakeJob({{"completions", 10}, {"parallelism", 1}}, {{"startTime", "2024-05-01T09:00:00Z"}}),
      {{.name = "ready", .ready = true}, {.name = "pending", .phase = "Pending"}}));
  EXPECT_THAT(d.deletes, ElementsAre("pending"));
  EXPECT_EQ(d.creates, 0) << "deletion takes the sync";
}

TEST(JobDecideTest, IndexedCreatesTheLowestPendingIndexes) {
  json::object status{
      {"completedIndexes", "0,2"}, {"succeeded", 2}, {"startTime", "2024-05-01T09:00:00Z"}};
  SyncDecision d = Decide(
      Snap(MakeJob({{"completions", 6}, {"parallelism", 3}, {"completionMode", "Indexed"}}, status),
           {{.name = "i1", .index = 1}, {.name = "i4", .phase = "Succeeded", .index = 4}}));
  EXPECT_EQ(d.succeeded, 3) << "0, 2 and the newly succeeded 4";
  EXPECT_EQ(d.succeeded_indexes.ToString(), "0,2,4");
  EXPECT_THAT(d.create_indexes, ElementsAre(3, 5)) << "1 is active; 3 wanted at most";
  EXPECT_EQ(d.creates, 2);
}

TEST(JobDecideTest, IndexedRemovesInvalidAndDuplicateIndexes) {
  SyncDecision d =
      Decide(Snap(MakeJob({{"completions", 3}, {"parallelism", 3}, {"completionMode", "Indexed"}},
                          {{"startTime", "2024-05-01T09:00:00Z"}}),
                  {{.name = "dup-a", .ready = true, .index = 0},
                   {.name = "dup-b", .index = 0},
                   {.name = "none"},
                   {.name = "too-big", .index = 7},
                   {.name = "one", .index = 1}}));
  EXPECT_THAT(d.deletes, ::testing::UnorderedElementsAre("none", "too-big", "dup-b"));
}

// ---- TrackStatus / FinishStatus ----

TEST(JobStatusTest, CompletionGoesThroughSuccessCriteriaMetToComplete) {
  auto job = MakeJob({{"completions", 2}, {"parallelism", 2}},
                     {{"startTime", "2024-05-01T09:00:00Z"}, {"active", 2}});
  JobSnapshot snap =
      Snap(job, {{.name = "a", .phase = "Succeeded"}, {.name = "b", .phase = "Succeeded"}});
  SyncDecision d = Decide(snap);
  EXPECT_EQ(d.creates, 0);
  StatusPlan plan = TrackStatus(snap, d, {});
  EXPECT_TRUE(plan.needs_write);
  EXPECT_THAT(plan.remove_finalizers, ElementsAre("a", "b"));
  EXPECT_EQ(json::serialize(plan.status.at("uncountedTerminatedPods")),
            R"({"succeeded":["uid-a","uid-b"]})");
  const json::array& conds = plan.status.at("conditions").as_array();
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0].at("type"), "SuccessCriteriaMet");
  EXPECT_EQ(conds[0].at("reason"), "CompletionsReached");
  EXPECT_EQ(conds[0].at("message"), "Reached expected number of succeeded pods");
  ASSERT_TRUE(plan.final_condition);
  EXPECT_EQ(plan.final_condition->type, "Complete");
  EXPECT_FALSE(plan.status.contains("active")) << "zero counters are omitted";

  // One finalizer removal failed: not complete yet; the other pod is counted.
  FinishResult partial = FinishStatus(plan, {"uid-b"}, d.spec, "2024-05-01T10:00:01Z");
  EXPECT_FALSE(partial.finished);
  EXPECT_EQ(partial.status.at("succeeded"), 1);
  // All removed: counted and complete.
  FinishResult done = FinishStatus(plan, {}, d.spec, "2024-05-01T10:00:01Z");
  EXPECT_TRUE(done.finished);
  EXPECT_EQ(done.status.at("succeeded"), 2);
  EXPECT_EQ(json::serialize(done.status.at("uncountedTerminatedPods")), "{}");
  EXPECT_EQ(done.status.at("completionTime"), "2024-05-01T10:00:01Z");
  const json::array& final_conds = done.status.at("conditions").as_array();
  ASSERT_EQ(final_conds.size(), 2u);
  EXPECT_EQ(final_conds[1].at("type"), "Complete");
  EXPECT_EQ(final_conds[1].at("status"), "True");
  EXPECT_EQ(final_conds[1].at("reason"), "CompletionsReached");
  EXPECT_THAT(done.events, ElementsAre(Event{"Normal", "Completed", "Job completed"}));
}

TEST(JobStatusTest, FailureGoesThroughFailureTargetToFailedOnceNothingTerminates) {
  auto job =
      MakeJob({{"completions", 2}, {"backoffLimit", 0}}, {{"startTime", "2024-05-01T09:00:00Z"}});
  JobSnapshot snap = Snap(job, {{.name = "f", .phase = "Failed"}, {.name = "run"}});
  SyncDecision d = Decide(snap);
  ASSERT_TRUE(d.finished);
  StatusPlan plan = TrackStatus(snap, d, {.deleted = 1});
  EXPECT_EQ(plan.status.at("terminating"), 1) << "the deleted pod is still terminating";
  EXPECT_THAT(plan.remove_finalizers, ElementsAre("f", "run"));
  EXPECT_EQ(json::serialize(plan.status.at("uncountedTerminatedPods")),
            R"({"failed":["uid-f","uid-run"]})")
      << "every unfinished pod of a failed Job counts as failed";
  FinishResult fin = FinishStatus(plan, {}, d.spec, "2024-05-01T10:00:01Z");
  EXPECT_FALSE(fin.finished) << "waits for the terminating pod";
  EXPECT_EQ(fin.status.at("failed"), 2);

  // Next sync: the FailureTarget is there, the pods are gone.
  api::Object next = *job;
  next.mutable_doc()["status"] = fin.status;
  JobSnapshot snap2 = Snap(std::make_shared<const api::Object>(next), {});
  SyncDecision d2 = Decide(snap2);
  ASSERT_TRUE(d2.finished);
  EXPECT_EQ(d2.finished->type, "Failed");
  StatusPlan plan2 = TrackStatus(snap2, d2, {});
  FinishResult fin2 = FinishStatus(plan2, {}, d2.spec, "2024-05-01T10:00:02Z");
  EXPECT_TRUE(fin2.finished);
  const json::array& conds = fin2.status.at("conditions").as_array();
  ASSERT_EQ(conds.size(), 2u);
  EXPECT_EQ(conds[0].at("type"), "FailureTarget");
  EXPECT_EQ(conds[1].at("type"), "Failed");
  EXPECT_EQ(conds[1].at("reason"), "BackoffLimitExceeded");
  EXPECT_FALSE(fin2.status.contains("completionTime"));
  EXPECT_THAT(fin2.events, ElementsAre(Event{"Warning", "BackoffLimitExceeded",
                                             "Job has reached the specified backoff limit"}));
}

TEST(JobStatusTest, SuspendAndResume) {
  auto suspended = MakeJob({{"completions", 1}, {"suspend", true}},
                           {{"startTime", "2024-05-01T09:00:00Z"}, {"active", 1}});
  JobSnapshot snap = Snap(suspended, {{.name = "p"}});
  SyncDecision d = Decide(snap);
  StatusPlan plan = TrackStatus(snap, d, {.deleted = 1});
  EXPECT_THAT(plan.events, ElementsAre(Event{"Normal", "Suspended", "Job suspended"}));
  const json::array& conds = plan.status.at("conditions").as_array();
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0].at("reason"), "JobSuspended");
  EXPECT_FALSE(plan.status.contains("active"));

  api::Object resumed = *suspended;
  resumed.mutable_doc()["spec"].as_object()["suspend"] = false;
  resumed.mutable_doc()["status"] = plan.status;
  JobSnapshot snap2 = Snap(std::make_shared<const api::Object>(resumed), {}, kT0 + seconds(60));
  SyncDecision d2 = Decide(snap2);
  EXPECT_EQ(d2.creates, 1);
  StatusPlan plan2 = TrackStatus(snap2, d2, {.created = 1});
  EXPECT_THAT(plan2.events, ElementsAre(Event{"Normal", "Resumed", "Job resumed"}));
  EXPECT_EQ(plan2.status.at("startTime"), "2024-05-01T10:01:00Z") << "the clock restarts";
  EXPECT_EQ(plan2.status.at("conditions").as_array()[0].at("status"), "False");
  EXPECT_EQ(plan2.status.at("active"), 1);
}

TEST(JobStatusTest, NothingChangedWritesNothing) {
  auto job = MakeJob({{"completions", 1}}, {{"startTime", "2024-05-01T09:00:00Z"},
                                            {"active", 1},
                                            {"ready", 0},
                                            {"terminating", 0},
                                            {"uncountedTerminatedPods", json::object{}}});
  JobSnapshot snap = Snap(job, {{.name = "p"}});
  SyncDecision d = Decide(snap);
  StatusPlan plan = TrackStatus(snap, d, {});
  EXPECT_FALSE(plan.needs_write);
  EXPECT_FALSE(FinishStatus(plan, {"uid-p"}, d.spec, "x").changed);
}

TEST(JobStatusTest, IndexedCountsByCompletedIndexes) {
  auto job =
      MakeJob({{"completions", 3}, {"parallelism", 3}, {"completionMode", "Indexed"}},
              {{"startTime", "2024-05-01T09:00:00Z"}, {"completedIndexes", "1"}, {"succeeded", 1}});
  JobSnapshot snap = Snap(job, {{.name = "p0", .phase = "Succeeded", .index = 0},
                                {.name = "p2", .phase = "Succeeded", .index = 2}});
  SyncDecision d = Decide(snap);
  StatusPlan plan = TrackStatus(snap, d, {});
  EXPECT_EQ(plan.status.at("completedIndexes"), "0-2");
  EXPECT_EQ(plan.status.at("succeeded"), 3);
  ASSERT_TRUE(plan.final_condition);
  FinishResult fin = FinishStatus(plan, {}, d.spec, "2024-05-01T10:00:00Z");
  EXPECT_TRUE(fin.finished);
  EXPECT_EQ(fin.status.at("succeeded"), 3);
}

TEST(OrderedIntervalsTest, ParseMergeAndFormat) {
  EXPECT_EQ(OrderedIntervals::Parse("1,3-5,7", 10).ToString(), "1,3-5,7");
  EXPECT_EQ(OrderedIntervals::Parse("1,2,3", 10).ToString(), "1-3");
  EXPECT_EQ(OrderedIntervals::Parse("0,x,8-12", 10).ToString(), "0,8,9") << "clipped and skipped";
  OrderedIntervals oi = OrderedIntervals::Parse("1,3-5", 10).WithOrderedIndexes({0, 2, 9});
  EXPECT_EQ(oi.ToString(), "0-5,9");
  EXPECT_EQ(oi.Total(), 7);
  EXPECT_TRUE(oi.Has(4));
  EXPECT_FALSE(oi.Has(6));
}

TEST(PodFromTemplateTest, IndexedPodsCarryTheirIndex) {
  api::Object pod =
      PodFromTemplate(*MakeJob({{"completions", 3}, {"completionMode", "Indexed"}}), 2);
  EXPECT_EQ(api::FindString(pod.doc(), {"metadata", "generateName"}), "job-2-");
  EXPECT_EQ(pod.annotation(kCompletionIndexAnnotation), "2");
  EXPECT_EQ(pod.label(kCompletionIndexLabel), "2");
  EXPECT_EQ(pod.label("app"), "x");
  EXPECT_EQ(api::FindString(pod.doc(), {"spec", "hostname"}), "job-2");
  EXPECT_TRUE(pod.HasFinalizer(kTrackingFinalizer));
  EXPECT_EQ(json::serialize(*api::Find(pod.doc(), {"spec", "containers"})),
            R"([{"name":"c","image":"busybox","env":[{"name":"JOB_COMPLETION_INDEX",)"
            R"("valueFrom":{"fieldRef":{"fieldPath":)"
            R"("metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]}])");
  const json::object& ref = pod.doc().at("metadata").at("ownerReferences").at(0).as_object();
  EXPECT_EQ(ref.at("kind"), "Job");
  EXPECT_EQ(ref.at("uid"), "job-uid");
  EXPECT_EQ(ref.at("controller"), true);
  EXPECT_EQ(ref.at("blockOwnerDeletion"), true);

  api::Object plain = PodFromTemplate(*MakeJob({{"completions", 1}}), -1);
  EXPECT_EQ(api::FindString(plain.doc(), {"metadata", "generateName"}), "job-");
  EXPECT_FALSE(plain.annotation(kCompletionIndexAnnotation));
  EXPECT_EQ(api::Find(plain.doc(), {"spec", "hostname"}), nullptr);
}

}  // namespace
}  // namespace converge::controllers::job
