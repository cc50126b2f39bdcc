// FaultInjector: the seed's failure paths (§十二) on demand, for tests and for people learning how
// the system recovers. Off unless the server runs with --enable-fault-injection; docs/FAULTS.md is
// the user's guide.
//
// Faults (each one what a real cluster suffers, made to happen now):
//   - CloseWatches: every watch the API server serves ends (a restarted apiserver, a dropped
//     connection). Clients resume from their last resourceVersion.
//   - CompactNow: the store is compacted to its current revision and the watch caches forget
//     their history, then every watch ends. Clients resuming from an older resourceVersion get
//     410 Expired and must relist.
//   - FailWrites: the next N writes to a resource are answered 409 Conflict or 500 (a lost
//     optimistic-concurrency race, a failing storage backend) without reaching the store.
//   - Watch delay: one in-process component's watch streams are held back (a stale informer
//     cache; delayed_watch_transport.h).
//   - Heartbeats: a simulated node stops (resumes) renewing its Lease and posting status.
// Killing and restarting processes needs no endpoint: see docs/FAULTS.md.
//
// HTTP: Intercept (an APIServer::RequestInterceptor) serves /converge/faults/... after
// authentication and authorization, so only users allowed the non-resource URL (system:masters,
// or an RBAC rule naming it) reach it; and it answers the writes an armed FailWrites selects.
//
// Thread-safety: every method is safe to call concurrently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/request.h"
#include "apiserver/request_info.h"
#include "apiserver/server.h"
#include "server/delayed_watch_transport.h"
#include "store/kv.h"
#include "util/status.h"

namespace converge::server {

// Which writes fail, how, and how many more times.
struct WriteFault {
  std::string group;               // "" = the core group
  std::string resource;            // "pods", "replicasets", ...
  std::string subresource;         // "" = the resource and all its subresources; else only this one
  std::string ns;                  // "" = every namespace
  std::vector<std::string> verbs;  // create, update, patch, delete, deletecollection; empty = all
  int code = 409;                  // 409 (Conflict) or 500 (InternalError)
  int remaining = 0;               // writes still to fail

  // Whether a request to `ri` is one of the selected writes.
  bool Matches(const apiserver::RequestInfo& ri) const;
};

struct FaultInjectorOptions {
  store::KV* kv = nullptr;              // required, not owned
  apiserver::APIServer* api = nullptr;  // required, not owned; started before faults are used
};

class FaultInjector {
 public:
  explicit FaultInjector(FaultInjectorOptions options);

  // For APIServer::SetRequestInterceptor.
  std::optional<apiserver::Response> Intercept(apiserver::Request& req,
                                               const apiserver::RequestInfo& ri);

  void CloseWatches();
  // Returns the revision compacted to.
  util::StatusOr<store::Revision> CompactNow();
  // Arms a write fault (replacing an armed one with the same selector); remaining 0 disarms it.
  util::Status FailWrites(WriteFault fault);

  // The watch delay of `component` ("controller-manager", "scheduler", "kubelet"), created on
  // first use; components' in-process transports hold it (DelayedWatchTransport).
  std::shared_ptr<WatchDelay> ComponentWatchDelay(const std::string& component);

  // Pauses (paused = true) or resumes a simulated node's heartbeats; NotFound when no in-process
  // kubelet carries the node. Installed by the all-in-one server once its kubelet exists.
  using HeartbeatControl = std::function<util::Status(const std::string& node, bool paused)>;
  void SetHeartbeatControl(HeartbeatControl control);

  // What is armed, as JSON (GET /converge/faults).
  std::string Describe() const;

 private:
  apiserver::Response Serve(apiserver::Request& req);

  const FaultInjectorOptions options_;
  mutable std::mutex mu_;
  std::vector<WriteFault> write_faults_;                       // guarded by mu_
  std::map<std::string, std::shared_ptr<WatchDelay>> delays_;  // guarded by mu_
  HeartbeatControl heartbeats_;                                // guarded by mu_
  std::map<std::string, bool> paused_nodes_;                   // guarded by mu_
};

}  // namespace converge::server
