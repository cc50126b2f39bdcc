#include "store/committer.h"

#include <semaphore>

#include "store/group_writer.h"
#include "store/thread_latency.h"

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
  bool notify = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      reject = util::Unavailable("store: closed");
    } else if (!fatal_.ok()) {
      reject = fatal_;
    } else {
      queue_.push_back(Item{std::move(req), std::move(done), std::move(precheck), bytes});
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

util::StatusOr<TxnResponse> Committer::Run(TxnRequest req, util::Status precheck, size_t bytes) {
  util::StatusOr<TxnResponse> result = util::Unavailable("store: closed");
  if (log_.wal != nullptr) {
    bool lead = false;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return util::Unavailable("store: closed");
      if (!fatal_.ok()) return fatal_;
      if (!busy_ && queue_.empty()) {
        busy_ = true;
        lead = true;
      }
    }
    if (lead) {
      Group g;
      g.items.push_back(Item{std::move(req),
                             [&result](util::StatusOr<TxnResponse> r) { result = std::move(r); },
                             std::move(precheck), bytes});
      CommitLogged(g, /*inline_group=*/true);
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
  std::binary_semaphore done(0);
  Submit(
      std::move(req),
      [&](util::StatusOr<TxnResponse> r) {
        result = std::move(r);
        done.release();
      },
      std::move(precheck), bytes);
  done.acquire();
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
      cv_.wait(lock, [&] { return (stopping_ && queue_.empty()) || (!busy_ && !queue_.empty()); });
      if (queue_.empty()) break;  // stopping
      busy_ = true;
      TakeLocked(&g);
    }
    CommitLogged(g, /*inline_group=*/false);
    std::lock_guard lock(mu_);
    busy_ = false;
  }
}

void Committer::CommitLogged(Group& g, bool inline_group) {
  g.results.reserve(g.items.size());
  if (failed_.ok() && log_.applier->failed()) failed_ = log_.applier->failure();
  if (!failed_.ok()) {
    Finish(g, failed_);
    return;
  }
  // Back-pressure: the applier must keep up with the log.
  log_.tail->WaitBelow(options_.max_tail_bytes, [&] { return log_.applier->failed(); });
  if (log_.applier->failed()) {
    Finish(g, log_.applier->failure());
    return;
  }
  auto fail_group = [&](const util::Status& st) {
    g.results.assign(g.items.size(), st);
    g.last = 0;
    Finish(g, util::Status::Ok());
  };
  auto encoder = std::make_unique<wal::GroupEncoder>();
  std::optional<GroupWriter> w;
  {
    util::StatusOr<ReadView> view = ReadView::Begin(backend_, log_.tail);
    if (!view.ok()) return fail_group(view.status());
    w.emplace(&*view, index_, latest_, compact_->load(std::memory_order_acquire), encoder.get());
    for (Item& item : g.items) {
      if (!item.precheck.ok()) {
        g.results.emplace_back(item.precheck);
        continue;
      }
      util::StatusOr<TxnResponse> r = w->Apply(item.req);
      if (!r.ok() && r.status().code() != util::Code::kOutOfRange) return fail_group(r.status());
      g.results.push_back(std::move(r));
    }
  }  // the read view (an LMDB snapshot) ends before the fdatasync
  if (!w->wrote()) {
    g.last = latest_;
    Finish(g, util::Status::Ok());
    return;
  }
  const uint64_t need =
      log_.applier->used_bytes() + 2 * (log_.tail->bytes() + encoder->record_bytes()) + kMapSlack;
  if (need > backend_->MapBytes()) {
    return fail_group(util::ResourceExhausted("store: the data file would outgrow its map size (" +
                                              std::to_string(backend_->MapBytes()) +
                                              " bytes); raise map_size"));
  }
  const auto t0 = std::chrono::steady_clock::now();
  util::Status st = log_.wal->Append(encoder.get());
  AddCommitTime(t0, inline_group);
  if (!st.ok()) {
    Finish(g, st);
    return;
  }
  log_.tail->Append(LoggedGroup::FromEncoder(std::move(encoder)));
  log_.applier->Notify();
  index_->Apply(w->changes());
  latest_ = w->latest();
  g.last = latest_;
  g.events = std::move(w->events());
  Finish(g, util::Status::Ok());
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
  if (!failed_.ok()) {
    *error = failed_;
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
    util::StatusOr<TxnResponse> r = w.Apply(item.req);
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
