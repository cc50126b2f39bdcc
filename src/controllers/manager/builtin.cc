// The controllers the controller-manager runs. One line per controller.
#include "controllers/manager/controller_context.h"

namespace converge::controllers {

const std::vector<ControllerDescriptor>& BuiltinControllers() {
  static const std::vector<ControllerDescriptor> all = {
      // Controllers register here as they land (#6, #7).
  };
  return all;
}

}  // namespace converge::controllers
