#include "client/leader_elector.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/api_errors.h"
#include "client/fake_transport.h"

namespace converge::client {
namespace {

using std::chrono::seconds;

// The lock object, shared by candidates: a record with a version; updates are conditional on
// the version the candidate last saw. Can be told to fail.
class FakeLockStore {
 public:
  std::mutex mu;
  bool exists = false;
  LeaderElectionRecord record;
  int64_t version = 0;
  bool failing = false;
  int64_t updates = 0;
};

class FakeLock final : public ResourceLock {
 public:
  FakeLock(FakeLockStore* store, std::string identity)
      : store_(store), identity_(std::move(identity)) {}
  util::StatusOr<LeaderElectionRecord> Get(std::stop_token) override {
    std::lock_guard lock(store_->mu);
    if (store_->failing) return util::Unavailable("connection refused");
    if (!store_->exists) return util::NotFound("leases \"x\" not found").WithReason("NotFound");
    seen_ = store_->version;
    return store_->record;
  }
  util::Status Create(const LeaderElectionRecord& r, std::stop_token) override {
    std::lock_guard lock(store_->mu);
    if (store_->failing) return util::Unavailable("connection refused");
    if (store_->exists) return util::AlreadyExists("exists").WithReason("AlreadyExists");
    store_->exists = true;
    store_->record = r;
    seen_ = ++store_->version;
    return util::Status();
  }
  util::Status Update(const LeaderElectionRecord& r, std::stop_token) override {
    std::lock_guard lock(store_->mu);
    if (store_->failing) return util::Unavailable("connection refused");
    if (seen_ != store_->version) return util::Aborted("conflict").WithReason("Conflict");
    store_->record = r;
    seen_ = ++store_->version;
    ++store_->updates;
    return util::Status();
  }
  std::string Identity() const override { return identity_; }
  std::string Describe() const override { return "ns/lock"; }

 private:
  FakeLockStore* const store_;
  const std::string identity_;
  int64_t seen_ = -1;
};

struct Candidate {
  Candidate(FakeLockStore* store, std::string id, util::FakeClock* clock, bool release = true)
      : lock(store, std::move(id)) {
    util::StatusOr<std::unique_ptr<LeaderElector>> e = LeaderElector::New({
        .lock = &lock,
        .release_on_cancel = release,
        .on_started_leading =
            [this](std::stop_token stop) {
              leading = true;
              std::mutex m;
              std::condition_variable_any cv;
              std::unique_lock l(m);
              cv.wait(l, stop, [] { return false; });
              leading = false;
              work_stopped = true;
            },
        .on_stopped_leading = [this] { stopped_leading = true; },
        .clock = clock,
        .random = [] { return 0.0; },  // no jitter: exact retry times
    });
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    elector = std::move(e).value();
  }
  ~Candidate() { Stop(); }
  void Start() {
    thread = std::jthread([this](std::stop_token st) { elector->Run(st); });
  }
  void Stop() {
    if (thread.joinable()) {
      thread.request_stop();
      thread.join();
    }
  }

