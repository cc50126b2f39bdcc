// Server-side apply: PATCH with Content-Type application/apply-patch+yaml (upstream's
// applyPatcher). The body is the applier's whole intent for the fields it manages; the field
// manager (fieldmanager.h) merges it into the live object inside the storage's read-modify-write,
// so a concurrent write makes it re-apply to the newer object. Apply creates a missing object.
// Apply to /scale applies an autoscaling/v1 Scale (never creates).
//
// Answers, as upstream:
//   201 created / 200 applied (also when nothing changed: no new resourceVersion then);
//   422 PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: ... (no manager);
//   400 error decoding YAML / Incorrect version specified in apply patch / name mismatch;
//   400 error strict decoding YAML: ... key "x" already set in map (fieldValidation=Strict; Warn
//       answers them as warnings);
//   409 Conflict with FieldManagerConflict causes unless ?force=true;
//   500 (reason Unknown) failed to create typed patch object ... (unknown fields, bad list keys).
#include <optional>

#include "api/field_validation.h"
#include "api/yaml.h"
#include "apiserver/fieldmanager.h"
#include "apiserver/handler_util.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

// GroupVersionKind.String(): "apps/v1, Kind=Deployment", "/v1, Kind=Pod".
std::string ObjectGvkString(const api::Object& obj) {
  std::string gv(obj.api_version());
  if (gv.find('/') == std::string::npos) gv = "/" + gv;
  return gv + ", Kind=" + std::string(obj.kind());
}

// "ns/name; apps/v1, Kind=Deployment", as upstream's objectGVKNN names the patch object.
std::string DescribePatchObject(const api::Object& obj) {
  return std::string(obj.namespace_()) + "/" + std::string(obj.name()) + "; " +
         ObjectGvkString(obj);
}

// Errors that upstream returns as plain Go errors: 500 with reason "" (Unknown).
ApiError TypedPatchError(const api::Object& applied, const std::string& detail) {
  ApiError e;
  e.code = 500;
  e.message =
      "failed to create typed patch object (" + DescribePatchObject(applied) + "): " + detail;
  return e;
}

// The body is YAML, but kubectl sends JSON (a subset of YAML 1.2 that means the same): parse
// that directly, which is several times faster than the YAML parser. With `duplicates`, repeated
// keys are reported as go-yaml's strict decoder reports them.
util::StatusOr<json::value> DecodeApplyBody(std::string_view body,
                                            std::vector<std::string>* duplicates) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && body[first] == '{') {
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (!ec) {
      if (duplicates != nullptr) {
        auto dups = api::JsonDuplicateKeysAsYaml(body);
        if (dups.ok()) *duplicates = std::move(*dups);
      }
      return v;
    }
  }
  return api::YamlToJson(body, duplicates);
}

}  // namespace

