// StatusWriter: the kubelet's writes of pod state to the API — pods/status patches and the final
// DELETE of a terminated pod — on a pool of workers, so that the sync loop never blocks on the
// API server (upstream's status manager).
//
// Writes are keyed by pod: a write submitted while an earlier one for the same pod is still
// queued replaces it (only the newest status matters; a pending final DELETE is kept), and one
// pod is written by one worker at a time, so writes of a pod land in order. A pod that goes
// ContainerCreating → Running → Ready faster than the API absorbs writes costs one write, not
// three.
//
// Failures: NotFound (the pod is gone) and a failed uid precondition (another incarnation) end a
// write; any other error is retried with backoff (100 ms doubling to 10 s) unless a newer write
// for the pod arrived meanwhile.
//
// Thread-safety: Submit may be called from any thread; Run once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "api/types.h"
#include "client/rest_client.h"
#include "util/clock.h"

namespace converge::kubelet {

struct PodWrite {
  api::ObjectKey key;
  std::string uid;
  std::string node;  // spec.nodeName: picks the client (StatusWriterOptions::client_for_node)
  std::string status_patch;   // strategic-merge patch of pods/status; "" for none
  bool delete_after = false;  // then DELETE with gracePeriodSeconds=0 and the uid precondition
};

struct StatusWriterOptions {
  client::RestClient* client = nullptr;  // required, not owned
  // The client that writes the pods of one node (e.g. one acting as system:node:<name>). Null,
  // or a null result: `client`. Returned clients are not owned.
  std::function<client::RestClient*(std::string_view node)> client_for_node;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  int workers = 4;
  util::Clock::Duration retry_initial = std::chrono::milliseconds(100);
  util::Clock::Duration retry_max = std::chrono::seconds(10);
};

class StatusWriter {
 public:
  explicit StatusWriter(StatusWriterOptions options);
  StatusWriter(const StatusWriter&) = delete;
  StatusWriter& operator=(const StatusWriter&) = delete;

  void Submit(PodWrite write);
  // Runs the workers until stop; queued writes are dropped then.
  void Run(std::stop_token stop);

  struct Stats {
    int64_t patches = 0;
    int64_t deletes = 0;
    int64_t superseded = 0;  // replaced while queued
    int64_t retries = 0;
    int64_t failures = 0;  // given up (NotFound, uid mismatch, invalid)
  };
  Stats stats() const;
  size_t queued() const;

 private:
  void Worker(std::stop_token stop);
  // One attempt; OK, or the error (retriable or not, see IsFinal).
  util::Status Write(const PodWrite& w, std::stop_token stop, bool* patched);

  const StatusWriterOptions options_;
  util::Clock* const clock_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  // Invariant: every key in queue_ is in pending_ and not in processing_.
  std::deque<api::ObjectKey> queue_;                      // guarded by mu_
  std::unordered_map<api::ObjectKey, PodWrite> pending_;  // guarded by mu_
  std::unordered_set<api::ObjectKey> processing_;         // guarded by mu_
  Stats stats_;                                           // guarded by mu_
};

}  // namespace converge::kubelet
