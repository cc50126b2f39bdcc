// extent_probe: what an fdatasync costs after writing into different kinds of file blocks
// (docs/PERFORMANCE.md, "Store": why the store reserves zero-filled space past LMDB's data).
//
//   store_extent_probe [--dir=DIR] [--writes=N]
//
// For each kind of block, N times: write 12 KB (a lone 3 KB put's LMDB pages) at the next
// offset, then fdatasync. Kinds: past the end of the file (the file grows: ext4 allocates
// blocks at writeback), into fallocate()d space (unwritten extents), into zero-filled blocks
// that were written and synced before (plain overwrites). The kinds alternate write by write,
// so all see the same machine. On ext4 the first two need ext4's unwritten-extent conversion
// (a kworker of the ext4-rsv-conversion workqueue) before fdatasync returns; count its runs
// with `perf stat -e workqueue:workqueue_execute_start` or see them in `perf sched timehist`.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr size_t kWrite = 12 * 1024;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Kind {
  const char* name;
  std::string path;
  int fd = -1;
  std::vector<int64_t> latency;
};

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp";
  int writes = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--dir=", 0) == 0) {
      dir = a.substr(6);
    } else if (a.rfind("--writes=", 0) == 0) {
      writes = std::max(10, std::atoi(a.c_str() + 9));
    } else {
      std::fprintf(stderr, "usage: store_extent_probe [--dir=DIR] [--writes=N]\n");
      return 2;
    }
  }
  const size_t span = static_cast<size_t>(writes) * kWrite;
  Kind kinds[] = {{"append (the file grows)", dir + "/extent-probe-append"},
                  {"fallocate()d (unwritten extents)", dir + "/extent-probe-fallocate"},
                  {"zero-filled and synced (overwrite)", dir + "/extent-probe-zeroed"}};
  const std::string zeros(1 << 20, '\0');
  for (int k = 0; k < 3; ++k) {
    Kind& kind = kinds[k];
    kind.fd = ::open(kind.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (kind.fd < 0) {
      std::perror(kind.path.c_str());
      return 1;
    }
    if (k == 1 && ::fallocate(kind.fd, 0, 0, static_cast<off_t>(span)) != 0) {
      std::perror("fallocate");
      return 1;
    }
    for (size_t off = 0; k == 2 && off < span; off += zeros.size()) {
      if (::pwrite(kind.fd, zeros.data(), zeros.size(), static_cast<off_t>(off)) < 0) {
        std::perror("pwrite");
        return 1;
      }
    }
    ::fsync(kind.fd);
  }
  const std::string data(kWrite, 'x');
  for (int i = 0; i < writes; ++i) {
    for (Kind& kind : kinds) {
      if (::pwrite(kind.fd, data.data(), data.size(), static_cast<off_t>(i * kWrite)) < 0) {
        std::perror("pwrite");
        return 1;
      }
      const int64_t t0 = NowNs();
      ::fdatasync(kind.fd);
      kind.latency.push_back(NowNs() - t0);
    }
  }
  std::printf(
      "| blocks written into | fdatasync p50 ms | p90 ms | mean ms |\n|---|---:|---:|---:|\n");
  for (Kind& kind : kinds) {
    std::vector<int64_t>& v = kind.latency;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    std::printf(
        "| %s | %.3f | %.3f | %.3f |\n", kind.name, static_cast<double>(v[v.size() / 2]) / 1e6,
        static_cast<double>(v[v.size() * 9 / 10]) / 1e6, sum / static_cast<double>(v.size()) / 1e6);
    ::close(kind.fd);
    ::unlink(kind.path.c_str());
  }
  return 0;
}
