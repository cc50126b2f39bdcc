#include "store/embedded_store.h"

#include <future>

#include "store/backend.h"
#include "store/committer.h"
#include "store/compactor.h"
#include "store/index.h"
#include "store/recovery.h"
#include "store/txn_eval.h"
#include "store/watch_hub.h"

namespace converge::store {

// History for catching-up watchers, read straight from LMDB snapshots: records are
// self-describing (the prev pointer finds prev_kv), so the index is not involved.
class StoreHistory final : public HistorySource {
 public:
  // Records looked at per call at most, so that a snapshot stays short-lived.
  static constexpr size_t kMaxScan = 20000;

  StoreHistory(Backend* backend, const std::atomic<Revision>* compact)
      : backend_(backend), compact_(compact) {}

  util::StatusOr<Chunk> ReadHistory(std::string_view key, std::string_view end, Revision from,
                                    Revision to, bool prev_kv, size_t max_events) override {
    Chunk chunk;
    CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn txn, backend_->BeginRead());
    // The snapshot predates any deletion for a compaction above the value read here.
    const Revision compact = compact_->load(std::memory_order_acquire);
    if (from < compact) {
      chunk.compacted = compact;
      return chunk;
    }
    CONVERGE_ASSIGN_OR_RETURN(Backend::HistoryCursor cursor,
                              backend_->OpenHistoryCursor(txn.get()));
    CONVERGE_ASSIGN_OR_RETURN(bool found, cursor.Seek(RevisionPair{from, 0}));
    Revision in_revision = 0;
    size_t scanned = 0;
    while (found && cursor.rev().main <= to) {
      const RevisionPair rev = cursor.rev();
      if (rev.main != in_revision) {
        if (chunk.events.size() >= max_events || scanned >= kMaxScan) {
          chunk.next = rev.main;
          return chunk;
        }
        in_revision = rev.main;
      }
      ++scanned;
      RecordView record;
      CONVERGE_RETURN_IF_ERROR(DecodeRecordHeader(rev, cursor.bytes(), &record));
      if (KeyInRange(record.key, key, end)) {
        CONVERGE_RETURN_IF_ERROR(DecodeRecord(rev, cursor.bytes(), &record));
        Event event;
        if (record.tombstone) {
          event.type = Event::Type::kDelete;
          auto kv = std::make_shared<KeyValue>();
          kv->key.assign(record.key);
          kv->mod_revision = rev.main;
          event.kv = std::move(kv);
        } else {
          event.kv = MakeKeyValue(rev, record);
        }
        if (prev_kv && !record.prev.IsZero()) {
          RecordView prev;
          util::Status st = backend_->GetRecord(txn.get(), record.prev, &prev);
          if (st.code() == util::Code::kNotFound) {
            return util::DataLoss("store: the previous value of revision " +
                                  std::to_string(rev.main) + " is missing from the history");
          }
          CONVERGE_RETURN_IF_ERROR(st);
          event.prev_kv = MakeKeyValue(record.prev, prev);
        }
        chunk.events.push_back(std::move(event));
      }
      CONVERGE_ASSIGN_OR_RETURN(found, cursor.Next());
    }
    chunk.next = to + 1;
    return chunk;
  }

 private:
  Backend* const backend_;
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
  s->index_ = std::make_unique<Index>();
  CONVERGE_ASSIGN_OR_RETURN(RecoveredState state, Recover(*s->backend_, s->index_.get(),
                                                          options.verify_checksums_on_open));
  s->compact_.store(state.scheduled_compact);
  s->history_ = std::make_unique<StoreHistory>(s->backend_.get(), &s->compact_);

  WatchHub::Options hub_options;
  hub_options.watcher_buffer = options.watcher_buffer;
  hub_options.max_events_per_response = options.max_events_per_watch_response;
  hub_options.progress_interval = options.progress_interval;
  hub_options.clock = options.clock;
  s->hub_ = std::make_shared<WatchHub>(hub_options, s->history_.get());

  Committer::Options committer_options;
  committer_options.max_group_txns = options.max_group_txns;
  s->committer_ =
      std::make_unique<Committer>(committer_options, s->backend_.get(), s->index_.get(),
                                  s->hub_.get(), state.current, state.record_count, &s->compact_);
  Compactor::Options compactor_options;
  compactor_options.batch = options.compaction_batch;
  s->compactor_ =
      std::make_unique<Compactor>(compactor_options, s->index_.get(), s->committer_.get());

  s->hub_->Start(state.current);
  s->committer_->Start();
  s->compactor_->Start(state.finished_compact, state.scheduled_compact);
  return s;
}

