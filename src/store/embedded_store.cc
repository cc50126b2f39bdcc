#include "store/embedded_store.h"

#include <future>

#include "store/applier.h"
#include "store/backend.h"
#include "store/committer.h"
#include "store/compactor.h"
#include "store/group_writer.h"
#include "store/index.h"
#include "store/log_tail.h"
#include "store/recovery.h"
#include "store/txn_eval.h"
#include "store/wal.h"
#include "store/watch_hub.h"

namespace converge::store {

// History for catching-up watchers, read from a read view (the log tail over an LMDB
// snapshot): records are self-describing (the prev pointer finds prev_kv), so the index is not
// involved.
class StoreHistory final : public HistorySource {
 public:
  // Records looked at per call at most, so that a snapshot stays short-lived.
  static constexpr size_t kMaxScan = 20000;

  StoreHistory(Backend* backend, const LogTail* tail, const std::atomic<Revision>* compact)
      : backend_(backend), tail_(tail), compact_(compact) {}

  util::StatusOr<Chunk> ReadHistory(std::string_view key, std::string_view end, Revision from,
                                    Revision to, bool prev_kv, size_t max_events) override {
    Chunk chunk;
    CONVERGE_ASSIGN_OR_RETURN(ReadView view, ReadView::Begin(backend_, tail_));
    // The snapshot predates any deletion for a compaction above the value read here.
    const Revision compact = compact_->load(std::memory_order_acquire);
    if (from < compact) {
      chunk.compacted = compact;
      return chunk;
    }
    // Revisions from the tail's first on are read from the tail (LMDB may hold some of them
    // too), the ones before from LMDB.
    const LogTail::Snapshot* tail = view.tail();
    const Revision tail_first =
        tail != nullptr && !tail->empty() ? tail->groups().front()->first_revision : INT64_MAX;
    Revision in_revision = 0;
    size_t scanned = 0;
    // Adds the record at `rev` if it matches; false once the chunk is full (at a revision
    // boundary: chunk.next is set).
    auto visit = [&](RevisionPair rev, std::string_view bytes) -> util::StatusOr<bool> {
      if (rev.main != in_revision) {
        if (chunk.events.size() >= max_events || scanned >= kMaxScan) {
          chunk.next = rev.main;
          return false;
        }
        in_revision = rev.main;
      }
      ++scanned;
      RecordView record;
      CONVERGE_RETURN_IF_ERROR(DecodeRecordHeader(rev, bytes, &record));
      if (!KeyInRange(record.key, key, end)) return true;
      CONVERGE_RETURN_IF_ERROR(DecodeRecord(rev, bytes, &record));
      Event event;
      if (record.tombstone) {
        event.type = Event::Type::kDelete;
        auto kv = std::make_shared<KeyValue>();
        kv->key.assign(record.key);
        kv->mod_revision = rev.main;
        event.kv = std::move(kv);
      } else {
        CONVERGE_ASSIGN_OR_RETURN(event.kv, MakeKeyValue(rev, record));
      }
      if (prev_kv && !record.prev.IsZero()) {
        // The snapshot holds every record from `from` on and what they overwrote.
        CONVERGE_ASSIGN_OR_RETURN(event.prev_kv,
                                  ReadPreviousIn(view, record.prev, rev.main, 0, nullptr));
      }
      chunk.events.push_back(std::move(event));
      return true;
    };
    if (from < tail_first) {
      CONVERGE_ASSIGN_OR_RETURN(Backend::HistoryCursor cursor,
                                backend_->OpenHistoryCursor(view.txn()));
      CONVERGE_ASSIGN_OR_RETURN(bool found, cursor.Seek(RevisionPair{from, 0}));
      while (found && cursor.rev().main <= to && cursor.rev().main < tail_first) {
        CONVERGE_ASSIGN_OR_RETURN(bool more, visit(cursor.rev(), cursor.bytes()));
        if (!more) return chunk;
        CONVERGE_ASSIGN_OR_RETURN(found, cursor.Next());
      }
    }
    if (tail_first <= to) {
      for (const LoggedGroupPtr& g : tail->groups()) {
        if (g->last_revision < from) continue;
        if (g->first_revision > to) break;
        for (const wal::GroupView::Change& c : g->changes) {
          if (c.rev.main < from) continue;
          if (c.rev.main > to) break;
          CONVERGE_ASSIGN_OR_RETURN(bool more, visit(c.rev, c.record));
          if (!more) return chunk;
        }
      }
    }
    chunk.next = to + 1;
    return chunk;
  }

