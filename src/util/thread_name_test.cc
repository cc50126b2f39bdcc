#include "util/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

namespace converge::util {
namespace {

std::string NameOf(std::thread& t) {
  char buf[32] = {};
  pthread_getname_np(t.native_handle(), buf, sizeof(buf));
  return buf;
}

TEST(ThreadNameTest, NamesTheCallingThreadCutToFifteenCharacters) {
  std::atomic<int> step{0};
  std::thread short_name([&] {
    SetThreadName("store-commit");
    step = 1;
    while (step != 2) std::this_thread::yield();
  });
  while (step != 1) std::this_thread::yield();
  EXPECT_EQ(NameOf(short_name), "store-commit");
  step = 2;
  short_name.join();

  step = 0;
  std::thread long_name([&] {
    SetThreadName("a-name-longer-than-fifteen");
    step = 1;
    while (step != 2) std::this_thread::yield();
  });
  while (step != 1) std::this_thread::yield();
  EXPECT_EQ(NameOf(long_name), "a-name-longer-t");
  step = 2;
  long_name.join();
}

}  // namespace
}  // namespace converge::util
