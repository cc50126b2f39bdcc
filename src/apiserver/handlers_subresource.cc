// Subresources: scale (autoscaling/v1 Scale; its apply patches come through handlers_apply.cc and
// its other patches through handlers_patch.cc), pods/binding, pods/log and namespaces/finalize.
// The semantics are pure functions next to the strategies (strategy_scale.h, strategy_core.h);
// here they run inside the storage's read-modify-write loop.
#include "api/fieldpath.h"
#include "apiserver/fieldmanager.h"
#include "apiserver/handler_util.h"
#include "apiserver/managed_fields.h"
#include "apiserver/scale_managed_fields.h"
#include "apiserver/server.h"
#include "apiserver/strategy_core.h"
#include "apiserver/strategy_scale.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

const api::GroupVersionKind kScaleGvk{"autoscaling", "v1", "Scale"};

ApiOr<WriteContext> SubresourceWriteContext(RequestContext& ctx, bool is_apply = false) {
  auto dry = QueryDryRun(ctx.req);
  if (!dry.ok()) return dry.error();
  WriteContext w;
  w.user = &ctx.req.user;
  w.warnings = &ctx.admission_warnings;
  w.dry_run = *dry;
  auto manager = QueryFieldManager(
      ctx.req, ctx.ri.verb == "patch" ? "PatchOptions" : "UpdateOptions", is_apply);
  if (!manager.ok()) return manager.error();
  w.field_manager = std::move(*manager);
  return w;
}

// The Scale view of a workload or custom resource, and applying one back.
api::Object ScaleView(const api::ResourceInfo& info, const api::Object& obj) {
  if (info.crd && info.crd->scale) return CustomResourceScaleOf(obj, *info.crd->scale);
  return ScaleOf(obj);
}

std::optional<ApiError> ApplyScaleView(const api::ResourceInfo& info, api::Object& obj,
                                       const api::Object& scale) {
  if (info.crd && info.crd->scale) return ApplyCustomResourceScale(obj, scale, *info.crd->scale);
  return ApplyScale(obj, scale);
}

// The parent's replicas field per API version (upstream's ReplicasPathMappings of the
// Deployment, ReplicaSet and StatefulSet storages; a CRD's specReplicasPath per version).
ReplicasPaths ReplicasPathsOf(const api::ResourceInfo& info) {
  ReplicasPaths out;
  if (info.crd) {
    for (const auto& [gv, path] : info.crd->spec_replicas_paths) {
      out[gv] = path.empty() ? std::nullopt : std::optional(ReplicasPathFromJsonPath(path));
    }
    if (info.crd->scale) {
      out[info.Gvk().ApiVersion()] = ReplicasPathFromJsonPath(info.crd->scale->spec_replicas_path);
    }
    return out;
  }
  const api::Path replicas{api::PathElement::Field("spec"), api::PathElement::Field("replicas")};
  out[info.Gvk().ApiVersion()] = replicas;
  if (info.gvr.group == "apps") {
    out["apps/v1beta2"] = replicas;
    if (info.gvr.resource != "replicasets") out["apps/v1beta1"] = replicas;
  }
  return out;
}

const api::TypeSchema* ScaleSchema(const api::ResourceInfo& info) {
  const api::SubresourceInfo* sub = info.Subresource("scale");
  return sub != nullptr ? sub->schema : nullptr;
}

const json::value* ManagedFieldsJson(const api::Object& obj) {
  return api::Find(obj.doc(), {"metadata", "managedFields"});
}

void SetManagedFieldsJson(api::Object& obj, json::array entries) {
  if (entries.empty()) {
    obj.mutable_metadata().erase("managedFields");
  } else {
    obj.mutable_metadata()["managedFields"] = std::move(entries);
  }
}

}  // namespace

