#include "store/applier.h"

#include "store/thread_latency.h"
#include "util/thread_name.h"

namespace converge::store {

namespace {

uint64_t NsSince(std::chrono::steady_clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
}

}  // namespace

Applier::Applier(Options options, Backend* backend, LogTail* tail, Wal* wal, Revision current,
                 uint64_t record_count, uint64_t applied_seq)
    : options_(options),
      backend_(backend),
      tail_(tail),
      wal_(wal),
      current_(current),
      record_count_(record_count),
      committed_seq_(applied_seq) {
  used_bytes_.store(backend_->UsedBytes(), std::memory_order_relaxed);
}

Applier::~Applier() {
  Stop();
}

void Applier::Start() {
  thread_ = std::thread([this] {
    util::SetThreadName("store-apply");
    Loop();
  });
}

void Applier::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Applier::Notify() {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    pending_ = true;
    if (idle_) {
      idle_ = false;
      wake = true;
    } else if (delaying_ && !big_ && tail_->bytes() >= options_.batch_bytes) {
      big_ = true;
      wake = true;
    }
  }
  if (wake) cv_.notify_one();
}

util::Status Applier::Maintain(std::vector<RevisionPair> deletes,
                               std::vector<std::pair<std::string, uint64_t>> metas) {
  Maintenance m{std::move(deletes), std::move(metas), {}};
  std::future<util::Status> done = m.done.get_future();
  {
    std::lock_guard lock(mu_);
    if (failed_.load()) return failure_;
    if (stopping_) return util::Unavailable("store: closed");
    maintenance_.push_back(&m);
  }
  cv_.notify_one();
  return done.get();
}

util::Status Applier::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

Applier::Stats Applier::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

util::Status Applier::ApplyGroups(Backend* backend, MDB_txn* txn,
                                  const std::vector<LoggedGroupPtr>& groups, Revision* current,
                                  uint64_t* record_count) {
  if (groups.empty()) return util::Status::Ok();
  for (const LoggedGroupPtr& g : groups) {
    if (g->first_revision != *current + 1 || g->last_revision < g->first_revision) {
      return util::DataLoss("store: log group " + std::to_string(g->seq) + " holds revisions " +
                            std::to_string(g->first_revision) + " to " +
                            std::to_string(g->last_revision) +
                            " but the data file's current revision is " + std::to_string(*current));
    }
    for (const wal::GroupView::Change& c : g->changes) {
      CONVERGE_RETURN_IF_ERROR(backend->PutRecordBytes(txn, c.rev, c.record));
    }
    *current = g->last_revision;
    *record_count += g->changes.size();
  }
  CONVERGE_RETURN_IF_ERROR(
      backend->PutMeta(txn, kMetaCurrentRevision, static_cast<uint64_t>(*current)));
  CONVERGE_RETURN_IF_ERROR(backend->PutMeta(txn, kMetaRecordCount, *record_count));
  return backend->PutMeta(txn, kMetaLogApplied, groups.back()->seq);
}

void Applier::Loop() {
  RequestShortSchedulerSlice();
  std::optional<Unsynced> unsynced;
  while (true) {
    Maintenance* m = nullptr;
    bool apply = false;
    {
      std::unique_lock lock(mu_);
      auto work = [&] { return pending_ || !maintenance_.empty() || stopping_; };
      if (!work()) {
        idle_ = true;
        if (!unsynced) {
          cv_.wait(lock, work);
        } else if (unsynced->maintenance == nullptr) {
          cv_.wait_for(lock, options_.idle_sync_delay, work);
        }
        idle_ = false;
      }
      if (pending_ && !stopping_ && maintenance_.empty() && options_.delay.count() > 0 &&
          !options_.hold) {
        delaying_ = true;
        big_ = tail_->bytes() >= options_.batch_bytes;
        cv_.wait_for(lock, options_.delay, [&] { return stopping_ || big_; });
        delaying_ = false;
        big_ = false;
      }
      apply = pending_ && !options_.hold;
      pending_ = false;
      if (!maintenance_.empty()) {
        const auto now = std::chrono::steady_clock::now();
        if (!apply || now - last_maintenance_ >= options_.maintenance_interval) {
          m = maintenance_.front();
          maintenance_.pop_front();
          last_maintenance_ = now;
        }
      }
      if (!apply && m == nullptr && !unsynced && stopping_) break;
    }
    if (!apply && m == nullptr) {
      // Nothing new: make the last commit durable.
      if (unsynced && !Sync(&unsynced)) return;
      continue;
    }
    // The groups logged so far go first (a maintenance item may delete their records).
    bool more = false;
    if (!ApplyOnce(m, &unsynced, &more)) return;
    if (more) {
      std::lock_guard lock(mu_);
      pending_ = true;
    }
  }
}

