#include "store/log_tail.h"

#include <algorithm>

namespace converge::store {

std::shared_ptr<const LoggedGroup> LoggedGroup::FromEncoder(std::unique_ptr<wal::GroupEncoder> e) {
  auto g = std::make_shared<LoggedGroup>();
  g->seq = e->seq();
  g->first_revision = e->first_revision();
  g->last_revision = e->last_revision();
  g->bytes = e->record_bytes();
  g->changes.reserve(e->change_count());
  for (size_t i = 0; i < e->change_count(); ++i) {
    g->changes.push_back(wal::GroupView::Change{e->change_rev(i), e->change_record(i)});
  }
  g->owner = std::shared_ptr<const wal::GroupEncoder>(std::move(e));
  return g;
}

bool LogTail::Snapshot::Find(RevisionPair rev, std::string_view* record) const {
  if (groups_.empty() || rev.main < groups_.front()->first_revision ||
      rev.main > groups_.back()->last_revision) {
    return false;
  }
  auto g =
      std::lower_bound(groups_.begin(), groups_.end(), rev.main,
                       [](const LoggedGroupPtr& p, Revision r) { return p->last_revision < r; });
  if (g == groups_.end()) return false;
  const auto& changes = (*g)->changes;
  auto c = std::lower_bound(
      changes.begin(), changes.end(), rev,
      [](const wal::GroupView::Change& change, RevisionPair r) { return change.rev < r; });
  if (c == changes.end() || c->rev != rev) return false;
  *record = c->record;
  return true;
}

LogTail::LogTail() : snapshot_(std::make_shared<Snapshot>()) {}

LogTail::SnapshotPtr LogTail::Acquire() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

void LogTail::Append(LoggedGroupPtr group) {
  auto next = std::make_shared<Snapshot>();
  std::lock_guard lock(mu_);
  next->groups_.reserve(snapshot_->groups_.size() + 1);
  next->groups_ = snapshot_->groups_;
  bytes_ += group->bytes;
  next->groups_.push_back(std::move(group));
  snapshot_ = std::move(next);
}

void LogTail::DropThrough(uint64_t seq) {
  {
    std::lock_guard lock(mu_);
    const auto& groups = snapshot_->groups_;
    auto keep = std::find_if(groups.begin(), groups.end(),
                             [seq](const LoggedGroupPtr& g) { return g->seq > seq; });
    if (keep == groups.begin()) return;
    auto next = std::make_shared<Snapshot>();
    for (auto it = groups.begin(); it != keep; ++it) bytes_ -= (*it)->bytes;
    next->groups_.assign(keep, groups.end());
    snapshot_ = std::move(next);
  }
  room_cv_.notify_all();
}

size_t LogTail::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

util::StatusOr<ReadView> ReadView::Begin(Backend* backend, const LogTail* tail) {
  // The order is the contract in the header: tail first, then LMDB.
  LogTail::SnapshotPtr snapshot = tail != nullptr ? tail->Acquire() : nullptr;
  CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn read, backend->BeginRead());
  return ReadView(backend, std::move(snapshot), std::move(read));
}

ReadView::ReadView(const Backend* backend, MDB_txn* txn) : backend_(backend), txn_(txn) {}

ReadView::ReadView(const Backend* backend, LogTail::SnapshotPtr tail, Backend::ReadTxn read)
    : backend_(backend), tail_(std::move(tail)), read_(std::move(read)), txn_(read_->get()) {}

util::Status ReadView::Get(RevisionPair rev, RecordView* out) const {
  std::string_view bytes;
  if (tail_ != nullptr && tail_->Find(rev, &bytes)) {
    return DecodeRecord(rev, bytes, out, /*verify_checksum=*/false);
  }
  return backend_->GetRecord(txn_, rev, out);
}

}  // namespace converge::store
