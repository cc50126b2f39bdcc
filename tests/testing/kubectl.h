// Runs the real kubectl against a test server: its own kubeconfig (the one the server wrote) and
// a private --cache-dir, so tests never share discovery caches.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace converge::testing {

struct CommandResult {
  int exit_code = -1;  // -1: could not run or timed out
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Runs `argv` (argv[0] resolved through PATH) with extra environment variables and `stdin_data`,
// killing it after `timeout`.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         const std::string& stdin_data = "",
                         std::chrono::seconds timeout = std::chrono::seconds(120));

class Kubectl {
 public:
  Kubectl(std::string kubeconfig, std::string cache_dir);
  // kubectl --kubeconfig K --cache-dir C <args...>
  CommandResult Run(const std::vector<std::string>& args, const std::string& stdin_data = "",
                    const std::map<std::string, std::string>& env = {},
                    std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  // Starts kubectl in the background (for -w); output collected until Stop().
  class Background {
   public:
    ~Background();
    // SIGTERM and collect what it printed.
    CommandResult Stop();
    // Waits until stdout contains `needle` or `timeout` passes; returns whether it appeared.
    bool WaitFor(const std::string& needle, std::chrono::seconds timeout);
    std::string out_so_far();

   private:
    friend class Kubectl;
    int pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    std::string out_;
    std::string err_;
    void Drain(int timeout_ms);
  };
  std::unique_ptr<Background> Start(const std::vector<std::string>& args) const;

  static bool Available();

 private:
  std::vector<std::string> Argv(const std::vector<std::string>& args) const;
  std::string kubeconfig_;
  std::string cache_dir_;
};

}  // namespace converge::testing
