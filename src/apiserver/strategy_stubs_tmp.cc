// Groups whose strategies have not landed yet use the generic one.
#include "apiserver/strategy_kinds.h"

namespace converge::apiserver {

// clang-format off
std::shared_ptr<const Strategy> MakeCoordinationStrategy(ResourceInfoPtr) { return nullptr; }
std::shared_ptr<const Strategy> MakeEventsStrategy(ResourceInfoPtr) { return nullptr; }
std::shared_ptr<const Strategy> MakeRbacStrategy(ResourceInfoPtr) { return nullptr; }
std::shared_ptr<const Strategy> MakeApiextensionsStrategy(ResourceInfoPtr) { return nullptr; }
std::shared_ptr<const Strategy> MakeAdmissionregistrationStrategy(ResourceInfoPtr) { return nullptr; }
// clang-format on

}  // namespace converge::apiserver
