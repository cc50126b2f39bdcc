#include "kubelet/container_logs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "util/clock.h"

namespace converge::kubelet {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

ContainerLogRecord Started(WallTime t, int instance, Duration interval = 10s) {
  ContainerLogRecord r;
  r.kind = ContainerLogRecord::Kind::kStarted;
  r.container = "web";
  r.instance = instance;
  r.time = t;
  r.container_id = "converge-sim://x";
  r.image = "nginx:1.27";
  r.log_interval = interval;
  return r;
}

ContainerLogRecord Exited(WallTime t, int instance, int code, bool killed = false) {
  ContainerLogRecord r;
  r.kind = ContainerLogRecord::Kind::kExited;
  r.container = "web";
  r.instance = instance;
  r.time = t;
  r.exit_code = code;
  r.killed = killed;
  return r;
}

std::vector<std::string> Lines(const InstanceLog& log, WallTime now) {
  std::vector<std::string> out;
  for (uint64_t i = log.FirstRetained(now); i < log.Count(now); ++i) {
    out.push_back(log.LineText(i, now));
  }
  return out;
}

TEST(InstanceLogTest, LinesFollowTheInstanceTimes) {
  WallTime t0{};
  InstanceLog log(Started(t0, 1), 10000);
  EXPECT_EQ(
      Lines(log, t0 + 25s),
      (std::vector<std::string>{"converge-sim: container web started (image nginx:1.27, run 1)",
                                "converge-sim: container web running for 10s",
                                "converge-sim: container web running for 20s"}));
  log.Sigterm(t0 + 25s, false);
  log.Exit(t0 + 31s, 0, false);
  EXPECT_EQ(
      Lines(log, t0 + 100s),
      (std::vector<std::string>{"converge-sim: container web started (image nginx:1.27, run 1)",
                                "converge-sim: container web running for 10s",
                                "converge-sim: container web running for 20s",
                                "converge-sim: container web received SIGTERM, shutting down",
                                "converge-sim: container web running for 30s",
                                "converge-sim: container web exiting with code 0"}));
  EXPECT_EQ(log.LineTime(3, t0 + 100s), t0 + 25s);
  EXPECT_EQ(log.LineTime(5, t0 + 100s), t0 + 31s);
  EXPECT_FALSE(log.NextLineTime(6, t0 + 100s).has_value());
}

TEST(InstanceLogTest, KilledInstancesHaveNoLastWordsAndRingIsBounded) {
  WallTime t0{};
  InstanceLog log(Started(t0, 2, 1s), 5);
  log.Exit(t0 + 100s, 137, true);
  std::vector<std::string> lines = Lines(log, t0 + 200s);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines.back(), "converge-sim: container web running for 1m40s");
  EXPECT_EQ(log.Count(t0 + 200s), 101u);  // start + 100 ticks up to the exit
}

TEST(PodLogViewTest, FromAMachineTellsWaitingFromRunning) {
  PodSpecView spec;
  spec.key = {"default", "p"};
  spec.uid = "uid";
  spec.node_name = "n";
  spec.containers = {{.name = "web", .image = "nginx:1.27"}};
  PodMachine m(spec);
  NodeRuntime node({.node_name = "n"});

  PodLogView waiting = PodLogView::From(m);
  EXPECT_EQ(waiting.uid, "uid");
  ASSERT_EQ(waiting.containers.size(), 1u);
  EXPECT_EQ(waiting.containers[0].name, "web");
  EXPECT_FALSE(waiting.containers[0].running);
  EXPECT_EQ(waiting.containers[0].waiting_reason, "ContainerCreating");
  EXPECT_EQ(waiting.containers[0].instance, 0);

  MachineOutput out;
  m.Advance(node, WallTime{} + 1s, &out);  // admitted; the image pull takes 200 ms
  m.Advance(node, WallTime{} + 5s, &out);
  PodLogView running = PodLogView::From(m);
  ASSERT_EQ(running.containers.size(), 1u);
  EXPECT_TRUE(running.containers[0].running);
  EXPECT_FALSE(running.containers[0].terminated);
  EXPECT_EQ(running.containers[0].instance, 1);
}

class LogStoreTest : public ::testing::Test {
 protected:
  LogStoreTest() : store_({.clock = &clock_, .max_lines = 1000}) {}

