// A store whose watch streams can be held back (test-only): with the gate closed, the API
// server's watch caches lag the store, which is what list freshness and read-modify-writes that
// start from the cache must survive. Header-only; shared by the apiserver and server tests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <utility>

#include "store/kv.h"

namespace converge::store {

// Holds the store's watch responses back while closed: the API server's watch caches then lag
// the store, which is what a read-modify-write starting from the cache must survive.
class WatchGate {
 public:
  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // False if `stop` was requested before the gate opened.
  bool Wait(const std::stop_token& stop) {
    std::unique_lock lock(mu_);
    while (!open_) {
      if (stop.stop_requested()) return false;
      cv_.wait_for(lock, std::chrono::milliseconds(10));
    }
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;  // guarded by mu_
};

class GatedWatchStream final : public WatchStream {
 public:
  GatedWatchStream(std::unique_ptr<WatchStream> inner, WatchGate* gate)
      : inner_(std::move(inner)), gate_(gate) {}
  util::StatusOr<WatchResponse> Next(std::stop_token stop) override {
    auto resp = inner_->Next(stop);
    if (resp.ok() && !gate_->Wait(stop)) return util::Cancelled("stopped");
    return resp;
  }
  void RequestProgress() override { inner_->RequestProgress(); }
  void Cancel() override { inner_->Cancel(); }

 private:
  std::unique_ptr<WatchStream> inner_;
  WatchGate* const gate_;
};

// The embedded store with its watch streams behind `gate`.
class GatedKV final : public KV {
 public:
  GatedKV(std::unique_ptr<KV> inner, WatchGate* gate) : inner_(std::move(inner)), gate_(gate) {}
  util::StatusOr<RangeResponse> Range(const RangeRequest& req) override {
    return inner_->Range(req);
  }
  util::StatusOr<PutResponse> Put(const PutRequest& req) override { return inner_->Put(req); }
  util::StatusOr<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& req) override {
    return inner_->DeleteRange(req);
  }
  util::StatusOr<TxnResponse> Txn(TxnRequest req) override { return inner_->Txn(std::move(req)); }
  void TxnAsync(TxnRequest req, TxnCallback done) override {
    inner_->TxnAsync(std::move(req), std::move(done));
  }
  util::StatusOr<CompactResponse> Compact(Revision revision) override {
    return inner_->Compact(revision);
  }
  util::StatusOr<std::unique_ptr<WatchStream>> Watch(const WatchRequest& req) override {
    auto w = inner_->Watch(req);
    if (!w.ok()) return w.status();
    return std::unique_ptr<WatchStream>(new GatedWatchStream(std::move(*w), gate_));
  }
  Revision CurrentRevision() const override { return inner_->CurrentRevision(); }
  Revision CompactRevision() const override { return inner_->CompactRevision(); }

 private:
  std::unique_ptr<KV> inner_;
  WatchGate* const gate_;
};

}  // namespace converge::store
