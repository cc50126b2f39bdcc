#include "apiserver/errors.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

ApiError Make(int code, std::string reason, std::string message) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  return e;
}

// How upstream's field errors render a value: strings quoted, scalars plain, others as JSON.
std::string ValueString(const json::value& v) {
  if (v.is_string()) return Quoted(v.get_string());
  if (v.is_null()) return "null";
  return json::serialize(v);
}

}  // namespace

json::object ApiError::ToStatus() const {
  json::object st;
  st["kind"] = "Status";
  st["apiVersion"] = "v1";
  st["metadata"] = json::object();
  st["status"] = "Failure";
  st["message"] = message;
  if (!reason.empty()) st["reason"] = reason;  // omitempty: errors that are not API statuses
  json::object details;
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!uid.empty()) details["uid"] = uid;
  if (!causes.empty()) {
    json::array cs;
    for (const StatusCause& c : causes) {
      json::object co;
      if (!c.reason.empty()) co["reason"] = c.reason;
      if (!c.message.empty()) co["message"] = c.message;
      if (!c.field.empty()) co["field"] = c.field;
      cs.emplace_back(std::move(co));
    }
    details["causes"] = std::move(cs);
  }
  if (retry_after_seconds > 0) details["retryAfterSeconds"] = retry_after_seconds;
  if (!details.empty()) st["details"] = std::move(details);
  st["code"] = code;
  return st;
}

json::object SuccessStatus(const std::string& name, const api::GroupResource& gr,
                           std::string_view uid) {
  json::object st;
  st["kind"] = "Status";
  st["apiVersion"] = "v1";
  st["metadata"] = json::object();
  st["status"] = "Success";
  json::object details;
  details["name"] = name;
  if (!gr.group.empty()) details["group"] = gr.group;
  details["kind"] = gr.resource;
  if (!uid.empty()) details["uid"] = uid;
  st["details"] = std::move(details);
  return st;
}

