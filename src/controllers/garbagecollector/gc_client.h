// GcClient: the API calls the garbage collector makes, as a small interface so that the sync
// test can run the collector against an in-memory cluster (fake_cluster.h).
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <string_view>

#include "api/object.h"
#include "api/types.h"
#include "client/rest_client.h"
#include "util/status.h"

namespace converge::controllers::garbagecollector {

class GcClient {
 public:
  virtual ~GcClient() = default;
  // A live read (never a cache). NotFound when absent.
  virtual util::StatusOr<api::Object> Get(const api::GroupVersionResource& gvr,
                                          const api::ObjectKey& key) = 0;
  // A JSON merge patch. Conflict when the patch pins a stale resourceVersion.
  virtual util::StatusOr<api::Object> MergePatch(const api::GroupVersionResource& gvr,
                                                 const api::ObjectKey& key,
                                                 std::string_view patch) = 0;
  // A delete with preconditions and propagation policy; OK also when the object stays, marked.
  virtual util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                              const client::DeleteOptions& options) = 0;
};

// GcClient over the REST client.
class RestGcClient final : public GcClient {
 public:
  explicit RestGcClient(client::RestClient* client) : client_(client) {}
  util::StatusOr<api::Object> Get(const api::GroupVersionResource& gvr,
                                  const api::ObjectKey& key) override {
    return client_->Get(gvr, key);
  }
  util::StatusOr<api::Object> MergePatch(const api::GroupVersionResource& gvr,
                                         const api::ObjectKey& key,
                                         std::string_view patch) override {
    return client_->Patch(gvr, key, client::PatchType::kMerge, patch);
  }
  util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                      const client::DeleteOptions& options) override {
    return client_->Delete(gvr, key, options);
  }

 private:
  client::RestClient* const client_;  // not owned
};

}  // namespace converge::controllers::garbagecollector
