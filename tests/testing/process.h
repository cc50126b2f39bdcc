// Child processes for tests: started with arguments, stopped by their own PID. They die with the
// test (PR_SET_PDEATHSIG): a runner stopped by a signal (ctest's timeout, Ctrl-C) leaves no
// server, etcd or kubectl behind. The signal follows the thread that started the child, so a
// child must be started by a thread that outlives it (the test's own thread).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace converge::testing {

// In a forked child before exec: SIGKILL when `parent` (the forking thread) ends; exits at once
// if it already has.
void DieWithParent(pid_t parent);

class Process {
 public:
  Process() = default;
  ~Process() { Kill(); }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Starts `argv[0]` with `argv`; stdout and stderr go to `log_path` (appended).
  bool Start(const std::vector<std::string>& argv, const std::string& log_path);
  // SIGTERM, then SIGKILL after `grace_ms`; reaps the child. Safe to call twice.
  void Stop(int grace_ms = 5000);
  // SIGKILL now (a crash); reaps the child.
  void Kill();
  // False once the child has exited (reaping it; exit_code then tells how it ended).
  bool Running();
  pid_t pid() const { return pid_; }
  // The exit code of a child Running() found exited on its own; -1 if it was killed by a signal,
  // or has not been seen to exit.
  int exit_code() const { return exit_code_; }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// A fresh temporary directory, removed (recursively) on destruction unless KEEP_TEST_DIRS is set.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Whole file contents, or "" when unreadable.
std::string ReadFile(const std::string& path);

}  // namespace converge::testing
