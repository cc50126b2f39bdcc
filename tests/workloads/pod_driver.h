// PodDriver: plays the kubelet for one namespace until simulated kubelets exist. It watches the
// namespace's pods and (when asked) marks each new pod Running and Ready through pods/status, so
// that ReplicaSets and Deployments see their pods become available.
//
// Every watch event is an observed instant: the driver keeps the live pods (not being deleted)
// after each event and hands them to `on_event`, which is where tests check invariants such as
// "never more than replicas + maxSurge pods".
//
// Thread-safety: one background thread (started by Start, stopped by Stop or the destructor);
// the accessors and set_make_ready are safe from any thread; `on_event` runs on the driver's
// thread, without the driver's lock held.
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "testing/http_client.h"

namespace converge::workloads_test {

struct PodView {
  std::string name;
  std::string rs;     // the controlling ReplicaSet's name ("" for none)
  std::string image;  // of the first container
  bool ready = false;
};
using LivePods = std::map<std::string, PodView>;

struct PodDriverOptions {
  testing::Kubeconfig kubeconfig;
  std::string ns;
  bool make_ready = true;
  std::function<void(const LivePods&)> on_event;
};

class PodDriver {
 public:
  explicit PodDriver(PodDriverOptions options);
  ~PodDriver();
  PodDriver(const PodDriver&) = delete;
  PodDriver& operator=(const PodDriver&) = delete;

  // Lists the pods, then watches them; returns once the initial list is in.
  void Start();
  void Stop();

  void set_make_ready(bool v) { make_ready_ = v; }
  LivePods Live() const;
  // The most live pods seen at any instant since Start (or ResetMax).
  size_t MaxLive() const;
  void ResetMax();
  // Watch events handled so far.
  int64_t events() const { return events_.load(); }

 private:
  void Loop(std::stop_token stop);
  // Handles one watch event (or list item) of `type`; returns the pod to mark ready, if any.
  std::string Apply(const std::string& type, const boost::json::object& pod);
  void MarkReady(testing::TestClient& client, const std::string& name);

  const PodDriverOptions options_;
  std::atomic<bool> make_ready_;
  std::atomic<int64_t> events_{0};
  mutable std::mutex mu_;
  LivePods live_;        // guarded by mu_
  size_t max_live_ = 0;  // guarded by mu_
  std::string rv_;       // guarded by mu_; the last resourceVersion seen
  bool listed_ = false;  // guarded by mu_
  std::condition_variable listed_cv_;
  std::jthread thread_;
};

}  // namespace converge::workloads_test
