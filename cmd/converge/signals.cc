#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "commands.h"

namespace converge::cmd {

namespace {
std::atomic<int> exit_code{0};
}  // namespace

int ExitCode() {
  return exit_code.load();
}
void SetExitCode(int code) {
  exit_code = code;
}

void BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void WaitForShutdownSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
}

void RequestShutdown() {
  // To the process, not the thread: every thread blocks the signal, so it stays pending until
  // the thread in sigwait takes it.
  kill(getpid(), SIGTERM);
}

}  // namespace converge::cmd