  util::StatusOr<KeyValuePtr> ReadPrevious(RevisionPair at, Revision of,
                                           Revision* compacted) override {
    CONVERGE_ASSIGN_OR_RETURN(ReadView view, ReadView::Begin(backend_, tail_));
    // As in ReadHistory: read after the snapshot began, so that a record missing from the
    // snapshot is missing for a compaction at or below this value.
    const Revision compact = compact_->load(std::memory_order_acquire);
    return ReadPreviousIn(view, at, of, compact, compacted);
  }

 private:
  // The key-value at `at` in `view`: the value the change at revision `of` overwrote. If it is
  // missing and `compacted` is given, compaction at `compact` may have removed it: above `of` it
  // drops that value (at `of` it keeps it, so that a watch may resume from the compact revision
  // with prev_kv), and then *compacted is set and null returned. Otherwise missing is DataLoss.
  static util::StatusOr<KeyValuePtr> ReadPreviousIn(const ReadView& view, RevisionPair at,
                                                    Revision of, Revision compact,
                                                    Revision* compacted) {
    RecordView record;
    util::Status st = view.Get(at, &record);
    if (st.code() == util::Code::kNotFound) {
      if (compacted != nullptr && compact > of) {
        *compacted = compact;
        return KeyValuePtr();
      }
      return util::DataLoss("store: the previous value of revision " + std::to_string(of) +
                            " is missing from the history");
    }
    CONVERGE_RETURN_IF_ERROR(st);
    return MakeKeyValue(at, record);
  }

  Backend* const backend_;
  const LogTail* const tail_;
  const std::atomic<Revision>* const compact_;
};

EmbeddedStore::EmbeddedStore(const EmbeddedStoreOptions& options) : options_(options) {}

util::StatusOr<std::unique_ptr<EmbeddedStore>> EmbeddedStore::Open(
    const EmbeddedStoreOptions& options) {
  if (options.dir.empty()) return util::InvalidArgument("store: options.dir is required");
  std::unique_ptr<EmbeddedStore> s(new EmbeddedStore(options));
  Backend::Options backend_options;
  backend_options.dir = options.dir;
  backend_options.map_size = options.map_size;
  backend_options.fsync = options.fsync;
  backend_options.reserve_bytes = options.reserve_bytes;
  CONVERGE_ASSIGN_OR_RETURN(s->backend_, Backend::Open(backend_options));
  uint64_t applied_seq = 0;
  {
    CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn txn, s->backend_->BeginRead());
    util::Status st = s->backend_->GetMeta(txn.get(), kMetaLogApplied, &applied_seq);
    if (st.code() == util::Code::kNotFound) {
      return util::DataLoss("store: meta value '" + std::string(kMetaLogApplied) + "' is missing");
    }
    CONVERGE_RETURN_IF_ERROR(st);
  }
  uint64_t next_seq = 0;
  CONVERGE_RETURN_IF_ERROR(s->ReplayLog(applied_seq, &next_seq));
  s->index_ = std::make_unique<Index>();
  CONVERGE_ASSIGN_OR_RETURN(RecoveredState state, Recover(*s->backend_, s->index_.get(),
                                                          options.verify_checksums_on_open));
  s->compact_.store(state.scheduled_compact);

  Committer::Log log;
  if (options.write_ahead_log) {
    CONVERGE_RETURN_IF_ERROR(s->wal_->Start(next_seq));
    s->tail_ = std::make_unique<LogTail>();
    Applier::Options applier_options;
    applier_options.hold = options.hold_log_for_test;
    s->applier_ =
        std::make_unique<Applier>(applier_options, s->backend_.get(), s->tail_.get(), s->wal_.get(),
                                  state.current, state.record_count, next_seq - 1);
    log = Committer::Log{s->wal_.get(), s->tail_.get(), s->applier_.get()};
  } else {
    // Everything the log held is durable in LMDB now; a later open in log mode starts a new
    // log after it.
    s->wal_.reset();
  }
  s->history_ = std::make_unique<StoreHistory>(s->backend_.get(), s->tail_.get(), &s->compact_);

