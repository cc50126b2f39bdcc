#include "kubelet/heartbeats.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client/fake_transport.h"
#include "util/clock.h"

namespace converge::kubelet {
namespace {

using namespace std::chrono_literals;
using client::FakeTransport;

// An API that accepts every Node and Lease write and records when (fake wall time) each Lease
// write came, by node.
class LeaseRecorder {
 public:
  explicit LeaseRecorder(util::FakeClock* clock) : clock_(clock) {}

  util::StatusOr<client::HttpResponse> Answer(const client::HttpRequest& r) {
    const std::string& p = r.path;
    const std::string name = p.substr(p.rfind('/') + 1);
    if (p.find("/leases") != std::string::npos) {
      std::lock_guard lock(mu_);
      const std::string node = r.method == "POST" ? LeaseName(r.body) : name;
      writes_[node].push_back(clock_->WallNow());
      return FakeTransport::Json(r.method == "POST" ? 201 : 200,
                                 R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
                                 R"("metadata":{"name":")" +
                                     node + R"(","resourceVersion":")" +
                                     std::to_string(++revision_) + R"("}})");
    }
    return FakeTransport::Json(r.method == "POST" ? 201 : 200,
                               R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n",)"
                               R"("uid":"u","resourceVersion":"1"}})");
  }

  std::map<std::string, std::vector<WallTime>> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

 private:
  static std::string LeaseName(const std::string& body) {
    const std::string marker = R"("name":")";
    const size_t at = body.find(marker) + marker.size();
    return body.substr(at, body.find('"', at) - at);
  }

  util::FakeClock* const clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<WallTime>> writes_;
  int revision_ = 0;
};

// Whether `n` workers are idle (waiting on the clock) within 10 s of real time; a worker that
// keeps ticking (a node rescheduled into the window it ran in) never is.
bool WorkersIdle(const util::FakeClock& clock, int n) {
  for (int i = 0; i < 10000; ++i) {
    if (clock.Waiters() >= n) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// With a batch window, a worker the timer wakes renews every node due within the window, a
// little early; each node still renews once per interval, never twice for one slot, and never
// earlier than the window before its slot.
TEST(NodeHeartbeats, BatchWindowRenewsEarlyButOncePerSlot) {
  util::FakeClock clock;
  LeaseRecorder api(&clock);
  auto transport =
      std::make_shared<FakeTransport>([&](const client::HttpRequest& r) { return api.Answer(r); });
  client::RestClient rest({.transport = transport});

  NodeHeartbeatsOptions o;
  o.client = &rest;
  o.clock = &clock;
  constexpr int kNodes = 10;
  for (int i = 0; i < kNodes; ++i) o.nodes.push_back(NodeConfig{.name = "n" + std::to_string(i)});
  o.renew_interval = 10s;
  o.batch_window = 3s;
  o.workers = 2;
  NodeHeartbeats beats(o);
  const WallTime start = clock.WallNow();
  std::jthread runner([&](std::stop_token st) { beats.Run(st); });
  ASSERT_TRUE(beats.WaitRegistered(runner.get_stop_token()));

  // 40 s in steps of 500 ms, letting both workers go idle after each step.
  for (int step = 0; step < 80; ++step) {
    ASSERT_TRUE(WorkersIdle(clock, 2)) << "at step " << step;
    clock.Step(500ms);
  }
  ASSERT_TRUE(WorkersIdle(clock, 2));
  runner.request_stop();
  runner.join();

  const auto writes = api.writes();
  ASSERT_EQ(writes.size(), static_cast<size_t>(kNodes));
  for (int i = 0; i < kNodes; ++i) {
    const std::vector<WallTime>& w = writes.at("n" + std::to_string(i));
    // Registration writes the first Lease at the start (node 0's slot); then each slot of node i
    // after that, at start + i·1 s + k·10 s, is renewed once the clock is within the window of
    // it (the clock stops at 40 s).
    std::vector<WallTime> slots;
    for (int k = 0; i + 10 * k <= 40 + 3; ++k) {
      if (i + 10 * k > 0) slots.push_back(start + std::chrono::seconds(i + 10 * k));
    }
    std::string times;
    for (WallTime t : w) times += " " + std::to_string((t - start) / 1ms);
    ASSERT_EQ(w.size(), 1 + slots.size()) << "node " << i << ":" << times;
    for (size_t k = 0; k < slots.size(); ++k) {
      EXPECT_LE(w[k + 1], slots[k]) << "node " << i << ":" << times;
      EXPECT_GE(w[k + 1], slots[k] - o.batch_window) << "node " << i << ":" << times;
    }
  }
}

}  // namespace
}  // namespace converge::kubelet
