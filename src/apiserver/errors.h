// ApiError: a Kubernetes meta/v1 Status failure, with upstream's reasons, codes and messages.
//
// Every error the API server returns is one of these, built by the factories below so that the
// wording matches what kubectl prints for a real cluster (kubectl rebuilds some messages from
// `details`, e.g. for 422 Invalid it uses details.kind, details.name and the causes).
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/types.h"
#include "util/status.h"

namespace converge::apiserver {

struct StatusCause {
  std::string reason;  // FieldValueInvalid, FieldValueRequired, FieldManagerConflict, ...
  std::string message;
  std::string field;
};

struct ApiError {
  int code = 500;
  std::string reason;  // NotFound, AlreadyExists, Conflict, Invalid, BadRequest, Expired, ...
  std::string message;
  // details; all optional
  std::string name;
  std::string group;
  std::string kind;  // the resource (plural) for most reasons; the Kind for Invalid
  std::string uid;
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;

  boost::json::object ToStatus() const;
  std::string ToJson() const { return boost::json::serialize(ToStatus()); }
};

// ApiOr<T>: a T or an ApiError (the API server's StatusOr).
template <typename T>
class [[nodiscard]] ApiOr {
 public:
  ApiOr(ApiError e) : v_(std::move(e)) {}   // NOLINT(runtime/explicit)
  ApiOr(T value) : v_(std::move(value)) {}  // NOLINT(runtime/explicit)
  bool ok() const { return std::holds_alternative<T>(v_); }
  const ApiError& error() const { return std::get<ApiError>(v_); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<ApiError, T> v_;
};

// A Success Status (returned by deletes of some kinds and by deletecollection).
boost::json::object SuccessStatus(const std::string& name, const api::GroupResource& gr,
                                  std::string_view uid = {});

ApiError NotFound(const api::GroupResource& gr, std::string_view name);
ApiError AlreadyExists(const api::GroupResource& gr, std::string_view name);
// The optimistic-concurrency failure: "the object has been modified; please apply your changes
// to the latest version and try again".
ApiError ConflictModified(const api::GroupResource& gr, std::string_view name);
ApiError Conflict(const api::GroupResource& gr, std::string_view name, std::string_view why);
ApiError Invalid(const api::GroupVersionKind& gvk, std::string_view name,
                 std::vector<StatusCause> causes);
ApiError BadRequest(std::string message);
ApiError Expired(std::string message);                                   // 410, reason Expired
ApiError Gone(std::string message);                                      // 410, reason Gone
ApiError MethodNotAllowed(std::string message);                          // 405
ApiError NotAcceptable(std::string message);                             // 406
ApiError UnsupportedMediaType(std::string message);                      // 415
ApiError RequestEntityTooLarge(std::string message);                     // 413
ApiError Timeout(std::string message, int retry_after_seconds = 0);      // 504, reason Timeout
ApiError TooManyRequests(std::string message, int retry_after_seconds);  // 429
ApiError Forbidden(const api::GroupResource& gr, std::string_view name, std::string message);
ApiError Unauthorized(std::string message);
ApiError InternalError(std::string message);
ApiError ServiceUnavailable(std::string message);
ApiError NotFoundPath();  // 404 for paths that name no resource ("the server could not find...")

// Maps a util::Status from a lower layer (store, decoding) to an ApiError.
ApiError FromStatus(const util::Status& s, const api::GroupResource& gr = {},
                    std::string_view name = {});

// A field-validation problem, worded as upstream's field.Error.
StatusCause FieldInvalid(std::string field, const boost::json::value& value, std::string detail);
StatusCause FieldInvalidString(std::string field, std::string_view value, std::string detail);
StatusCause FieldRequired(std::string field, std::string detail = {});
StatusCause FieldForbidden(std::string field, std::string detail);
StatusCause FieldNotSupported(std::string field, const boost::json::value& value,
                              const std::vector<std::string>& supported);
StatusCause FieldDuplicate(std::string field, const boost::json::value& value);
StatusCause FieldTooLong(std::string field, int64_t max);

}  // namespace converge::apiserver