  WatchHub::Options hub_options;
  hub_options.watcher_buffer = options.watcher_buffer;
  hub_options.max_events_per_response = options.max_events_per_watch_response;
  hub_options.progress_interval = options.progress_interval;
  hub_options.clock = options.clock;
  s->hub_ = std::make_shared<WatchHub>(hub_options, s->history_.get());

  Committer::Options committer_options;
  committer_options.max_group_txns = options.max_group_txns;
  committer_options.max_tail_bytes = options.max_log_tail_bytes;
  s->committer_ = std::make_unique<Committer>(committer_options, s->backend_.get(), s->index_.get(),
                                              s->hub_.get(), state.current, state.record_count,
                                              &s->compact_, log);
  Compactor::Options compactor_options;
  compactor_options.batch = options.compaction_batch;
  s->compactor_ =
      std::make_unique<Compactor>(compactor_options, s->index_.get(), s->committer_.get());

  s->hub_->Start(state.current);
  if (s->applier_) s->applier_->Start();
  s->committer_->Start();
  s->compactor_->Start(state.finished_compact, state.scheduled_compact);
  return s;
}

util::Status EmbeddedStore::ReplayLog(uint64_t applied_seq, uint64_t* next_seq) {
  Wal::Options wal_options;
  wal_options.dir = options_.dir;
  wal_options.fsync = options_.fsync;
  wal_options.segment_bytes = options_.log_segment_bytes;
  Wal::Recovered recovered;
  CONVERGE_ASSIGN_OR_RETURN(wal_, Wal::Open(wal_options, applied_seq, &recovered));
  log_torn_tail_ = recovered.torn_tail;
  *next_seq = std::max(applied_seq, recovered.last_seq) + 1;
  if (recovered.groups.empty()) return util::Status::Ok();
  uint64_t current = 0;
  uint64_t records = 0;
  {
    CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn txn, backend_->BeginRead());
    CONVERGE_RETURN_IF_ERROR(backend_->GetMeta(txn.get(), kMetaCurrentRevision, &current));
    CONVERGE_RETURN_IF_ERROR(backend_->GetMeta(txn.get(), kMetaRecordCount, &records));
  }
  // In LMDB transactions of bounded size; the groups come in order.
  constexpr size_t kReplayTxnBytes = size_t{64} << 20;
  auto revision = static_cast<Revision>(current);
  for (size_t i = 0; i < recovered.groups.size();) {
    std::vector<LoggedGroupPtr> batch;
    size_t bytes = 0;
    for (; i < recovered.groups.size() && (batch.empty() || bytes < kReplayTxnBytes); ++i) {
      Wal::RecoveredGroup& r = recovered.groups[i];
      auto g = std::make_shared<LoggedGroup>();
      g->seq = r.view.seq;
      g->first_revision = r.view.first_revision;
      g->last_revision = r.view.last_revision;
      g->changes = std::move(r.view.changes);
      for (const auto& c : g->changes) g->bytes += c.record.size();
      g->owner = r.mapping;
      bytes += g->bytes;
      batch.push_back(std::move(g));
    }
    CONVERGE_ASSIGN_OR_RETURN(MDB_txn * txn, backend_->BeginWrite());
    util::Status st = Applier::ApplyGroups(backend_.get(), txn, batch, &revision, &records);
    if (!st.ok()) {
      backend_->Abort(txn);
      return st;
    }
    CONVERGE_RETURN_IF_ERROR(backend_->Commit(txn));
    log_replayed_groups_ += batch.size();
  }
  // Durable before the log's segments may be reused.
  return backend_->Sync();
}

EmbeddedStore::~EmbeddedStore() {
  // The order is the contract in the header.
  if (compactor_) compactor_->Stop();
  if (committer_) committer_->Stop();
  if (applier_) applier_->Stop();
  if (wal_) {
    // Mark the log's end for the next Open (a no-op if an append failed). Not when the log is
    // held for a test: that stands for a process that died.
    if (applier_ && !options_.hold_log_for_test) (void)wal_->Close();
    wal_->Stop();
  }
  if (hub_) hub_->Stop();
  compactor_.reset();
  committer_.reset();
  applier_.reset();
  history_.reset();
  tail_.reset();
  wal_.reset();
  backend_.reset();
}

