// AdmissionReview (admission.k8s.io/v1): what the API server sends a webhook and what it makes of
// the answer, including upstream's exact error wording (k8s.io/apiserver/pkg/admission/plugin/
// webhook/errors and .../request.VerifyAdmissionResponse).
//
//   denial     admission webhook "<name>" denied the request: <status.message or status.reason>
//              (or "... denied the request without explanation"); code from the webhook's status,
//              400 when it gave none below 400; reason and details as the webhook sent them.
//   failure    500 InternalError "Internal error occurred: failed calling webhook "<name>": <why>"
//              (the call failed, timed out, or the answer is malformed). Only these honour
//              failurePolicy: Ignore.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "apiserver/admission.h"
#include "apiserver/errors.h"
#include "apiserver/webhook_config.h"

namespace converge::apiserver {

// The AdmissionReview request body for `attrs`, identified by `uid`.
std::string BuildAdmissionReview(const AdmissionAttributes& attrs, const std::string& uid);

// A webhook's verdict, verified against the request.
struct AdmissionVerdict {
  bool allowed = false;
  std::optional<boost::json::object> status;  // response.status
  std::optional<boost::json::value> patch;    // decoded JSON patch (mutating webhooks only)
  std::vector<std::string> warnings;
};

// Parses and verifies a webhook's HTTP answer. An error is a message for a call failure (see
// WebhookCallFailed): "received invalid webhook response: ..." and the like.
util::StatusOr<AdmissionVerdict> ParseAdmissionResponse(int http_status, std::string_view body,
                                                        const std::string& uid, bool mutating);

// The request was refused by the webhook.
ApiError WebhookDenied(const std::string& webhook,
                       const std::optional<boost::json::object>& status);
// The webhook could not be called or answered nonsense (`reason` is the detail).
ApiError WebhookCallFailed(const std::string& webhook, const std::string& reason);
// A dry-run request met a webhook that may have side effects (400).
ApiError WebhookNoDryRun(const std::string& webhook);

}  // namespace converge::apiserver
