// The storage interface: etcd v3's KV, Watch and Compact semantics, exactly.
//
// Every backend (the embedded LMDB store, the etcd client) implements KV, and both pass the one
// conformance suite in store/kv_conformance_test.cc. The API server builds everything it needs
// (create-if-absent, update-if-unchanged, watch-from-resourceVersion) from these calls alone.
//
// Model (as in etcd's mvcc):
//   - One global revision. Every write transaction that changes something takes the next
//     revision; all its puts and deletes share it (their events carry the same mod_revision).
//     A transaction that writes nothing does not advance it.
//   - Per key: create_revision (revision of the put that started the key's current generation),
//     mod_revision (last put), version (puts since creation, 1 for the first). A delete ends the
//     generation; a later put starts a new one with version 1.
//   - Reads at a past revision see the state as of that revision. Revisions below the compact
//     revision are gone: reads and watches there fail with Code::kOutOfRange and a message
//     containing "compacted" (see IsCompacted). Reads above the current revision fail with
//     Code::kOutOfRange and "future revision" (see IsFutureRevision).
//
// Request checks (as etcd): an empty key in a range, put or delete is kInvalidArgument; so is a
// transaction that puts one key twice, or puts a key that a delete in the same branch covers
// ("duplicate key given in txn request"), and a transaction larger than the backend's request
// limit ("request is too large"; etcd's default is 1.5 MiB). A range inside a transaction at a
// compacted or future revision fails the whole transaction, which then writes nothing.
//
// Ownership: responses hand out KeyValuePtr, immutable and shared; callers keep them as long as
// they like. Thread-safety: every KV method may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <variant>
#include <vector>

#include "util/status.h"

namespace converge::store {

using Revision = int64_t;

struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = 0;
  Revision mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};
using KeyValuePtr = std::shared_ptr<const KeyValue>;

// Key ranges follow etcd: range_end empty means the single key `key`; range_end "\0" means every
// key >= key; otherwise the half-open interval [key, range_end). PrefixEnd gives the range_end
// that selects every key starting with a prefix.
std::string PrefixEnd(std::string_view prefix);

struct RangeRequest {
  std::string key;
  std::string range_end;
  int64_t limit = 0;        // 0 = no limit
  Revision revision = 0;    // 0 = current
  bool keys_only = false;   // values left empty
  bool count_only = false;  // kvs left empty, count filled
};

struct RangeResponse {
  Revision header_revision = 0;  // the store's current revision when the read was served
  std::vector<KeyValuePtr> kvs;  // in key order
  bool more = false;             // more keys exist in the range beyond `limit`
  int64_t count = 0;             // number of keys in the range (ignoring limit)
};

struct PutRequest {
  std::string key;
  std::string value;
  bool prev_kv = false;  // return the previous key-value, if any
  int64_t lease = 0;
  // Optional: `value` as a CompressValue frame (store/record.h), made by a caller that keeps the
  // frame for itself too (the API server's watch cache). A store that compresses values may keep
  // it instead of compressing `value` again; others ignore it. It must decompress to `value`.
  std::shared_ptr<const std::string> compressed_value;
};

struct PutResponse {
  Revision header_revision = 0;
  KeyValuePtr prev_kv;  // null unless requested and present
};

struct DeleteRangeRequest {
  std::string key;
  std::string range_end;
  bool prev_kv = false;
};

struct DeleteRangeResponse {
  Revision header_revision = 0;
  int64_t deleted = 0;
  std::vector<KeyValuePtr> prev_kvs;  // only when requested
};

struct Compare {
  enum class Target { kVersion, kCreateRevision, kModRevision, kValue };
  enum class Result { kEqual, kNotEqual, kLess, kGreater };
  std::string key;
  std::string range_end;  // as in RangeRequest; every key in the range must satisfy the compare
  Target target = Target::kModRevision;
  Result result = Result::kEqual;
  int64_t number = 0;  // for version / create_revision / mod_revision
  std::string value;   // for kValue
};

using RequestOp = std::variant<RangeRequest, PutRequest, DeleteRangeRequest>;
using ResponseOp = std::variant<RangeResponse, PutResponse, DeleteRangeResponse>;

// A transaction: if every compare holds, apply `success`, else `failure`. Applied atomically at
// one revision; ranges inside see the transaction's earlier writes. A missing key compares as
// version 0, create_revision 0, mod_revision 0 and never equals any value.
struct TxnRequest {
  std::vector<Compare> compare;
  std::vector<RequestOp> success;
  std::vector<RequestOp> failure;
};