util::StatusOr<RangeResponse> EmbeddedStore::RangeAt(const RangeRequest& req, Revision rev,
                                                     Revision header, const ReadView& view) {
  Revision compact = compact_.load(std::memory_order_acquire);
  if (rev < compact) return CompactedError(compact);
  RangeResponse resp;
  resp.header_revision = header;
  std::vector<RevisionPair> revs;
  const size_t limit = req.limit > 0 ? static_cast<size_t>(req.limit) : SIZE_MAX;
  int64_t count = 0;
  index_->Visit(req.key, req.range_end, rev, [&](std::string_view, const KeyState& state) {
    ++count;
    if (!req.count_only && revs.size() < limit) revs.push_back(state.mod);
    return true;
  });
  // A compaction that began meanwhile may have trimmed what the index answered from.
  compact = compact_.load(std::memory_order_acquire);
  if (rev < compact) return CompactedError(compact);
  resp.count = count;
  resp.more = !req.count_only && req.limit > 0 && count > req.limit;
  resp.kvs.reserve(revs.size());
  for (const RevisionPair& r : revs) {
    RecordView record;
    util::Status st = view.Get(r, &record);
    if (st.code() == util::Code::kNotFound) {
      return util::DataLoss("store: the index names revision " + std::to_string(r.main) +
                            " but the history has no such record");
    }
    CONVERGE_RETURN_IF_ERROR(st);
    CONVERGE_ASSIGN_OR_RETURN(KeyValuePtr kv, MakeKeyValue(r, record, req.keys_only));
    resp.kvs.push_back(std::move(kv));
  }
  return resp;
}

util::StatusOr<RangeResponse> EmbeddedStore::Range(const RangeRequest& req) {
  CONVERGE_RETURN_IF_ERROR(ValidateRange(req));
  const Revision published = committer_->published();
  const Revision rev = req.revision == 0 ? published : req.revision;
  if (rev > published) return FutureRevisionError(rev, published);
  CONVERGE_ASSIGN_OR_RETURN(ReadView view, ReadView::Begin(backend_.get(), tail_.get()));
  return RangeAt(req, rev, published, view);
}

util::StatusOr<TxnResponse> EmbeddedStore::ReadOnlyTxn(const TxnRequest& req) {
  const Revision published = committer_->published();
  CONVERGE_ASSIGN_OR_RETURN(ReadView records, ReadView::Begin(backend_.get(), tail_.get()));
  IndexView view(index_.get(), &records, published);
  TxnResponse resp;
  resp.header_revision = published;
  resp.succeeded = true;
  for (const Compare& c : req.compare) {
    CONVERGE_ASSIGN_OR_RETURN(bool ok, EvaluateCompare(view, c));
    if (!ok) {
      resp.succeeded = false;
      break;
    }
  }
  for (const RequestOp& op : resp.succeeded ? req.success : req.failure) {
    const auto& range = std::get<RangeRequest>(op);
    const Revision rev = range.revision == 0 ? published : range.revision;
    if (rev > published) return FutureRevisionError(rev, published);
    CONVERGE_ASSIGN_OR_RETURN(RangeResponse r, RangeAt(range, rev, published, records));
    resp.responses.emplace_back(std::move(r));
  }
  return resp;
}

util::StatusOr<TxnResponse> EmbeddedStore::Txn(TxnRequest req) {
  if (IsReadOnly(req)) {
    size_t bytes = 0;
    CONVERGE_RETURN_IF_ERROR(ValidateTxn(req, options_.max_request_bytes, &bytes));
    return ReadOnlyTxn(req);
  }
  return WriteTxn(std::move(req));
}

util::StatusOr<TxnResponse> EmbeddedStore::WriteTxn(TxnRequest req) {
  size_t bytes = 0;
  util::Status precheck = ValidateTxn(req, options_.max_request_bytes, &bytes);
  ValueFrames frames;
  if (precheck.ok()) frames = CompressPutValues(req);
  return committer_->Run(std::move(req), std::move(precheck), bytes, std::move(frames));
}