  apiserver::Response Serve(LogRequest r) {
    r.container = "web";
    return store_.Serve(key_, "uid", "p", r);
  }
  void SetView(bool running, bool terminated, bool has_previous, std::string waiting = "") {
    PodLogView v;
    v.uid = "uid";
    v.containers.push_back({.name = "web",
                            .waiting_reason = waiting,
                            .instance = 1,
                            .running = running,
                            .terminated = terminated,
                            .has_previous = has_previous});
    store_.SetView(key_, v);
  }

  util::FakeClock clock_;
  LogStore store_;
  api::ObjectKey key_{"default", "p"};
};

TEST_F(LogStoreTest, CurrentPreviousTailAndTimestamps) {
  WallTime t0 = clock_.WallNow();
  store_.Apply(key_, Started(t0, 1));
  store_.Apply(key_, Exited(t0 + 15s, 1, 1));
  store_.Apply(key_, Started(t0 + 16s, 2));
  SetView(true, false, true);
  clock_.Step(40s);

  apiserver::Response current = Serve({});
  EXPECT_EQ(current.status, 200);
  EXPECT_EQ(current.body,
            "converge-sim: container web started (image nginx:1.27, run 2)\n"
            "converge-sim: container web running for 10s\n"
            "converge-sim: container web running for 20s\n");
  apiserver::Response previous = Serve({.previous = true});
  EXPECT_EQ(previous.body,
            "converge-sim: container web started (image nginx:1.27, run 1)\n"
            "converge-sim: container web running for 10s\n"
            "converge-sim: container web exiting with code 1\n");
  apiserver::Response tail = Serve({.tail_lines = 1});
  EXPECT_EQ(tail.body, "converge-sim: container web running for 20s\n");
  apiserver::Response stamped = Serve({.timestamps = true, .tail_lines = 1});
  EXPECT_EQ(stamped.body,
            FormatRfc3339NanoFixed(t0 + 36s) + " converge-sim: container web running for 20s\n");
  EXPECT_THAT(stamped.body, HasSubstr(".000000000Z "));
  apiserver::Response since = Serve({.since_time = t0 + 30s});
  EXPECT_EQ(since.body, "converge-sim: container web running for 20s\n");
  apiserver::Response limited = Serve({.limit_bytes = 10});
  EXPECT_EQ(limited.body, "converge-s");
}

TEST_F(LogStoreTest, EachContainerOfAPodServesItsOwnInstances) {
  WallTime t0 = clock_.WallNow();
  ContainerLogRecord side = Started(t0, 1);
  side.container = "sidecar";
  side.image = "busybox:1.36";
  store_.Apply(key_, side);
  store_.Apply(key_, Started(t0 + 1s, 1));
  ContainerLogRecord side_exit = Exited(t0 + 2s, 1, 3);
  side_exit.container = "sidecar";
  store_.Apply(key_, side_exit);
  PodLogView v;
  v.uid = "uid";
  v.containers.push_back({.name = "web", .instance = 1, .running = true});
  v.containers.push_back({.name = "sidecar", .instance = 1, .terminated = true});
  store_.SetView(key_, v);
  clock_.Step(12s);

  EXPECT_EQ(store_.Serve(key_, "uid", "p", {.container = "sidecar"}).body,
            "converge-sim: container sidecar started (image busybox:1.36, run 1)\n"
            "converge-sim: container sidecar exiting with code 3\n");
  EXPECT_EQ(store_.Serve(key_, "uid", "p", {.container = "web"}).body,
            "converge-sim: container web started (image nginx:1.27, run 1)\n"
            "converge-sim: container web running for 10s\n");
}

TEST_F(LogStoreTest, WaitingContainersAnswerLikeTheKubelet) {
  SetView(false, false, false, "ContainerCreating");
  apiserver::Response r = Serve({});
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body, HasSubstr("container \\\"web\\\" in pod \\\"p\\\" is waiting to start: "
                                "ContainerCreating"));
  SetView(false, false, false, "ImagePullBackOff");
  EXPECT_THAT(Serve({}).body, HasSubstr("is waiting to start: trying and failing to pull image"));
  SetView(true, false, false);
  store_.Apply(key_, Started(clock_.WallNow(), 1));
  apiserver::Response prev = Serve({.previous = true});
  EXPECT_EQ(prev.status, 400);
  EXPECT_THAT(prev.body, HasSubstr("previous terminated container \\\"web\\\" in pod \\\"p\\\" "
                                   "not found"));
  EXPECT_EQ(store_.Serve({"default", "other"}, "", "other", {.container = "web"}).status, 400);
}

