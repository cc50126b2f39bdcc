// CrdController: turns CustomResourceDefinitions into served resources, inside the API server
// (upstream's naming, establishing, CRD handler and finalizer controllers in one loop).
//
// For each CRD, level-based (the queue holds CRD names; a worker re-reads the CRD from the store):
//   - names: DecideCrdNames (crd_status.h) against the other CRDs of the group; the result goes
//     to status.acceptedNames and the NamesAccepted condition;
//   - serving: once names are accepted, every served version is registered through the host
//     (resource registry, storage, watch cache: discovery, OpenAPI, routing and kubectl follow
//     from the registry), then Established=True is written. A CRD whose spec or accepted names
//     change is re-registered; nothing is re-registered otherwise;
//   - deletion: a deleted CRD carries the customresourcecleanup finalizer (the CRD strategy adds
//     it with the Terminating condition). The controller keeps serving the resource marked
//     terminating (creates are refused), deletes every object, waits until none is left (objects
//     with finalizers of their own take their time), then removes the finalizer; when the CRD is
//     gone the resource is unregistered.
//
// Sync() registers every stored CRD synchronously (server start: after a restart custom
// resources are served before /readyz says ready). Run() then follows CRD watch events.
//
// Thread-safety: Sync and Run are called from one thread each, never concurrently (Sync before
// Run starts); the queue is guarded by mu_; the reconcile state (served_) is touched only by the
// thread that reconciles.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "api/resource.h"
#include "apiserver/storage.h"
#include "util/clock.h"

namespace converge::apiserver {

// What the controller needs from the API server.
class CustomResourceHost {
 public:
  virtual ~CustomResourceHost() = default;
  // Serves exactly `versions` for group-resource `gr` from now on (replacing what was served);
  // empty stops serving it. Storage first, then the registry, so that anything discovery shows
  // can be used.
  virtual void ServeCustomResource(
      const api::GroupResource& gr,
      std::vector<std::shared_ptr<const api::ResourceInfo>> versions) = 0;
  // The storage of a resource, or null when it is not served.
  virtual std::shared_ptr<ResourceStorage> StorageFor(const api::GroupVersionResource& gvr) = 0;
};

struct CrdControllerOptions {
  util::Clock* clock = &util::RealClock();
  // How long to wait before looking again at a CRD whose objects are still being deleted, or
  // after a failed reconcile (a store error, a write conflict).
  std::chrono::milliseconds retry_interval{std::chrono::milliseconds(500)};
};

class CrdController {
 public:
  CrdController(CustomResourceHost* host, CrdControllerOptions options);
  CrdController(const CrdController&) = delete;
  CrdController& operator=(const CrdController&) = delete;

  // Reconciles every stored CRD once, oldest first (so that name conflicts resolve as they did
  // before a restart). Call before Run.
  void Sync();
  // Follows CRD changes until `stop`.
  void Run(std::stop_token stop);

 private:
  struct Served {
    api::GroupResource gr;
    std::string fingerprint;  // what the registration was built from
  };

  // Returns when to look again (zero: not needed).
  std::chrono::milliseconds Reconcile(const std::string& name);
  std::chrono::milliseconds Finalize(ResourceStorage& crds, const api::Object& crd);
  // Registers the CRD's versions under `names` unless already registered from the same inputs.
  util::Status Serve(const api::Object& crd, const boost::json::object& names, bool terminating);
  void Unserve(const std::string& name);
  // Writes `status` to the CRD unless it already has it.
  util::Status WriteStatus(ResourceStorage& crds, const api::Object& crd,
                           const boost::json::object& status);
  std::vector<api::Object> AllCrds(ResourceStorage& crds);
  std::string Now() const;

  void Enqueue(const std::string& name, std::chrono::steady_clock::time_point when);

  CustomResourceHost* const host_;
  const CrdControllerOptions options_;

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::map<std::string, std::chrono::steady_clock::time_point> queue_;  // guarded by mu_
  bool news_ = false;  // guarded by mu_: the CRD watch has items

  std::map<std::string, Served> served_;  // by CRD name; reconciling thread only
};

}  // namespace converge::apiserver