void EmbeddedStore::TxnAsync(TxnRequest req, TxnCallback done) {
  size_t bytes = 0;
  util::Status precheck = ValidateTxn(req, options_.max_request_bytes, &bytes);
  ValueFrames frames;
  if (precheck.ok()) frames = CompressPutValues(req);
  committer_->Submit(std::move(req), std::move(done), std::move(precheck), bytes,
                     std::move(frames));
}

util::StatusOr<PutResponse> EmbeddedStore::Put(const PutRequest& req) {
  TxnRequest txn;
  txn.success.emplace_back(req);
  CONVERGE_ASSIGN_OR_RETURN(TxnResponse resp, WriteTxn(std::move(txn)));
  return std::get<PutResponse>(std::move(resp.responses[0]));
}

util::StatusOr<DeleteRangeResponse> EmbeddedStore::DeleteRange(const DeleteRangeRequest& req) {
  TxnRequest txn;
  txn.success.emplace_back(req);
  CONVERGE_ASSIGN_OR_RETURN(TxnResponse resp, WriteTxn(std::move(txn)));
  return std::get<DeleteRangeResponse>(std::move(resp.responses[0]));
}

util::StatusOr<CompactResponse> EmbeddedStore::Compact(Revision revision) {
  std::lock_guard lock(compact_mu_);
  const Revision compact = compact_.load();
  if (revision <= compact) return CompactedError(compact);
  const Revision published = committer_->published();
  if (revision > published) return FutureRevisionError(revision, published);
  CONVERGE_RETURN_IF_ERROR(
      committer_->Maintain({}, {{kMetaScheduledCompact, static_cast<uint64_t>(revision)}}));
  compact_.store(revision, std::memory_order_release);
  compactor_->Request(revision);
  return CompactResponse{committer_->published()};
}

util::StatusOr<std::unique_ptr<WatchStream>> EmbeddedStore::Watch(const WatchRequest& req) {
  if (req.start_revision < 0) return util::InvalidArgument("watch: negative start revision");
  return hub_->Watch(req, committer_->published(), compact_.load(std::memory_order_acquire));
}

Revision EmbeddedStore::CurrentRevision() const {
  return committer_->published();
}

Revision EmbeddedStore::CompactRevision() const {
  return compact_.load(std::memory_order_acquire);
}

void EmbeddedStore::WaitForCompaction() {
  compactor_->WaitIdle();
}

EmbeddedStore::WriterStats EmbeddedStore::writer_stats() const {
  const Committer::Stats c = committer_->stats();
  WriterStats s;
  s.groups = c.groups;
  s.txns = c.txns;
  s.syncs = c.syncs;
  s.commit_ns = c.commit_ns;
  s.sync_ns = c.sync_ns;
  s.short_slice = c.short_slice;
  s.reserves = c.reserves;
  s.reserve_ns = c.reserve_ns;
  s.inline_groups = c.inline_groups;
  s.handed_over = c.handed_over;
  if (applier_) {
    const Applier::Stats a = applier_->stats();
    s.apply_commits = a.commits;
    s.apply_groups = a.groups;
    s.apply_commit_ns = a.commit_ns;
    s.apply_syncs = a.syncs;
    s.apply_sync_ns = a.sync_ns;
    s.apply_reserves = a.reserves;
  }
  if (wal_) {
    const Wal::Stats w = wal_->stats();
    s.log_bytes = w.bytes;
    s.log_switches = w.switches;
    s.log_unprepared = w.unprepared;
    s.log_created = w.created;
    s.log_recycled = w.recycled;
    s.log_deleted = w.deleted;
    s.log_segment_files = w.segment_files;
    s.log_filled_bytes = w.filled_bytes;
  }
  return s;
}

size_t EmbeddedStore::WatcherCount() const {
  return hub_->WatcherCountForTest();
}

util::StatusOr<std::unique_ptr<KV>> OpenEmbeddedStore(const EmbeddedStoreOptions& options) {
  CONVERGE_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddedStore> store, EmbeddedStore::Open(options));
  return std::unique_ptr<KV>(std::move(store));
}

}  // namespace converge::store