Response APIServer::UpdateScale(RequestContext& ctx, ScaleWrite kind, const ScaleChange& change,
                                const std::vector<std::string>& warnings) {
  auto w = SubresourceWriteContext(ctx, kind == ScaleWrite::kApply);
  if (!w.ok()) return ErrorResponse(w.error());
  // Admission sees subresource "scale"; otherwise the workload is updated as a main-resource
  // update (so generation moves with the replicas), with the managedFields computed here.
  w->subresource = "scale";
  w->managed_fields = ManagedFieldsMode::kAsGiven;
  const api::TypeSchema* scale_schema = ScaleSchema(ctx.info);
  const ReplicasPaths paths = ReplicasPathsOf(ctx.info);
  const std::string group_version = ctx.info.Gvk().ApiVersion();
  ManagedFieldsContext mctx;
  mctx.manager = w->field_manager;
  mctx.subresource = "scale";
  mctx.api_version = kScaleGvk.ApiVersion();
  mctx.now = options_.clock->WallNow();
  auto result = ctx.storage.Update(
      ctx.ns, ctx.ri.name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return NotFound(ctx.info.gvr.Gr(), ctx.ri.name);
        util::StatusOr<ManagedFields> parent = DecodeManagedFields(ManagedFieldsJson(*current));
        if (!parent.ok()) {
          return InternalError("failed to decode managed fields: " + parent.status().message());
        }
        api::Object scale = ScaleView(ctx.info, *current);
        SetManagedFieldsJson(scale,
                             EncodeManagedFields(ScaleManagedFieldsFromParent(*parent, paths)));
        auto desired = change(scale, mctx);
        if (!desired.ok()) return desired.error();
        if (kind == ScaleWrite::kUpdate) UpdateManagedFields(scale_schema, &scale, *desired, mctx);
        api::Object next = *current;
        next.mutable_metadata().erase("resourceVersion");
        if (auto err = ApplyScaleView(ctx.info, next, *desired)) return *err;
        if (!desired->uid().empty() && desired->uid() != current->uid()) {
          return Conflict(
              {ctx.info.gvr.group, ctx.info.gvr.resource + "/scale"}, ctx.ri.name,
              "Precondition failed: UID in precondition: " + std::string(desired->uid()) +
                  ", UID in object meta: " + std::string(current->uid()));
        }
        util::StatusOr<ManagedFields> after = DecodeManagedFields(ManagedFieldsJson(*desired));
        if (!after.ok()) {
          return InternalError("failed to decode managed fields: " + after.status().message());
        }
        SetManagedFieldsJson(next, EncodeManagedFields(ParentManagedFieldsFromScale(
                                       *parent, *after, paths, group_version)));
        return next;
      },
      *w);
  if (!result.ok()) return ErrorResponse(result.error());
  auto parsed = result->object->Parse();
  if (!parsed.ok()) return ErrorResponse(InternalError(parsed.status().message()));
  Response resp = JsonResponse(200, json::serialize(ScaleView(ctx.info, *parsed).doc()));
  AddWarnings(resp, warnings);
  return resp;
}

