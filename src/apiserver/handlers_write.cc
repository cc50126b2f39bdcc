// create, update, delete and deletecollection.
#include "apiserver/handler_util.h"
#include "apiserver/server.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

ApiOr<WriteContext> MakeWriteContext(RequestContext& ctx) {
  auto dry = QueryDryRun(ctx.req);
  if (!dry.ok()) return dry.error();
  WriteContext w;
  w.user = &ctx.req.user;
  w.warnings = &ctx.admission_warnings;
  w.dry_run = *dry;
  auto manager =
      QueryFieldManager(ctx.req, ctx.ri.verb == "create" ? "CreateOptions" : "UpdateOptions");
  if (!manager.ok()) return manager.error();
  w.field_manager = std::move(*manager);
  w.subresource = ctx.ri.subresource;
  return w;
}

// Reads DeleteOptions from the body (JSON or protobuf) and the query.
ApiOr<DeleteOptions> ParseDeleteOptions(const Request& req) {
  DeleteOptions opts;
  if (!req.body.empty()) {
    auto body = DecodeObject(req);
    if (!body.ok()) return body.error();
    const json::object& o = body->doc();
    if (auto it = o.find("gracePeriodSeconds"); it != o.end() && it->value().is_int64()) {
      opts.grace_period_seconds = it->value().get_int64();
    }
    opts.propagation_policy = api::Object::GetString(o, "propagationPolicy");
    if (auto it = o.find("orphanDependents"); it != o.end() && it->value().is_bool()) {
      opts.orphan_dependents = it->value().get_bool();
    }
    opts.precondition_uid = api::FindString(o, {"preconditions", "uid"});
    opts.precondition_resource_version = api::FindString(o, {"preconditions", "resourceVersion"});
    if (const json::array* dry = api::FindArray(o, {"dryRun"})) {
      for (const auto& d : *dry) {
        if (!d.is_string() || d.get_string() != "All") {
          return BadRequest("Invalid dry run value: supported values: \"All\"");
        }
        opts.dry_run = true;
      }
    }
  }
  auto grace = QueryInt(req, "gracePeriodSeconds");
  if (!grace.ok()) return grace.error();
  if (grace->has_value()) opts.grace_period_seconds = **grace;
  if (auto p = req.Query("propagationPolicy"); !p.empty()) opts.propagation_policy = p;
  if (req.HasQuery("orphanDependents")) {
    auto orphan = QueryBool(req, "orphanDependents", false);
    if (!orphan.ok()) return orphan.error();
    opts.orphan_dependents = *orphan;
  }
  if (opts.orphan_dependents) {
    // Upstream's ValidateDeleteOptions.
    if (!opts.propagation_policy.empty()) {
      return Invalid({"meta.k8s.io", "v1", "DeleteOptions"}, "",
                     {FieldInvalid("propagationPolicy", json::value(opts.propagation_policy),
                                   "orphanDependents and deletionPropagation cannot be both set")});
    }
    opts.propagation_policy = *opts.orphan_dependents ? "Orphan" : "Background";
  }
  auto dry = QueryDryRun(req);
  if (!dry.ok()) return dry.error();
  opts.dry_run |= *dry;
  return opts;
}

// Upstream's transformDecodeError: a body that does not decode into the kind (a value of the
// wrong type, strict-mode unknown or duplicate fields) is reported as
// `Deployment in version "v1" cannot be handled as a Deployment: <decoder error>`.
ApiError DecodeError(const api::ResourceInfo& info, ApiError e) {
  if (e.code == 400 && (e.message.starts_with("json: cannot unmarshal") ||
                        e.message.starts_with("strict decoding error"))) {
    e.message = info.kind + " in version \"" + info.gvr.version + "\" cannot be handled as a " +
                info.kind + ": " + e.message;
  }
  return e;
}

}  // namespace

