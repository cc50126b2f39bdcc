#include "bench/pods.h"

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/server_process.h"
#include "bench/stats.h"
#include "client/api_errors.h"

namespace converge::bench {

namespace json = boost::json;

api::Object MakePod(const std::string& name) {
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", name}, {"labels", json::object{{"app", "bench"}}}}},
      {"spec", json::object{{"containers",
                             json::array{json::object{{"name", "c"}, {"image", "pause:3.9"}}}}}}};
  return api::Object(std::move(pod));
}

util::StatusOr<CreatePodsResult> CreatePods(const std::string& kubeconfig, const std::string& ns,
                                            const std::string& prefix, int64_t count,
                                            int concurrency, Progress* progress) {
  std::atomic<int64_t> next{0}, created{0};
  std::mutex mu;
  util::Status first_error;  // guarded by mu
  std::atomic<bool> failed{false};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < concurrency; ++t) {
    workers.emplace_back([&] {
      auto c = ClientForKubeconfig(kubeconfig);
      if (!c.ok()) {
        std::lock_guard lock(mu);
        first_error = c.status();
        failed = true;
        return;
      }
      for (int64_t i = next++; i < count && !failed; i = next++) {
        auto r = (*c)->Create(kPodsResource, ns, MakePod(prefix + std::to_string(i)));
        if (!r.ok() && !client::IsAlreadyExists(r.status())) {
          std::lock_guard lock(mu);
          if (first_error.ok()) first_error = r.status().WithContext("creating pods");
          failed = true;
          return;
        }
        int64_t done = ++created;
        if (progress) progress->Set(done);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  if (failed) return first_error;
  return CreatePodsResult{.created = created.load(), .seconds = SecondsSince(start)};
}

}  // namespace converge::bench
