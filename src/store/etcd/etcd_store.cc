#include "store/etcd/etcd_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "store/etcd/etcd_connection.h"
#include "store/etcd/etcd_watch.h"

namespace converge::store::etcd {

namespace {

namespace pb = etcdserverpb;

// A key that sorts before every real one: reading it costs etcd next to nothing, and its
// response header carries the current revision.
const std::string kProbeKey(1, '\0');

void ToEtcd(const RangeRequest& in, pb::RangeRequest* out) {
  out->set_key(in.key);
  out->set_range_end(in.range_end);
  out->set_limit(in.limit);
  out->set_revision(ToEtcdRevision(in.revision));
  out->set_keys_only(in.keys_only);
  out->set_count_only(in.count_only);
}

void ToEtcd(const PutRequest& in, pb::PutRequest* out) {
  out->set_key(in.key);
  out->set_value(in.value);
  out->set_lease(in.lease);
  out->set_prev_kv(in.prev_kv);
}

void ToEtcd(const DeleteRangeRequest& in, pb::DeleteRangeRequest* out) {
  out->set_key(in.key);
  out->set_range_end(in.range_end);
  out->set_prev_kv(in.prev_kv);
}

void ToEtcd(const Compare& in, pb::Compare* out) {
  out->set_key(in.key);
  out->set_range_end(in.range_end);
  switch (in.result) {
    case Compare::Result::kEqual: out->set_result(pb::Compare::EQUAL); break;
    case Compare::Result::kNotEqual: out->set_result(pb::Compare::NOT_EQUAL); break;
    case Compare::Result::kLess: out->set_result(pb::Compare::LESS); break;
    case Compare::Result::kGreater: out->set_result(pb::Compare::GREATER); break;
  }
  // A missing key has create/mod revision 0 on both sides; every existing one is shifted by one.
  // So 0 stays 0 ("absent" compares the same) and every positive number moves up by one.
  switch (in.target) {
    case Compare::Target::kVersion:
      out->set_target(pb::Compare::VERSION);
      out->set_version(in.number);
      break;
    case Compare::Target::kCreateRevision:
      out->set_target(pb::Compare::CREATE);
      out->set_create_revision(ToEtcdRevision(in.number));
      break;
    case Compare::Target::kModRevision:
      out->set_target(pb::Compare::MOD);
      out->set_mod_revision(ToEtcdRevision(in.number));
      break;
    case Compare::Target::kValue:
      out->set_target(pb::Compare::VALUE);
      out->set_value(in.value);
      break;
  }
}

void ToEtcd(const RequestOp& in, pb::RequestOp* out) {
  if (const auto* r = std::get_if<RangeRequest>(&in)) {
    ToEtcd(*r, out->mutable_request_range());
  } else if (const auto* p = std::get_if<PutRequest>(&in)) {
    ToEtcd(*p, out->mutable_request_put());
  } else {
    ToEtcd(std::get<DeleteRangeRequest>(in), out->mutable_request_delete_range());
  }
}

RangeResponse FromEtcd(const pb::RangeResponse& in, Revision header) {
  RangeResponse out;
  out.header_revision = header;
  out.kvs.reserve(in.kvs_size());
  for (const auto& kv : in.kvs()) out.kvs.push_back(etcd::FromEtcd(kv));
  out.more = in.more();
  out.count = in.count();
  return out;
}

PutResponse FromEtcd(const pb::PutResponse& in, Revision header) {
  PutResponse out;
  out.header_revision = header;
  if (in.has_prev_kv()) out.prev_kv = etcd::FromEtcd(in.prev_kv());
  return out;
}

DeleteRangeResponse FromEtcd(const pb::DeleteRangeResponse& in, Revision header) {
  DeleteRangeResponse out;
  out.header_revision = header;
  out.deleted = in.deleted();
  for (const auto& kv : in.prev_kvs()) out.prev_kvs.push_back(etcd::FromEtcd(kv));
  return out;
}

TxnResponse FromEtcd(const pb::TxnResponse& in) {
  TxnResponse out;
  // Operations inside a transaction report the transaction's revision, as the embedded store.
  out.header_revision = FromEtcdRevision(in.header().revision());
  out.succeeded = in.succeeded();
  for (const auto& op : in.responses()) {
    switch (op.response_case()) {
      case pb::ResponseOp::kResponseRange:
        out.responses.emplace_back(FromEtcd(op.response_range(), out.header_revision));
        break;
      case pb::ResponseOp::kResponsePut:
        out.responses.emplace_back(FromEtcd(op.response_put(), out.header_revision));
        break;
      case pb::ResponseOp::kResponseDeleteRange:
        out.responses.emplace_back(FromEtcd(op.response_delete_range(), out.header_revision));
        break;
      default: break;
    }
  }
  return out;
}

bool IsReadOnly(const TxnRequest& req) {
  auto read = [](const std::vector<RequestOp>& ops) {
    for (const auto& op : ops) {
      if (!std::holds_alternative<RangeRequest>(op)) return false;
    }
    return true;
  };
  return read(req.success) && read(req.failure);
}

// The highest revision a range inside the transaction reads at (for "future revision" errors).
Revision MaxRangeRevision(const TxnRequest& req) {
  Revision max = 0;
  for (const auto* ops : {&req.success, &req.failure}) {
    for (const auto& op : *ops) {
      if (const auto* r = std::get_if<RangeRequest>(&op)) max = std::max(max, r->revision);
    }
  }
  return max;
}

// Whether `key` lies in the range [start, end) in KV's notation (end "" = the key itself,
// "\0" = no upper bound).
bool Covers(const std::string& start, const std::string& end, const std::string& key) {
  if (end.empty()) return key == start;
  if (end == kProbeKey) return key >= start;
  return key >= start && key < end;
}

// etcd's own check misses a put under a delete whose range_end is "\0" (it takes the range as
// empty), so the rule of kv.h is applied here for every branch.
util::Status CheckTxn(const TxnRequest& req) {
  for (const auto* branch : {&req.success, &req.failure}) {
    std::vector<const std::string*> puts;
    for (const auto& op : *branch) {
      if (const auto* p = std::get_if<PutRequest>(&op)) puts.push_back(&p->key);
    }
    std::sort(puts.begin(), puts.end(), [](auto* a, auto* b) { return *a < *b; });
    for (size_t i = 1; i < puts.size(); ++i) {
      if (*puts[i] == *puts[i - 1]) {
        return util::InvalidArgument("etcdserver: duplicate key given in txn request");
      }
    }
    for (const auto& op : *branch) {
      const auto* d = std::get_if<DeleteRangeRequest>(&op);
      if (d == nullptr) continue;
      for (const std::string* key : puts) {
        if (Covers(d->key, d->range_end, *key)) {
          return util::InvalidArgument("etcdserver: duplicate key given in txn request");
        }
      }
    }
  }
  return util::Status();
}

void ToEtcd(const TxnRequest& in, pb::TxnRequest* out) {
  for (const auto& c : in.compare) ToEtcd(c, out->add_compare());
  for (const auto& op : in.success) ToEtcd(op, out->add_success());
  for (const auto& op : in.failure) ToEtcd(op, out->add_failure());
}

// Counts the TxnAsync calls whose gRPC callbacks still exist. A store waits for none to be left
// before it lets go of its Connection, so that the channel is never destroyed on gRPC's callback
// thread: gRPC 1.51 releases its shared callback completion queue when the last channel goes, and
// doing that from the queue's own thread aborts in grpc_cq_internal_unref (seen in 1 of ~30 runs
// of TxnAsyncCallsBackOnceWithItsOwnRevision, whose store is destroyed right after the last
// callback). Thread-safe.
class InFlight {
 public:
  void Add() {
    std::lock_guard lock(mu_);
    ++count_;
  }
  void Done() {
    std::lock_guard lock(mu_);
    if (--count_ == 0) idle_.notify_all();
  }
  void WaitIdle() {
    std::unique_lock lock(mu_);
    idle_.wait(lock, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  int64_t count_ = 0;  // guarded by mu_
};

// One TxnAsync: attempts go to the endpoint in use; a retriable failure moves on to the next
// endpoint, as Connection::Call does for blocking calls. The store outlives it (InFlight): it
// holds the Connection by plain pointer, and its destructor, which runs after the last attempt's
// ClientContext (and that context's reference to the channel) is gone, reports it done last.
struct AsyncTxn {
  explicit AsyncTxn(std::shared_ptr<InFlight> tracker) : in_flight(std::move(tracker)) {
    in_flight->Add();
  }
  ~AsyncTxn() { in_flight->Done(); }

  const std::shared_ptr<InFlight> in_flight;
  Connection* connection = nullptr;
  pb::TxnRequest request;
  bool read_only = false;
  Revision max_range_revision = 0;
  KV::TxnCallback done;
  std::chrono::system_clock::time_point deadline;
  size_t attempts = 0;

  static void Run(std::shared_ptr<AsyncTxn> t) {
    // The callback holds only the attempt; the attempt holds the transaction, declared first so
    // that it is released after the ClientContext.
    struct Attempt {
      std::shared_ptr<AsyncTxn> txn;
      grpc::ClientContext ctx;  // one per RPC
      pb::TxnResponse response;
    };
    auto a = std::make_shared<Attempt>();
    a->txn = std::move(t);
    AsyncTxn* txn = a->txn.get();
    a->ctx.set_deadline(txn->deadline);
    const size_t endpoint = txn->connection->current();
    ++txn->attempts;
    txn->connection->endpoint(endpoint).kv->async()->Txn(
        &a->ctx, &txn->request, &a->response, [a, endpoint](grpc::Status st) {
          AsyncTxn* t = a->txn.get();
          if (st.ok()) {
            t->connection->RecordSeen(a->response.header().revision());
            t->done(FromEtcd(a->response));
            return;
          }
          if (IsRetriable(st, t->read_only) && std::chrono::system_clock::now() < t->deadline &&
              t->attempts < 4 * t->connection->size()) {
            t->connection->MarkFailed(endpoint);
            Run(a->txn);
            return;
          }
          t->done(t->connection->Translate(FromGrpc(st), t->max_range_revision));
        });
  }
};

class EtcdStore final : public KV {
 public:
  explicit EtcdStore(std::shared_ptr<Connection> connection) : connection_(std::move(connection)) {}
  ~EtcdStore() override { in_flight_->WaitIdle(); }  // bounded by the request timeout

  util::Status Init();

  util::StatusOr<RangeResponse> Range(const RangeRequest& req) override {
    pb::RangeRequest r;
    ToEtcd(req, &r);
    auto resp = connection_->Call(&pb::KV::Stub::Range, r, /*idempotent=*/true);
    if (!resp.ok()) return connection_->Translate(resp.status(), req.revision);
    return FromEtcd(*resp, connection_->RecordSeen(resp->header().revision()));
  }

  util::StatusOr<PutResponse> Put(const PutRequest& req) override {
    pb::PutRequest r;
    ToEtcd(req, &r);
    CONVERGE_RETURN_IF_ERROR(CheckSize(r.ByteSizeLong()));
    auto resp = connection_->Call(&pb::KV::Stub::Put, r, /*idempotent=*/false);
    if (!resp.ok()) return connection_->Translate(resp.status(), 0);
    return FromEtcd(*resp, connection_->RecordSeen(resp->header().revision()));
  }

  util::StatusOr<DeleteRangeResponse> DeleteRange(const DeleteRangeRequest& req) override {
    pb::DeleteRangeRequest r;
    ToEtcd(req, &r);
    auto resp = connection_->Call(&pb::KV::Stub::DeleteRange, r, /*idempotent=*/false);
    if (!resp.ok()) return connection_->Translate(resp.status(), 0);
    return FromEtcd(*resp, connection_->RecordSeen(resp->header().revision()));
  }

  util::StatusOr<TxnResponse> Txn(TxnRequest req) override {
    CONVERGE_RETURN_IF_ERROR(CheckTxn(req));
    pb::TxnRequest r;
    ToEtcd(req, &r);
    CONVERGE_RETURN_IF_ERROR(CheckSize(r.ByteSizeLong()));
    auto resp = connection_->Call(&pb::KV::Stub::Txn, r, IsReadOnly(req));
    if (!resp.ok()) return connection_->Translate(resp.status(), MaxRangeRevision(req));
    connection_->RecordSeen(resp->header().revision());
    return FromEtcd(*resp);
  }

  void TxnAsync(TxnRequest req, TxnCallback done) override {
    if (auto s = CheckTxn(req); !s.ok()) {
      done(s);
      return;
    }
    auto t = std::make_shared<AsyncTxn>(in_flight_);
    ToEtcd(req, &t->request);
    if (auto s = CheckSize(t->request.ByteSizeLong()); !s.ok()) {
      done(s);
      return;
    }
    t->connection = connection_.get();
    t->read_only = IsReadOnly(req);
    t->max_range_revision = MaxRangeRevision(req);
    t->done = std::move(done);
    t->deadline = std::chrono::system_clock::now() + connection_->options().request_timeout;
    AsyncTxn::Run(std::move(t));
  }

  util::StatusOr<CompactResponse> Compact(Revision revision) override {
    // At or below the compact revision is "compacted", as on the embedded store. etcd answers
    // so itself once it has compacted, but accepts revision 0 before its first compaction.
    if (revision <= connection_->compact()) return CompactedError(connection_->compact());
    pb::CompactionRequest r;
    r.set_revision(ToEtcdRevision(revision));
    // Not physical: the compaction takes effect for reads and watches at once either way, and
    // the caller should not wait for etcd's background deletion.
    auto resp = connection_->Call(&pb::KV::Stub::Compact, r, /*idempotent=*/false);
    if (!resp.ok()) return connection_->Translate(resp.status(), revision);
    connection_->RaiseCompact(revision);
    return CompactResponse{.header_revision = connection_->RecordSeen(resp->header().revision())};
  }

  util::StatusOr<std::unique_ptr<WatchStream>> Watch(const WatchRequest& req) override {
    return EtcdWatchStream::Start(connection_, req);
  }

  // A linearizable read of the current revision (another API server may have written since
  // this one last heard from etcd); what was last seen if etcd cannot be reached.
  Revision CurrentRevision() const override {
    pb::RangeRequest r;
    r.set_key(kProbeKey);
    r.set_count_only(true);
    auto resp = connection_->Call(&pb::KV::Stub::Range, r, /*idempotent=*/true);
    if (resp.ok()) return connection_->RecordSeen(resp->header().revision());
    return connection_->seen();
  }

  Revision CompactRevision() const override { return connection_->compact(); }

 private:
  util::Status CheckSize(size_t bytes) const {
    if (bytes > connection_->options().max_request_bytes) {
      return util::InvalidArgument("etcdserver: request is too large");
    }
    return util::Status();
  }

  const std::shared_ptr<Connection> connection_;
  const std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
};

util::Status EtcdStore::Init() {
  // Wait for the cluster to answer (a fresh member may still be electing its leader).
  const auto deadline = std::chrono::steady_clock::now() + connection_->options().dial_timeout;
  pb::RangeRequest probe;
  probe.set_key(kProbeKey);
  probe.set_count_only(true);
  // Each probe gets a few seconds, not the whole wait: one probe stuck on a connection that
  // never completes must not use up the time a fresh attempt would have succeeded in.
  const auto probe_budget = std::min(connection_->options().request_timeout,
                                     std::chrono::milliseconds(std::chrono::seconds(3)));
  util::StatusOr<pb::RangeResponse> first = util::Unavailable("etcd: not tried");
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    first = connection_->Call(&pb::KV::Stub::Range, probe, /*idempotent=*/true,
                              std::clamp(left, std::chrono::milliseconds(100), probe_budget));
    if (first.ok() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!first.ok()) return first.status().WithContext("connecting to etcd");
  const Revision current = connection_->RecordSeen(first->header().revision());
  // etcd does not tell its compact revision; find the oldest readable revision instead (a
  // read at a compacted revision fails). Our revision 1 readable means nothing is compacted
  // that anyone could ask for.
  Revision lo = 1, hi = current;  // the answer is in [lo, hi]
  if (hi >= 1) {
    while (lo < hi) {
      const Revision mid = lo + (hi - lo) / 2;
      pb::RangeRequest at = probe;
      at.set_revision(ToEtcdRevision(mid));
      auto r = connection_->Call(&pb::KV::Stub::Range, at, /*idempotent=*/true);
      if (r.ok()) {
        hi = mid;
      } else if (IsCompacted(r.status())) {
        lo = mid + 1;
      } else {
        return r.status().WithContext("reading etcd's compact revision");
      }
    }
    // Revision 1 readable: compacted at 1 or never, which no read tells apart (and a compaction
    // at 1 removes nothing); reported as never.
    connection_->RaiseCompact(lo > 1 ? lo : 0);
  }
  return util::Status();
}

}  // namespace

util::StatusOr<std::unique_ptr<KV>> OpenEtcdStore(const EtcdStoreOptions& options) {
  if (options.endpoints.empty()) return util::InvalidArgument("no etcd endpoints given");
  for (const auto& e : options.endpoints) {
    if (e.starts_with("https://")) {
      return util::InvalidArgument("TLS to etcd is not supported yet: " + e);
    }
  }
  auto store = std::make_unique<EtcdStore>(std::make_shared<Connection>(options));
  CONVERGE_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<KV>(std::move(store));
}

util::StatusOr<std::vector<std::string>> ParseEndpoints(const std::string& flag) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= flag.size()) {
    size_t comma = flag.find(',', start);
    if (comma == std::string::npos) comma = flag.size();
    std::string e = flag.substr(start, comma - start);
    if (e.empty()) return util::InvalidArgument("empty etcd endpoint in \"" + flag + "\"");
    if (e.starts_with("https://")) {
      return util::InvalidArgument("TLS to etcd is not supported yet: " + e);
    }
    out.push_back(std::move(e));
    start = comma + 1;
  }
  return out;
}

}  // namespace converge::store::etcd
