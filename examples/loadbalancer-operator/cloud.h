// CloudApi: what the operator needs from a cloud's load-balancer API. Implementations:
// HttpCloud (http_cloud.h, the `converge cloud-sim` API) and FakeCloud (fake_cloud.h, tests).
//
// Errors say what the caller should do:
//   kDeadlineExceeded  no answer in time: the call MAY HAVE BEEN PERFORMED. Never retry a create
//                      blindly; look the load balancer up (ListByTag) first.
//   kUnavailable       the cloud refused or failed the call (5xx, connection refused): retry
//                      later with backoff. (A 5xx may still hide a performed call on a real
//                      cloud; the operator treats both the same way: look up, then act.)
//   kNotFound          the load balancer does not exist (Delete, UpdatePorts).
//   kInvalidArgument   the request is wrong; retrying the same call cannot help.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <stop_token>
#include <string>
#include <vector>

#include "loadbalancer.h"
#include "util/status.h"

namespace lboperator {

struct CreateRequest {
  std::string name;
  Tags tags;
  std::vector<Port> ports;
  // The cloud returns the load balancer an earlier create with this key made (if it still
  // exists) instead of making another.
  std::string idempotency_key;
  friend bool operator==(const CreateRequest&, const CreateRequest&) = default;
};

class CloudApi {
 public:
  virtual ~CloudApi() = default;
  virtual util::StatusOr<ExternalLoadBalancer> Create(const CreateRequest& request,
                                                      std::stop_token stop) = 0;
  // Every load balancer tagged key=value, oldest first.
  virtual util::StatusOr<std::vector<ExternalLoadBalancer>> ListByTag(const std::string& key,
                                                                      const std::string& value,
                                                                      std::stop_token stop) = 0;
  virtual util::StatusOr<ExternalLoadBalancer> UpdatePorts(const std::string& id,
                                                           const std::vector<Port>& ports,
                                                           std::stop_token stop) = 0;
  virtual util::Status Delete(const std::string& id, std::stop_token stop) = 0;
};

// The cloud did not do (or did not confirm) what was asked, for reasons that pass: retry later.
inline bool IsCloudUnavailable(const util::Status& s) {
  return s.code() == util::Code::kUnavailable || s.code() == util::Code::kDeadlineExceeded;
}

}  // namespace lboperator
