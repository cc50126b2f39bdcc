// PATCH: JSON merge patch, JSON patch and strategic merge patch (server-side apply lives in
// handlers_apply.cc). A patch is a read-modify-write: it is applied to the current object inside
// the storage's update loop, so a concurrent write makes it re-apply to the newer object rather
// than fail (unless the patch itself pins metadata.resourceVersion).
#include "api/field_validation.h"
#include "api/json_patch.h"
#include "api/merge_patch.h"
#include "api/strategic_merge_patch.h"
#include "apiserver/handler_util.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

enum class PatchType { kJson, kMerge, kStrategic, kApply };

ApiError PatchError(const util::Status& s) {
  switch (s.code()) {
    case util::Code::kResourceExhausted: return RequestEntityTooLarge(s.message());
    case util::Code::kFailedPrecondition: {
      ApiError e;
      e.code = 422;
      e.reason = "Invalid";
      e.message = std::string(api::kJsonPatchApplyFailedMessage);
      return e;
    }
    default: return BadRequest(s.message());
  }
}

// Whether the patch document itself sets metadata.resourceVersion (a precondition).
bool PatchPinsResourceVersion(PatchType type, const json::value& patch) {
  if (type == PatchType::kJson) {
    if (!patch.is_array()) return false;
    for (const auto& op : patch.get_array()) {
      if (op.is_object() &&
          api::Object::GetString(op.get_object(), "path") == "/metadata/resourceVersion") {
        return true;
      }
    }
    return false;
  }
  const json::value* rv = api::Find(patch, {"metadata", "resourceVersion"});
  return rv && rv->is_string() && !rv->get_string().empty();
}

// Consumes `original` (a strategic merge patch is applied to it in place).
util::StatusOr<json::value> ApplyPatch(PatchType type, json::value&& original,
                                       const json::value& patch, const api::TypeSchema* schema) {
  switch (type) {
    case PatchType::kJson: return api::ApplyJsonPatch(original, patch);
    case PatchType::kMerge: return api::ApplyMergePatch(original, patch);
    case PatchType::kStrategic:
      return api::ApplyStrategicMergePatch(std::move(original), patch, schema);
    case PatchType::kApply: break;
  }
  return util::Internal("unexpected patch type");
}

}  // namespace