Response APIServer::HandleScale(RequestContext& ctx) {
  if (ctx.ri.verb == "get") {
    auto obj = ctx.storage.Get(ctx.ns, ctx.ri.name, std::string(ctx.req.Query("resourceVersion")));
    if (!obj.ok()) return ErrorResponse(obj.error());
    auto parsed = (*obj)->Parse();
    if (!parsed.ok()) return ErrorResponse(InternalError(parsed.status().message()));
    return JsonResponse(200, json::serialize(ScaleView(ctx.info, *parsed).doc()));
  }
  if (ctx.ri.verb == "update") {
    std::vector<std::string> warnings;
    auto body = DecodeObject(ctx.req, ScaleSchema(ctx.info), &warnings);
    if (!body.ok()) {
      ApiError e = body.error();
      if (e.code == 400 && (e.message.starts_with("json: cannot unmarshal") ||
                            e.message.starts_with("strict decoding error"))) {
        e.message = "Scale in version \"v1\" cannot be handled as a Scale: " + e.message;
      }
      return ErrorResponse(e);
    }
    if (auto err = CheckKind(*body, kScaleGvk)) return ErrorResponse(*err);
    if (!body->name().empty() && body->name() != ctx.ri.name) {
      return ErrorResponse(BadRequest("the name of the object (" + std::string(body->name()) +
                                      ") does not match the name on the URL (" + ctx.ri.name +
                                      ")"));
    }
    // Upstream's EnsureObjectNamespaceMatchesRequestNamespace.
    if (body->namespace_().empty()) {
      if (!ctx.ns.empty()) body->set_namespace(ctx.ns);
    } else if (body->namespace_() != ctx.ns) {
      return ErrorResponse(BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request"));
    }
    api::Object desired = std::move(*body);
    return UpdateScale(
        ctx, ScaleWrite::kUpdate,
        [&](api::Object, const ManagedFieldsContext&) -> ApiOr<api::Object> { return desired; },
        warnings);
  }
  return ErrorResponse(
      MethodNotAllowed("the server does not allow this method on the requested resource"));
}

Response APIServer::HandleBinding(RequestContext& ctx) {
  auto body = DecodeObject(ctx.req);
  if (!body.ok()) return ErrorResponse(body.error());
  if (auto err = CheckKind(*body, {"", "v1", "Binding"})) return ErrorResponse(*err);
  auto w = SubresourceWriteContext(ctx);
  if (!w.ok()) return ErrorResponse(w.error());
  w->subresource = "binding";
  w->raw = true;  // BindPod produced the exact object; the pod update rules do not apply
  const std::string now = util::FormatRfc3339(options_.clock->WallNow());
  auto result = ctx.storage.Update(
      ctx.ns, ctx.ri.name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return NotFound(ctx.info.gvr.Gr(), ctx.ri.name);
        api::Object next = *current;
        if (auto err = BindPod(next, *body, now)) return *err;
        if (next.resource_version() == current->resource_version()) {
          next.mutable_metadata().erase("resourceVersion");  // no precondition from the binding
        }
        return next;
      },
      *w);
  if (!result.ok()) return ErrorResponse(result.error());
  json::object status;
  status["kind"] = "Status";
  status["apiVersion"] = "v1";
  status["metadata"] = json::object();
  status["status"] = "Success";
  status["code"] = 201;
  return JsonResponse(201, json::serialize(status));
}

Response APIServer::HandleFinalize(RequestContext& ctx) {
  auto body = DecodeObject(ctx.req);
  if (!body.ok()) return ErrorResponse(body.error());
  if (auto err = CheckKind(*body, ctx.info.Gvk())) return ErrorResponse(*err);
  auto w = SubresourceWriteContext(ctx);
  if (!w.ok()) return ErrorResponse(w.error());
  w->subresource = "finalize";
  w->raw = true;
  auto result = ctx.storage.Update(
      ctx.ns, ctx.ri.name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return NotFound(ctx.info.gvr.Gr(), ctx.ri.name);
        api::Object next = *body;
        PrepareNamespaceFinalize(next, *current);
        auto causes = ValidateNamespaceFinalize(next, *current);
        if (!causes.empty()) return Invalid(ctx.info.Gvk(), ctx.ri.name, std::move(causes));
        return next;
      },
      *w);
  if (!result.ok()) return ErrorResponse(result.error());
  return ObjectResponse(200, ctx.req, ctx.info, *result->object);
}

Response APIServer::HandleLog(RequestContext& ctx) {
  auto pod = ctx.storage.Get(ctx.ns, ctx.ri.name, "");
  if (!pod.ok()) return ErrorResponse(pod.error());
  if (log_provider_) return log_provider_(ctx.req, **pod);
  Response r;
  r.status = 200;
  r.content_type = "text/plain";
  return r;
}

}  // namespace converge::apiserver
