// ResourceInfo::Subresource is declared in api/resource.h, but its definition (api/resource.cc)
// has not landed on main yet. The strategy tests need it, so this test binary carries a weak
// stand-in with the same meaning; the real definition wins once it exists.
// TODO(#3): delete when api/resource.cc lands.
#include "api/resource.h"

namespace converge::api {

__attribute__((weak)) const SubresourceInfo* ResourceInfo::Subresource(
    std::string_view name) const {
  for (const SubresourceInfo& s : subresources) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace converge::api
