// store_crash_child DIR [log|direct]: the process crash_test.cc kills with SIGKILL at random
// moments.
//
// Opens the store in DIR (with the write-ahead log or direct LMDB commits if named, else the
// store's default) and writes from several threads at once: unique keys (each acknowledged
// write is reported on stdout as "<key> <revision>" only after Put returned), churn on a few
// scratch keys (puts, deletes, compare-and-swap), and compactions. Runs until killed. Exit
// codes: 2 open failed, 3 a write failed.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::store {
namespace {

std::mutex out_mu;

void Report(const std::string& line) {
  std::lock_guard lock(out_mu);
  const std::string text = line + "\n";
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(1, text.data() + off, text.size() - off);
    if (n <= 0) _exit(4);
    off += static_cast<size_t>(n);
  }
}

int Main(const std::string& dir, const std::string& mode) {
  EmbeddedStoreOptions options = TestStoreOptions(dir);
  if (mode == "log") options.write_ahead_log = true;
  if (mode == "direct") options.write_ahead_log = false;
  options.compaction_batch = 50;  // many small compaction commits: more places to die in
  auto opened = EmbeddedStore::Open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().ToString().c_str());
    return 2;
  }
  std::unique_ptr<EmbeddedStore> store = std::move(opened).value();
  Report("ready " + std::to_string(store->CurrentRevision()));
  const std::string prefix = "ack/" + std::to_string(::getpid()) + "/";
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0;; ++i) {
        const std::string key = prefix + std::to_string(t) + "/" + std::to_string(i);
        auto r = store->Put(PutRequest{.key = key, .value = CrashTestValue(key)});
        if (!r.ok()) {
          std::fprintf(stderr, "put: %s\n", r.status().ToString().c_str());
          _exit(3);
        }
        Report(key + " " + std::to_string(r->header_revision));
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0;; ++i) {
      const std::string key = "scratch/" + std::to_string(i % 5);
      if (i % 3 == 2) {
        (void)store->DeleteRange(
            DeleteRangeRequest{.key = "scratch/", .range_end = PrefixEnd("scratch/")});
      } else {
        TxnRequest txn;
        txn.compare.push_back(Compare{.key = key,
                                      .target = Compare::Target::kVersion,
                                      .result = Compare::Result::kLess,
                                      .number = 1000});
        txn.success.push_back(PutRequest{.key = key, .value = std::string(500, 'x')});
        (void)store->Txn(txn);
      }
    }
  });
  threads.emplace_back([&] {
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const Revision target = store->CurrentRevision() - 200;
      if (target > store->CompactRevision()) (void)store->Compact(target);
    }
  });
  for (auto& t : threads) t.join();
  return 0;
}

}  // namespace
}  // namespace converge::store

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s DIR [log|direct]\n", argv[0]);
    return 1;
  }
  return converge::store::Main(argv[1], argc == 3 ? argv[2] : "");
}
