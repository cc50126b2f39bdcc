// RateLimitedTransport: a Transport decorator that makes every request (and every stream) take a
// token from a TokenBucket first: RestConfig::qps/burst, off by default.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <memory>

#include "client/token_bucket.h"
#include "client/transport.h"

namespace converge::client {

class RateLimitedTransport final : public Transport {
 public:
  RateLimitedTransport(std::unique_ptr<Transport> inner, TokenBucketOptions options)
      : inner_(std::move(inner)), bucket_(options) {}

  util::StatusOr<HttpResponse> Do(HttpRequest request) override;
  util::StatusOr<StreamedResponse> Stream(HttpRequest request) override;

 private:
  const std::unique_ptr<Transport> inner_;
  TokenBucket bucket_;
};

}  // namespace converge::client
