// FlowControl: overload protection in front of the request workers — in-flight caps answered
// with 429, and a simplified API Priority and Fairness (upstream's APF) so that one flooding client
// cannot starve the others.
//
// Every request is classified (ClassifyRequest) into a priority level and a flow (its user):
//   - exempt: system:masters and the health probes. Never queued, never rejected, no seat.
//   - system: leader election and node heartbeats (coordination.k8s.io leases, nodes/status,
//     the system:nodes group). A lane of its own with reserved seats, so a flood of ordinary
//     requests never delays a lease renewal into a failover.
//   - global: everything else.
// Long-running requests (watches, followed logs) are not admitted here at all: they hold no seat
// and do not count against the caps (as upstream's max-in-flight filter excludes them).
//
// A level has a number of seats (requests executing at once). A request that finds no free seat
// waits in its flow's queue; when a seat frees, the level serves its flows round-robin — one
// request per flow per turn — so each backlogged flow gets an equal share of the seats whatever
// its own concurrency. (Upstream's fair queuing also charges for execution time and shuffle-shards
// flows onto queues; with equal request costs and one queue per flow this is the same schedule.)
// A request is rejected (429, Retry-After) when:
//   - its kind is at its cap: --max-requests-inflight read-only or --max-mutating-requests-inflight
//     mutating requests are queued or executing (0 = no cap), or
//   - its flow's queue already holds queue_length_per_flow requests.
//
// Thread-safety: thread-safe. Callbacks given to Admit run outside the lock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "apiserver/request.h"
#include "apiserver/request_info.h"

namespace converge::apiserver {

enum class PriorityLevel { kExempt, kSystem, kGlobal };

std::string_view PriorityLevelName(PriorityLevel level);

struct RequestClass {
  PriorityLevel level = PriorityLevel::kGlobal;
  std::string flow;  // requests of one flow (user) share a queue
  bool mutating = false;
  bool long_running = false;  // watches and followed logs: no admission, no request timeout
  // The handler never blocks on this request: it may run on the connection's I/O thread instead
  // of a worker. True for creates (the store commit is awaited without holding a thread) unless
  // the server says otherwise (admission webhooks make a create wait on the network).
  bool nonblocking = false;
};

// How `req` (parsed as `ri`, made by `user`) is admitted.
RequestClass ClassifyRequest(const Request& req, const RequestInfo& ri, const UserInfo& user);

struct FlowControlOptions {
  // Caps on queued plus executing requests of each kind; 0 = no cap.
  int max_requests_inflight = 400;
  int max_mutating_requests_inflight = 200;
  // Seats: requests that execute at once (the worker threads that run them).
  int concurrency = 64;
  // Seats reserved for the system level; the global level gets the rest (at least one each).
  int system_seats = 8;
  // Requests of one flow that may wait for a seat.
  size_t queue_length_per_flow = 50;
};

class FlowControl {
 public:
  explicit FlowControl(FlowControlOptions options);
  FlowControl(const FlowControl&) = delete;
  FlowControl& operator=(const FlowControl&) = delete;

  using Ticket = uint64_t;  // 0 = rejected
  // Admits a request of class `c`. Returns 0 when it is rejected (answer 429). Otherwise `start`
  // is called exactly once when the request holds a seat — before Admit returns when one is free,
  // or later from the thread that calls Finish — unless Cancel takes it out of its queue first.
  // Exempt requests start at once and hold nothing. Every admitted request that started must
  // be Finished.
  Ticket Admit(const RequestClass& c, std::function<void()> start);
  // Takes a request that has not started out of its queue (it gave up waiting): true when it did,
  // false when the request has already started (then `start` was or is being called, and Finish
  // must follow).
  bool Cancel(Ticket ticket);
  // The request finished: frees its seat and starts the next queued request of its level.
  void Finish(Ticket ticket);

  // For tests and metrics.
  int executing(PriorityLevel level) const;
  size_t queued(PriorityLevel level) const;

 private:
  struct Entry {
    PriorityLevel level;
    bool mutating;
    bool started = false;
    std::string flow;
    std::function<void()> start;
  };
  struct Level {
    int seats = 0;
    int executing = 0;
    // flow → its waiting tickets, oldest first. Invariant: no empty deques.
    std::map<std::string, std::deque<Ticket>> queues;
    // The flow served last; the next turn goes to the first flow after it (wrapping).
    std::string last_served;
  };

  Level& LevelOf(PriorityLevel level) {
    return level == PriorityLevel::kSystem ? system_ : global_;
  }
  // Starts queued requests while `level` has free seats; returns their callbacks.
  std::vector<std::function<void()>> DispatchLocked(Level& level);

  const FlowControlOptions options_;
  mutable std::mutex mu_;
  Ticket next_ticket_ = 1;                     // guarded by mu_
  std::unordered_map<Ticket, Entry> entries_;  // guarded by mu_: queued and executing requests
  Level system_;                               // guarded by mu_
  Level global_;                               // guarded by mu_
  int readonly_ = 0;                           // guarded by mu_: queued + executing, read-only
  int mutating_ = 0;                           // guarded by mu_: queued + executing, mutating
};

}  // namespace converge::apiserver
