// API errors on the client side: Kubernetes meta/v1 Status failures turned into util::Status, and
// the named predicates retry decisions are made with (k8s.io/apimachinery/pkg/api/errors).
//
// The code says what the caller should do; the Kubernetes reason is preserved in
// Status::reason() and the server's message in Status::message():
//
//   reason (HTTP)                      code                 predicate
//   NotFound (404)                     kNotFound            IsNotFound
//   AlreadyExists (409)                kAlreadyExists       IsAlreadyExists
//   Conflict (409)                     kAborted             IsConflict
//   Invalid (422)                      kInvalidArgument     IsInvalid
//   BadRequest (400)                   kInvalidArgument     IsBadRequest
//   Expired (410), Gone (410)          kOutOfRange          IsExpired (either), IsGone
//   TooManyRequests (429)              kUnavailable         IsTooManyRequests
//   ServerTimeout (500)                kUnavailable         IsServerTimeout
//   ServiceUnavailable (503)           kUnavailable         IsServiceUnavailable
//   Timeout (504)                      kDeadlineExceeded    IsTimeout
//   Unauthorized (401)                 kUnauthenticated     IsUnauthorized
//   Forbidden (403)                    kPermissionDenied    IsForbidden
//   MethodNotAllowed (405)             kUnimplemented       IsMethodNotSupported
//   NotAcceptable (406), UnsupportedMediaType (415), RequestEntityTooLarge (413)
//                                      kInvalidArgument
//   InternalError (500)                kInternal            IsInternalError
//
// A response without a Status body gets the reason its HTTP code implies, as client-go's
// NewGenericServerResponse does. Transport failures (connection refused, reset) are kUnavailable
// with an empty reason.
//
// Thread-safety: free functions over values.
#pragma once

#include <boost/json.hpp>

#include <string_view>

#include "util/status.h"

namespace converge::client {

// Builds the error for a non-2xx response. `body` may be a meta/v1 Status or anything else.
util::Status StatusFromResponse(int http_code, std::string_view body);

// Converts a decoded meta/v1 Status object (as carried by a watch ERROR event). `http_code` is
// used when the object carries no code.
util::Status StatusFromApiStatus(const boost::json::object& status, int http_code = 0);

// The code for a Kubernetes reason at an HTTP status (reason may be empty).
util::Code CodeForReason(std::string_view reason, int http_code);

bool IsNotFound(const util::Status& s);
bool IsAlreadyExists(const util::Status& s);
bool IsConflict(const util::Status& s);
bool IsInvalid(const util::Status& s);
bool IsBadRequest(const util::Status& s);
// The resource version is no longer available (410: reason Expired, or Gone from old servers).
bool IsExpired(const util::Status& s);
bool IsGone(const util::Status& s);
bool IsTooManyRequests(const util::Status& s);
bool IsServerTimeout(const util::Status& s);
bool IsServiceUnavailable(const util::Status& s);
bool IsTimeout(const util::Status& s);
bool IsUnauthorized(const util::Status& s);
bool IsForbidden(const util::Status& s);
bool IsMethodNotSupported(const util::Status& s);
bool IsInternalError(const util::Status& s);
// The server has not yet seen the requested resource version (504 "Too large resource
// version"): wait for it to catch up, or relist from a consistent read.
bool IsTooLargeResourceVersion(const util::Status& s);
// Worth retrying the same call after a delay: transport failures, 429, 503, ServerTimeout and
// 504 Timeout.
bool IsRetriable(const util::Status& s);
// A failed watch request that should be retried from the same resourceVersion after a backoff
// rather than answered with a relist: the server was unreachable or asked us to slow down
// (client-go retries "connection refused" and 429 this way).
bool IsRetriableWatchError(const util::Status& s);

}  // namespace converge::client
