// NamespaceController: empties a namespace that is being deleted, reports progress in its status
// conditions, and finalizes it (upstream's pkg/controller/namespace). The steps and conditions
// are in deletion.h; this file does the I/O.
//
// Level-based: a namespace's key is queued on every change of the namespace; the sync re-reads
// it live (several controllers may edit a terminating namespace). Content that takes time (pods
// terminating, finalizers) requeues the key after estimate/2+1 seconds; errors retry with
// backoff (5 ms·2ⁿ up to 60 s, upstream's namespace queue).
//
// Thread-safety: Run once; the rest is internal.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "api/object.h"
#include "client/controller.h"
#include "client/rest_client.h"
#include "controllers/discovery/server_resources.h"
#include "controllers/manager/controller_context.h"
#include "controllers/namespace/deletion.h"
#include "util/clock.h"

namespace converge::controllers::namespace_ {

// The API calls the namespace controller makes (a fake in the sync test).
class NamespaceClient {
 public:
  virtual ~NamespaceClient() = default;
  virtual util::StatusOr<api::Object> GetNamespace(const std::string& name) = 0;
  virtual util::StatusOr<api::Object> UpdateNamespaceStatus(const api::Object& ns) = 0;
  // PUT /api/v1/namespaces/<name>/finalize.
  virtual util::StatusOr<api::Object> FinalizeNamespace(const api::Object& ns) = 0;
  virtual util::StatusOr<discovery::DiscoveryResult> Discover() = 0;
  // Background propagation (the namespace controller must not add orphan finalizers). A stop
  // abandons the call.
  virtual util::Status DeleteCollection(const api::GroupVersionResource& gvr, const std::string& ns,
                                        std::stop_token stop) = 0;
  virtual util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                              std::stop_token stop) = 0;
  // Calls `fn` for every object of `gvr` in `ns`. The REST client lists a page at a time, so a
  // namespace of 100,000 pods is never held whole; a stop ends it between pages (Cancelled).
  virtual util::Status ListEach(const api::GroupVersionResource& gvr, const std::string& ns,
                                std::stop_token stop,
                                const std::function<void(const api::Object&)>& fn) = 0;
};

class RestNamespaceClient final : public NamespaceClient {
 public:
  // Items per page of ListEach (client-go's pager's default).
  static constexpr int64_t kPageSize = 500;

  explicit RestNamespaceClient(client::RestClient* client, int64_t page_size = kPageSize)
      : client_(client), page_size_(page_size) {}
  util::StatusOr<api::Object> GetNamespace(const std::string& name) override;
  util::StatusOr<api::Object> UpdateNamespaceStatus(const api::Object& ns) override;
  util::StatusOr<api::Object> FinalizeNamespace(const api::Object& ns) override;
  util::StatusOr<discovery::DiscoveryResult> Discover() override;
  util::Status DeleteCollection(const api::GroupVersionResource& gvr, const std::string& ns,
                                std::stop_token stop) override;
  util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                      std::stop_token stop) override;
  util::Status ListEach(const api::GroupVersionResource& gvr, const std::string& ns,
                        std::stop_token stop,
                        const std::function<void(const api::Object&)>& fn) override;

 private:
  client::RestClient* const client_;  // not owned
  const int64_t page_size_;
};

struct NamespaceControllerOptions {
  NamespaceClient* client = nullptr;             // required; not owned
  client::SharedInformer* namespaces = nullptr;  // optional: enqueues on namespace changes
  util::Clock* clock = nullptr;                  // nullptr: util::RealClock()
  util::Registry* metrics = nullptr;
  std::string queue_name = "namespace";
  int workers = 10;  // upstream's --concurrent-namespace-syncs
};

class NamespaceController final : public RunnableController {
 public:
  explicit NamespaceController(NamespaceControllerOptions options);

  void Run(std::stop_token stop) override;
  void Enqueue(const std::string& name) { controller_.Enqueue({"", name}); }

  // One sync of a namespace (what the workers run). A stop (the controller shutting down) ends
  // it between API calls.
  client::ReconcileResult Sync(const std::string& name, std::stop_token stop = {});

 private:
  // deleteAllContent: returns the estimate (seconds) and the errors.
  ContentOutcome DeleteAllContent(const api::Object& ns, std::stop_token stop);
  ResourceResult DeleteContentOf(const api::GroupVersionResource& gvr, const std::string& ns,
                                 util::Clock::WallTime deleted_at, std::stop_token stop);
  // Applies `fn` to the live namespace, re-reading it on conflicts (retryOnConflictError).
  util::StatusOr<api::Object> RetryOnConflict(
      api::Object ns, const std::function<util::StatusOr<api::Object>(const api::Object&)>& fn);

  const NamespaceControllerOptions options_;
  util::Clock* const clock_;
  client::Controller controller_;
};

util::StatusOr<std::unique_ptr<RunnableController>> InitNamespaceController(ControllerContext& ctx);

}  // namespace converge::controllers::namespace_
