// RequestInfo: what a request path and method mean in API terms (upstream's RequestInfoFactory).
//
//   /api/v1/namespaces/default/pods/web/status  → update pods/status "web" in "default"
//   /apis/apps/v1/deployments?watch=true         → watch deployments across all namespaces
//   /healthz                                     → a non-resource request
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "apiserver/request.h"

namespace converge::apiserver {

struct RequestInfo {
  bool is_resource_request = false;
  // For resource requests: get, list, watch, create, update, patch, delete, deletecollection.
  // For others: the lower-case HTTP method.
  std::string verb;
  std::string api_prefix;  // "api" or "apis"
  std::string group;
  std::string version;
  std::string ns;
  std::string resource;
  std::string subresource;
  std::string name;
  std::string path;
  // Path segments after /api or /apis (e.g. {"apps", "v1", "deployments"}).
  std::vector<std::string> parts;
};

RequestInfo ParseRequestInfo(const Request& req);

}  // namespace converge::apiserver
