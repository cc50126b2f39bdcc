// The Job controller's whole sync against an in-memory API, the test acting as the kubelet (it
// sets pod phases). Covers completion, failure with backoff, the deadline, suspend/resume,
// Indexed Jobs and the release of orphaned pods' tracking finalizers.
#include "controllers/job/job_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "api/labels.h"
#include "client/api_errors.h"
#include "util/time_format.h"

namespace converge::controllers::job {
namespace {

namespace json = boost::json;
using std::chrono::seconds;
using ::testing::Contains;
using ::testing::ElementsAre;

class FakeJobClient final : public JobClient {
 public:
  explicit FakeJobClient(util::Clock* clock) : clock_(clock) {}

  std::map<api::ObjectKey, api::Object> jobs;
  std::map<api::ObjectKey, api::Object> pods;
  int status_writes = 0;
  int pod_creates = 0;
  bool fail_creates = false;

  util::StatusOr<api::Object> GetJob(const api::ObjectKey& key) override {
    auto it = jobs.find(key);
    if (it == jobs.end()) return util::NotFound("jobs.batch \"" + key.name + "\" not found");
    return it->second;
  }
  util::StatusOr<std::vector<api::Object>> ListPods(const std::string& ns,
                                                    const std::string& selector) override {
    auto sel = api::LabelSelector::Parse(selector);
    std::vector<api::Object> out;
    for (const auto& [key, pod] : pods) {
      if (key.ns == ns && sel->Matches(pod.labels())) out.push_back(pod);
    }
    return out;
  }
  util::StatusOr<api::Object> CreatePod(const std::string& ns, const api::Object& pod) override {
    if (fail_creates) return util::Internal("quota exceeded");
    api::Object p = pod;
    p.set_name(std::string(api::FindString(pod.doc(), {"metadata", "generateName"})) +
               std::to_string(++pod_creates));
    p.set_namespace(ns);
    p.set_uid("uid-" + std::string(p.name()));
    p.mutable_metadata()["creationTimestamp"] = util::FormatRfc3339(clock_->WallNow());
    p.mutable_doc()["status"] = json::object{{"phase", "Pending"}};
    pods[p.key()] = p;
    return p;
  }
  util::Status DeletePod(const api::ObjectKey& key) override {
    auto it = pods.find(key);
    if (it == pods.end()) return util::NotFound("pods \"" + key.name + "\" not found");
    if (it->second.finalizers() != nullptr && !it->second.finalizers()->empty()) {
      it->second.mutable_metadata()["deletionTimestamp"] = util::FormatRfc3339(clock_->WallNow());
    } else {
      pods.erase(it);
    }
    return util::Status();
  }
  util::Status RemovePodFinalizer(const api::ObjectKey& key, std::string_view f) override {
    auto it = pods.find(key);
    if (it == pods.end()) return util::NotFound("pods \"" + key.name + "\" not found");
    it->second.RemoveFinalizer(f);
    if (it->second.being_deleted() &&
        (it->second.finalizers() == nullptr || it->second.finalizers()->empty())) {
      pods.erase(it);
    }
    return util::Status();
  }
  util::StatusOr<api::Object> UpdateJobStatus(const api::Object& job) override {
    api::Object& stored = jobs.at(job.key());
    if (stored.resource_version() != job.resource_version()) {
      return util::Aborted("the object has been modified").WithReason("Conflict");
    }
    ++status_writes;
    stored.mutable_doc()["status"] = *api::Find(job.doc(), {"status"});
    stored.set_resource_version(
        std::to_string(std::stoi(std::string(stored.resource_version())) + 1));
    return stored;
  }

  // The kubelet's part.
  void Finish(const api::ObjectKey& key, std::string phase) {
    json::object& st = pods.at(key).mutable_doc()["status"].as_object();
    st["phase"] = phase;
    st["containerStatuses"] = json::array{json::object{
        {"name", "c"},
        {"state",
         json::object{{"terminated",
                       json::object{{"finishedAt", util::FormatRfc3339(clock_->WallNow())}}}}}}};
  }
  std::vector<api::ObjectKey> Keys() const {
    std::vector<api::ObjectKey> out;
    for (const auto& [k, p] : pods) out.push_back(k);
    return out;
  }
  // Pods the kubelet has not finished.
  std::vector<api::ObjectKey> Pending() const {
    std::vector<api::ObjectKey> out;
    for (const auto& [k, p] : pods) {
      if (api::FindString(p.doc(), {"status", "phase"}) == "Pending") out.push_back(k);
    }
    return out;
  }

