#include "testing/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace converge::testing {
namespace {

// A test runner killed by a signal (ctest's timeout, Ctrl-C) takes the processes it started
// with it: no server keeps running, holding a port and a data dir, after its test is gone.
TEST(ProcessTest, AChildDiesWithTheRunnerThatStartedIt) {
  const std::string dir = ::testing::TempDir() + "process_test_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string pid_file = dir + "/child.pid";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t runner = fork();
  ASSERT_GE(runner, 0);
  if (runner == 0) {
    // The "runner": starts a long-lived child, says so, and waits to be killed.
    close(ready[0]);
    Process child;
    if (!child.Start({"/bin/sleep", "300"}, dir + "/child.log")) _exit(1);
    std::ofstream(pid_file) << child.pid();
    char ok = 1;
    if (write(ready[1], &ok, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  ASSERT_EQ(kill(child, 0), 0) << "the child runs";

  ASSERT_EQ(kill(runner, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(runner, &status, 0), runner);
  // The child was re-parented; whoever adopted it may not reap it, so a zombie counts as gone.
  auto dead = [child] {
    if (kill(child, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, comm, state;
    stat >> pid >> comm >> state;
    return state == "Z";
  };
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = dead();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!gone) kill(child, SIGKILL);  // a failed test leaves nothing behind either
  EXPECT_TRUE(gone) << "pid " << child << " outlived the runner that started it";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace converge::testing
