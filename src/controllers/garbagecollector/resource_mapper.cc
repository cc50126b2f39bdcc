#include "controllers/garbagecollector/resource_mapper.h"

namespace converge::controllers::garbagecollector {

void ResourceMapper::Add(const std::vector<api::ResourceInfo>& resources) {
  for (const api::ResourceInfo& r : resources) Add(r.gvr, r.kind, r.namespaced);
}

void ResourceMapper::Add(const api::GroupVersionResource& gvr, std::string_view kind,
                         bool namespaced) {
  std::lock_guard lock(mu_);
  ResourceMapping m{gvr, namespaced};
  exact_[{gvr.group, gvr.version, std::string(kind)}] = m;
  by_kind_.try_emplace({gvr.group, std::string(kind)}, m);
}

util::StatusOr<ResourceMapping> ResourceMapper::Resolve(std::string_view api_version,
                                                        std::string_view kind) const {
  api::GroupVersion gv = api::GroupVersion::Parse(api_version);
  std::lock_guard lock(mu_);
  auto it = exact_.find({gv.group, gv.version, std::string(kind)});
  if (it != exact_.end()) return it->second;
  auto k = by_kind_.find({gv.group, std::string(kind)});
  if (k != by_kind_.end()) return k->second;
  // Not NotFound: callers read NotFound as "the object is gone". Retry once the kind is known.
  return util::FailedPrecondition("unable to get REST mapping for " + std::string(api_version) +
                                  "/" + std::string(kind))
      .WithReason("NoResourceMatch");
}

}  // namespace converge::controllers::garbagecollector
