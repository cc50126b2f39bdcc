#include "controllers/ttlafterfinished/ttl_after_finished.h"

#include <gtest/gtest.h>

#include <map>

#include "util/time_format.h"

namespace converge::controllers::ttlafterfinished {
namespace {

namespace json = boost::json;
using std::chrono::seconds;

const util::Clock::WallTime kFinished = *util::ParseRfc3339("2024-05-01T10:00:00Z");

api::Object Job(std::optional<int64_t> ttl, std::string condition, bool completion_time = true,
                bool deleting = false) {
  api::Object j;
  j.SetGvk({"batch", "v1", "Job"});
  j.set_name("j");
  j.set_namespace("ns");
  j.set_uid("uid-1");
  json::object spec;
  if (ttl) spec["ttlSecondsAfterFinished"] = *ttl;
  j.mutable_doc()["spec"] = std::move(spec);
  json::object status;
  if (!condition.empty()) {
    status["conditions"] = json::array{json::object{
        {"type", condition}, {"status", "True"}, {"lastTransitionTime", "2024-05-01T10:00:00Z"}}};
  }
  if (completion_time && condition == "Complete") status["completionTime"] = "2024-05-01T10:00:00Z";
  j.mutable_doc()["status"] = std::move(status);
  if (deleting) j.mutable_metadata()["deletionTimestamp"] = "2024-05-01T10:00:00Z";
  return j;
}

TEST(DecideTtlTest, Table) {
  using A = TtlDecision::Action;
  struct Case {
    std::string name;
    api::Object job;
    int after_s;  // now = finished + after_s
    A want;
    int want_requeue_s = 0;
  };
  std::vector<Case> cases = {
      {"NoTtl", Job(std::nullopt, "Complete"), 1000, A::kNone},
      {"NotFinished", Job(10, ""), 1000, A::kNone},
      {"FailedCountsAsFinished", Job(10, "Failed"), 10, A::kDelete},
      {"NotYet", Job(100, "Complete"), 40, A::kRequeueAfter, 60},
      {"Expired", Job(100, "Complete"), 100, A::kDelete},
      {"ZeroTtl", Job(0, "Complete"), 0, A::kDelete},
      {"FromTheConditionWithoutCompletionTime", Job(5, "Complete", false), 6, A::kDelete},
      {"AlreadyBeingDeleted", Job(0, "Complete", true, true), 10, A::kNone},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TtlDecision d = DecideTtl(c.job, kFinished + seconds(c.after_s));
    EXPECT_EQ(d.action, c.want);
    if (c.want == A::kRequeueAfter) {
      EXPECT_EQ(d.after, seconds(c.want_requeue_s));
    }
  }
}

class FakeTtlClient final : public TtlClient {
 public:
  std::map<api::ObjectKey, api::Object> jobs;
  std::vector<std::string> deleted_uids;
  util::StatusOr<api::Object> GetJob(const api::ObjectKey& key) override {
    auto it = jobs.find(key);
    if (it == jobs.end()) return util::NotFound("not found");
    return it->second;
  }
  util::Status DeleteJob(const api::ObjectKey& key, const std::string& uid) override {
    deleted_uids.push_back(uid);
    jobs.erase(key);
    return util::Status();
  }
};

TEST(TtlAfterFinishedSyncTest, DeletesFromALiveReadAndRequeuesUntilExpiry) {
  util::FakeClock clock;  // wall time 2025-01-01
  util::Registry registry;
  FakeTtlClient fake;
  TtlAfterFinishedController c(
      {.client = &fake, .clock = &clock, .metrics = &registry, .queue_name = ""});
  api::Object job = Job(3600, "Complete");
  // Finished "now" by the fake clock's wall time.
  json::object& status = job.mutable_doc()["status"].as_object();
  status["completionTime"] = util::FormatRfc3339(clock.WallNow());
  fake.jobs[job.key()] = job;

  client::ReconcileResult r = c.Sync(job.key());
  EXPECT_EQ(r.requeue_after, seconds(3600));
  EXPECT_TRUE(fake.deleted_uids.empty());

  // The TTL was shortened meanwhile: the live read sees it.
  fake.jobs[job.key()].mutable_doc()["spec"].as_object()["ttlSecondsAfterFinished"] = 0;
  r = c.Sync(job.key());
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(fake.deleted_uids, std::vector<std::string>{"uid-1"});
  EXPECT_TRUE(c.Sync(job.key()).error.ok()) << "gone: nothing to do";
}

}  // namespace
}  // namespace converge::controllers::ttlafterfinished
