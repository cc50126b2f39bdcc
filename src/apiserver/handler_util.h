// Shared pieces of the resource handlers: the per-request context, query parsing and response
// encoding (JSON objects and lists straight from cached bytes, or Tables).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource.h"
#include "apiserver/codec.h"
#include "apiserver/errors.h"
#include "apiserver/request.h"
#include "apiserver/request_info.h"
#include "apiserver/storage.h"
#include "apiserver/table.h"
#include "apiserver/watch_cache.h"

namespace converge::apiserver {

struct RequestContext {
  Request& req;
  const RequestInfo& ri;
  const api::ResourceInfo& info;
  ResourceStorage& storage;
  std::string ns;  // "" for cluster-scoped resources
  // Warnings from admission (webhooks), sent as Warning headers with the response.
  std::vector<std::string> admission_warnings;
};

Response ErrorResponse(const ApiError& e);
Response JsonResponse(int status, std::string body);

// Query parameters.
ApiOr<bool> QueryBool(const Request& req, std::string_view key, bool fallback);
ApiOr<std::optional<int64_t>> QueryInt(const Request& req, std::string_view key);
// dryRun: only "All" is valid.
ApiOr<bool> QueryDryRun(const Request& req);
// The write's field manager: ?fieldManager, checked as upstream's ValidateCreateOptions /
// ValidateUpdateOptions / ValidatePatchOptions (`options_kind` "CreateOptions", "UpdateOptions"
// or "PatchOptions"; 422 Invalid), else the User-Agent's prefix (DefaultFieldManager).
ApiOr<std::string> QueryFieldManager(const Request& req, std::string_view options_kind,
                                     bool is_apply = false);
// labelSelector / fieldSelector / metadata.name into a WatchFilter; field names are checked
// against the resource's selectable fields.
ApiOr<WatchFilter> QueryFilter(const Request& req, const api::ResourceInfo& info,
                               const std::string& ns);
// includeObject for Tables.
ApiOr<IncludeObject> QueryIncludeObject(const Request& req);

// Responses for objects and lists, JSON or Table per the Accept header.
Response ObjectResponse(int status, const Request& req, const api::ResourceInfo& info,
                        const CachedObject& obj);
Response ListResponse(const Request& req, const api::ResourceInfo& info, const ListResult& list);

// The table printer for a resource (built-in printers; custom resources' printer columns).
std::shared_ptr<const TablePrinter> PrinterForResource(const api::ResourceInfo& info);

// --- Custom resources (handlers_custom.cc) ---
// Prunes a decoded custom resource as upstream's decoder does: fields its schema (and ObjectMeta)
// lack are dropped. `report` holds what strict decoding found before (the body's or the patch's
// repeated keys); the unknown fields follow it (ObjectMeta's, then the schema's, sorted). Under
// fieldValidation=Strict that is a 400, `<Kind> in version "v1" cannot be handled as a <Kind>:
// strict decoding error: duplicate field "x", unknown field "spec.x"` (with `wrap` false, for
// patches, only the part from "strict decoding error"); under Warn it becomes `warnings`.
std::optional<ApiError> PruneCustomResourceBody(const Request& req, const api::ResourceInfo& info,
                                                api::Object& obj, api::StrictReport report,
                                                bool wrap, std::vector<std::string>* warnings);
// Custom resources are stored in the storage version and served in the requested one: the
// versions differ only in apiVersion (conversion strategy None).
bool NeedsVersionConversion(const api::ResourceInfo& info, std::string_view json);
void ConvertToServedVersion(const api::ResourceInfo& info, api::Object& obj);
// The object's JSON as `info`'s version serves it (the cached bytes when nothing changes).
std::shared_ptr<const std::string> ServedJson(const api::ResourceInfo& info,
                                              const CachedObject& obj);

// Checks a decoded body's apiVersion/kind against the endpoint and fills them when absent.
std::optional<ApiError> CheckKind(api::Object& obj, const api::GroupVersionKind& want);

}  // namespace converge::apiserver
