#include "client/rate_limited_transport.h"

namespace converge::client {

util::StatusOr<HttpResponse> RateLimitedTransport::Do(HttpRequest request) {
  if (!bucket_.Wait(request.stop)) {
    return util::Cancelled(request.method + " " + request.path + ": cancelled");
  }
  return inner_->Do(std::move(request));
}

util::StatusOr<StreamedResponse> RateLimitedTransport::Stream(HttpRequest request) {
  if (!bucket_.Wait(request.stop)) {
    return util::Cancelled(request.method + " " + request.path + ": cancelled");
  }
  return inner_->Stream(std::move(request));
}

}  // namespace converge::client