EmbeddedStore::~EmbeddedStore() {
  // The order is the contract in the header.
  if (compactor_) compactor_->Stop();
  if (committer_) committer_->Stop();
  if (hub_) hub_->Stop();
  compactor_.reset();
  committer_.reset();
  history_.reset();
  backend_.reset();
}

util::StatusOr<RangeResponse> EmbeddedStore::RangeAt(const RangeRequest& req, Revision rev,
                                                     Revision header, MDB_txn* txn) {
  Revision compact = compact_.load(std::memory_order_acquire);
  if (rev < compact) return CompactedError(compact);
  RangeResponse resp;
  resp.header_revision = header;
  std::vector<RevisionPair> revs;
  const size_t limit = req.limit > 0 ? static_cast<size_t>(req.limit) : SIZE_MAX;
  int64_t count = 0;
  index_->Visit(req.key, req.range_end, rev, [&](const std::string&, const KeyState& state) {
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
    util::Status st = backend_->GetRecord(txn, r, &record);
    if (st.code() == util::Code::kNotFound) {
      return util::DataLoss("store: the index names revision " + std::to_string(r.main) +
                            " but the history has no such record");
    }
    CONVERGE_RETURN_IF_ERROR(st);
    resp.kvs.push_back(MakeKeyValue(r, record, req.keys_only));
  }
  return resp;
}

util::StatusOr<RangeResponse> EmbeddedStore::Range(const RangeRequest& req) {
  CONVERGE_RETURN_IF_ERROR(ValidateRange(req));
  const Revision published = committer_->published();
  const Revision rev = req.revision == 0 ? published : req.revision;
  if (rev > published) return FutureRevisionError(rev, published);
  CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn txn, backend_->BeginRead());
  return RangeAt(req, rev, published, txn.get());
}

util::StatusOr<TxnResponse> EmbeddedStore::ReadOnlyTxn(const TxnRequest& req) {
  const Revision published = committer_->published();
  CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn txn, backend_->BeginRead());
  IndexView view(index_.get(), backend_.get(), txn.get(), published);
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
    CONVERGE_ASSIGN_OR_RETURN(RangeResponse r, RangeAt(range, rev, published, txn.get()));
    resp.responses.emplace_back(std::move(r));
  }
  return resp;
}

util::StatusOr<TxnResponse> EmbeddedStore::Txn(const TxnRequest& req) {
  if (IsReadOnly(req)) {
    size_t bytes = 0;
    CONVERGE_RETURN_IF_ERROR(ValidateTxn(req, options_.max_request_bytes, &bytes));
    return ReadOnlyTxn(req);
  }
  std::promise<util::StatusOr<TxnResponse>> promise;
  std::future<util::StatusOr<TxnResponse>> future = promise.get_future();
  TxnAsync(req, [&promise](util::StatusOr<TxnResponse> r) { promise.set_value(std::move(r)); });
  return future.get();
}

void EmbeddedStore::TxnAsync(TxnRequest req, TxnCallback done) {
  size_t bytes = 0;
  util::Status precheck = ValidateTxn(req, options_.max_request_bytes, &bytes);
  committer_->Submit(std::move(req), std::move(done), std::move(precheck), bytes);
}

util::StatusOr<PutResponse> EmbeddedStore::Put(const PutRequest& req) {
  TxnRequest txn;
  txn.success.emplace_back(req);
  CONVERGE_ASSIGN_OR_RETURN(TxnResponse resp, Txn(txn));
  return std::get<PutResponse>(std::move(resp.responses[0]));
}

util::StatusOr<DeleteRangeResponse> EmbeddedStore::DeleteRange(const DeleteRangeRequest& req) {
  TxnRequest txn;
  txn.success.emplace_back(req);
  CONVERGE_ASSIGN_OR_RETURN(TxnResponse resp, Txn(txn));
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
  const Committer::Stats s = committer_->stats();
  return WriterStats{s.groups,  s.txns,        s.syncs,    s.commit_ns,
                     s.sync_ns, s.short_slice, s.reserves, s.reserve_ns};
}

size_t EmbeddedStore::WatcherCount() const {
  return hub_->WatcherCountForTest();
}

util::StatusOr<std::unique_ptr<KV>> OpenEmbeddedStore(const EmbeddedStoreOptions& options) {
  CONVERGE_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddedStore> store, EmbeddedStore::Open(options));
  return std::unique_ptr<KV>(std::move(store));
}

}  // namespace converge::store