 private:
  util::Clock* clock_;
};

class RecordingSink final : public client::EventSink {
 public:
  util::StatusOr<api::Object> Create(const api::Object& event) override {
    std::lock_guard lock(mu_);
    reasons_.push_back(std::string(api::FindString(event.doc(), {"reason"})));
    return event;
  }
  util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view) override {
    return event;
  }
  std::vector<std::string> reasons() {
    std::lock_guard lock(mu_);
    return reasons_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> reasons_;
};

class JobSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client::EventRecorderOptions ro;
    ro.source.component = "job-controller";
    ro.sink = &sink_;
    ro.clock = &clock_;
    recorder_ = std::make_unique<client::EventRecorder>(ro);
    controller_ = std::make_unique<JobController>(JobControllerOptions{.client = &fake_,
                                                                       .recorder = recorder_.get(),
                                                                       .clock = &clock_,
                                                                       .metrics = &registry_,
                                                                       .queue_name = ""});
  }

  api::ObjectKey CreateJob(json::object spec) {
    api::Object j;
    j.SetGvk({"batch", "v1", "Job"});
    j.set_name("work");
    j.set_namespace("ns");
    j.set_uid("job-uid");
    j.set_resource_version("1");
    if (!spec.contains("parallelism")) spec["parallelism"] = 1;
    if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
    spec["selector"] = json::object{
        {"matchLabels", json::object{{"batch.kubernetes.io/controller-uid", "job-uid"}}}};
    spec["template"] = json::parse(R"({"metadata":{"labels":{
        "batch.kubernetes.io/controller-uid":"job-uid","batch.kubernetes.io/job-name":"work"}},
        "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}})");
    j.mutable_doc()["spec"] = std::move(spec);
    fake_.jobs[j.key()] = j;
    return j.key();
  }

  client::ReconcileResult Sync() { return controller_->Sync({"ns", "work"}); }
  const json::object& Status() {
    return fake_.jobs.at({"ns", "work"}).doc().at("status").as_object();
  }
  std::vector<std::string> ConditionTypes() {
    std::vector<std::string> out;
    if (const json::array* c = api::FindArray(Status(), {"conditions"})) {
      for (const json::value& v : *c) out.push_back(std::string(v.at("type").as_string()));
    }
    return out;
  }
  std::vector<std::string> Events() {
    recorder_->Flush();
    return sink_.reasons();
  }

  util::FakeClock clock_;
  util::Registry registry_;
  FakeJobClient fake_{&clock_};
  RecordingSink sink_;
  std::unique_ptr<client::EventRecorder> recorder_;
  std::unique_ptr<JobController> controller_;
};

TEST_F(JobSyncTest, CompletesAfterTheWantedSuccesses) {
  CreateJob({{"completions", 3}, {"parallelism", 2}});
  ASSERT_TRUE(Sync().error.ok());
  ASSERT_EQ(fake_.pods.size(), 2u);
  for (const auto& [k, p] : fake_.pods) {
    EXPECT_TRUE(p.HasFinalizer(kTrackingFinalizer));
    ASSERT_EQ(p.owner_references().size(), 1u);
    EXPECT_EQ(api::GetString(p.owner_references()[0].if_object(), "uid"), "job-uid");
  }
  EXPECT_EQ(Status().at("active"), 2);
  EXPECT_TRUE(Status().contains("startTime"));
  int writes = fake_.status_writes;
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(fake_.status_writes, writes) << "nothing changed, nothing written";
  EXPECT_EQ(fake_.pods.size(), 2u) << "live reads: no over-creation";

  for (const auto& k : fake_.Keys()) fake_.Finish(k, "Succeeded");
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(Status().at("succeeded"), 2);
  EXPECT_EQ(fake_.pods.size(), 3u) << "one more for the third completion";
  for (const auto& [k, p] : fake_.pods) {
    if (api::FindString(p.doc(), {"status", "phase"}) == "Succeeded") {
      EXPECT_FALSE(p.HasFinalizer(kTrackingFinalizer)) << "counted, released";
    }
  }
  for (const auto& k : fake_.Pending()) fake_.Finish(k, "Succeeded");
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(Status().at("succeeded"), 3);
  EXPECT_THAT(ConditionTypes(), ElementsAre("SuccessCriteriaMet", "Complete"));
  EXPECT_TRUE(Status().contains("completionTime"));
  EXPECT_FALSE(Status().contains("active"));
  EXPECT_THAT(Events(), Contains("Completed"));
  EXPECT_THAT(Events(), Contains("SuccessfulCreate"));
  // Finished: later syncs change nothing.
  writes = fake_.status_writes;
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(fake_.status_writes, writes);
}

