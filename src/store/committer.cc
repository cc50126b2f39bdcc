#include "store/committer.h"

#include "store/group_writer.h"
#include "store/thread_latency.h"

namespace converge::store {

Committer::Committer(Options options, Backend* backend, Index* index, WatchHub* hub,
                     Revision current, uint64_t record_count, const std::atomic<Revision>* compact)
    : options_(options),
      backend_(backend),
      index_(index),
      hub_(hub),
      compact_(compact),
      clock_(&util::RealClock()),
      latest_(current),
      record_count_(record_count),
      published_(current) {}

Committer::~Committer() {
  Stop();
}

void Committer::Start() {
  thread_ = std::thread([this] {
    const bool ok = RequestShortSchedulerSlice();  // it waits for every fdatasync
    {
      std::lock_guard lock(stats_mu_);
      stats_.short_slice = ok;
    }
    Loop();
  });
}

void Committer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Committer::Submit(TxnRequest req, KV::TxnCallback done, util::Status precheck, size_t bytes) {
  util::Status reject;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      reject = util::Unavailable("store: closed");
    } else if (!fatal_.ok()) {
      reject = fatal_;
    } else {
      queue_.push_back(Item{std::move(req), std::move(done), std::move(precheck), bytes});
    }
  }
  if (!reject.ok()) {
    done(reject);
    return;
  }
  cv_.notify_one();
}

util::Status Committer::Maintain(std::vector<RevisionPair> deletes,
                                 std::vector<std::pair<std::string, uint64_t>> metas) {
  Maintenance m{std::move(deletes), std::move(metas), {}};
  std::future<util::Status> done = m.done.get_future();
  {
    std::lock_guard lock(mu_);
    if (stopping_) return util::Unavailable("store: closed");
    if (!fatal_.ok()) return fatal_;
    maintenance_.push_back(&m);
  }
  cv_.notify_one();
  return done.get();
}

void Committer::Loop() {
  std::optional<Group> unsynced;  // committed, durable once the next fdatasync returns
  while (true) {
    Group g;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return !queue_.empty() || !maintenance_.empty() || stopping_ || unsynced.has_value();
      });
      size_t bytes = 0;
      while (!queue_.empty() && g.items.size() < options_.max_group_txns &&
             (g.items.empty() || bytes + queue_.front().bytes <= options_.max_group_bytes)) {
        bytes += queue_.front().bytes;
        g.items.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (!maintenance_.empty()) {
        const util::Clock::TimePoint now = clock_->Now();
        if (g.items.empty() || now - last_maintenance_ >= options_.maintenance_interval) {
          g.maintenance = maintenance_.front();
          maintenance_.pop_front();
          last_maintenance_ = now;
        }
      }
      if (g.items.empty() && g.maintenance == nullptr && !unsynced && stopping_) break;
    }
    if (g.items.empty() && g.maintenance == nullptr) {
      // Nothing new arrived: make the last group durable now, topping up the reserved space
      // first if it runs low (one fdatasync covers both).
      const auto t0 = std::chrono::steady_clock::now();
      const bool reserve = backend_->NeedsSpace();
      util::Status st = reserve ? backend_->ReserveSpace() : backend_->Sync();
      {
        std::lock_guard lock(stats_mu_);
        const uint64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - t0)
                                .count();
        ++(reserve ? stats_.reserves : stats_.syncs);
        (reserve ? stats_.reserve_ns : stats_.sync_ns) += ns;
      }
      Finish(*unsynced, st);
      unsynced.reset();
      continue;
    }
    util::Status error;
    switch (CommitGroup(g, &error)) {
      case Outcome::kCommitted:
        // This commit's data fdatasync also wrote the previous group's meta page.
        if (unsynced) Finish(*unsynced, util::Status::Ok());
        unsynced = std::move(g);
        break;
      case Outcome::kNothingWritten:
      case Outcome::kAborted:
        // Nothing reached the disk (LMDB skips the sync of an empty commit), so sync for the
        // previous group; this one only read state that is durable once that returns.
        if (unsynced) {
          util::Status st = backend_->Sync();
          Finish(*unsynced, st);
          unsynced.reset();
        }
        Finish(g, util::Status::Ok());
        break;
      case Outcome::kFailed:
        if (unsynced) {
          Finish(*unsynced, error);
          unsynced.reset();
        }
        Finish(g, error);
        break;
    }
  }
}