Response APIServer::HandleApply(RequestContext& ctx) {
  const std::string& sub = ctx.ri.subresource;
  if (!sub.empty() && sub != "status" && sub != "scale") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  // /scale applies an autoscaling/v1 Scale (upstream's scale subresource has its own field
  // manager; handlers_subresource.cc maps its managedFields onto the workload's).
  const bool scale = sub == "scale";
  const api::SubresourceInfo* scale_info = scale ? ctx.info.Subresource("scale") : nullptr;
  if (scale && scale_info == nullptr) {
    return ErrorResponse(NotFoundPath());
  }
  const api::GroupVersionKind gvk = scale ? scale_info->response_kind : ctx.info.Gvk();
  const api::TypeSchema* schema = scale ? scale_info->schema : ctx.info.schema;

  auto manager = QueryFieldManager(ctx.req, "PatchOptions", /*is_apply=*/true);
  if (!manager.ok()) return ErrorResponse(manager.error());
  auto force = QueryBool(ctx.req, "force", false);
  if (!force.ok()) return ErrorResponse(force.error());
  auto dry = QueryDryRun(ctx.req);
  if (!dry.ok()) return ErrorResponse(dry.error());
  auto validation = QueryFieldValidation(ctx.req);
  if (!validation.ok()) return ErrorResponse(validation.error());

  std::vector<std::string> duplicates;
  auto body = DecodeApplyBody(ctx.req.body,
                              *validation != api::FieldValidation::kIgnore ? &duplicates : nullptr);
  if (!body.ok()) {
    return ErrorResponse(BadRequest("error decoding YAML: " + body.status().message()));
  }
  if (body->is_null()) *body = json::object();
  if (!body->is_object()) {
    return ErrorResponse(BadRequest("error decoding YAML: json: cannot unmarshal " +
                                    std::string(body->is_array() ? "array" : "value") +
                                    " into Go value of type map[string]interface {}"));
  }
  const api::Object applied(std::move(body->get_object()));
  const std::string api_version = gvk.ApiVersion();
  if (applied.api_version() != api_version) {
    return ErrorResponse(
        BadRequest("Incorrect version specified in apply patch. Specified patch version: " +
                   std::string(applied.api_version()) + ", expected: " + api_version));
  }
  if (applied.kind() != gvk.kind) {
    return ErrorResponse(
        TypedPatchError(applied, "no corresponding type for " + ObjectGvkString(applied)));
  }
  if (schema != nullptr) {
    // Types (custom resources' too: their schema is converted to one) are strict whatever
    // fieldValidation says: an undeclared field cannot be owned.
    json::object copy = applied.doc();
    std::vector<std::string> unknown = api::FindUnknownFields(copy, *schema, /*prune=*/false);
    if (!unknown.empty()) {
      return ErrorResponse(
          TypedPatchError(applied, "." + unknown.front() + ": field not declared in schema"));
    }
  }
  // Upstream's applyPatcher checks the body with the strict YAML decoder once the apply has
  // succeeded: repeated keys are a 400 under Strict and warnings under Warn.
  std::vector<std::string> warnings;
  auto check_duplicates = [&]() -> std::optional<ApiError> {
    warnings.clear();
    if (duplicates.empty()) return std::nullopt;
    if (*validation == api::FieldValidation::kStrict) {
      return BadRequest("error strict decoding YAML: error converting YAML to JSON: " +
                        api::YamlUnmarshalErrors(duplicates));
    }
    warnings = duplicates;
    return std::nullopt;
  };
  // A resourceVersion in the configuration is a precondition; otherwise the apply re-runs on
  // whatever is current.
  const bool pins = !applied.resource_version().empty();

  if (scale) {
    return UpdateScale(
        ctx, ScaleWrite::kApply,
        [&](api::Object live, const ManagedFieldsContext& mctx) -> ApiOr<api::Object> {
          if (!pins) live.mutable_metadata().erase("resourceVersion");
          auto merged = ServerSideApply(schema, &live, applied, mctx, *force);
          if (!merged.ok()) return merged.error();
          if (auto err = CheckObjectName(*merged, ctx.ri.name, ctx.ns)) return *err;
          if (auto err = check_duplicates()) return *err;
          return merged;
        },
        warnings);
  }

  WriteContext w;
  w.user = &ctx.req.user;
  w.warnings = &ctx.admission_warnings;
  w.dry_run = *dry;
  w.field_manager = *manager;
  w.subresource = sub;
  w.managed_fields = ManagedFieldsMode::kAsGiven;
  w.force_allow_create = sub.empty();

  ManagedFieldsContext mctx;
  mctx.manager = *manager;
  mctx.subresource = sub;
  mctx.api_version = api_version;
  mctx.now = options_.clock->WallNow();
  mctx.reset_fields = DefaultResetFields(ctx.info.Subresource("status") != nullptr, sub);

  auto result = ctx.storage.Update(
      ctx.ns, ctx.ri.name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        std::optional<api::Object> live;
        if (current != nullptr) {
          live = *current;
          if (!pins) live->mutable_metadata().erase("resourceVersion");
        }
        auto merged = ServerSideApply(schema, live ? &*live : nullptr, applied, mctx, *force);
        if (!merged.ok()) return merged.error();
        if (auto err = CheckObjectName(*merged, ctx.ri.name, ctx.ns)) return *err;
        if (auto err = check_duplicates()) return *err;
        return merged;
      },
      w, /*allow_create=*/sub.empty());
  if (!result.ok()) return ErrorResponse(result.error());
  Response resp = ObjectResponse(result->created ? 201 : 200, ctx.req, ctx.info, *result->object);
  AddWarnings(resp, warnings);
  return resp;
}

}  // namespace converge::apiserver