TEST_F(JobSyncTest, FailsAfterTheBackoffLimitWithExponentialPodBackoff) {
  CreateJob({{"completions", 1}, {"backoffLimit", 2}});
  ASSERT_TRUE(Sync().error.ok());
  std::vector<util::Clock::Duration> delays;
  for (int failure = 1; failure <= 2; ++failure) {
    ASSERT_EQ(fake_.Pending().size(), 1u);
    fake_.Finish(fake_.Pending()[0], "Failed");
    client::ReconcileResult r = Sync();
    ASSERT_TRUE(r.error.ok()) << r.error.ToString();
    EXPECT_EQ(Status().at("failed"), failure);
    EXPECT_TRUE(fake_.Pending().empty()) << "no replacement during the backoff";
    delays.push_back(r.requeue_after);
    clock_.Step(r.requeue_after);
    ASSERT_TRUE(Sync().error.ok());
  }
  EXPECT_THAT(delays, ElementsAre(seconds(10), seconds(20)));
  ASSERT_EQ(fake_.Pending().size(), 1u);
  fake_.Finish(fake_.Pending()[0], "Failed");
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(Status().at("failed"), 3);
  EXPECT_THAT(ConditionTypes(), ElementsAre("FailureTarget", "Failed"));
  const json::object& failed = Status().at("conditions").as_array()[1].as_object();
  EXPECT_EQ(failed.at("reason"), "BackoffLimitExceeded");
  EXPECT_EQ(failed.at("message"), "Job has reached the specified backoff limit");
  EXPECT_FALSE(Status().contains("completionTime"));
  EXPECT_THAT(Events(), Contains("BackoffLimitExceeded"));
}

TEST_F(JobSyncTest, DeadlineExceededDeletesRunningPods) {
  CreateJob({{"completions", 2}, {"parallelism", 2}, {"activeDeadlineSeconds", 30}});
  client::ReconcileResult r = Sync();
  EXPECT_EQ(r.requeue_after, seconds(30));
  ASSERT_EQ(fake_.pods.size(), 2u);
  clock_.Step(seconds(30));
  ASSERT_TRUE(Sync().error.ok());
  // Deleted; they keep the tracking finalizer until counted, so the Job waits for them.
  EXPECT_THAT(ConditionTypes(), ElementsAre("FailureTarget"));
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_TRUE(fake_.pods.empty());
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_THAT(ConditionTypes(), ElementsAre("FailureTarget", "Failed"));
  EXPECT_EQ(Status().at("conditions").as_array()[1].at("reason"), "DeadlineExceeded");
  EXPECT_EQ(Status().at("failed"), 2);
}

