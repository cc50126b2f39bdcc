// CloudSim: the simulated cloud's HTTP/JSON API for load balancers (`converge cloud-sim`).
//
// Cloud API (faults apply, see faults.h):
//   POST   /v1/loadbalancers             create; body {"name", "tags": {k: v}, "ports": [...]};
//                                        header Idempotency-Key: a key already used by a live
//                                        load balancer returns it (200, Idempotent-Replayed:
//                                        true) instead of creating another (201)
//   GET    /v1/loadbalancers?tag=k=v     list, filtered by every `tag` given (AND)
//   GET    /v1/loadbalancers/ID          one load balancer; 404 when it does not exist
//   PATCH  /v1/loadbalancers/ID          body {"ports": [...]}: replaces the ports
//   DELETE /v1/loadbalancers/ID          200 with the deleted load balancer; 404 when gone
// Admin API (never faulted):
//   GET /admin/faults, PUT|PATCH /admin/faults   the fault configuration (FaultInjector::Patch)
//   GET /admin/counters                          calls, creates, deletes, live load balancers...
//   GET /admin/loadbalancers[?tag=k=v]           the list, for tests' assertions
//   GET /healthz
// Errors are {"error": {"code": "...", "message": "..."}} with an HTTP status that says what the
// client should do: 4xx do not retry the same call, 5xx may succeed later.
//
// Latency and hangs are real waits on a worker thread; Stop wakes them.
//
// Thread-safety: Start and Stop from one thread; Handle concurrently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "apiserver/request.h"
#include "cloudsim/faults.h"
#include "cloudsim/load_balancers.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::apiserver {
class HttpServer;
}

namespace converge::cloudsim {

struct CloudSimOptions {
  std::string listen = "127.0.0.1:8790";  // HOST:PORT; port 0 picks a free one
  FaultConfig faults;
  uint64_t seed = 1;
  util::Clock::Duration provisioning_delay{0};
  // Workers serve calls, including stalled ones: enough for the hangs of a busy client.
  int worker_threads = 32;
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
};

class CloudSim {
 public:
  explicit CloudSim(CloudSimOptions options);
  ~CloudSim();
  CloudSim(const CloudSim&) = delete;
  CloudSim& operator=(const CloudSim&) = delete;

  // Binds and serves. Fails when the address cannot be bound.
  util::Status Start();
  // Wakes stalled calls, stops serving and joins the threads. Safe to call twice.
  void Stop();
  uint16_t port() const;

  // One call, as the HTTP server hands it over (tests call it directly).
  apiserver::Response Handle(const apiserver::Request& req);

  FaultInjector& faults() { return faults_; }
  LoadBalancerStore& store() { return store_; }

 private:
  apiserver::Response HandleCloud(const apiserver::Request& req);
  apiserver::Response Perform(const apiserver::Request& req, const std::string& id);
  boost::json::object CountersJson() const;
  // Waits `d` or until Stop.
  void Wait(std::chrono::milliseconds d);

  const CloudSimOptions options_;
  util::Clock* const clock_;
  LoadBalancerStore store_;
  FaultInjector faults_;
  std::unique_ptr<apiserver::HttpServer> http_;

  std::mutex wait_mu_;
  std::condition_variable_any wait_cv_;
  bool stopping_ = false;  // guarded by wait_mu_

  std::atomic<int64_t> calls_{0};         // cloud API calls received
  std::atomic<int64_t> create_calls_{0};  // POSTs received (before faults)
};

}  // namespace converge::cloudsim
