#include "apiserver/admission_review.h"

#include "api/object.h"
#include "util/base64.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

json::object GroupVersionKindJson(const api::GroupVersionKind& gvk) {
  return {{"group", gvk.group}, {"version", gvk.version}, {"kind", gvk.kind}};
}

json::object GroupVersionResourceJson(const api::GroupVersionResource& gvr) {
  return {{"group", gvr.group}, {"version", gvr.version}, {"resource", gvr.resource}};
}

std::string OptionsKind(std::string_view operation) {
  if (operation == "CREATE") return "CreateOptions";
  if (operation == "UPDATE") return "UpdateOptions";
  if (operation == "DELETE") return "DeleteOptions";
  return "";
}

}  // namespace

std::string BuildAdmissionReview(const AdmissionAttributes& attrs, const std::string& uid) {
  const api::ResourceInfo& info = *attrs.resource;
  json::object req;
  req["uid"] = uid;
  req["kind"] = GroupVersionKindJson(info.Gvk());
  req["resource"] = GroupVersionResourceJson(info.gvr);
  if (!attrs.subresource.empty()) req["subResource"] = attrs.subresource;
  req["requestKind"] = GroupVersionKindJson(info.Gvk());
  req["requestResource"] = GroupVersionResourceJson(info.gvr);
  if (!attrs.subresource.empty()) req["requestSubResource"] = attrs.subresource;
  if (!attrs.name.empty()) req["name"] = attrs.name;
  if (!attrs.ns.empty()) req["namespace"] = attrs.ns;
  req["operation"] = attrs.operation;
  json::object user;
  if (attrs.user) {
    user["username"] = attrs.user->name;
    if (!attrs.user->uid.empty()) user["uid"] = attrs.user->uid;
    if (!attrs.user->groups.empty()) {
      json::array groups;
      for (const std::string& g : attrs.user->groups) groups.emplace_back(g);
      user["groups"] = std::move(groups);
    }
  }
  req["userInfo"] = std::move(user);
  req["object"] = attrs.object ? json::value(attrs.object->doc()) : json::value(nullptr);
  req["oldObject"] = attrs.old_object ? json::value(attrs.old_object->doc()) : json::value(nullptr);
  req["dryRun"] = attrs.dry_run;
  if (std::string kind = OptionsKind(attrs.operation); !kind.empty()) {
    json::object options{{"kind", kind}, {"apiVersion", "meta.k8s.io/v1"}};
    if (attrs.dry_run) options["dryRun"] = json::array{"All"};
    req["options"] = std::move(options);
  }
  json::object review;
  review["kind"] = "AdmissionReview";
  review["apiVersion"] = "admission.k8s.io/v1";
  review["request"] = std::move(req);
  return json::serialize(review);
}

