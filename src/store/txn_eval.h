// Evaluation of compares and ranges over a consistent view of the key space, and validation
// of transaction requests. Shared by the read path (a view at a past or the published
// revision) and the committer (the newest state plus the group's own uncommitted writes).
//
// Thread-safety: a KeyView is used by one thread at a time; the free functions are pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "store/backend.h"
#include "store/index.h"
#include "store/kv.h"
#include "store/log_tail.h"
#include "store/watch_events.h"
#include "util/status.h"

namespace converge::store {

// The live keys of the store as of one point in history.
class KeyView {
 public:
  struct Item {
    std::string key;
    KeyState state;
    KeyValuePtr kv;  // set when the value is already in memory
  };
  virtual ~KeyView() = default;
  // Live keys in the etcd range (start, end), in key order.
  virtual util::Status List(std::string_view start, std::string_view end,
                            std::vector<Item>* out) = 0;
  // The key-value of `item` (reads its record unless item.kv is set; keys_only may omit the
  // value).
  virtual util::StatusOr<KeyValuePtr> Materialize(const Item& item, bool keys_only) = 0;
};

// The index at revision `at` (or Index::kLatest) over the records visible in `records`.
class IndexView : public KeyView {
 public:
  IndexView(const Index* index, const ReadView* records, Revision at)
      : index_(index), records_(records), at_(at) {}
  util::Status List(std::string_view start, std::string_view end, std::vector<Item>* out) override;
  util::StatusOr<KeyValuePtr> Materialize(const Item& item, bool keys_only) override;

 private:
  util::Status GetRecord(const Item& item, RecordView* record);

  const Index* index_;
  const ReadView* records_;
  Revision at_;
};

// etcd's compare semantics: every live key in the compare's range must satisfy it; an empty
// range compares as a key with version, create_revision and mod_revision 0, except that a
// value compare against it is false whatever the result operator.
util::StatusOr<bool> EvaluateCompare(KeyView& view, const Compare& compare);

// A range over `view` with limit, count, keys_only and count_only (req.revision is the
// caller's business: pick the view accordingly).
util::StatusOr<RangeResponse> EvaluateRange(KeyView& view, const RangeRequest& req,
                                            Revision header_revision);

// True if neither branch writes: such a transaction never takes a revision.
bool IsReadOnly(const TxnRequest& req);

// etcd's request checks: keys present, no key put twice or both put and deleted in one
// branch ("duplicate key given in txn request"), total size within max_request_bytes
// ("request is too large"). InvalidArgument otherwise. *bytes receives the request's size.
util::Status ValidateTxn(const TxnRequest& req, size_t max_request_bytes, size_t* bytes);
util::Status ValidateRange(const RangeRequest& req);

}  // namespace converge::store