  FakeLock lock;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<bool> leading{false};
  std::atomic<bool> work_stopped{false};
  std::atomic<bool> stopped_leading{false};
  std::jthread thread;
};

// Steps the clock by d once the single candidate is asleep on it.
void StepWhenAsleep(util::FakeClock& clock, util::Clock::Duration d) {
  clock.BlockUntilWaiters(1);
  clock.Step(d);
}

TEST(LeaderElectorTest, ValidatesTheTimings) {
  FakeLockStore store;
  FakeLock lock(&store, "a");
  auto work = [](std::stop_token) {};
  EXPECT_FALSE(LeaderElector::New({.lock = &lock,
                                   .lease_duration = seconds(10),
                                   .renew_deadline = seconds(10),
                                   .on_started_leading = work})
                   .ok());
  EXPECT_FALSE(LeaderElector::New({.lock = &lock,
                                   .renew_deadline = seconds(2),
                                   .retry_period = seconds(2),
                                   .on_started_leading = work})
                   .ok());
  EXPECT_FALSE(LeaderElector::New({.lock = &lock}).ok());
  EXPECT_TRUE(LeaderElector::New({.lock = &lock, .on_started_leading = work}).ok());
}

// The flags' checks (--leader-elect-lease-duration, -renew-deadline, -retry-period).
TEST(LeaderElectorTest, ValidateLeaderElectionTimingsTable) {
  using std::chrono::milliseconds;
  struct Case {
    const char* name;
    LeaderElectionTimings timings;
    bool ok;
  };
  const Case cases[] = {
      {"upstream defaults 15s/10s/2s", {}, true},
      {"short, for tests 4s/3s/500ms", {seconds(4), seconds(3), milliseconds(500)}, true},
      {"lease equal to the renew deadline", {seconds(10), seconds(10), seconds(2)}, false},
      {"lease shorter than the renew deadline", {seconds(5), seconds(10), seconds(2)}, false},
      {"renew deadline within retry x jitter",
       {seconds(15), milliseconds(2400), seconds(2)},
       false},
      {"renew deadline just above retry x jitter",
       {seconds(15), milliseconds(2401), seconds(2)},
       true},
      {"lease under one second (the Lease holds seconds)",
       {milliseconds(900), milliseconds(500), milliseconds(100)},
       false},
      {"zero renew deadline", {seconds(15), milliseconds(0), seconds(2)}, false},
      {"negative retry period", {seconds(15), seconds(10), milliseconds(-1)}, false},
      {"zero retry period", {seconds(15), seconds(10), milliseconds(0)}, false},
  };
  for (const Case& c : cases) {
    util::Status s = ValidateLeaderElectionTimings(c.timings);
    EXPECT_EQ(s.ok(), c.ok) << c.name << ": " << s.ToString();
    if (!s.ok()) {
      EXPECT_EQ(s.code(), util::Code::kInvalidArgument) << c.name;
    }
  }
}

TEST(LeaderElectorTest, AcquiresRenewsAndReleasesOnShutdown) {
  util::FakeClock clock;
  FakeLockStore store;
  Candidate a(&store, "a", &clock);
  a.Start();
  while (!a.leading) std::this_thread::yield();
  EXPECT_TRUE(a.elector->IsLeader());
  {
    std::lock_guard lock(store.mu);
    EXPECT_EQ(store.record.holder_identity, "a");
    EXPECT_EQ(store.record.lease_duration_seconds, 15);
    EXPECT_EQ(store.record.leader_transitions, 0);
  }
  util::Clock::WallTime acquired = clock.WallNow();
  // The first renewal follows the acquisition at once; then one every retry period, keeping the
  // acquire time and moving the renew time.
  for (int i = 1; i <= 3; ++i) {
    StepWhenAsleep(clock, seconds(2));
    while (true) {
      std::lock_guard lock(store.mu);
      if (store.updates >= i + 1) break;
    }
  }
  {
    std::lock_guard lock(store.mu);
    EXPECT_EQ(store.record.acquire_time, acquired);
    EXPECT_EQ(store.record.renew_time, acquired + seconds(6));
  }
  a.Stop();
  EXPECT_TRUE(a.work_stopped);
  EXPECT_TRUE(a.stopped_leading);
  std::lock_guard lock(store.mu);
  EXPECT_EQ(store.record.holder_identity, "");  // released: a successor need not wait
  EXPECT_EQ(store.record.lease_duration_seconds, 1);
}

TEST(LeaderElectorTest, TakesOverOnlyAfterTheLeaseExpiresByItsOwnClock) {
  util::FakeClock clock;
  FakeLockStore store;
  // "old" holds the lease and has stopped renewing. Its renewTime is from long ago: that does not
  // matter, only how long this candidate has watched the record stay unchanged.
  store.exists = true;
  store.record = {.holder_identity = "old",
                  .lease_duration_seconds = 15,
                  .renew_time = util::Clock::WallTime{},
                  .leader_transitions = 4};
  Candidate b(&store, "b", &clock);
  b.Start();
  for (int t = 2; t <= 14; t += 2) {
    StepWhenAsleep(clock, seconds(2));
    clock.BlockUntilWaiters(1);  // the attempt at t has been made
    EXPECT_FALSE(b.leading) << "took over at " << t << "s";
    EXPECT_EQ(b.elector->GetLeader(), "old");
  }
  StepWhenAsleep(clock, seconds(2));  // t = 16 > 15
  while (!b.leading) std::this_thread::yield();
  std::lock_guard lock(store.mu);
  EXPECT_EQ(store.record.holder_identity, "b");
  EXPECT_EQ(store.record.leader_transitions, 5);
}

TEST(LeaderElectorTest, ALiveLeaderKeepsTheLease) {
  util::FakeClock clock;
  FakeLockStore store;
  store.exists = true;
  store.record = {.holder_identity = "old", .lease_duration_seconds = 15};
  Candidate b(&store, "b", &clock);
  b.Start();
  for (int t = 2; t <= 40; t += 2) {
    {  // "old" renews every 2 s: the record keeps changing
      std::lock_guard lock(store.mu);
      store.record.renew_time += seconds(2);
      ++store.version;
    }
    StepWhenAsleep(clock, seconds(2));
  }
  clock.BlockUntilWaiters(1);
  EXPECT_FALSE(b.leading);
  EXPECT_FALSE(b.elector->IsLeader());
}

TEST(LeaderElectorTest, StepsDownWhenRenewalsFailPastTheDeadline) {
  util::FakeClock clock;
  FakeLockStore store;
  Candidate a(&store, "a", &clock, /*release=*/false);
  a.Start();
  while (true) {  // leading, and the first renewal (right after acquiring) is done
    std::lock_guard lock(store.mu);
    if (a.leading && store.updates == 1) break;
  }
  {
    std::lock_guard lock(store.mu);
    store.failing = true;  // the API server becomes unreachable
  }
  StepWhenAsleep(clock, seconds(2));  // the renewal round starts, and fails
  for (int t = 2; t <= 8; t += 2) {
    StepWhenAsleep(clock, seconds(2));
    clock.BlockUntilWaiters(1);
    EXPECT_TRUE(a.leading) << "stepped down " << t << "s into the round";
  }
  StepWhenAsleep(clock, seconds(2));  // 10 s: the renew deadline
  a.thread.join();                    // Run returns on its own
  EXPECT_TRUE(a.work_stopped);
  EXPECT_TRUE(a.stopped_leading);
}

// A Lease API in memory, behind a FakeTransport: GET, POST, PUT with resourceVersion checks.
class FakeLeaseApi {
 public:
  util::StatusOr<HttpResponse> Handle(const HttpRequest& r) {
    std::lock_guard lock(mu_);
    const std::string path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    if (r.method == "GET") {
      if (lease_.empty())
        return FakeTransport::Json(404, R"({"kind":"Status","reason":"NotFound","code":404})");
      return FakeTransport::Json(200, lease_);
    }
    boost::json::object body = boost::json::parse(r.body).as_object();
    if (r.method == "POST") {
      EXPECT_EQ(r.path, path);
      if (!lease_.empty())
        return FakeTransport::Json(409, R"({"kind":"Status","reason":"AlreadyExists","code":409})");
    } else if (r.method == "PUT") {
      EXPECT_EQ(r.path, path + "/ctrl");
      if (api::FindString(body, {"metadata", "resourceVersion"}) != std::to_string(rv_)) {
        return FakeTransport::Json(409, R"({"kind":"Status","reason":"Conflict","code":409})");
      }
    }
    body["metadata"].as_object()["resourceVersion"] = std::to_string(++rv_);
    lease_ = boost::json::serialize(body);
    return FakeTransport::Json(r.method == "POST" ? 201 : 200, lease_);
  }
  std::string lease() {
    std::lock_guard lock(mu_);
    return lease_;
  }

