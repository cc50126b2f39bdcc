// Subresources: scale (autoscaling/v1 Scale), pods/binding, pods/log and namespaces/finalize.
// The semantics are pure functions next to the strategies (strategy_scale.h, strategy_core.h);
// here they run inside the storage's read-modify-write loop.
#include "apiserver/handler_util.h"
#include "apiserver/server.h"
#include "apiserver/strategy_core.h"
#include "apiserver/strategy_scale.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

const api::GroupVersionKind kScaleGvk{"autoscaling", "v1", "Scale"};

ApiOr<WriteContext> SubresourceWriteContext(RequestContext& ctx) {
  auto dry = QueryDryRun(ctx.req);
  if (!dry.ok()) return dry.error();
  WriteContext w;
  w.user = &ctx.req.user;
  w.warnings = &ctx.admission_warnings;
  w.dry_run = *dry;
  auto manager =
      QueryFieldManager(ctx.req, ctx.ri.verb == "patch" ? "PatchOptions" : "UpdateOptions");
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

}  // namespace

Response UpdateScale(RequestContext& ctx,
                     const std::function<ApiOr<api::Object>(api::Object scale)>& change) {
  auto w = SubresourceWriteContext(ctx);
  if (!w.ok()) return ErrorResponse(w.error());
  // managedFields record the change under subresource "scale"; otherwise the workload is
  // updated as a main-resource update, so generation moves with the replicas.
  w->subresource = "scale";
  auto result = ctx.storage.Update(
      ctx.ns, ctx.ri.name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (!current) return NotFound(ctx.info.gvr.Gr(), ctx.ri.name);
        auto desired = change(ScaleView(ctx.info, *current));
        if (!desired.ok()) return desired.error();
        api::Object next = *current;
        next.mutable_metadata().erase("resourceVersion");
        if (auto err = ApplyScaleView(ctx.info, next, *desired)) return *err;
        return next;
      },
      *w);
  if (!result.ok()) return ErrorResponse(result.error());
  auto parsed = result->object->Parse();
  if (!parsed.ok()) return ErrorResponse(InternalError(parsed.status().message()));
  return JsonResponse(200, json::serialize(ScaleView(ctx.info, *parsed).doc()));
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
    auto body = DecodeObject(ctx.req);
    if (!body.ok()) return ErrorResponse(body.error());
    if (auto err = CheckKind(*body, kScaleGvk)) return ErrorResponse(*err);
    if (!body->name().empty() && body->name() != ctx.ri.name) {
      return ErrorResponse(BadRequest("the name of the object (" + std::string(body->name()) +
                                      ") does not match the name on the URL (" + ctx.ri.name +
                                      ")"));
    }
    api::Object desired = std::move(*body);
    return UpdateScale(ctx, [&](api::Object) -> ApiOr<api::Object> { return desired; });
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
