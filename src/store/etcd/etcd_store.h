// EtcdStore: the KV interface (store/kv.h) on a real etcd v3 cluster, over gRPC.
//
// Same semantics as the embedded store, so the one conformance suite runs against both and the
// API server cannot tell them apart:
//   - Revisions. etcd's revision counts from 1 for an empty cluster (its first write is 2); the
//     embedded store counts writes from 0. This backend reports etcd's revision minus one in
//     every revision it hands out (headers, create/mod revisions, compact revisions) and adds one
//     to every revision it sends (reads at a revision, watch start, compaction, compares on
//     create/mod revision above 0). resourceVersions are therefore the same on every API server
//     that shares a cluster, and `etcdctl` shows each one plus one.
//   - Requests go to one endpoint at a time. When that endpoint fails, the next one is used:
//     reads are retried there at once; writes only when the failed attempt cannot have been
//     applied (no connection, "no leader"); otherwise the caller gets kUnavailable and decides
//     (the API server answers 5xx / the client retries its read-modify-write).
//   - Watches resume transparently on another endpoint after a broken stream, from the revision
//     after the last one delivered. A watch whose buffer (`watcher_buffer` events) fills is
//     cancelled with kCancelReasonSlow, like the embedded store's.
//   - Progress notifications are the ones etcd sends per watcher (only once the watcher is
//     synced, in order with its events: --experimental-watch-progress-notify-interval sets how
//     often). RequestProgress() asks for the next one to be delivered even without
//     progress_notify. etcd 3.4's answer to an explicit progress request is not used: before
//     3.4.25 it could run ahead of the watcher's events.
//   - CompactRevision() is what this client knows: found at Open (a binary search with reads
//     at past revisions), then raised by its own compactions and by watches cancelled as
//     compacted. Another client's compaction shows up there only through those.
//
// Thread-safety: every method may be called from any thread (as KV requires).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/kv.h"
#include "util/status.h"

namespace converge::store::etcd {

struct EtcdStoreOptions {
  // "http://host:port" or "host:port"; tried in order, the next one on failure.
  std::vector<std::string> endpoints;
  // Deadline of every unary request (etcd's own request timeout is 5 s plus election time).
  std::chrono::milliseconds request_timeout{10000};
  // How long Open waits for a first successful read (etcd may still be electing a leader).
  std::chrono::milliseconds dial_timeout{10000};
  // Events buffered per watch before it is cancelled as slow.
  size_t watcher_buffer = 100000;
  // etcd's default --max-request-bytes (1.5 MiB): larger requests are refused here already.
  size_t max_request_bytes = 1572864;
};

// Connects and checks that the cluster answers. The store owns its connections; watch streams
// keep what they need alive, so they may outlive it.
util::StatusOr<std::unique_ptr<KV>> OpenEtcdStore(const EtcdStoreOptions& options);

// Splits "URL[,URL...]" (the --etcd-endpoints flag) into endpoints; empty entries are errors.
util::StatusOr<std::vector<std::string>> ParseEndpoints(const std::string& flag);

}  // namespace converge::store::etcd
