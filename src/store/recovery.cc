#include "store/recovery.h"

#include <string>

namespace converge::store {

namespace {

util::Status ReadMeta(Backend& backend, MDB_txn* txn, const char* name, uint64_t* value) {
  util::Status st = backend.GetMeta(txn, name, value);
  if (st.code() == util::Code::kNotFound) {
    return util::DataLoss(std::string("store: meta value '") + name + "' is missing");
  }
  return st;
}

}  // namespace

util::StatusOr<RecoveredState> Recover(Backend& backend, Index* index, bool verify_checksums) {
  CONVERGE_ASSIGN_OR_RETURN(Backend::ReadTxn txn, backend.BeginRead());
  uint64_t current = 0, scheduled = 0, finished = 0, records = 0;
  CONVERGE_RETURN_IF_ERROR(ReadMeta(backend, txn.get(), kMetaCurrentRevision, &current));
  CONVERGE_RETURN_IF_ERROR(ReadMeta(backend, txn.get(), kMetaScheduledCompact, &scheduled));
  CONVERGE_RETURN_IF_ERROR(ReadMeta(backend, txn.get(), kMetaFinishedCompact, &finished));
  CONVERGE_RETURN_IF_ERROR(ReadMeta(backend, txn.get(), kMetaRecordCount, &records));
  if (finished > scheduled || scheduled > current) {
    return util::DataLoss("store: meta revisions are inconsistent: finished compact " +
                          std::to_string(finished) + ", scheduled compact " +
                          std::to_string(scheduled) + ", current " + std::to_string(current));
  }
  RecoveredState state{static_cast<Revision>(current), static_cast<Revision>(scheduled),
                       static_cast<Revision>(finished), records};

  uint64_t seen = 0;
  RevisionPair last;
  {
    CONVERGE_ASSIGN_OR_RETURN(Backend::HistoryCursor cursor, backend.OpenHistoryCursor(txn.get()));
    CONVERGE_ASSIGN_OR_RETURN(bool found, cursor.First());
    while (found) {
      const RevisionPair rev = cursor.rev();
      if (rev.main > state.current || rev.main < 1 || rev.sub < 0) {
        return util::DataLoss("store: history record at revision " + std::to_string(rev.main) +
                              " lies beyond the current revision " + std::to_string(state.current));
      }
      RecordView record;
      if (verify_checksums) {
        CONVERGE_RETURN_IF_ERROR(DecodeRecord(rev, cursor.bytes(), &record));
      } else {
        CONVERGE_RETURN_IF_ERROR(DecodeRecordHeader(rev, cursor.bytes(), &record));
      }
      CONVERGE_RETURN_IF_ERROR(index->Restore(rev, record, state.scheduled_compact));
      last = rev;
      ++seen;
      CONVERGE_ASSIGN_OR_RETURN(found, cursor.Next());
    }
  }
  if (seen != records) {
    return util::DataLoss("store: the history holds " + std::to_string(seen) +
                          " records but the meta record count is " + std::to_string(records));
  }
  CONVERGE_ASSIGN_OR_RETURN(uint64_t entries, backend.HistoryEntries(txn.get()));
  if (entries != seen) {
    return util::DataLoss("store: LMDB counts " + std::to_string(entries) +
                          " history entries but a scan found " + std::to_string(seen));
  }
  if (state.current > 0 && last.main != state.current) {
    return util::DataLoss("store: the newest history record is at revision " +
                          std::to_string(last.main) + " but the current revision is " +
                          std::to_string(state.current));
  }
  return state;
}

}  // namespace converge::store
