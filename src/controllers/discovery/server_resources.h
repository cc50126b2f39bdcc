// What the API server serves, read through discovery (client-go's ServerPreferredResources):
// /api/v1 and, for each group in /apis, its preferred version. The garbage collector and the
// namespace controller use it so that resources added at run time (custom resources) are
// collected and emptied like built-in ones.
//
// Thread-safety: free functions; safe from any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/resource.h"
#include "client/rest_client.h"
#include "util/status.h"

namespace converge::controllers::discovery {

struct DiscoveryResult {
  // Top-level resources (subresources left out), each group at its preferred version. Only kind,
  // gvr, namespaced and verbs are filled in.
  std::vector<api::ResourceInfo> resources;
  // Group-versions whose resource list could not be read: "apps/v1" → error.
  std::map<std::string, std::string> failed_groups;

  // upstream's ErrGroupDiscoveryFailed text ("unable to retrieve the complete list of server
  // APIs: apps/v1: ..."); empty when every group was read.
  std::string FailureMessage() const;
};

// Reads discovery. Fails only when neither /api nor /apis can be read; a group that fails is
// listed in failed_groups and the rest are still returned.
util::StatusOr<DiscoveryResult> ServerPreferredResources(client::RestClient& client,
                                                         std::stop_token stop = {});

// Parses an APIResourceList document of `gv` (exposed for tests).
util::StatusOr<std::vector<api::ResourceInfo>> ParseResourceList(const api::GroupVersion& gv,
                                                                 std::string_view body);

}  // namespace converge::controllers::discovery
