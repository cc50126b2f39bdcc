// Connection: gRPC channels to every etcd endpoint, which one is in use, and the rules that
// turn etcd's answers into ours (status codes, the revision shift, which failures to retry).
// Internal to the etcd backend; the only header here that includes generated gRPC code.
//
// Thread-safety: thread-safe. Channels and stubs are constant after construction; the index of
// the endpoint in use is atomic.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "etcd_rpc.grpc.pb.h"
#include "store/etcd/etcd_store.h"
#include "store/kv.h"
#include "util/status.h"

namespace converge::store::etcd {

// The revision shift (see etcd_store.h): etcd counts the empty store as revision 1.
inline Revision FromEtcdRevision(int64_t r) {
  return r > 0 ? r - 1 : 0;
}
inline int64_t ToEtcdRevision(Revision r) {
  return r > 0 ? r + 1 : r;
}

KeyValuePtr FromEtcd(const etcdserverpb::KeyValue& kv);

// Whether a failed call may be sent again (to the same or another endpoint). Reads always may
// after a transport failure; writes only when the failed attempt cannot have been applied.
bool IsRetriable(const grpc::Status& s, bool idempotent);

// etcd's gRPC status as ours: "compacted" and "future revision" keep the wording IsCompacted /
// IsFutureRevision look for; transport failures are kUnavailable.
util::Status FromGrpc(const grpc::Status& s);

// How long one attempt to connect to an endpoint may take before gRPC gives it up (and fails
// over, or tries again after its backoff).
inline constexpr int kConnectTimeoutMs = 5000;

class Connection {
 public:
  struct Endpoint {
    std::string target;  // host:port
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
  };

  // Creates channels (they connect lazily; no threads are started here).
  explicit Connection(const EtcdStoreOptions& options);

  const EtcdStoreOptions& options() const { return options_; }
  size_t size() const { return endpoints_.size(); }
  // The endpoint requests go to now.
  size_t current() const { return current_.load(std::memory_order_relaxed) % endpoints_.size(); }
  Endpoint& endpoint(size_t i) { return *endpoints_[i]; }
  // Moves on to the next endpoint unless another thread already moved away from `failed`.
  void MarkFailed(size_t failed);

  // Revisions heard from etcd, in our numbering: the highest header revision of any response,
  // and the compact revision as far as this client knows it (etcd_store.h).
  Revision RecordSeen(int64_t etcd_revision);
  Revision seen() const { return seen_.load(); }
  Revision compact() const { return compact_.load(); }
  void RaiseCompact(Revision r);
  // Puts our revisions into etcd's "compacted" / "future revision" errors.
  util::Status Translate(const util::Status& s, Revision requested) const;

  // A unary KV call with the failover rules above, within options().request_timeout (or the
  // given budget). When the deadline ends a run of retried failures, the error names the last
  // of them too: "Deadline Exceeded" alone would hide a member that refuses connections.
  template <typename Req, typename Resp>
  util::StatusOr<Resp> Call(grpc::Status (etcdserverpb::KV::Stub::*method)(grpc::ClientContext*,
                                                                           const Req&, Resp*),
                            const Req& req, bool idempotent) {
    return Call(method, req, idempotent, options_.request_timeout);
  }
  template <typename Req, typename Resp>
  util::StatusOr<Resp> Call(grpc::Status (etcdserverpb::KV::Stub::*method)(grpc::ClientContext*,
                                                                           const Req&, Resp*),
                            const Req& req, bool idempotent, std::chrono::milliseconds budget);

 private:
  const EtcdStoreOptions options_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;  // constant after construction
  std::atomic<size_t> current_{0};
  std::atomic<Revision> seen_{0};
  std::atomic<Revision> compact_{0};
};

template <typename Req, typename Resp>
util::StatusOr<Resp> Connection::Call(
    grpc::Status (etcdserverpb::KV::Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
    const Req& req, bool idempotent, std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::system_clock::now() + budget;
  grpc::Status last, retried;
  for (size_t attempt = 0;; ++attempt) {
    if (attempt > 0) retried = last;
    const size_t i = current();
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline);
    Resp resp;
    last = (endpoints_[i]->kv.get()->*method)(&ctx, req, &resp);
    if (last.ok()) return resp;
    if (!IsRetriable(last, idempotent) || std::chrono::system_clock::now() >= deadline) break;
    MarkFailed(i);
    // After a full round over the endpoints, give an election (etcd's default election timeout
    // is 1 s) or a restarting member a moment before the next round.
    if ((attempt + 1) % endpoints_.size() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  util::Status out = FromGrpc(last);
  if (last.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && !retried.ok() &&
      retried.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    out = util::Status(out.code(),
                       out.message() + " (retried after: " + retried.error_message() + ")");
  }
  return out;
}

}  // namespace converge::store::etcd
