// Crash test: a child process (store_crash_child) writes concurrently and reports every
// acknowledged write; it is killed with SIGKILL at a random moment, the store is reopened, and
// every acknowledged write must be there with the revision it was acknowledged at, and the
// revision must never go backwards. Repeated for many rounds on one store, so that later rounds
// also crash in the middle of recovery's leftovers and of compactions.
//
//   CONVERGE_STORE_SEED=<n>          replay one seed (printed on failure)
//   CONVERGE_STORE_CRASH_ROUNDS=<n>  rounds (default 24)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::store {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kMaxRunMs = 600;  // sanitized processes start and write slower
#else
constexpr int kMaxRunMs = 250;
#endif

struct Round {
  std::map<std::string, Revision> acked;
  bool ready = false;
  int exit_signal = 0;
  std::string errors;
};

// Runs the child on `dir` (in the store's default mode, or `mode`), kills it `run_ms` after it
// reported ready, and collects what it acknowledged before dying.
Round RunChild(const std::string& dir, int run_ms, const char* mode = nullptr) {
  Round round;
  int fds[2];
  if (::pipe(fds) != 0) {
    ADD_FAILURE() << "pipe";
    return round;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execl(CONVERGE_STORE_CRASH_CHILD, CONVERGE_STORE_CRASH_CHILD, dir.c_str(), mode, nullptr);
    _exit(127);
  }
  ::close(fds[1]);
  std::string buffer;
  auto parse = [&] {
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::istringstream line(buffer.substr(0, nl));
      buffer.erase(0, nl + 1);
      std::string key;
      Revision rev = 0;
      line >> key >> rev;
      if (key == "ready") {
        round.ready = true;
      } else {
        round.acked[key] = rev;
      }
    }
  };
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline;
  const auto give_up = Clock::now() + std::chrono::seconds(60);
  bool killed = false;
  char chunk[65536];
  while (true) {
    if (!killed && deadline && Clock::now() >= *deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    if (!killed && Clock::now() > give_up) {
      ::kill(pid, SIGKILL);
      killed = true;
      ADD_FAILURE() << "the child never got ready";
    }
    pollfd p{fds[0], POLLIN, 0};
    ::poll(&p, 1, 5);
    if (p.revents & (POLLIN | POLLHUP)) {
      const ssize_t n = ::read(fds[0], chunk, sizeof(chunk));
      if (n <= 0) break;  // EOF: the child is gone and everything it wrote was read
      buffer.append(chunk, static_cast<size_t>(n));
      parse();
      if (round.ready && !deadline) deadline = Clock::now() + std::chrono::milliseconds(run_ms);
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) round.exit_signal = WTERMSIG(status);
  if (WIFEXITED(status)) round.errors = "child exited with " + std::to_string(WEXITSTATUS(status));
  return round;
}

uint64_t Seed() {
  if (const char* s = std::getenv("CONVERGE_STORE_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device()();
}

// 24 rounds; 8 in the sanitizer builds, which check the same code for memory errors and races
// (every round runs it) rather than the odds of a kill landing at a bad moment, and whose rounds
// are four times slower.
int Rounds() {
  if (const char* s = std::getenv("CONVERGE_STORE_CRASH_ROUNDS")) return std::atoi(s);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 8;
#else
  return 24;
#endif
}

// Rounds of crash and reopen on one store; `mode` ("log" or "direct") as for RunChild.
void CrashRounds(int rounds, const char* mode) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("CONVERGE_STORE_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  TempDir dir;
  std::map<std::string, Revision> all_acked;
  Revision last_revision = 0;
  size_t total = 0;
  for (int round = 0; round < rounds && !::testing::Test::HasFailure(); ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const int run_ms = std::uniform_int_distribution<int>(5, kMaxRunMs)(rng);
    Round r = RunChild(dir.path(), run_ms, mode);
    ASSERT_TRUE(r.ready) << r.errors;
    ASSERT_EQ(r.exit_signal, SIGKILL) << "the child died on its own: " << r.errors;
    total += r.acked.size();
    Revision max_acked = 0;
    for (const auto& [key, rev] : r.acked) max_acked = std::max(max_acked, rev);
    all_acked.insert(r.acked.begin(), r.acked.end());

    // Reopened in the child's mode, and every other round in the other one: a log the child
    // left is replayed either way.
    EmbeddedStoreOptions options = TestStoreOptions(dir.path());
    options.write_ahead_log = std::string_view(mode) == "log";
    if (round % 2 == 1) options.write_ahead_log = !options.write_ahead_log;
    auto opened = EmbeddedStore::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto& store = *opened;
    const Revision now = store->CurrentRevision();
    EXPECT_GE(now, max_acked) << "an acknowledged revision was lost";
    EXPECT_GE(now, last_revision) << "the revision went backwards";
    last_revision = now;
    size_t missing = 0;
    for (const auto& [key, rev] : all_acked) {
      auto got = store->Range(RangeRequest{.key = key});
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      if (got->kvs.size() != 1) {
        ++missing;
        continue;
      }
      EXPECT_EQ(got->kvs[0]->mod_revision, rev) << key;
      EXPECT_EQ(got->kvs[0]->value, CrashTestValue(key)) << key;
    }
    EXPECT_EQ(missing, 0u) << "acknowledged writes missing after the crash";
  }
  EXPECT_GT(total, 0u) << "no write was ever acknowledged: the test proved nothing";
  std::printf("crash test (%s): %d rounds, %zu acknowledged writes checked, final revision %lld\n",
              mode, rounds, total, static_cast<long long>(last_revision));
}

TEST(CrashTest, AcknowledgedWritesSurviveSigkill) {
  CrashRounds(Rounds(), "direct");
}

TEST(CrashTest, AcknowledgedWritesSurviveSigkillWithTheWriteAheadLog) {
  CrashRounds(Rounds(), "log");
}

}  // namespace
}  // namespace converge::store