Response APIServer::HandlePatch(RequestContext& ctx) {
  std::string media = MediaType(ctx.req.Header("content-type"));
  PatchType type;
  if (media == "application/json-patch+json") {
    type = PatchType::kJson;
  } else if (media == "application/merge-patch+json") {
    type = PatchType::kMerge;
  } else if (media == "application/strategic-merge-patch+json" && !ctx.info.custom) {
    type = PatchType::kStrategic;
  } else if (media == "application/apply-patch+yaml") {
    return HandleApply(ctx);
  } else {
    return ErrorResponse(UnsupportedMediaType(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml" +
        std::string(ctx.info.custom ? "" : ", application/strategic-merge-patch+json")));
  }
  const std::string& sub = ctx.ri.subresource;
  if (!sub.empty() && sub != "status" && sub != "scale") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  auto validation = QueryFieldValidation(ctx.req);
  // A merge patch's repeated keys are found while it is parsed (Strict and Warn report them).
  const bool find_duplicates =
      validation.ok() && *validation != api::FieldValidation::kIgnore && type != PatchType::kJson;
  BodyDuplicates duplicates;
  auto patch =
      api::ParsePatchBody(ctx.req.body, find_duplicates ? &duplicates.json_paths : nullptr);
  if (!patch.ok()) return ErrorResponse(PatchError(patch.status()));
  if (!validation.ok()) return ErrorResponse(validation.error());
  // What strict decoding finds in the patch itself (upstream decodes it before applying it); the
  // unknown fields of the patched object follow.
  api::StrictReport patch_report;
  if (*validation != api::FieldValidation::kIgnore) {
    if (type == PatchType::kJson) {
      auto problems = api::JsonPatchStrictProblems(ctx.req.body);
      if (problems.ok()) {
        for (std::string& p : *problems) patch_report.Add(std::move(p));
      }
    } else {
      duplicates.AddTo(patch_report);
    }
  }
  std::vector<std::string> warnings;
  const bool pins = PatchPinsResourceVersion(type, *patch);
  // A typed result: unknown fields are reported (Strict: 400, Warn: warnings) and never stored.
  // A merge or strategic merge patch of a stored object (which has none) can bring them only
  // where it reaches: only there is the result looked at.
  const json::object* reach =
      type != PatchType::kJson && patch->is_object() ? &patch->get_object() : nullptr;
  auto check_typed = [&](api::Object& obj, const api::TypeSchema& schema) {
    std::vector<std::string> unknown =
        reach != nullptr ? api::PruneUnknownFieldsWhere(obj.mutable_doc(), schema, *reach)
                         : api::PruneUnknownFields(obj.mutable_doc(), schema);
    api::SortFieldPaths(unknown);
    api::StrictReport report = patch_report;
    for (const std::string& u : unknown) report.Add("unknown field \"" + u + "\"");
    warnings.clear();
    return ApplyStrictReport(report, *validation, &warnings);
  };

  if (sub == "scale") {
    const api::SubresourceInfo* scale_info = ctx.info.Subresource("scale");
    const api::TypeSchema* scale_schema = scale_info ? scale_info->schema : nullptr;
    return UpdateScale(
        ctx, ScaleWrite::kUpdate,
        [&](api::Object scale, const ManagedFieldsContext&) -> ApiOr<api::Object> {
          if (!pins) scale.mutable_metadata().erase("resourceVersion");
          auto patched = ApplyPatch(type, json::value(scale.doc()), *patch, scale_schema);
          if (!patched.ok()) return PatchError(patched.status());
          if (!patched->is_object()) return BadRequest("the patched Scale is not an object");
          api::Object obj(std::move(patched->get_object()));
          if (scale_schema != nullptr) {
            if (auto err = check_typed(obj, *scale_schema)) return *err;
          }
          return obj;
        },
        warnings);
  }

  auto dry = QueryDryRun(ctx.req);
  if (!dry.ok()) return ErrorResponse(dry.error());
  WriteContext w;
  w.user = &ctx.req.user;
  w.warnings = &ctx.admission_warnings;
  w.dry_run = *dry;
  auto manager = QueryFieldManager(ctx.req, "PatchOptions");
  if (!manager.ok()) return ErrorResponse(manager.error());
  w.field_manager = std::move(*manager);
  w.subresource = sub;
  const api::TypeSchema* schema = ctx.info.schema;
  auto result = ctx.storage.Update(
      ctx.ns, ctx.ri.name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return NotFound(ctx.info.gvr.Gr(), ctx.ri.name);
        api::Object served = *current;
        ConvertToServedVersion(ctx.info, served);  // custom resources: the requested version
        // Default storage, as the patched result had when the patch worked on a copy.
        json::value original(std::move(served.mutable_doc()), json::storage_ptr());
        if (!pins) original.get_object()["metadata"].get_object().erase("resourceVersion");
        const std::string original_api_version(
            api::Object::GetString(original.get_object(), "apiVersion"));
        auto patched = ApplyPatch(type, std::move(original), *patch, schema);
        if (!patched.ok()) return PatchError(patched.status());
        if (!patched->is_object()) return BadRequest("the patched object is not a JSON object");
        api::Object obj(std::move(patched->get_object()));
        if (ctx.info.crd) {
          warnings.clear();
          if (auto err = PruneCustomResourceBody(ctx.req, ctx.info, obj, patch_report,
                                                 /*wrap=*/false, &warnings)) {
            return *err;
          }
        } else if (schema) {
          if (auto err = check_typed(obj, *schema)) return *err;
        } else {
          warnings.clear();
          if (auto err = ApplyStrictReport(patch_report, *validation, &warnings)) return *err;
        }
        if (obj.api_version() != original_api_version || obj.kind() != current->kind()) {
          return BadRequest("the patch changes apiVersion or kind, which is not allowed");
        }
        if (obj.name() != current->name()) {
          return BadRequest("the name of the object (" + std::string(obj.name()) +
                            ") does not match the name on the URL (" + ctx.ri.name + ")");
        }
        return obj;
      },
      w);
  if (!result.ok()) return ErrorResponse(result.error());
  Response resp = ObjectResponse(200, ctx.req, ctx.info, *result->object);
  AddWarnings(resp, warnings);
  return resp;
}

}  // namespace converge::apiserver
