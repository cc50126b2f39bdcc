// The ServiceAccount controller's decision (upstream's pkg/controller/serviceaccount): every active
// namespace has the ServiceAccounts it should (just `default`), recreated if deleted.
//
// Pure functions; thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/object.h"

namespace converge::controllers::serviceaccount {

// The ServiceAccounts `ns` lacks. A namespace being deleted gets none: the namespace controller
// is emptying it, and a new ServiceAccount would only hold that up.
std::vector<std::string> MissingServiceAccounts(
    const api::Object& ns, const std::vector<std::string>& wanted,
    const std::function<bool(const std::string& name)>& exists);

// The ServiceAccount to create.
api::Object NewServiceAccount(const std::string& ns, const std::string& name);

}  // namespace converge::controllers::serviceaccount