TEST_F(JobSyncTest, SuspendDeletesPodsAndResumeRestartsTheClock) {
  api::ObjectKey key = CreateJob({{"completions", 1}});
  ASSERT_TRUE(Sync().error.ok());
  ASSERT_EQ(fake_.pods.size(), 1u);
  std::string started(Status().at("startTime").as_string());

  fake_.jobs.at(key).mutable_doc()["spec"].as_object()["suspend"] = true;
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_TRUE(fake_.pods.empty()) << "finalizer removed, pod deleted";
  EXPECT_THAT(ConditionTypes(), ElementsAre("Suspended"));
  EXPECT_EQ(Status().at("conditions").as_array()[0].at("status"), "True");

  clock_.Step(seconds(100));
  fake_.jobs.at(key).mutable_doc()["spec"].as_object()["suspend"] = false;
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(fake_.pods.size(), 1u);
  EXPECT_EQ(Status().at("conditions").as_array()[0].at("status"), "False");
  EXPECT_EQ(Status().at("conditions").as_array()[0].at("reason"), "JobResumed");
  EXPECT_NE(Status().at("startTime").as_string(), started);
  EXPECT_THAT(Events(), Contains("Suspended"));
  EXPECT_THAT(Events(), Contains("Resumed"));
}

TEST_F(JobSyncTest, IndexedJobRunsEachIndexOnce) {
  CreateJob({{"completions", 3}, {"parallelism", 3}, {"completionMode", "Indexed"}});
  ASSERT_TRUE(Sync().error.ok());
  std::set<std::string> indexes, hostnames;
  for (const auto& [k, p] : fake_.pods) {
    indexes.insert(std::string(*p.annotation(kCompletionIndexAnnotation)));
    hostnames.insert(std::string(api::FindString(p.doc(), {"spec", "hostname"})));
  }
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1", "2"}));
  EXPECT_EQ(hostnames, (std::set<std::string>{"work-0", "work-1", "work-2"}));
  // 0 and 2 succeed; then index 1 fails (after the last success, so the failure counts towards
  // the pod-failure backoff, as upstream's backoffRecord counts it) and is replaced with the
  // same index.
  for (const auto& k : fake_.Keys()) {
    if (*fake_.pods.at(k).annotation(kCompletionIndexAnnotation) != "1")
      fake_.Finish(k, "Succeeded");
  }
  clock_.Step(seconds(1));
  for (const auto& k : fake_.Keys()) {
    if (*fake_.pods.at(k).annotation(kCompletionIndexAnnotation) == "1") fake_.Finish(k, "Failed");
  }
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(Status().at("completedIndexes"), "0,2");
  EXPECT_TRUE(fake_.Pending().empty()) << "the pod-failure backoff holds the replacement";
  clock_.Step(seconds(10));
  ASSERT_TRUE(Sync().error.ok());
  ASSERT_EQ(fake_.Pending().size(), 1u) << "the replacement after the backoff";
  EXPECT_EQ(*fake_.pods.at(fake_.Pending()[0]).annotation(kCompletionIndexAnnotation), "1");
  for (const auto& k : fake_.Pending()) fake_.Finish(k, "Succeeded");
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(Status().at("completedIndexes"), "0-2");
  EXPECT_EQ(Status().at("succeeded"), 3);
  EXPECT_EQ(Status().at("failed"), 1);
  EXPECT_THAT(ConditionTypes(), ElementsAre("SuccessCriteriaMet", "Complete"));
}

TEST_F(JobSyncTest, PodsOfADeletedJobLoseTheirFinalizer) {
  api::ObjectKey key = CreateJob({{"completions", 1}});
  ASSERT_TRUE(Sync().error.ok());
  api::ObjectKey pod = fake_.Keys()[0];
  fake_.jobs.erase(key);
  ASSERT_TRUE(fake_.DeletePod(pod).ok());  // the garbage collector's delete
  ASSERT_EQ(fake_.pods.size(), 1u) << "held by the tracking finalizer";
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_TRUE(fake_.pods.empty());
}

TEST_F(JobSyncTest, CreateFailuresStopTheSlowStartAndRetry) {
  CreateJob({{"completions", 8}, {"parallelism", 8}});
  fake_.fail_creates = true;
  client::ReconcileResult r = Sync();
  EXPECT_FALSE(r.error.ok());
  EXPECT_THAT(Events(), ElementsAre("FailedCreate")) << "one attempt, not eight";
  fake_.fail_creates = false;
  ASSERT_TRUE(Sync().error.ok());
  EXPECT_EQ(fake_.pods.size(), 8u);
}

}  // namespace
}  // namespace converge::controllers::job
