#include "client/api_errors.h"

#include <string>

namespace converge::client {
namespace json = boost::json;

namespace {

// The reason client-go infers from an HTTP status when the body is not a Status.
std::string_view ReasonForCode(int code) {
  switch (code) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 406: return "NotAcceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "RequestEntityTooLarge";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    default: return "";
  }
}

std::string_view StringAt(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return {};
  return v->get_string();
}

}  // namespace

util::Code CodeForReason(std::string_view reason, int http_code) {
  if (reason == "NotFound") return util::Code::kNotFound;
  if (reason == "AlreadyExists") return util::Code::kAlreadyExists;
  if (reason == "Conflict") return util::Code::kAborted;
  if (reason == "Invalid" || reason == "BadRequest" || reason == "NotAcceptable" ||
      reason == "UnsupportedMediaType" || reason == "RequestEntityTooLarge") {
    return util::Code::kInvalidArgument;
  }
  if (reason == "Expired" || reason == "Gone") return util::Code::kOutOfRange;
  if (reason == "TooManyRequests" || reason == "ServerTimeout" || reason == "ServiceUnavailable") {
    return util::Code::kUnavailable;
  }
  if (reason == "Timeout") return util::Code::kDeadlineExceeded;
  if (reason == "Unauthorized") return util::Code::kUnauthenticated;
  if (reason == "Forbidden") return util::Code::kPermissionDenied;
  if (reason == "MethodNotAllowed") return util::Code::kUnimplemented;
  if (reason == "InternalError") return util::Code::kInternal;
  // Unknown or empty reason: decide by the HTTP code.
  if (std::string_view r = ReasonForCode(http_code); !r.empty()) return CodeForReason(r, 0);
  if (http_code >= 500) return util::Code::kInternal;
  if (http_code >= 400) return util::Code::kInvalidArgument;
  return util::Code::kUnknown;
}

util::Status StatusFromApiStatus(const json::object& status, int http_code) {
  int code = http_code;
  if (const json::value* c = status.if_contains("code"); c != nullptr && c->is_int64()) {
    code = static_cast<int>(c->get_int64());
  }
  std::string reason(StringAt(status, "reason"));
  if (reason.empty()) reason = std::string(ReasonForCode(code));
  std::string message(StringAt(status, "message"));
  if (message.empty()) {
    message = "the server responded with status " + std::to_string(code);
    if (!reason.empty()) message += " (" + reason + ")";
  }
  // "Too large resource version" lives in a cause; keep it findable in the message.
  if (const json::value* details = status.if_contains("details");
      details != nullptr && details->is_object()) {
    if (const json::value* causes = details->as_object().if_contains("causes");
        causes != nullptr && causes->is_array()) {
      for (const json::value& cause : causes->as_array()) {
        if (!cause.is_object()) continue;
        if (StringAt(cause.as_object(), "reason") == "ResourceVersionTooLarge" &&
            message.find("Too large resource version") == std::string::npos) {
          message += ": Too large resource version";
        }
      }
    }
  }
  return util::Status(CodeForReason(reason, code), std::move(message)).WithReason(reason);
}

util::Status StatusFromResponse(int http_code, std::string_view body) {
  json::error_code ec;
  json::value v = json::parse(body, ec);
  if (!ec && v.is_object() && StringAt(v.as_object(), "kind") == "Status") {
    return StatusFromApiStatus(v.as_object(), http_code);
  }
  std::string reason(ReasonForCode(http_code));
  std::string message = "the server responded with status " + std::to_string(http_code);
  if (!reason.empty()) message += " (" + reason + ")";
  std::string_view snippet = body.substr(0, 256);
  if (!snippet.empty()) message += ": " + std::string(snippet);
  return util::Status(CodeForReason(reason, http_code), std::move(message)).WithReason(reason);
}

bool IsNotFound(const util::Status& s) {
  return s.code() == util::Code::kNotFound;
}
bool IsAlreadyExists(const util::Status& s) {
  return s.code() == util::Code::kAlreadyExists;
}
bool IsConflict(const util::Status& s) {
  return s.code() == util::Code::kAborted;
}
bool IsInvalid(const util::Status& s) {
  return s.reason() == "Invalid";
}
bool IsBadRequest(const util::Status& s) {
  return s.reason() == "BadRequest";
}
bool IsExpired(const util::Status& s) {
  return s.reason() == "Expired" || s.reason() == "Gone";
}
bool IsGone(const util::Status& s) {
  return s.reason() == "Gone";
}
bool IsTooManyRequests(const util::Status& s) {
  return s.reason() == "TooManyRequests";
}
bool IsServerTimeout(const util::Status& s) {
  return s.reason() == "ServerTimeout";
}
bool IsServiceUnavailable(const util::Status& s) {
  return s.reason() == "ServiceUnavailable";
}
bool IsTimeout(const util::Status& s) {
  return s.reason() == "Timeout";
}
bool IsUnauthorized(const util::Status& s) {
  return s.code() == util::Code::kUnauthenticated;
}
bool IsForbidden(const util::Status& s) {
  return s.code() == util::Code::kPermissionDenied;
}
bool IsMethodNotSupported(const util::Status& s) {
  return s.reason() == "MethodNotAllowed";
}
bool IsInternalError(const util::Status& s) {
  return s.reason() == "InternalError";
}

bool IsTooLargeResourceVersion(const util::Status& s) {
  return IsTimeout(s) && s.message().find("Too large resource version") != std::string::npos;
}

bool IsRetriable(const util::Status& s) {
  return s.code() == util::Code::kUnavailable || IsTimeout(s);
}

bool IsRetriableWatchError(const util::Status& s) {
  // Transport failures carry no reason; 429 and 503 are the server shedding load.
  return (s.code() == util::Code::kUnavailable && s.reason().empty()) || IsTooManyRequests(s) ||
         IsServiceUnavailable(s);
}

}  // namespace converge::client
