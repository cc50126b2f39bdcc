#include "store/committer.h"

#include "store/group_writer.h"
#include "store/thread_latency.h"
#include "util/thread_name.h"

namespace converge::store {

namespace {

// Room kept in the map beyond the estimate for a logged group (LMDB's branch pages, meta).
constexpr uint64_t kMapSlack = uint64_t{1} << 20;

}  // namespace

Committer::Committer(Options options, Backend* backend, Index* index, WatchHub* hub,
                     Revision current, uint64_t record_count, const std::atomic<Revision>* compact,
                     Log log)
    : options_(options),
      backend_(backend),
      index_(index),
      hub_(hub),
      compact_(compact),
      log_(log),
      clock_(&util::RealClock()),
      latest_(current),
      record_count_(record_count),
      published_(current) {}

Committer::~Committer() {
  Stop();
}

void Committer::Start() {
  thread_ = std::thread([this] {
    util::SetThreadName("store-commit");
    const bool ok = RequestShortSchedulerSlice();  // it waits for every fdatasync
    {
      std::lock_guard lock(stats_mu_);
      stats_.short_slice = ok;
    }
    if (log_.wal != nullptr) {
      LogLoop();
    } else {
      DirectLoop();
    }
  });
  if (log_.wal != nullptr) {
    syncer_ = std::thread([this] {
      util::SetThreadName("store-sync");
      RequestShortSchedulerSlice();  // it waits for every fdatasync
      SyncerLoop();
    });
  }
}

void Committer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The committer thread wrote its last group; the syncer publishes what is left.
  {
    std::lock_guard lock(mu_);
    writer_done_ = true;
  }
  sync_cv_.notify_all();
  if (syncer_.joinable()) syncer_.join();
}

util::Status Committer::Fatal() {
  std::lock_guard lock(mu_);
  return fatal_;
}

void Committer::Submit(TxnRequest req, KV::TxnCallback done, util::Status precheck, size_t bytes,
                       ValueFrames frames) {
  util::Status reject;
  bool notify = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      reject = util::Unavailable("store: closed");
    } else if (!fatal_.ok()) {
      reject = fatal_;
    } else {
      queue_.push_back(
          Item{std::move(req), std::move(done), std::move(precheck), bytes, std::move(frames)});
      // Whoever holds the writer role looks at the queue again when it is done.
      notify = !busy_;
    }
  }
  if (!reject.ok()) {
    done(reject);
    return;
  }
  if (notify) cv_.notify_one();
}

util::StatusOr<TxnResponse> Committer::Run(TxnRequest req, util::Status precheck, size_t bytes,
                                           ValueFrames frames) {
  util::StatusOr<TxnResponse> result = util::Unavailable("store: closed");
  if (log_.wal != nullptr) {
    bool lead = false;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return util::Unavailable("store: closed");
      if (!fatal_.ok()) return fatal_;
      if (!busy_ && queue_.empty() && written_.empty() && !syncing_) {
        busy_ = true;
        lead = true;
      }
    }
    if (lead) {
      Group g;
      g.items.push_back(Item{std::move(req),
                             [&result](util::StatusOr<TxnResponse> r) { result = std::move(r); },
                             std::move(precheck), bytes, std::move(frames)});
      // Nothing is written and unpublished: this group's sync and publication are next.
      std::vector<Written> batch;
      batch.push_back(WriteLogged(std::move(g), /*inline_group=*/true));
      SyncAndPublish(batch);
      bool more;
      {
        std::lock_guard lock(mu_);
        busy_ = false;
        more = !queue_.empty();
      }
      if (more) cv_.notify_one();
      return result;
    }
  }
  // A mutex and a condition variable rather than std::binary_semaphore, whose acquire spins
  // with sched_yield before it sleeps: on a saturated CPU that spinning is pure cost.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Submit(
      std::move(req),
      [&](util::StatusOr<TxnResponse> r) {
        std::lock_guard lock(mu);
        result = std::move(r);
        done = true;
        cv.notify_one();
      },
      std::move(precheck), bytes, std::move(frames));
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done; });
  return result;
}