Committer::Stats Committer::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

Committer::Outcome Committer::CommitGroup(Group& g, util::Status* error) {
  g.results.reserve(g.items.size());
  if (!failed_.ok()) {
    *error = failed_;
    return Outcome::kFailed;
  }
  util::StatusOr<MDB_txn*> txn = backend_->BeginWrite();
  if (!txn.ok()) {
    *error = txn.status();
    return Outcome::kFailed;
  }
  GroupWriter w(backend_, *txn, index_, latest_, compact_->load(std::memory_order_acquire));
  auto abort = [&](const util::Status& st) {
    backend_->Abort(*txn);
    g.results.assign(g.items.size(), st);
    if (g.maintenance != nullptr) {
      g.maintenance->done.set_value(st);
      g.maintenance = nullptr;
    }
    return Outcome::kAborted;
  };
  for (Item& item : g.items) {
    if (!item.precheck.ok()) {
      g.results.emplace_back(item.precheck);
      continue;
    }
    util::StatusOr<TxnResponse> r = w.Apply(item.req);
    if (!r.ok() && r.status().code() != util::Code::kOutOfRange) return abort(r.status());
    g.results.push_back(std::move(r));
  }
  if (g.maintenance != nullptr) {
    util::Status st = w.DeleteRecords(g.maintenance->deletes);
    for (const auto& [name, value] : g.maintenance->metas) {
      if (st.ok()) st = backend_->PutMeta(*txn, name, value);
    }
    if (!st.ok()) return abort(st);
  }
  if (!w.wrote() && g.maintenance == nullptr) {
    backend_->Abort(*txn);
    g.last = latest_;
    return Outcome::kNothingWritten;
  }
  const uint64_t records = record_count_ + w.record_delta();
  util::Status st = backend_->PutMeta(*txn, kMetaRecordCount, records);
  if (st.ok() && w.latest() != latest_) {
    st = backend_->PutMeta(*txn, kMetaCurrentRevision, static_cast<uint64_t>(w.latest()));
  }
  if (!st.ok()) return abort(st);
  const auto t0 = std::chrono::steady_clock::now();
  st = backend_->Commit(*txn);
  if (!st.ok()) {
    *error = st;
    return Outcome::kFailed;
  }
  {
    std::lock_guard lock(stats_mu_);
    ++stats_.groups;
    stats_.commit_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  }
  index_->Apply(w.changes());
  latest_ = w.latest();
  record_count_ = records;
  g.last = latest_;
  g.events = std::move(w.events());
  return Outcome::kCommitted;
}

void Committer::Finish(Group& g, util::Status st) {
  if (!failed_.ok()) st = failed_;
  if (!st.ok() && failed_.ok()) {
    failed_ = util::Status(st.code(),
                           "store: a commit or sync failed; the store accepts no "
                           "more writes: " +
                               st.message());
    std::lock_guard lock(mu_);
    fatal_ = failed_;
  }
  if (st.ok()) {
    if (g.last > published_.load(std::memory_order_relaxed)) {
      published_.store(g.last, std::memory_order_release);
    }
    if (!g.events.empty()) hub_->Publish(g.last, std::move(g.events));
  }
  if (st.ok()) {
    std::lock_guard lock(stats_mu_);
    stats_.txns += g.items.size();
  }
  for (size_t i = 0; i < g.items.size(); ++i) {
    if (st.ok()) {
      g.items[i].done(std::move(g.results[i]));
    } else {
      g.items[i].done(st);
    }
  }
  if (g.maintenance != nullptr) g.maintenance->done.set_value(st);
  // Fail whatever is still queued once the committer has failed.
  if (!failed_.ok()) {
    std::deque<Item> queued;
    std::deque<Maintenance*> maintenance;
    {
      std::lock_guard lock(mu_);
      queued.swap(queue_);
      maintenance.swap(maintenance_);
    }
    for (Item& item : queued) item.done(failed_);
    for (Maintenance* m : maintenance) m->done.set_value(failed_);
  }
}

}  // namespace converge::store
