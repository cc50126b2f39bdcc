#include "store/thread_latency.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace converge::store {

namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc 2.36 has no wrapper.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

}  // namespace

bool RequestShortSchedulerSlice(std::chrono::nanoseconds slice) {
#if defined(__linux__) && defined(SYS_sched_setattr)
  SchedAttr attr;
  std::memset(&attr, 0, sizeof(attr));
  // Keep the policy and nice value the thread has; change only the slice.
  if (::syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) return false;
  if (attr.sched_policy != 0) return false;  // not SCHED_OTHER: leave it alone
  attr.size = sizeof(attr);
  attr.sched_runtime = static_cast<uint64_t>(slice.count());
  return ::syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
#else
  (void)slice;
  return false;
#endif
}

}  // namespace converge::store
