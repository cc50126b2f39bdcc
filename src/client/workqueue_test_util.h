// Helpers shared by the work queue tests.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace converge::client::testing {

// Waits (in real time) until `done` holds. The bound only turns a hang into a failure; no test
// depends on how long anything takes.
inline bool Eventually(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace converge::client::testing