util::Status Committer::Maintain(std::vector<RevisionPair> deletes,
                                 std::vector<std::pair<std::string, uint64_t>> metas) {
  if (log_.applier != nullptr) return log_.applier->Maintain(std::move(deletes), std::move(metas));
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

void Committer::TakeLocked(Group* g) {
  size_t bytes = 0;
  while (!queue_.empty() && g->items.size() < options_.max_group_txns &&
         (g->items.empty() || bytes + queue_.front().bytes <= options_.max_group_bytes)) {
    bytes += queue_.front().bytes;
    g->items.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
}

void Committer::LogLoop() {
  while (true) {
    Group g;
    {
      std::unique_lock lock(mu_);
      // At most one written group waits for the syncer: the next one forms meanwhile.
      cv_.wait(lock, [&] {
        return (stopping_ && queue_.empty()) || (!busy_ && !queue_.empty() && written_.empty());
      });
      if (queue_.empty()) break;  // stopping
      busy_ = true;
      TakeLocked(&g);
    }
    Written w = WriteLogged(std::move(g), /*inline_group=*/false);
    bool self = false;
    {
      std::lock_guard lock(mu_);
      busy_ = false;
      if (queue_.empty() && written_.empty() && !syncing_) {
        // Nothing to overlap the sync with: sync and publish here, without a hand-over.
        self = syncing_ = true;
      } else {
        written_.push_back(std::move(w));
      }
    }
    if (self) {
      std::vector<Written> batch;
      batch.push_back(std::move(w));
      SyncAndPublish(batch);
      {
        std::lock_guard lock(mu_);
        syncing_ = false;
      }
    }
    sync_cv_.notify_one();
  }
}

void Committer::SyncerLoop() {
  while (true) {
    std::vector<Written> batch;
    {
      std::unique_lock lock(mu_);
      sync_cv_.wait(lock, [&] { return (!written_.empty() || writer_done_) && !syncing_; });
      if (written_.empty()) break;  // the committer thread is gone and nothing is left
      for (Written& w : written_) batch.push_back(std::move(w));
      written_.clear();
      syncing_ = true;
    }
    cv_.notify_one();  // the committer thread may write the next group
    {
      std::lock_guard lock(stats_mu_);
      stats_.handed_over += batch.size();
    }
    SyncAndPublish(batch);
    std::lock_guard lock(mu_);
    syncing_ = false;
  }
}

Committer::Written Committer::WriteLogged(Group g, bool inline_group) {
  Written w;
  w.group = std::move(g);
  Group& grp = w.group;
  grp.results.reserve(grp.items.size());
  if (util::Status fatal = Fatal(); !fatal.ok()) {
    w.error = fatal;
    return w;
  }
  // Back-pressure: the applier must keep up with the log.
  log_.tail->WaitBelow(options_.max_tail_bytes, [&] { return log_.applier->failed(); });
  if (log_.applier->failed()) {
    w.error = log_.applier->failure();
    return w;
  }
  auto fail_group = [&](const util::Status& st) {
    grp.results.assign(grp.items.size(), st);
    grp.last = 0;
    return std::move(w);
  };
  auto encoder = std::make_unique<wal::GroupEncoder>();
  std::optional<GroupWriter> writer;
  {
    util::StatusOr<ReadView> view = ReadView::Begin(backend_, log_.tail);
    if (!view.ok()) return fail_group(view.status());
    writer.emplace(&*view, index_, latest_, compact_->load(std::memory_order_acquire),
                   encoder.get());
    for (Item& item : grp.items) {
      if (!item.precheck.ok()) {
        grp.results.emplace_back(item.precheck);
        continue;
      }
      util::StatusOr<TxnResponse> r = writer->Apply(item.req, item.frames);
      if (!r.ok() && r.status().code() != util::Code::kOutOfRange) {
        return fail_group(r.status());
      }
      grp.results.push_back(std::move(r));
    }
  }  // the read view (an LMDB snapshot) ends before the write
  if (!writer->wrote()) {
    grp.last = latest_;
    return w;
  }
  const uint64_t need =
      log_.applier->used_bytes() + 2 * (log_.tail->bytes() + encoder->record_bytes()) + kMapSlack;
  if (need > backend_->MapBytes()) {
    return fail_group(util::ResourceExhausted("store: the data file would outgrow its map size (" +
                                              std::to_string(backend_->MapBytes()) +
                                              " bytes); raise map_size"));
  }
  const auto t0 = std::chrono::steady_clock::now();
  util::Status st = log_.wal->Write(encoder.get(), &w.fd);
  AddCommitTime(t0, inline_group);
  if (!st.ok()) {
    w.error = st;
    return w;
  }
  w.wrote = true;
  w.seq = encoder->seq();
  log_.tail->Append(LoggedGroup::FromEncoder(std::move(encoder)));
  index_->Apply(writer->changes());
  latest_ = writer->latest();
  grp.last = latest_;
  grp.events = std::move(writer->events());
  return w;
}

void Committer::SyncAndPublish(std::vector<Written>& batch) {
  int fd = -1;
  for (const Written& w : batch) {
    if (w.wrote) fd = w.fd;
  }
  util::Status synced;
  if (fd >= 0) {
    const auto t0 = std::chrono::steady_clock::now();
    synced = log_.wal->Sync(fd);
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    std::lock_guard lock(stats_mu_);
    ++stats_.syncs;
    stats_.sync_ns += static_cast<uint64_t>(ns);
  }
  // The tail learns what is durable before anything is published: the applier must be able to
  // apply every published revision (a compaction at a just-published revision deletes records
  // of its group, and must find them in LMDB or not at all, never see them applied afterwards).
  uint64_t durable = 0;
  for (const Written& w : batch) {
    if (w.error.ok() && synced.ok() && w.wrote) durable = w.seq;
  }
  if (durable != 0) {
    log_.tail->MarkDurable(durable);
    log_.applier->Notify();
  }
  for (Written& w : batch) Finish(w.group, w.error.ok() ? synced : w.error);
}

void Committer::AddCommitTime(std::chrono::steady_clock::time_point t0, bool inline_group) {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  std::lock_guard lock(stats_mu_);
  ++stats_.groups;
  if (inline_group) ++stats_.inline_groups;
  stats_.commit_ns += static_cast<uint64_t>(ns);
}

void Committer::DirectLoop() {
  std::optional<Group> unsynced;  // committed, durable once the next fdatasync returns
  while (true) {
    Group g;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return !queue_.empty() || !maintenance_.empty() || stopping_ || unsynced.has_value();
      });
      TakeLocked(&g);
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
  if (util::Status fatal = Fatal(); !fatal.ok()) {
    *error = fatal;
    return Outcome::kFailed;
  }
  util::StatusOr<MDB_txn*> txn = backend_->BeginWrite();
  if (!txn.ok()) {
    *error = txn.status();
    return Outcome::kFailed;
  }
  wal::GroupEncoder encoder;
  ReadView view(backend_, *txn);
  GroupWriter w(&view, index_, latest_, compact_->load(std::memory_order_acquire), &encoder);
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
    util::StatusOr<TxnResponse> r = w.Apply(item.req, item.frames);
    if (!r.ok() && r.status().code() != util::Code::kOutOfRange) return abort(r.status());
    g.results.push_back(std::move(r));
  }
  uint64_t deleted = 0;
  if (g.maintenance != nullptr) {
    for (const RevisionPair& rev : g.maintenance->deletes) {
      util::Status st = backend_->DeleteRecord(*txn, rev);
      if (st.code() == util::Code::kNotFound) continue;
      if (!st.ok()) return abort(st);
      ++deleted;
    }
    for (const auto& [name, value] : g.maintenance->metas) {
      util::Status st = backend_->PutMeta(*txn, name, value);
      if (!st.ok()) return abort(st);
    }
  }
  if (!w.wrote() && g.maintenance == nullptr) {
    backend_->Abort(*txn);
    g.last = latest_;
    return Outcome::kNothingWritten;
  }
  for (size_t i = 0; i < encoder.change_count(); ++i) {
    util::Status st =
        backend_->PutRecordBytes(*txn, encoder.change_rev(i), encoder.change_record(i));
    if (!st.ok()) return abort(st);
  }
  const uint64_t records = record_count_ + encoder.change_count() - deleted;
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
  AddCommitTime(t0, /*inline_group=*/false);
  index_->Apply(w.changes());
  latest_ = w.latest();
  record_count_ = records;
  g.last = latest_;
  g.events = std::move(w.events());
  return Outcome::kCommitted;
}

void Committer::Finish(Group& g, util::Status st) {
  util::Status fatal;
  {
    std::lock_guard lock(mu_);
    if (!fatal_.ok()) {
      st = fatal_;
    } else if (!st.ok()) {
      fatal_ = util::Status(
          st.code(),
          "store: a commit or sync failed; the store accepts no more writes: " + st.message());
    }
    fatal = fatal_;
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
  if (!fatal.ok()) {
    std::deque<Item> queued;
    std::deque<Maintenance*> maintenance;
    {
      std::lock_guard lock(mu_);
      queued.swap(queue_);
      maintenance.swap(maintenance_);
    }
    for (Item& item : queued) item.done(fatal);
    for (Maintenance* m : maintenance) m->done.set_value(fatal);
  }
}

}  // namespace converge::store
