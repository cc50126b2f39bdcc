// API discovery documents, generated from the resource registry.
//
// kubectl 1.32 asks GET /api and GET /apis for aggregated discovery (apidiscovery.k8s.io v2, then
// v2beta1, then plain JSON) and recognises it only by the response Content-Type
// (kAggregatedDiscoveryV2ContentType); older clients use the legacy documents: APIVersions (/api),
// APIGroupList (/apis), APIGroup (/apis/<group>) and APIResourceList (/api/v1,
// /apis/<group>/<version>). Everything here is a pure function of a registry snapshot, except
// DiscoveryService, which caches the rendered bodies per snapshot.
//
// Upstream conventions followed: resources (and legacy subresource entries "deployments/scale")
// sorted by name, verbs as registered (sorted), versions in Kubernetes version priority (v2 > v1 >
// v1beta1 > v1alpha1 > other), core group first, legacy storageVersionHash =
// base64(sha256("group/version/Kind")[:8]).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "api/resource.h"
#include "api/types.h"

namespace converge::apiserver {

inline constexpr std::string_view kAggregatedDiscoveryV2ContentType =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
inline constexpr std::string_view kAggregatedDiscoveryV2Beta1ContentType =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
inline constexpr std::string_view kJsonContentType = "application/json";

enum class DiscoveryFormat { kLegacy, kAggregatedV2, kAggregatedV2Beta1 };

// Picks the answer to GET /api or /apis from its Accept header: the first media range that names
// an aggregated version we serve (application/json;g=apidiscovery.k8s.io;v=v2|v2beta1;
// as=APIGroupDiscoveryList), or legacy for plain JSON, */* or no Accept at all.
DiscoveryFormat NegotiateDiscoveryFormat(std::string_view accept);

// A rendered response body. Bodies are shared: copying a document is cheap.
struct DiscoveryDocument {
  std::shared_ptr<const std::string> body;
  std::string_view content_type;
  std::string etag;  // quoted, for ETag / If-None-Match
};

// Which half of the API an aggregated document covers.
enum class DiscoveryRoot { kCore /* /api */, kGroups /* /apis */ };

// Pure renderers (compact JSON).
std::string RenderAggregatedDiscovery(const api::ResourceRegistry::Table& table, DiscoveryRoot root,
                                      DiscoveryFormat format);
// `server_address` is host:port as clients reach the server (serverAddressByClientCIDRs).
std::string RenderApiVersions(const api::ResourceRegistry::Table& table,
                              std::string_view server_address);
std::string RenderApiGroupList(const api::ResourceRegistry::Table& table);
// nullopt when the group (resp. group-version) serves nothing: answer 404.
std::optional<std::string> RenderApiGroup(const api::ResourceRegistry::Table& table,
                                          std::string_view group);
std::optional<std::string> RenderApiResourceList(const api::ResourceRegistry::Table& table,
                                                 const api::GroupVersion& gv);

// Upstream's storageVersionHash for a resource stored as group/version/kind.
std::string StorageVersionHash(std::string_view group, std::string_view version,
                               std::string_view kind);

struct DiscoveryServiceOptions {
  std::string server_address = "127.0.0.1:6443";
};

// Serves every discovery document of the registry's current snapshot, rendering them once per
// snapshot (CustomResourceDefinitions change it) and lazily per document.
//
// Thread-safety: safe for concurrent use; rendering happens under an internal mutex, returned
// documents are immutable.
class DiscoveryService {
 public:
  DiscoveryService(const api::ResourceRegistry* registry, DiscoveryServiceOptions options);

  // GET /api (`root` kCore) or /apis (kGroups), negotiated from `accept`.
  DiscoveryDocument Root(DiscoveryRoot root, std::string_view accept) const;
  // GET /apis/<group>; nullopt: 404.
  std::optional<DiscoveryDocument> Group(std::string_view group) const;
  // GET /api/v1, /apis/<group>/<version>; nullopt: 404.
  std::optional<DiscoveryDocument> ResourceList(const api::GroupVersion& gv) const;

 private:
  struct Cache;
  // Returns the cache for the current snapshot, starting a new one when the snapshot changed.
  std::shared_ptr<Cache> CurrentCacheLocked() const;

  const api::ResourceRegistry* const registry_;
  const DiscoveryServiceOptions options_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<Cache> cache_;  // guarded by mu_
};

}  // namespace converge::apiserver
