// GroupWriter: evaluates one group of transactions and encodes the records they add.
//
// Every transaction that writes takes the next revision; its puts and deletes are numbered by
// sub-revision in request order. Compares and ranges see the newest state the writer made
// (the index at its latest revision over `records`: the log tail and LMDB) plus every earlier
// write of the group (the overlay), so optimistic concurrency is exact. The records go into a
// GroupEncoder, from which the committer makes them durable (in the log, or straight in LMDB).
// Nothing done here is visible to readers until the committer applies the index changes and
// publishes.
//
// Thread-safety: none; the committer thread owns it for the duration of one group.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/index.h"
#include "store/kv.h"
#include "store/log_tail.h"
#include "store/txn_eval.h"
#include "store/wal_format.h"
#include "store/watch_events.h"
#include "util/status.h"

namespace converge::store {

// The stored form of every put's value in a transaction, the success branch's puts first, then
// the failure branch's: a zstd frame, or null where compression does not pay (the value is stored
// as it is). An empty list: not compressed yet.
using ValueFrames = std::vector<std::shared_ptr<const std::string>>;

// The ValueFrames of `req`: CompressValue's frame for each put, or a put's compressed_value,
// shared as it is, when its declared length is the value's. Writers call it on their own threads
// before queueing the transaction, so that the committer, the store's one writing thread, does
// not compress.
ValueFrames CompressPutValues(const TxnRequest& req);

class GroupWriter {
 public:
  // `latest` is the newest revision the writer made, `compact` the compact revision (for
  // ranges at an explicit revision inside a transaction). Records go to `out`.
  GroupWriter(const ReadView* records, const Index* index, Revision latest, Revision compact,
              wal::GroupEncoder* out);

  // Applies a validated transaction; moves values out of `req`. `frames` is
  // CompressPutValues(req), or empty: the values are then compressed here. A range at a
  // compacted or future revision fails the transaction before it writes anything; any other
  // error (a record that cannot be read) leaves the group unusable (the committer fails it).
  util::StatusOr<TxnResponse> Apply(TxnRequest& req, const ValueFrames& frames = {});

  Revision latest() const { return latest_; }
  // True once any record was added.
  bool wrote() const { return out_->change_count() > 0; }
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

  // `frame`: the value's frame, "" to store it as it is, or null to compress here.
  util::Status Put(PutRequest& put, const std::string* frame, Revision rev, int64_t* sub,
                   PutResponse* resp, RevisionEvents* events);
  util::Status Delete(const DeleteRangeRequest& del, Revision rev, int64_t* sub,
                      DeleteRangeResponse* resp, RevisionEvents* events);
  util::StatusOr<RangeResponse> Range(const RangeRequest& req);
  util::Status CheckRangeRevision(const RangeRequest& req) const;

  const ReadView* const records_;
  const Index* const index_;
  const Revision compact_;
  wal::GroupEncoder* const out_;
  Revision latest_;
  std::map<std::string, OverlayEntry, std::less<>> overlay_;
  std::vector<Index::Change> changes_;
  std::vector<RevisionEventsPtr> events_;
};

}  // namespace converge::store