 private:
  std::mutex mu_;
  std::string lease_;
  int rv_ = 0;
};

TEST(LeaseLockTest, WritesCoordinationV1LeasesConditionally) {
  FakeLeaseApi api;
  auto fake = std::make_shared<FakeTransport>([&](const HttpRequest& r) { return api.Handle(r); });
  RestClient client({.transport = fake});
  LeaseLock lock({.client = &client, .lease = {"kube-system", "ctrl"}, .identity = "pod-1"});
  EXPECT_TRUE(IsNotFound(lock.Get({}).status()));
  util::Clock::WallTime t = util::FakeClock().WallNow();
  LeaderElectionRecord r{.holder_identity = "pod-1",
                         .lease_duration_seconds = 15,
                         .acquire_time = t,
                         .renew_time = t,
                         .leader_transitions = 2};
  ASSERT_TRUE(lock.Create(r, {}).ok());
  boost::json::object lease = boost::json::parse(api.lease()).as_object();
  EXPECT_EQ(api::FindString(lease, {"apiVersion"}), "coordination.k8s.io/v1");
  EXPECT_EQ(api::FindString(lease, {"kind"}), "Lease");
  EXPECT_EQ(api::FindString(lease, {"spec", "holderIdentity"}), "pod-1");
  EXPECT_EQ(api::FindInt(lease, {"spec", "leaseDurationSeconds"}), 15);
  EXPECT_EQ(api::FindString(lease, {"spec", "acquireTime"}), "2025-01-01T00:00:00.000000Z");
  EXPECT_EQ(api::FindInt(lease, {"spec", "leaseTransitions"}), 2);

  util::StatusOr<LeaderElectionRecord> got = lock.Get({});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, r);
  r.renew_time += seconds(2);
  ASSERT_TRUE(lock.Update(r, {}).ok());
  // Another writer moves the lease on: our next update is refused as a conflict.
  LeaseLock other({.client = &client, .lease = {"kube-system", "ctrl"}, .identity = "pod-2"});
  ASSERT_TRUE(other.Get({}).ok());
  ASSERT_TRUE(other.Update({.holder_identity = "pod-2", .lease_duration_seconds = 15}, {}).ok());
  EXPECT_TRUE(IsConflict(lock.Update(r, {})));
}

}  // namespace
}  // namespace converge::client
