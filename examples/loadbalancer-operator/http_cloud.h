// HttpCloud: CloudApi over the HTTP/JSON API of `converge cloud-sim` (see
// src/cloudsim/cloud_sim.h in the Converge tree for the API), through the client library's
// Transport — so the same keep-alive, timeouts and cancellation as API calls.
//
// Every call is bounded by `timeout`: a call the cloud performed but did not answer in time is
// reported as kDeadlineExceeded (see cloud.h for what callers do with it).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <memory>

#include "client/transport.h"
#include "cloud.h"

namespace lboperator {

namespace client = converge::client;

struct HttpCloudOptions {
  std::shared_ptr<client::Transport> transport;  // required; its base URL is the cloud's
  // 2 s: the simulated cloud answers in milliseconds when healthy; a call slower than this is
  // treated as lost (outcome unknown) rather than holding a worker.
  std::chrono::milliseconds timeout{std::chrono::seconds(2)};
};

class HttpCloud final : public CloudApi {
 public:
  explicit HttpCloud(HttpCloudOptions options) : options_(std::move(options)) {}

  // An HttpCloud for a base URL ("http://127.0.0.1:8790").
  static util::StatusOr<std::unique_ptr<HttpCloud>> ForUrl(const std::string& url,
                                                           std::chrono::milliseconds timeout);

  util::StatusOr<ExternalLoadBalancer> Create(const CreateRequest& request,
                                              std::stop_token stop) override;
  util::StatusOr<std::vector<ExternalLoadBalancer>> ListByTag(const std::string& key,
                                                              const std::string& value,
                                                              std::stop_token stop) override;
  util::StatusOr<ExternalLoadBalancer> UpdatePorts(const std::string& id,
                                                   const std::vector<Port>& ports,
                                                   std::stop_token stop) override;
  util::Status Delete(const std::string& id, std::stop_token stop) override;

 private:
  util::StatusOr<client::HttpResponse> Call(client::HttpRequest request, std::stop_token stop);

  const HttpCloudOptions options_;
};

// Parsing the cloud's JSON (exposed for tests).
util::StatusOr<ExternalLoadBalancer> ParseExternalLoadBalancer(const boost::json::value& v);

}  // namespace lboperator
