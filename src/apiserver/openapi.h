// OpenAPI v3 documents (/openapi/v3 and one per group-version), generated from the resource
// registry and the type schemas.
//
// kubectl needs them for `apply` (client- and server-side), `create -f`, `replace` and `explain`
// with its default --validate=strict: it reads /openapi/v3 (paths -> serverRelativeURL with a
// content hash), then the group-version's document, and
//   * leaves validation to the server when the resource's PATCH operation (found by
//     x-kubernetes-group-version-kind) declares the `fieldValidation` query parameter;
//   * computes client-side apply patches from the schemas when that operation accepts
//     application/strategic-merge-patch+json (x-kubernetes-patch-strategy / -merge-key);
//   * explains fields by walking components.schemas from the kind's schema.
// Component schemas carry upstream's names (io.k8s.api.apps.v1.Deployment) and extensions
// (x-kubernetes-group-version-kind, -patch-strategy, -patch-merge-key, -list-type,
// -list-map-keys, -map-type, -int-or-string, -preserve-unknown-fields). Descriptions are ours and
// short.
//
// Thread-safety: the renderers are pure; OpenApiService is safe for concurrent use.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "api/resource.h"
#include "api/schema.h"
#include "api/types.h"

namespace converge::apiserver {

// "api/v1" for the core group, "apis/<group>/<version>" otherwise: the keys of the index and the
// path under /openapi/v3/.
std::string OpenApiGroupVersionPath(const api::GroupVersion& gv);

// Renders the document of one group-version; nullopt when the registry serves nothing there.
// `types` resolves the meta/v1 types every document references (DeleteOptions, Status, Patch).
std::optional<std::string> RenderOpenApiGroupVersion(const api::ResourceRegistry::Table& table,
                                                     const api::TypeResolver& types,
                                                     const api::GroupVersion& gv);

struct OpenApiDocument {
  std::shared_ptr<const std::string> body;  // JSON
  std::string etag;                         // quoted
};

// Serves /openapi/v3 and /openapi/v3/<api/v1|apis/g/v>, rendering every document once per
// registry snapshot (CRDs change it): the index needs each document's hash anyway.
class OpenApiService {
 public:
  OpenApiService(const api::ResourceRegistry* registry, const api::TypeResolver* types);

  // GET /openapi/v3: {"paths": {"apis/apps/v1": {"serverRelativeURL":
  // "/openapi/v3/apis/apps/v1?hash=<SHA-512 of the document>"}, ...}}.
  OpenApiDocument Index() const;
  // GET /openapi/v3/<path> with path "api/v1" or "apis/<group>/<version>" (any ?hash= ignored);
  // nullopt: 404.
  std::optional<OpenApiDocument> GroupVersion(std::string_view path) const;

 private:
  struct Rendered;
  std::shared_ptr<const Rendered> CurrentLocked() const;

  const api::ResourceRegistry* const registry_;
  const api::TypeResolver* const types_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const Rendered> rendered_;  // guarded by mu_
};

}  // namespace converge::apiserver
