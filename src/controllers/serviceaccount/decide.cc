#include "controllers/serviceaccount/decide.h"

#include "controllers/common/namespaces.h"

namespace converge::controllers::serviceaccount {

std::vector<std::string> MissingServiceAccounts(
    const api::Object& ns, const std::vector<std::string>& wanted,
    const std::function<bool(const std::string& name)>& exists) {
  std::vector<std::string> missing;
  if (NamespaceTerminating(ns)) return missing;
  for (const auto& name : wanted) {
    if (!exists(name)) missing.push_back(name);
  }
  return missing;
}

api::Object NewServiceAccount(const std::string& ns, const std::string& name) {
  api::Object sa;
  sa.SetGvk({"", "v1", "ServiceAccount"});
  sa.set_namespace(ns);
  sa.set_name(name);
  return sa;
}

}  // namespace converge::controllers::serviceaccount
