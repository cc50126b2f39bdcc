// MakeStrategy: picks the per-kind strategy for built-in resources.
#include "apiserver/strategy_kinds.h"

namespace converge::apiserver {

std::shared_ptr<const Strategy> MakeStrategy(std::shared_ptr<const api::ResourceInfo> info) {
  if (info->custom) {
    if (std::shared_ptr<const Strategy> s = MakeCustomResourceStrategy(info)) return s;
  } else {
    using Factory = std::shared_ptr<const Strategy> (*)(ResourceInfoPtr);
    static constexpr Factory kFactories[] = {
        MakeCoreStrategy,         MakeAppsStrategy,          MakeBatchStrategy,
        MakeCoordinationStrategy, MakeEventsStrategy,        MakePolicyStrategy,
        MakeRbacStrategy,         MakeApiextensionsStrategy, MakeAdmissionregistrationStrategy,
    };
    for (Factory f : kFactories) {
      if (std::shared_ptr<const Strategy> s = f(info)) return s;
    }
  }
  return std::make_shared<Strategy>(std::move(info));
}

}  // namespace converge::apiserver