ApiError NotFound(const api::GroupResource& gr, std::string_view name) {
  ApiError e = Make(404, "NotFound", gr.ToString() + " " + Quoted(name) + " not found");
  e.name = name;
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError AlreadyExists(const api::GroupResource& gr, std::string_view name) {
  ApiError e = Make(409, "AlreadyExists", gr.ToString() + " " + Quoted(name) + " already exists");
  e.name = name;
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError Conflict(const api::GroupResource& gr, std::string_view name, std::string_view why) {
  ApiError e = Make(409, "Conflict",
                    "Operation cannot be fulfilled on " + gr.ToString() + " " + Quoted(name) +
                        ": " + std::string(why));
  e.name = name;
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}

ApiError ConflictModified(const api::GroupResource& gr, std::string_view name) {
  return Conflict(gr, name,
                  "the object has been modified; please apply your changes to the latest "
                  "version and try again");
}

ApiError Invalid(const api::GroupVersionKind& gvk, std::string_view name,
                 std::vector<StatusCause> causes) {
  std::string qualified = gvk.group.empty() ? gvk.kind : gvk.kind + "." + gvk.group;
  std::string agg;
  for (size_t i = 0; i < causes.size(); ++i) {
    if (i) agg += ", ";
    if (!causes[i].field.empty()) agg += causes[i].field + ": ";
    agg += causes[i].message;
  }
  if (causes.size() > 1) agg = "[" + agg + "]";
  ApiError e = Make(422, "Invalid", qualified + " " + Quoted(name) + " is invalid: " + agg);
  e.name = name;
  e.group = gvk.group;
  e.kind = gvk.kind;
  e.causes = std::move(causes);
  return e;
}

ApiError BadRequest(std::string message) {
  return Make(400, "BadRequest", std::move(message));
}
ApiError Expired(std::string message) {
  return Make(410, "Expired", std::move(message));
}
ApiError Gone(std::string message) {
  return Make(410, "Gone", std::move(message));
}
ApiError MethodNotAllowed(std::string message) {
  return Make(405, "MethodNotAllowed", std::move(message));
}
ApiError NotAcceptable(std::string message) {
  return Make(406, "NotAcceptable", std::move(message));
}
ApiError UnsupportedMediaType(std::string message) {
  return Make(415, "UnsupportedMediaType", std::move(message));
}
ApiError RequestEntityTooLarge(std::string message) {
  return Make(413, "RequestEntityTooLarge", std::move(message));
}
ApiError Timeout(std::string message, int retry_after_seconds) {
  ApiError e = Make(504, "Timeout", std::move(message));
  e.retry_after_seconds = retry_after_seconds;
  return e;
}
ApiError TooManyRequests(std::string message, int retry_after_seconds) {
  ApiError e = Make(429, "TooManyRequests", std::move(message));
  e.retry_after_seconds = retry_after_seconds;
  return e;
}
ApiError Forbidden(const api::GroupResource& gr, std::string_view name, std::string message) {
  std::string what = gr.ToString();
  if (!name.empty()) what += " " + Quoted(name);
  ApiError e = Make(403, "Forbidden", what + " is forbidden: " + message);
  e.name = name;
  e.group = gr.group;
  e.kind = gr.resource;
  return e;
}
ApiError Unauthorized(std::string message) {
  return Make(401, "Unauthorized", std::move(message));
}
ApiError InternalError(std::string message) {
  ApiError e = Make(500, "InternalError", "Internal error occurred: " + message);
  e.causes.push_back({"", message, ""});
  return e;
}
ApiError ServiceUnavailable(std::string message) {
  return Make(503, "ServiceUnavailable", std::move(message));
}
ApiError NotFoundPath() {
  return Make(404, "NotFound", "the server could not find the requested resource");
}

ApiError FromStatus(const util::Status& s, const api::GroupResource& gr, std::string_view name) {
  switch (s.code()) {
    case util::Code::kNotFound: return NotFound(gr, name);
    case util::Code::kAlreadyExists: return AlreadyExists(gr, name);
    case util::Code::kAborted: return ConflictModified(gr, name);
    case util::Code::kInvalidArgument: return BadRequest(s.message());
    case util::Code::kOutOfRange: return Expired(s.message());
    case util::Code::kDeadlineExceeded: return Timeout(s.message());
    case util::Code::kResourceExhausted: return TooManyRequests(s.message(), 1);
    case util::Code::kUnavailable: return ServiceUnavailable(s.message());
    case util::Code::kPermissionDenied: return Forbidden(gr, name, s.message());
    case util::Code::kUnauthenticated: return Unauthorized(s.message());
    default: return InternalError(s.message());
  }
}

StatusCause FieldInvalid(std::string field, const json::value& value, std::string detail) {
  std::string msg = "Invalid value: " + ValueString(value);
  if (!detail.empty()) msg += ": " + detail;
  return {"FieldValueInvalid", std::move(msg), std::move(field)};
}

StatusCause FieldInvalidString(std::string field, std::string_view value, std::string detail) {
  return FieldInvalid(std::move(field), json::value(value), std::move(detail));
}

StatusCause FieldRequired(std::string field, std::string detail) {
  std::string msg = "Required value";
  if (!detail.empty()) msg += ": " + detail;
  return {"FieldValueRequired", std::move(msg), std::move(field)};
}

StatusCause FieldForbidden(std::string field, std::string detail) {
  return {"FieldValueForbidden", "Forbidden: " + detail, std::move(field)};
}

StatusCause FieldNotSupported(std::string field, const json::value& value,
                              const std::vector<std::string>& supported) {
  std::string msg = "Unsupported value: " + ValueString(value);
  if (!supported.empty()) {
    msg += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i) msg += ", ";
      msg += Quoted(supported[i]);
    }
  }
  return {"FieldValueNotSupported", std::move(msg), std::move(field)};
}

StatusCause FieldDuplicate(std::string field, const json::value& value) {
  return {"FieldValueDuplicate", "Duplicate value: " + ValueString(value), std::move(field)};
}

StatusCause FieldTooLong(std::string field, int64_t max) {
  return {"FieldValueTooLong", "Too long: may not be more than " + std::to_string(max) + " bytes",
          std::move(field)};
}

}  // namespace converge::apiserver