TEST_F(LogStoreTest, TheLastViewDecidesWhatIsServedAndANewIncarnationStartsClean) {
  WallTime t0 = clock_.WallNow();
  store_.Apply(key_, Started(t0, 1));
  clock_.Step(1s);
  EXPECT_THAT(Serve({}).body, HasSubstr("is waiting to start - no logs yet")) << "not viewed yet";
  SetView(true, false, false);
  EXPECT_THAT(Serve({}).body, HasSubstr("started (image nginx:1.27, run 1)"));
  PodLogView without_web;
  without_web.uid = "uid";
  without_web.containers.push_back({.name = "sidecar", .instance = 1, .running = true});
  store_.SetView(key_, without_web);
  EXPECT_THAT(Serve({}).body, HasSubstr("is waiting to start - no logs yet")) << "not in the view";

  EXPECT_EQ(store_.Serve(key_, "uid-2", "p", {.container = "web"}).status, 400)
      << "another incarnation's request";
  PodLogView next;
  next.uid = "uid-2";
  next.containers.push_back({.name = "web", .instance = 1, .running = true});
  store_.SetView(key_, next);
  apiserver::Response fresh = store_.Serve(key_, "uid-2", "p", {.container = "web"});
  EXPECT_EQ(fresh.status, 200);
  EXPECT_EQ(fresh.body, "") << "the previous incarnation's lines are gone";
}

TEST_F(LogStoreTest, CrashLoopingContainerServesItsLastRun) {
  WallTime t0 = clock_.WallNow();
  store_.Apply(key_, Started(t0, 1));
  store_.Apply(key_, Exited(t0 + 1s, 1, 1));
  SetView(false, false, true, "CrashLoopBackOff");
  clock_.Step(5s);
  EXPECT_THAT(Serve({}).body, HasSubstr("exiting with code 1"));
  EXPECT_THAT(Serve({.previous = true}).body, HasSubstr("exiting with code 1"));
}

TEST_F(LogStoreTest, FollowStreamsUntilTheContainerExits) {
  std::stop_source stop;
  std::jthread runner([&] { store_.Run(stop.get_token()); });
  WallTime t0 = clock_.WallNow();
  store_.Apply(key_, Started(t0, 1));
  SetView(true, false, false);
  apiserver::Response r = Serve({.follow = true});
  ASSERT_TRUE(r.stream);
  std::vector<std::shared_ptr<const std::string>> chunks;
  std::atomic<int> wakes{0};
  auto poll = [&] { return r.stream->Poll(&chunks, [&] { ++wakes; }); };
  using PR = apiserver::ResponseStream::PollResult;
  EXPECT_EQ(poll(), PR::kData);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_THAT(*chunks[0], HasSubstr("started"));
  EXPECT_EQ(poll(), PR::kPending);
  // The next tick (10 s) wakes the stream.
  clock_.BlockUntilWaiters(1);
  clock_.Step(10s);
  for (int i = 0; i < 1000 && wakes.load() == 0; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(wakes.load(), 1);
  EXPECT_EQ(poll(), PR::kData);
  EXPECT_THAT(*chunks.back(), HasSubstr("running for 10s"));
  EXPECT_EQ(poll(), PR::kPending);
  // The exit wakes it at once; it delivers the last words and ends.
  store_.Apply(key_, Exited(clock_.WallNow(), 1, 0));
  EXPECT_EQ(wakes.load(), 2);
  EXPECT_EQ(poll(), PR::kData);
  EXPECT_THAT(*chunks.back(), HasSubstr("exiting with code 0"));
  EXPECT_EQ(poll(), PR::kEnd);
  r.stream->Close();
  EXPECT_EQ(store_.follower_count(), 0u);
  stop.request_stop();
}

}  // namespace
}  // namespace converge::kubelet
