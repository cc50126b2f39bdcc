// The store's in-memory index on the paths every write takes (docs/PERFORMANCE.md, "The store's
// index finds keys by hash"): looking one key up (a write's compare and put), a put of a key it
// holds (an update's Apply), and a put of a new key (a create's Apply), at 300,000 keys; and the
// heap one key costs, as jemalloc counts it (BM_IndexBytesPerKey).
#include <benchmark/benchmark.h>
#if CONVERGE_BENCH_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "store/index.h"

namespace converge::store {
namespace {

constexpr int kKeys = 300000;

std::string Key(int64_t i) {
  // Spread over the key space, as pod names are, so neighbours in the tree are not neighbours in
  // time.
  return "/registry/pods/default/web-7c9f8d6b5-" + std::to_string(i * 7919 % 1000003);
}

struct Filled {
  Index index;
  std::vector<std::string> keys;
  Revision next = 1;
  Filled() {
    for (int i = 0; i < kKeys; ++i) {
      keys.push_back(Key(i));
      index.Apply({{keys.back(), RevisionPair{next++, 0}}});
    }
  }
};

Filled& Shared() {
  static Filled* filled = new Filled;
  return *filled;
}

void BM_IndexGetExisting(benchmark::State& state) {
  Filled& f = Shared();
  std::mt19937 rng(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.index.Get(f.keys[rng() % kKeys], Index::kLatest));
  }
}
BENCHMARK(BM_IndexGetExisting);

void BM_IndexGetMissing(benchmark::State& state) {
  Filled& f = Shared();
  std::vector<std::string> missing;
  for (int i = 0; i < 1024; ++i) missing.push_back(Key(i) + "-x");
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.index.Get(missing[i++ % missing.size()], Index::kLatest));
  }
}
BENCHMARK(BM_IndexGetMissing);

void BM_IndexPutExisting(benchmark::State& state) {
  Filled& f = Shared();
  std::mt19937 rng(2);
  std::vector<Index::Change> change(1);
  for (auto _ : state) {
    change[0].key = f.keys[rng() % kKeys];
    change[0].rev = RevisionPair{f.next++, 0};
    f.index.Apply(change);
  }
}
BENCHMARK(BM_IndexPutExisting);

// Fills a fresh index with kKeys new keys per iteration; reported per key.
void BM_IndexPutNew(benchmark::State& state) {
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(Key(i));
  std::vector<Index::Change> change(1);
  for (auto _ : state) {
    Index index;
    Revision rev = 1;
    for (const std::string& k : keys) {
      change[0].key = k;
      change[0].rev = RevisionPair{rev++, 0};
      index.Apply(change);
    }
    benchmark::DoNotOptimize(index.KeyCount());
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
BENCHMARK(BM_IndexPutNew)->Unit(benchmark::kMillisecond);

#if CONVERGE_BENCH_JEMALLOC
// Bytes jemalloc has handed out and not taken back (its size classes included).
size_t AllocatedBytes() {
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);
  size_t allocated = 0;
  len = sizeof(allocated);
  mallctl("stats.allocated", &allocated, &len, nullptr, 0);
  return allocated;
}

// The heap per key of an index holding kKeys keys of an Event's shape (each written once: what
// most keys are) or of a pod's (written `revisions` times, then compacted to the newest).
void BM_IndexBytesPerKey(benchmark::State& state) {
  const int revisions = static_cast<int>(state.range(0));
  std::vector<std::string> keys;
  for (int64_t i = 0; i < kKeys; ++i) {
    keys.push_back("/registry/events/bench-e2e-1796634666/bench-6b9f4c7d8-" +
                   std::to_string(i * 7919 % 1000003) + ".18a3f0c2d4e5b6a7");
  }
  std::vector<Index::Change> change(1);
  double per_key = 0;
  for (auto _ : state) {
    const size_t before = AllocatedBytes();
    auto index = std::make_unique<Index>();
    Revision rev = 1;
    for (int r = 0; r < revisions; ++r) {
      for (const std::string& k : keys) {
        change[0].key = k;
        change[0].rev = RevisionPair{rev++, 0};
        index->Apply(change);
      }
    }
    std::optional<std::string> from = "";
    while (from) {
      std::vector<RevisionPair> dropped;  // freed before the count
      from = index->CompactChunk(rev - 1, *from, 10000, &dropped);
    }
    per_key = static_cast<double>(AllocatedBytes() - before) / kKeys;
  }
  state.counters["bytes_per_key"] = per_key;
}
BENCHMARK(BM_IndexBytesPerKey)->Arg(1)->Arg(3)->Iterations(1)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
}  // namespace converge::store

BENCHMARK_MAIN();
