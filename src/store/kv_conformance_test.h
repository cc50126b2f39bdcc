// The backend-independent conformance suite for KV (kv.h).
//
// Every backend instantiates KvConformanceTest with a factory:
//   INSTANTIATE_TEST_SUITE_P(Embedded, KvConformanceTest,
//                            ::testing::Values(KvBackend{"Embedded", MakeEmbeddedFactory}),
//                            KvBackendName);
// and then runs every case in kv_conformance_test.cc, kv_watch_conformance_test.cc and
// kv_model_test.cc. Cases that need a capability a backend lacks (reopening the same data,
// cancelling slow watchers) skip themselves for that backend.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "store/kv.h"
#include "util/status.h"

namespace converge::store {

// Next() with a watchdog: a hang fails the test instead of blocking forever.
inline util::StatusOr<WatchResponse> NextOrTimeout(WatchStream& w) {
  std::stop_source stop;
  std::jthread watchdog([&stop](std::stop_token done) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait_for(lock, done, std::chrono::seconds(30), [] { return false; });
    if (!done.stop_requested()) stop.request_stop();
  });
  auto r = w.Next(stop.get_token());
  watchdog.request_stop();
  return r;
}

// Reads responses until an event at revision >= `until` arrived (or a cancel / error).
// Fails the test on a timeout.
inline std::vector<WatchResponse> ReadUntil(WatchStream& w, Revision until) {
  std::vector<WatchResponse> out;
  while (true) {
    auto r = NextOrTimeout(w);
    if (!r.ok()) {
      ADD_FAILURE() << "watch ended before revision " << until << ": " << r.status().ToString();
      return out;
    }
    out.push_back(*r);
    if (r->canceled) return out;
    if (!r->events.empty() && r->events.back().kv->mod_revision >= until) return out;
  }
}

inline std::vector<Event> Flatten(const std::vector<WatchResponse>& responses) {
  std::vector<Event> events;
  for (const auto& r : responses) events.insert(events.end(), r.events.begin(), r.events.end());
  return events;
}

struct KvTestOptions {
  // Watcher buffer for backends that cancel slow watchers (0 = the backend's default).
  size_t watcher_buffer = 0;
};

// Creates stores of one backend for the tests; each factory owns its temporary data.
class KvFactory {
 public:
  virtual ~KvFactory() = default;
  // A fresh, empty store.
  virtual util::StatusOr<std::unique_ptr<KV>> Open(const KvTestOptions& options) = 0;
  // Closes `kv` and opens the same data again (for backends that can).
  virtual bool CanReopen() const { return false; }
  virtual util::StatusOr<std::unique_ptr<KV>> Reopen(std::unique_ptr<KV> kv) {
    (void)kv;
    return util::Unimplemented("reopen");
  }
  // Whether a watcher whose buffer fills is cancelled with kCancelReasonSlow.
  virtual bool CancelsSlowWatchers() const { return false; }
  // Whether a watch from exactly the compact revision still sees a delete at that revision and
  // prev_kv for its events (etcd drops both; the embedded store keeps them).
  virtual bool ExactAtCompactRevision() const { return false; }
};

struct KvBackend {
  std::string name;
  std::function<std::unique_ptr<KvFactory>()> make;
};
inline void PrintTo(const KvBackend& backend, std::ostream* os) {
  *os << backend.name;
}
inline std::string KvBackendName(const ::testing::TestParamInfo<KvBackend>& info) {
  return info.param.name;
}

class KvConformanceTest : public ::testing::TestWithParam<KvBackend> {
 protected:
  void SetUp() override {
    factory_ = GetParam().make();
    auto kv = factory_->Open(KvTestOptions{});
    ASSERT_TRUE(kv.ok()) << kv.status().ToString();
    kv_ = std::move(kv).value();
  }
  void TearDown() override { kv_.reset(); }

  // Puts and returns the revision of the write.
  Revision Put(const std::string& key, const std::string& value) {
    auto r = kv_->Put(PutRequest{.key = key, .value = value});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->header_revision : 0;
  }
  Revision Delete(const std::string& key, const std::string& range_end = "") {
    auto r = kv_->DeleteRange(DeleteRangeRequest{.key = key, .range_end = range_end});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->header_revision : 0;
  }
  // The key at `rev` (0 = current), or null.
  KeyValuePtr Get(const std::string& key, Revision rev = 0) {
    auto r = kv_->Range(RangeRequest{.key = key, .revision = rev});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || r->kvs.empty()) return nullptr;
    return r->kvs[0];
  }
  RangeResponse MustRange(const RangeRequest& req) {
    auto r = kv_->Range(req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(r).value() : RangeResponse{};
  }
  std::vector<std::string> Keys(const RangeResponse& r) {
    std::vector<std::string> keys;
    for (const auto& kv : r.kvs) keys.push_back(kv->key);
    return keys;
  }
  std::unique_ptr<WatchStream> MustWatch(const WatchRequest& req) {
    auto w = kv_->Watch(req);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }

  std::unique_ptr<KvFactory> factory_;
  std::unique_ptr<KV> kv_;
};

}  // namespace converge::store
