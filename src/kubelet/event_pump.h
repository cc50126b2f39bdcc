// EventPump: events of many simulated nodes through one set of writer threads. Upstream's
// kubelet records with source {component: kubelet, host: <node>}; an EventRecorder has one
// source, so the pump keeps one recorder per node (created on first use: idle nodes cost
// nothing) and flushes the ones that have events queued from `workers` threads.
//
// Recording never blocks; each node's recorder queues up to 1000 events and drops beyond
// (client-go's behaviour), so a storm of pod starts degrades events, not the kubelet.
//
// Thread-safety: Record may be called from any thread; Run once.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "util/clock.h"

namespace converge::kubelet {

class EventPump {
 public:
  // `client_for_node` (optional) picks the client that writes the events of one host (e.g. one
  // acting as system:node:<host>); null, or a null result: `client`. Clients are not owned.
  EventPump(client::RestClient* client, util::Clock* clock, int workers = 2,
            std::function<client::RestClient*(std::string_view host)> client_for_node = nullptr);
  EventPump(const EventPump&) = delete;
  EventPump& operator=(const EventPump&) = delete;

  void Record(const std::string& host, const client::ObjectReference& involved,
              std::string_view type, std::string_view reason, std::string_view message);
  // Flushes recorders with queued events until stop; what is still queued then is dropped.
  void Run(std::stop_token stop);

  int64_t dropped() const;

 private:
  void Worker(std::stop_token stop);
  client::EventRecorder* RecorderLocked(const std::string& host);

  client::RestClient* const client_;
  const std::function<client::RestClient*(std::string_view)> client_for_node_;
  // One sink per host (a sink is bound to its client); created with the host's recorder.
  std::unordered_map<std::string, std::unique_ptr<client::RestEventSink>> sinks_;  // mu_
  util::Clock* const clock_;
  const int workers_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::unordered_map<std::string, std::unique_ptr<client::EventRecorder>> recorders_;  // mu_
  std::vector<std::string> dirty_;             // guarded by mu_: hosts with events queued
  std::unordered_set<std::string> dirty_set_;  // guarded by mu_
  std::unordered_set<std::string> flushing_;   // guarded by mu_
};

}  // namespace converge::kubelet
