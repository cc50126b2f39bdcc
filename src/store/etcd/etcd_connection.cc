#include "store/etcd/etcd_connection.h"

#include <climits>

namespace converge::store::etcd {

KeyValuePtr FromEtcd(const etcdserverpb::KeyValue& in) {
  auto kv = std::make_shared<KeyValue>();
  kv->key = in.key();
  kv->value = in.value();
  kv->create_revision = FromEtcdRevision(in.create_revision());
  kv->mod_revision = FromEtcdRevision(in.mod_revision());
  kv->version = in.version();
  kv->lease = in.lease();
  return kv;
}

bool IsRetriable(const grpc::Status& s, bool idempotent) {
  const std::string& m = s.error_message();
  // Never sent, or refused before it was proposed to raft: safe for writes too.
  if (m.find("failed to connect") != std::string::npos ||
      m.find("Connection refused") != std::string::npos ||
      m.find("too many requests") != std::string::npos) {
    return true;
  }
  if (!idempotent) return false;
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return true;
    default: return false;
  }
}

util::Status FromGrpc(const grpc::Status& s) {
  const std::string m = "etcd: " + s.error_message();
  switch (s.error_code()) {
    case grpc::StatusCode::OK: return util::Status();
    case grpc::StatusCode::INVALID_ARGUMENT: return util::InvalidArgument(m);
    case grpc::StatusCode::OUT_OF_RANGE:
      // etcd's texts "mvcc: required revision has been compacted" and "mvcc: required revision
      // is a future revision" carry the words IsCompacted / IsFutureRevision look for.
      return util::OutOfRange(m);
    case grpc::StatusCode::NOT_FOUND: return util::NotFound(m);
    case grpc::StatusCode::FAILED_PRECONDITION: return util::FailedPrecondition(m);
    case grpc::StatusCode::PERMISSION_DENIED: return util::PermissionDenied(m);
    case grpc::StatusCode::UNAUTHENTICATED: return util::Unauthenticated(m);
    case grpc::StatusCode::DEADLINE_EXCEEDED: return util::DeadlineExceeded(m);
    default:
      // UNAVAILABLE (no connection, no leader, leader changed, request timed out), UNKNOWN,
      // INTERNAL, RESOURCE_EXHAUSTED (too many requests): retry later, maybe elsewhere.
      return util::Unavailable(m);
  }
}

namespace {

// gRPC's target for an endpoint: "http://host:port" and "host:port" both dial host:port.
std::string Target(const std::string& endpoint) {
  return endpoint.starts_with("http://") ? endpoint.substr(7) : endpoint;
}

}  // namespace

Connection::Connection(const EtcdStoreOptions& options) : options_(options) {
  for (size_t i = 0; i < options_.endpoints.size(); ++i) {
    auto e = std::make_unique<Endpoint>();
    e->target = Target(options_.endpoints[i]);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(INT_MAX);  // a full list of a large resource
    args.SetMaxSendMessageSize(INT_MAX);     // max_request_bytes is checked before sending
    // A killed member is noticed at once (the socket closes); a vanished one within ~15 s. etcd
    // refuses pings more often than every 5 s (--grpc-keepalive-min-time).
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // gRPC's default reconnect backoff grows to 2 minutes; a restarted member should be used
    // again within a second.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    // Despite its name, this is how long one connection attempt may take (TCP and HTTP/2
    // handshakes; gRPC's default 20 s). At 100 ms a member that needed longer to answer a new
    // connection (a loaded machine) was never connected to: every attempt was cut short.
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kConnectTimeoutMs);
    e->channel = grpc::CreateCustomChannel(e->target, grpc::InsecureChannelCredentials(), args);
    e->kv = etcdserverpb::KV::NewStub(e->channel);
    e->watch = etcdserverpb::Watch::NewStub(e->channel);
    endpoints_.push_back(std::move(e));
  }
}

namespace {

void RaiseTo(std::atomic<Revision>& a, Revision r) {
  Revision cur = a.load();
  while (cur < r && !a.compare_exchange_weak(cur, r)) {
  }
}

}  // namespace

Revision Connection::RecordSeen(int64_t etcd_revision) {
  const Revision r = FromEtcdRevision(etcd_revision);
  RaiseTo(seen_, r);
  return r;
}

void Connection::RaiseCompact(Revision r) {
  RaiseTo(compact_, r);
}

util::Status Connection::Translate(const util::Status& s, Revision requested) const {
  if (IsCompacted(s)) return CompactedError(compact_.load());
  if (IsFutureRevision(s)) return FutureRevisionError(requested, seen_.load());
  return s;
}

void Connection::MarkFailed(size_t failed) {
  size_t expected = current_.load(std::memory_order_relaxed);
  if (expected % endpoints_.size() != failed) return;
  current_.compare_exchange_strong(expected, expected + 1, std::memory_order_relaxed);
}

}  // namespace converge::store::etcd
