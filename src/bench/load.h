// RunClosedLoop: C clients, each issuing one operation at a time for a fixed duration (a closed
// loop, as upstream's and etcd's benchmarks drive a server), with every operation's latency kept.
//
// Thread-safety: RunClosedLoop starts and joins its own threads; `op` is called concurrently
// from all of them (with distinct client indexes).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "bench/report.h"
#include "bench/stats.h"
#include "util/status.h"

namespace converge::bench {

struct ClosedLoopResult {
  int64_t ops = 0;     // successful operations
  int64_t errors = 0;  // failed ones (not in the latencies)
  double seconds = 0;  // from the start to the last client's end
  Latencies latencies;
  util::Status first_error;
  double per_second() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
};

// One client's state: `init` runs once per client on its own thread before the clock starts
// (connections); `op(client, i)` is the i-th operation of that client.
struct ClosedLoopOptions {
  int clients = 1;
  std::chrono::milliseconds duration{std::chrono::seconds(5)};
  std::function<util::Status(int client)> init;  // may be empty
  std::function<util::Status(int client, int64_t i)> op;
  std::string label;  // progress bar label
};

ClosedLoopResult RunClosedLoop(const ClosedLoopOptions& options);

}  // namespace converge::bench
