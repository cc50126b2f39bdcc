#include "util/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <string>
#include <thread>

namespace converge::util {
namespace {

// The name a thread that called SetThreadName(`name`) carries, read from another thread.
std::string NameAfterSetting(const std::string& name) {
  std::atomic<int> step{0};
  std::thread t([&] {
    SetThreadName(name);
    step = 1;
    while (step != 2) std::this_thread::yield();
  });
  while (step != 1) std::this_thread::yield();
  char buf[32] = {};
  pthread_getname_np(t.native_handle(), buf, sizeof(buf));
  step = 2;
  t.join();
  return buf;
}

TEST(ThreadNameTest, NamesTheCallingThreadCutToFifteenCharacters) {
  EXPECT_EQ(NameAfterSetting("store-commit"), "store-commit");
  EXPECT_EQ(NameAfterSetting("a-name-longer-than-fifteen"), "a-name-longer-t");
}

}  // namespace
}  // namespace converge::util
