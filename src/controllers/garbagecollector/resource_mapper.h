// ResourceMapper: apiVersion + kind → the resource that serves it and whether it is namespaced
// (upstream's RESTMapper, fed from the resource registry instead of discovery). Resources can be
// added while the collector runs (custom resources).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "api/resource.h"
#include "api/types.h"
#include "util/status.h"

namespace converge::controllers::garbagecollector {

struct ResourceMapping {
  api::GroupVersionResource gvr;
  bool namespaced = true;
};

class ResourceMapper {
 public:
  void Add(const std::vector<api::ResourceInfo>& resources);
  void Add(const api::GroupVersionResource& gvr, std::string_view kind, bool namespaced);

  // The exact group/version/kind when known; else the same group and kind in another version
  // (the server serves every version of a resource). FailedPrecondition (reason
  // NoResourceMatch) when the kind is unknown.
  util::StatusOr<ResourceMapping> Resolve(std::string_view api_version,
                                          std::string_view kind) const;

 private:
  mutable std::mutex mu_;
  // (group, version, kind) → mapping; guarded by mu_.
  std::map<std::tuple<std::string, std::string, std::string>, ResourceMapping> exact_;
  // (group, kind) → the first mapping added; guarded by mu_.
  std::map<std::pair<std::string, std::string>, ResourceMapping> by_kind_;
};

}  // namespace converge::controllers::garbagecollector
