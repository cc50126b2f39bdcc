#include "apiserver/flow_control.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace converge::apiserver {
namespace {

RequestClass Class(std::string flow, PriorityLevel level = PriorityLevel::kGlobal,
                   bool mutating = false) {
  RequestClass c;
  c.flow = std::move(flow);
  c.level = level;
  c.mutating = mutating;
  return c;
}

// Records the order in which requests start.
struct Recorder {
  std::vector<std::string> started;
  std::function<void()> Start(std::string name) {
    return [this, name] { started.push_back(name); };
  }
};

TEST(FlowControlTest, StartsAtOnceWhileSeatsAreFree) {
  FlowControl fc({.concurrency = 3, .system_seats = 1});
  Recorder r;
  FlowControl::Ticket a = fc.Admit(Class("u"), r.Start("a"));
  FlowControl::Ticket b = fc.Admit(Class("u"), r.Start("b"));
  FlowControl::Ticket c = fc.Admit(Class("u"), r.Start("c"));  // global has 2 seats: queued
  EXPECT_NE(a, 0u);
  EXPECT_NE(c, 0u);
  EXPECT_EQ(r.started, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(fc.queued(PriorityLevel::kGlobal), 1u);
  fc.Finish(b);
  EXPECT_EQ(r.started, (std::vector<std::string>{"a", "b", "c"}));
  fc.Finish(a);
  fc.Finish(c);
  EXPECT_EQ(fc.executing(PriorityLevel::kGlobal), 0);
}

// A flood of 20 requests from one user and 4 from another, one seat: the seat alternates between
// the two flows while both wait, so the small flow is done after 9 dispatches, not 24.
TEST(FlowControlTest, BackloggedFlowsShareSeatsRoundRobin) {
  FlowControl fc({.concurrency = 2, .system_seats = 1, .queue_length_per_flow = 100});
  Recorder r;
  std::map<std::string, FlowControl::Ticket> tickets;
  auto admit = [&](const std::string& flow, const std::string& id) {
    tickets[id] = fc.Admit(Class(flow), r.Start(id));
    ASSERT_NE(tickets[id], 0u) << id;
  };
  for (int i = 0; i < 20; ++i) admit("flooder", "F" + std::to_string(i));
  for (int i = 0; i < 4; ++i) admit("victim", "V" + std::to_string(i));
  // Finish requests in the order they started; each finish hands the seat on.
  for (size_t done = 0; done < r.started.size(); ++done) fc.Finish(tickets[r.started[done]]);
  ASSERT_EQ(r.started.size(), 24u);
  std::string order;
  for (const auto& id : r.started) order += id[0];
  EXPECT_EQ(order, "FVFVFVFVFFFFFFFFFFFFFFFF");
}

TEST(FlowControlTest, RejectsAtTheInflightCapOfTheKind) {
  FlowControl fc({.max_requests_inflight = 2,
                  .max_mutating_requests_inflight = 1,
                  .concurrency = 2,
                  .system_seats = 1});
  Recorder r;
  EXPECT_NE(fc.Admit(Class("a"), r.Start("r1")), 0u);
  EXPECT_NE(fc.Admit(Class("b"), r.Start("r2")), 0u);  // queued: counts against the cap
  EXPECT_EQ(fc.Admit(Class("c"), r.Start("r3")), 0u);
  FlowControl::Ticket w = fc.Admit(Class("a", PriorityLevel::kGlobal, true), r.Start("w1"));
  EXPECT_NE(w, 0u);
  EXPECT_EQ(fc.Admit(Class("a", PriorityLevel::kGlobal, true), r.Start("w2")), 0u);
  // Exempt requests are never capped.
  EXPECT_NE(fc.Admit(Class("admin", PriorityLevel::kExempt), r.Start("x")), 0u);
  EXPECT_EQ(r.started, (std::vector<std::string>{"r1", "x"}));
}

TEST(FlowControlTest, RejectsWhenTheFlowQueueIsFull) {
  FlowControl fc({.concurrency = 2, .system_seats = 1, .queue_length_per_flow = 2});
  Recorder r;
  EXPECT_NE(fc.Admit(Class("flooder"), r.Start("1")), 0u);  // executing
  EXPECT_NE(fc.Admit(Class("flooder"), r.Start("2")), 0u);  // queued
  EXPECT_NE(fc.Admit(Class("flooder"), r.Start("3")), 0u);  // queued
  EXPECT_EQ(fc.Admit(Class("flooder"), r.Start("4")), 0u);
  // Another flow still gets in line.
  EXPECT_NE(fc.Admit(Class("victim"), r.Start("v")), 0u);
}

// Leases and node heartbeats have seats of their own: a saturated global level never delays them.
TEST(FlowControlTest, SystemLaneIsReserved) {
  FlowControl fc({.concurrency = 2, .system_seats = 1, .queue_length_per_flow = 10});
  Recorder r;
  for (int i = 0; i < 5; ++i) fc.Admit(Class("flooder"), r.Start("F"));
  EXPECT_EQ(fc.queued(PriorityLevel::kGlobal), 4u);
  fc.Admit(Class("system:node:n1", PriorityLevel::kSystem), r.Start("lease"));
  EXPECT_EQ(r.started, (std::vector<std::string>{"F", "lease"}));
}

TEST(FlowControlTest, CancelTakesAQueuedRequestOutButNotAStartedOne) {
  FlowControl fc({.max_requests_inflight = 2, .concurrency = 2, .system_seats = 1});
  Recorder r;
  FlowControl::Ticket a = fc.Admit(Class("u"), r.Start("a"));
  FlowControl::Ticket b = fc.Admit(Class("u"), r.Start("b"));
  EXPECT_FALSE(fc.Cancel(a));
  EXPECT_TRUE(fc.Cancel(b));
  fc.Finish(a);  // b is gone: nothing starts
  EXPECT_EQ(r.started, (std::vector<std::string>{"a"}));
  // Both slots of the cap are free again.
  EXPECT_NE(fc.Admit(Class("u"), r.Start("c")), 0u);
  EXPECT_NE(fc.Admit(Class("u"), r.Start("d")), 0u);
}

TEST(ClassifyRequestTest, Levels) {
  struct Case {
    const char* name;
    const char* method;
    const char* path;
    std::vector<std::string> groups;
    PriorityLevel level;
    bool long_running;
    bool mutating;
  };
  const std::vector<std::string> users = {"system:authenticated"};
  const Case cases[] = {
      {"list", "GET", "/api/v1/namespaces/default/pods", users, PriorityLevel::kGlobal, false,
       false},
      {"watch", "GET", "/api/v1/pods?watch=true", users, PriorityLevel::kGlobal, true, false},
      {"create", "POST", "/api/v1/namespaces/default/pods", users, PriorityLevel::kGlobal, false,
       true},
      {"masters",
       "POST",
       "/api/v1/namespaces/default/pods",
       {"system:masters"},
       PriorityLevel::kExempt,
       false,
       true},
      {"readyz", "GET", "/readyz", {}, PriorityLevel::kExempt, false, false},
      {"lease", "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", users,
       PriorityLevel::kSystem, false, true},
      {"node status", "PATCH", "/api/v1/nodes/n1/status", users, PriorityLevel::kSystem, false,
       true},
      {"node identity",
       "GET",
       "/api/v1/pods",
       {"system:nodes"},
       PriorityLevel::kSystem,
       false,
       false},
      {"follow logs", "GET", "/api/v1/namespaces/default/pods/p/log?follow=true", users,
       PriorityLevel::kGlobal, true, false},
  };
  for (const Case& c : cases) {
    Request req;
    req.method = c.method;
    std::string path = c.path;
    if (auto q = path.find('?'); q != std::string::npos) {
      std::string query = path.substr(q + 1);
      req.query.emplace_back(query.substr(0, query.find('=')), query.substr(query.find('=') + 1));
      path = path.substr(0, q);
    }
    req.path = path;
    UserInfo user{"alice", "", c.groups, true};
    RequestClass rc = ClassifyRequest(req, ParseRequestInfo(req), user);
    EXPECT_EQ(rc.level, c.level) << c.name;
    EXPECT_EQ(rc.long_running, c.long_running) << c.name;
    EXPECT_EQ(rc.mutating, c.mutating) << c.name;
    EXPECT_EQ(rc.flow, "alice") << c.name;
  }
}

}  // namespace
}  // namespace converge::apiserver
