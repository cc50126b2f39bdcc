// MakeStrategy: picks the per-kind strategy for built-in resources.
#include "apiserver/strategy.h"

namespace converge::apiserver {

std::shared_ptr<const Strategy> MakeStrategy(std::shared_ptr<const api::ResourceInfo> info) {
  // TODO(#3): per-kind strategies (defaults and validation) for every built-in kind.
  return std::make_shared<Strategy>(std::move(info));
}

}  // namespace converge::apiserver