Response APIServer::HandleCreate(RequestContext& ctx) {
  if (ctx.ri.subresource == "binding") return HandleBinding(ctx);
  if (ctx.ri.subresource == "eviction" && ctx.info.gvr.resource == "pods") {
    return HandleEviction(ctx);
  }
  if (ctx.ri.subresource == "token" && ctx.info.gvr.resource == "serviceaccounts") {
    return HandleTokenRequest(ctx);
  }
  if (!ctx.ri.subresource.empty() || !ctx.ri.name.empty()) {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  auto wctx = MakeWriteContext(ctx);
  if (!wctx.ok()) return ErrorResponse(wctx.error());
  std::vector<std::string> warnings;
  // Custom resources are decoded as plain JSON: their schema prunes them and a mistyped value is
  // a 422 from validation, not a decoding error.
  BodyDuplicates duplicates;
  auto obj =
      DecodeObject(ctx.req, ctx.info.crd ? nullptr : ctx.info.schema, &warnings, &duplicates);
  if (!obj.ok()) return ErrorResponse(DecodeError(ctx.info, obj.error()));
  if (auto err = CheckKind(*obj, ctx.info.Gvk())) return ErrorResponse(*err);
  if (ctx.info.crd) {
    api::StrictReport report;
    duplicates.AddTo(report);
    if (auto err = PruneCustomResourceBody(ctx.req, ctx.info, *obj, std::move(report),
                                           /*wrap=*/true, &warnings)) {
      return ErrorResponse(*err);
    }
  }
  if (ctx.info.namespaced && !obj->namespace_().empty() && obj->namespace_() != ctx.ns) {
    return ErrorResponse(BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  auto prepared = ctx.storage.PrepareCreate(ctx.ns, std::move(*obj), *wctx);
  if (!prepared.ok()) return ErrorResponse(prepared.error());
  // Sent once the object is stored. ctx.req and ctx.info outlive a pending response (the
  // transport holds the request; HandleResource's continuation holds the info and the storage).
  auto answer = [&req = ctx.req, &info = ctx.info,
                 warnings = std::move(warnings)](const ApiOr<CachedObjectPtr>& created) {
    if (!created.ok()) return ErrorResponse(created.error());
    Response resp = ObjectResponse(201, req, info, **created);
    AddWarnings(resp, warnings);
    return resp;
  };
  if (wctx->dry_run) return answer(ctx.storage.DryRunCreated(*prepared));
  if (!ctx.req.resume) return answer(ctx.storage.CommitCreate(std::move(*prepared)));
  // The transport can resume the request: answer once the commit is durable, without holding
  // this thread meanwhile.
  Response pending;
  pending.pending = [storage = &ctx.storage, prepared = std::move(*prepared),
                     resume = ctx.req.resume,
                     answer = std::move(answer)](std::function<void(Response)> done) mutable {
    storage->CommitCreateAsync(std::move(prepared), std::move(resume),
                               [answer = std::move(answer), done = std::move(done)](
                                   ApiOr<CachedObjectPtr> created) { done(answer(created)); });
  };
  return pending;
}

Response APIServer::HandleUpdate(RequestContext& ctx) {
  const std::string& sub = ctx.ri.subresource;
  if (sub == "scale") return HandleScale(ctx);
  if (sub == "finalize") return HandleFinalize(ctx);
  if (!sub.empty() && sub != "status") {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  auto wctx = MakeWriteContext(ctx);
  if (!wctx.ok()) return ErrorResponse(wctx.error());
  std::vector<std::string> warnings;
  BodyDuplicates duplicates;
  auto body =
      DecodeObject(ctx.req, ctx.info.crd ? nullptr : ctx.info.schema, &warnings, &duplicates);
  if (!body.ok()) return ErrorResponse(DecodeError(ctx.info, body.error()));
  if (auto err = CheckKind(*body, ctx.info.Gvk())) return ErrorResponse(*err);
  if (ctx.info.crd) {
    api::StrictReport report;
    duplicates.AddTo(report);
    if (auto err = PruneCustomResourceBody(ctx.req, ctx.info, *body, std::move(report),
                                           /*wrap=*/true, &warnings)) {
      return ErrorResponse(*err);
    }
  }
  const std::string& name = ctx.ri.name;
  if (!body->name().empty() && body->name() != name) {
    return ErrorResponse(BadRequest("the name of the object (" + std::string(body->name()) +
                                    ") does not match the name on the URL (" + name + ")"));
  }
  if (ctx.info.namespaced && !body->namespace_().empty() && body->namespace_() != ctx.ns) {
    return ErrorResponse(BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  body->set_name(name);
  api::Object desired = std::move(*body);
  auto result = ctx.storage.Update(
      ctx.ns, name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        // A uid in the body is a precondition (upstream's defaultUpdatedObjectInfo).
        if (current != nullptr && !desired.uid().empty() && desired.uid() != current->uid()) {
          return Conflict(
              ctx.info.gvr.Gr(), name,
              "Precondition failed: UID in precondition: " + std::string(desired.uid()) +
                  ", UID in object meta: " + std::string(current->uid()));
        }
        return desired;
      },
      *wctx,
      /*allow_create=*/sub.empty());
  if (!result.ok()) return ErrorResponse(result.error());
  Response resp = ObjectResponse(result->created ? 201 : 200, ctx.req, ctx.info, *result->object);
  AddWarnings(resp, warnings);
  return resp;
}

Response APIServer::HandleDelete(RequestContext& ctx) {
  if (!ctx.ri.subresource.empty()) {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the requested resource"));
  }
  auto opts = ParseDeleteOptions(ctx.req);
  if (!opts.ok()) return ErrorResponse(opts.error());
  auto wctx = MakeWriteContext(ctx);
  if (!wctx.ok()) return ErrorResponse(wctx.error());
  wctx->dry_run |= opts->dry_run;
  auto result = ctx.storage.Delete(ctx.ns, ctx.ri.name, *opts, *wctx);
  if (!result.ok()) return ErrorResponse(result.error());
  // Upstream's DeleteResource: 200, or 202 when the object stays (finalizers, a grace period)
  // and the client asked for cascading deletion the deprecated way (orphanDependents=false).
  const int code = !result->deleted && opts->orphan_dependents == false ? 202 : 200;
  if (!result->deleted || ctx.info.return_deleted_object) {
    return ObjectResponse(code, ctx.req, ctx.info, *result->object);
  }
  // Store.finalizeDelete without ReturnDeletedObject: a Success Status naming what went.
  json::object details;
  details["name"] = ctx.ri.name;
  if (!ctx.info.gvr.group.empty()) details["group"] = ctx.info.gvr.group;
  details["kind"] = ctx.info.gvr.resource;  // sic: upstream puts the resource there
  if (auto parsed = result->object->Parse(); parsed.ok() && !parsed->uid().empty()) {
    details["uid"] = parsed->uid();
  }
  json::object status;
  status["kind"] = "Status";
  status["apiVersion"] = "v1";
  status["metadata"] = json::object();
  status["status"] = "Success";
  status["details"] = std::move(details);
  return JsonResponse(code, json::serialize(status));
}

Response APIServer::HandleDeleteCollection(RequestContext& ctx) {
  auto opts = ParseDeleteOptions(ctx.req);
  if (!opts.ok()) return ErrorResponse(opts.error());
  auto wctx = MakeWriteContext(ctx);
  if (!wctx.ok()) return ErrorResponse(wctx.error());
  wctx->dry_run |= opts->dry_run;
  auto filter = QueryFilter(ctx.req, ctx.info, ctx.ns);
  if (!filter.ok()) return ErrorResponse(filter.error());
  ListOptions lo;
  lo.filter = std::move(*filter);
  auto list = ctx.storage.List(lo);
  if (!list.ok()) return ErrorResponse(list.error());
  ListResult deleted;
  deleted.revision = list->revision;
  for (const auto& item : list->items) {
    if (ctx.req.cancelled.stop_requested()) {
      return ErrorResponse(InternalError(
          "deletecollection stopped after " + std::to_string(deleted.items.size()) + " of " +
          std::to_string(list->items.size()) + " objects: the request was cancelled"));
    }
    auto r = ctx.storage.Delete(item->key().ns, item->key().name, *opts, *wctx);
    if (!r.ok()) {
      if (r.error().code == 404) continue;  // deleted concurrently
      return ErrorResponse(r.error());
    }
    deleted.items.push_back(r->object);
  }
  return ListResponse(ctx.req, ctx.info, deleted);
}

}  // namespace converge::apiserver