bool Applier::ApplyOnce(Maintenance* m, std::optional<Unsynced>* unsynced, bool* more) {
  std::vector<LoggedGroupPtr> groups;
  if (!options_.hold) {
    // Only groups durable in the log: LMDB never holds what a crash could take from the log.
    const uint64_t durable = tail_->durable_seq();
    LogTail::SnapshotPtr snapshot = tail_->Acquire();
    size_t bytes = 0;
    for (const LoggedGroupPtr& g : snapshot->groups()) {
      if (g->seq <= committed_seq_) continue;
      if (g->seq > durable) break;
      // A maintenance item may delete records of any durable group: they all go first, else
      // a group applied after the deletions would bring its deleted records back.
      if (m == nullptr && !groups.empty() && bytes + g->bytes > options_.max_txn_bytes) {
        *more = true;
        break;
      }
      bytes += g->bytes;
      groups.push_back(g);
    }
  }
  if (groups.empty() && m == nullptr) return true;
  util::StatusOr<MDB_txn*> txn = backend_->BeginWrite();
  if (!txn.ok()) {
    Fail(txn.status(), m, unsynced);
    return false;
  }
  Revision current = current_;
  uint64_t records = record_count_;
  util::Status st = ApplyGroups(backend_, *txn, groups, &current, &records);
  if (st.ok() && m != nullptr) {
    for (const RevisionPair& rev : m->deletes) {
      util::Status d = backend_->DeleteRecord(*txn, rev);
      if (d.code() == util::Code::kNotFound) continue;
      if (!d.ok()) {
        st = d;
        break;
      }
      --records;
    }
    for (const auto& [name, value] : m->metas) {
      if (st.ok()) st = backend_->PutMeta(*txn, name, value);
    }
    if (st.ok()) st = backend_->PutMeta(*txn, kMetaRecordCount, records);
  }
  if (!st.ok()) {
    backend_->Abort(*txn);
    Fail(st, m, unsynced);
    return false;
  }
  const auto t0 = std::chrono::steady_clock::now();
  st = backend_->Commit(*txn);
  const uint64_t ns = NsSince(t0);
  if (!st.ok()) {
    Fail(st, m, unsynced);
    return false;
  }
  used_bytes_.store(backend_->UsedBytes(), std::memory_order_relaxed);
  current_ = current;
  record_count_ = records;
  if (!groups.empty()) {
    committed_seq_ = groups.back()->seq;
    tail_->DropThrough(committed_seq_);
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.commits;
    stats_.groups += groups.size();
    stats_.commit_ns += ns;
  }
  // This commit's data fdatasync also wrote the previous commit's meta page.
  if (*unsynced) Durable(**unsynced);
  *unsynced = Unsynced{committed_seq_, m};
  return true;
}

bool Applier::Sync(std::optional<Unsynced>* unsynced) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool reserve = backend_->NeedsSpace();
  util::Status st = reserve ? backend_->ReserveSpace() : backend_->Sync();
  const uint64_t ns = NsSince(t0);
  if (!st.ok()) {
    Fail(st, nullptr, unsynced);
    return false;
  }
  {
    std::lock_guard lock(mu_);
    ++(reserve ? stats_.reserves : stats_.syncs);
    (reserve ? stats_.reserve_ns : stats_.sync_ns) += ns;
  }
  Durable(**unsynced);
  unsynced->reset();
  return true;
}

void Applier::Durable(const Unsynced& u) {
  if (wal_ != nullptr && u.seq > 0) wal_->MarkApplied(u.seq);
  if (u.maintenance != nullptr) u.maintenance->done.set_value(util::Status::Ok());
}

void Applier::Fail(util::Status st, Maintenance* m, std::optional<Unsynced>* unsynced) {
  st = util::Status(st.code(),
                    "store: applying the log to the data file failed; the store accepts no "
                    "more writes (what was acknowledged is in the log): " +
                        st.message());
  std::deque<Maintenance*> queued;
  {
    std::lock_guard lock(mu_);
    failure_ = st;
    failed_.store(true, std::memory_order_release);
    queued.swap(maintenance_);
  }
  if (m != nullptr) m->done.set_value(st);
  if (*unsynced && (*unsynced)->maintenance != nullptr)
    (*unsynced)->maintenance->done.set_value(st);
  unsynced->reset();
  for (Maintenance* q : queued) q->done.set_value(st);
  tail_->WakeWaiters();
}

}  // namespace converge::store
