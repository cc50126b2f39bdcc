#include "apiserver/event_expiry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace converge::apiserver {

namespace {

std::chrono::milliseconds SweepPeriod(const EventExpiryOptions& o) {
  if (o.sweep_period.count() > 0) return o.sweep_period;
  return std::clamp<std::chrono::milliseconds>(o.ttl / 10, std::chrono::seconds(1),
                                               std::chrono::minutes(1));
}

}  // namespace

EventExpiry::EventExpiry(EventExpiryOptions options)
    : options_(std::move(options)), sweep_period_(SweepPeriod(options_)) {}

void EventExpiry::Start() {
  notes_.emplace_back(options_.clock->Now(), options_.kv->CurrentRevision());
}

util::StatusOr<size_t> EventExpiry::Sweep() {
  const util::Clock::TimePoint now = options_.clock->Now();
  notes_.emplace_back(now, options_.kv->CurrentRevision());
  const util::Clock::TimePoint written_before = now - options_.ttl;
  while (notes_.size() >= 2 && notes_[1].first <= written_before) notes_.pop_front();
  if (notes_.front().first > written_before) return size_t{0};  // nothing is that old yet
  const store::Revision cutoff = notes_.front().second;
  if (cutoff <= swept_through_) return size_t{0};

  size_t deleted = 0;
  std::vector<Expired> batch;
  store::RangeRequest page{.key = options_.prefix,
                           .range_end = store::PrefixEnd(options_.prefix),
                           .limit = options_.page,
                           .keys_only = true};
  for (;;) {
    util::StatusOr<store::RangeResponse> r = options_.kv->Range(page);
    if (!r.ok()) return r.status();
    for (const store::KeyValuePtr& kv : r->kvs) {
      if (kv->mod_revision > cutoff) continue;
      batch.push_back({kv->key, kv->mod_revision});
      if (batch.size() < options_.batch) continue;
      util::StatusOr<size_t> n = Delete(batch);
      if (!n.ok()) return n.status();
      deleted += *n;
      batch.clear();
    }
    if (!r->more || r->kvs.empty()) break;
    page.key = r->kvs.back()->key + '\0';
  }
  if (!batch.empty()) {
    util::StatusOr<size_t> n = Delete(batch);
    if (!n.ok()) return n.status();
    deleted += *n;
  }
  swept_through_ = cutoff;
  return deleted;
}

util::StatusOr<size_t> EventExpiry::Delete(const std::vector<Expired>& batch) {
  auto txn_for = [](auto first, auto last) {
    store::TxnRequest t;
    for (auto it = first; it != last; ++it) {
      t.compare.push_back({.key = it->key,
                           .target = store::Compare::Target::kModRevision,
                           .result = store::Compare::Result::kEqual,
                           .number = it->mod_revision});
      t.success.emplace_back(store::DeleteRangeRequest{.key = it->key});
    }
    return t;
  };
  // All at once; if one of them was written meanwhile, one at a time.
  util::StatusOr<store::TxnResponse> all = options_.kv->Txn(txn_for(batch.begin(), batch.end()));
  if (!all.ok()) return all.status();
  if (all->succeeded) return batch.size();
  size_t deleted = 0;
  for (auto it = batch.begin(); it != batch.end(); ++it) {
    util::StatusOr<store::TxnResponse> one = options_.kv->Txn(txn_for(it, it + 1));
    if (!one.ok()) return one.status();
    if (one->succeeded) ++deleted;
  }
  return deleted;
}

void EventExpiry::Run(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mu);
      cv.wait_for(lock, stop, sweep_period_, [] { return false; });
    }
    if (stop.stop_requested()) return;
    util::StatusOr<size_t> deleted = Sweep();
    if (!deleted.ok()) {
      spdlog::warn("event expiry: {}", deleted.status().ToString());
    } else if (*deleted > 0) {
      spdlog::debug("event expiry: deleted {} Event(s) older than {} s", *deleted,
                    std::chrono::duration_cast<std::chrono::seconds>(options_.ttl).count());
    }
  }
}

}  // namespace converge::apiserver