struct TxnResponse {
  Revision header_revision = 0;
  bool succeeded = false;
  std::vector<ResponseOp> responses;  // one per applied op, same order
};

struct CompactResponse {
  Revision header_revision = 0;
};

struct Event {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  // For kPut the new key-value. For kDelete a key-value with the key, mod_revision = the delete's
  // revision, and empty value / zero version and create_revision (as etcd reports it).
  KeyValuePtr kv;
  KeyValuePtr prev_kv;  // set only when the watch asked for prev_kv and a previous value existed
};

struct WatchRequest {
  std::string key;
  std::string range_end;
  // First revision to deliver (inclusive). 0 = from the next revision after the current one.
  Revision start_revision = 0;
  bool prev_kv = false;
  // Periodically (and on RequestProgress) deliver an empty response carrying the current
  // revision, once every event up to it has been delivered to this watcher.
  bool progress_notify = false;
  // With prev_kv: when not empty, only events on keys under one of these prefixes need prev_kv.
  // A store may still send it for other keys (the etcd store does), so callers must not rely on
  // its absence; the embedded store skips it, and with it decompressing every overwritten value.
  std::vector<std::string> prev_kv_prefixes;
};

struct WatchResponse {
  Revision header_revision = 0;
  // In revision order; all events of one revision are in the same response. Empty for a progress
  // notification.
  std::vector<Event> events;
  bool canceled = false;
  // When canceled: why. kCancelReasonCompacted (with compact_revision set), kCancelReasonSlow
  // (the watcher's buffer filled: resume from the last revision seen + 1), or other text.
  std::string cancel_reason;
  Revision compact_revision = 0;
  bool IsProgressNotify() const { return events.empty() && !canceled; }
};

inline constexpr const char kCancelReasonCompacted[] = "mvcc: required revision has been compacted";
inline constexpr const char kCancelReasonSlow[] = "watcher fell behind and was cancelled";

// One watch. Responses are pulled with Next(). After a canceled response, Next() returns
// Cancelled errors. Destroying the stream cancels the watch. After Cancel(), Next() returns
// Cancelled; when the backend shuts down it returns Unavailable (after any buffered events), and
// the client resumes elsewhere from its last revision + 1. A stream may outlive its KV.
//
// Thread-safety: Next() is called by one thread at a time; Cancel() and RequestProgress() may be
// called from any thread, also while Next() blocks.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // Blocks until a response is available, `stop` is requested (-> Cancelled), or the stream is
  // cancelled. Never blocks a writer.
  virtual util::StatusOr<WatchResponse> Next(std::stop_token stop) = 0;
  // Asks for a progress notification as soon as the watcher is caught up.
  virtual void RequestProgress() = 0;
  virtual void Cancel() = 0;
};

class KV {
 public:
  virtual ~KV() = default;

  virtual util::StatusOr<RangeResponse> Range(const RangeRequest& req) = 0;
  // A Put returns only once the write is durable (fsynced for the embedded store, committed by
  // a quorum for etcd).
  virtual util::StatusOr<PutResponse> Put(const PutRequest& req) = 0;
  virtual util::StatusOr<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& req) = 0;
  // Takes the request by value: a caller that moves it in spares the store a copy of its values.
  virtual util::StatusOr<TxnResponse> Txn(TxnRequest req) = 0;

  // The asynchronous form of Txn: `done` runs exactly once, on a store thread, after the
  // transaction is durable (or failed). `done` must not block: it runs on the thread that
  // acknowledges every other writer too.
  using TxnCallback = std::function<void(util::StatusOr<TxnResponse>)>;
  virtual void TxnAsync(TxnRequest req, TxnCallback done) = 0;

  // Discards history below `revision`: afterwards reads and watches at revisions < revision fail
  // as compacted. Compacting at or below the current compact revision fails with kOutOfRange
  // ("compacted"); above the current revision with kOutOfRange ("future revision").
  virtual util::StatusOr<CompactResponse> Compact(Revision revision) = 0;

  virtual util::StatusOr<std::unique_ptr<WatchStream>> Watch(const WatchRequest& req) = 0;

  // The latest committed revision (0 for an empty store).
  virtual Revision CurrentRevision() const = 0;
  // The revision history starts at (everything below has been compacted).
  virtual Revision CompactRevision() const = 0;
};

bool IsCompacted(const util::Status& s);
bool IsFutureRevision(const util::Status& s);
util::Status CompactedError(Revision compact_revision);
util::Status FutureRevisionError(Revision requested, Revision current);

}  // namespace converge::store