util::StatusOr<AdmissionVerdict> ParseAdmissionResponse(int http_status, std::string_view body,
                                                        const std::string& uid, bool mutating) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (http_status < 200 || http_status > 299) {
    // client-go's wording for an error response that is not a Status.
    if (!ec && v.is_object() && api::Object::GetString(v.get_object(), "kind") == "Status") {
      return util::Unavailable("failed to call webhook: " +
                               std::string(api::Object::GetString(v.get_object(), "message")));
    }
    if (body.empty()) {
      return util::Unavailable(
          "failed to call webhook: the server responded with the status code " +
          std::to_string(http_status) + " but did not return more information");
    }
    return util::Unavailable("failed to call webhook: an error on the server (\"" +
                             std::string(body.substr(0, 1024)) +
                             "\") has prevented the request from succeeding");
  }
  if (ec || !v.is_object()) {
    return util::InvalidArgument("received invalid webhook response: the response is not JSON");
  }
  const json::object& review = v.get_object();
  auto invalid = [](std::string why) {
    return util::InvalidArgument("received invalid webhook response: " + why);
  };
  const json::object* resp = api::FindObject(review, {"response"});
  if (!resp) return invalid("webhook response was absent");
  std::string_view got_uid = api::Object::GetString(*resp, "uid");
  if (got_uid != uid) {
    return invalid("expected response.uid=\"" + uid + "\", got \"" + std::string(got_uid) + "\"");
  }
  std::string_view api_version = api::Object::GetString(review, "apiVersion");
  std::string_view kind = api::Object::GetString(review, "kind");
  if (api_version != "admission.k8s.io/v1" || kind != "AdmissionReview") {
    std::string got = std::string(api_version) + ", Kind=" + std::string(kind);
    if (api_version.empty()) got = ", Kind=" + std::string(kind);
    return invalid("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got " +
                   got);
  }
  AdmissionVerdict verdict;
  const json::value* allowed = resp->if_contains("allowed");
  verdict.allowed = allowed && allowed->is_bool() && allowed->get_bool();
  if (const json::object* st = api::FindObject(*resp, {"status"})) verdict.status = *st;
  if (const json::array* warnings = api::FindArray(*resp, {"warnings"})) {
    for (const json::value& w : *warnings) {
      if (w.is_string()) verdict.warnings.emplace_back(w.get_string());
    }
  }
  std::string_view patch_type = api::Object::GetString(*resp, "patchType");
  std::string_view patch = api::Object::GetString(*resp, "patch");
  if (!patch.empty() && patch_type.empty()) {
    return invalid("webhook returned response.patch but not response.patchType");
  }
  if (!patch_type.empty() && patch.empty()) {
    return invalid("webhook returned response.patchType but not response.patch");
  }
  if (!patch_type.empty() && !mutating) {
    return invalid("validating webhook may not return response.patch or response.patchType");
  }
  if (!patch_type.empty() && patch_type != "JSONPatch") {
    return invalid("webhook returned invalid response.patchType of \"" + std::string(patch_type) +
                   "\"");
  }
  if (!patch.empty()) {
    auto raw = util::Base64Decode(patch);
    if (!raw) return invalid("response.patch is not base64");
    json::value p = json::parse(*raw, ec);
    if (ec) return invalid("response.patch is not JSON: " + ec.message());
    verdict.patch = std::move(p);
  }
  return verdict;
}

ApiError WebhookDenied(const std::string& webhook, const std::optional<json::object>& status) {
  ApiError e;
  e.code = 400;
  std::string message;
  if (status) {
    const json::object& st = *status;
    e.code = static_cast<int>(api::FindInt(st, {"code"}));
    if (e.code < 400) e.code = 400;
    e.reason = api::Object::GetString(st, "reason");
    message = api::Object::GetString(st, "message");
    if (message.empty()) message = e.reason;
    if (const json::object* d = api::FindObject(st, {"details"})) {
      e.name = api::Object::GetString(*d, "name");
      e.group = api::Object::GetString(*d, "group");
      e.kind = api::Object::GetString(*d, "kind");
      e.uid = api::Object::GetString(*d, "uid");
      e.retry_after_seconds = static_cast<int>(api::FindInt(*d, {"retryAfterSeconds"}));
      if (const json::array* causes = api::FindArray(*d, {"causes"})) {
        for (const json::value& c : *causes) {
          if (!c.is_object()) continue;
          const json::object& co = c.get_object();
          e.causes.push_back({std::string(api::Object::GetString(co, "reason")),
                              std::string(api::Object::GetString(co, "message")),
                              std::string(api::Object::GetString(co, "field"))});
        }
      }
    }
  }
  const std::string denied = "admission webhook \"" + webhook + "\" denied the request";
  e.message = message.empty() ? denied + " without explanation" : denied + ": " + message;
  return e;
}

ApiError WebhookCallFailed(const std::string& webhook, const std::string& reason) {
  return InternalError("failed calling webhook \"" + webhook + "\": " + reason);
}

ApiError WebhookNoDryRun(const std::string& webhook) {
  return BadRequest("admission webhook \"" + webhook + "\" does not support dry run");
}

}  // namespace converge::apiserver
