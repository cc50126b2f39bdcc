// GroupWriter: applies one group of transactions inside one LMDB write transaction.
//
// Every transaction that writes takes the next revision; its puts and deletes are numbered by
// sub-revision in request order. Compares and ranges see the newest committed state plus every
// earlier write of the group (the overlay), so optimistic concurrency is exact. Nothing done
// here is visible to readers until the committer applies the index changes and publishes.
//
// Thread-safety: none; the committer thread owns it for the duration of one group.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "store/backend.h"
#include "store/index.h"
#include "store/kv.h"
#include "store/txn_eval.h"
#include "store/watch_events.h"
#include "util/status.h"

namespace converge::store {

class GroupWriter {
 public:
  // `latest` is the newest committed revision, `compact` the compact revision (for ranges at
  // an explicit revision inside a transaction).
  GroupWriter(Backend* backend, MDB_txn* txn, const Index* index, Revision latest,
              Revision compact);

  // Applies a validated transaction; moves values out of `req`. A range at a compacted or
  // future revision fails the transaction before it writes anything; any other error leaves
  // the LMDB transaction unusable (the committer aborts the group).
  util::StatusOr<TxnResponse> Apply(TxnRequest& req);

  // Deletes the records of a compaction batch; absent ones are skipped.
  util::Status DeleteRecords(const std::vector<RevisionPair>& revs);

  Revision latest() const { return latest_; }
  // Records added minus records deleted.
  int64_t record_delta() const { return record_delta_; }
  // True once anything was written to the LMDB transaction.
  bool wrote() const { return wrote_; }
  std::vector<Index::Change>& changes() { return changes_; }
  std::vector<RevisionEventsPtr>& events() { return events_; }

 private:
  // The group's own writes, newest state per key.
  struct OverlayEntry {
    bool live = false;
    KeyState state;
    KeyValuePtr kv;  // the put's key-value when live
  };
  class OverlayView;

  util::Status Put(PutRequest& put, Revision rev, int64_t* sub, PutResponse* resp,
                   RevisionEvents* events);
  util::Status Delete(const DeleteRangeRequest& del, Revision rev, int64_t* sub,
                      DeleteRangeResponse* resp, RevisionEvents* events);
  util::StatusOr<RangeResponse> Range(const RangeRequest& req);
  util::Status CheckRangeRevision(const RangeRequest& req) const;

  Backend* const backend_;
  MDB_txn* const txn_;
  const Index* const index_;
  const Revision compact_;
  Revision latest_;
  std::map<std::string, OverlayEntry, std::less<>> overlay_;
  std::vector<Index::Change> changes_;
  std::vector<RevisionEventsPtr> events_;
  int64_t record_delta_ = 0;
  bool wrote_ = false;
};

}  // namespace converge::store
