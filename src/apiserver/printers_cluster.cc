// Cluster-plumbing printers: RBAC, leases, admission webhooks, and the kinds upstream serves
// through its default convertor (roles, clusterroles, customresourcedefinitions).
#include <string>
#include <vector>

#include "apiserver/printers.h"

namespace converge::apiserver::printers {

namespace {

// RoleBinding and ClusterRoleBinding: "Kind/name" of the role, then the subjects by kind.
json::array BindingCells(const api::Object& b, TimePoint now) {
  const json::object& role_ref = Sub(b.doc(), "roleRef");
  std::vector<std::string> users, groups, service_accounts;
  for (const json::object* s : Objects(b.doc(), "subjects")) {
    std::string_view kind = Str(*s, "kind");
    if (kind == "ServiceAccount") {
      service_accounts.push_back(std::string(Str(*s, "namespace")) + "/" +
                                 std::string(Str(*s, "name")));
    } else if (kind == "User") {
      users.emplace_back(Str(*s, "name"));
    } else if (kind == "Group") {
      groups.emplace_back(Str(*s, "name"));
    }
  }
  json::array cells;
  cells.emplace_back(b.name());
  cells.emplace_back(std::string(Str(role_ref, "kind")) + "/" + std::string(Str(role_ref, "name")));
  cells.emplace_back(AgeOf(b, now));
  cells.emplace_back(Join(users, ", "));
  cells.emplace_back(Join(groups, ", "));
  cells.emplace_back(Join(service_accounts, ", "));
  return cells;
}

TablePrinter BindingPrinter() {
  return MakePrinter(
      {
          NameColumn(),
          Column("Role", "string", "The bound role, as Kind/name."),
          AgeColumn(),
          Column("Users", "string", "Users the binding grants the role to.", 1),
          Column("Groups", "string", "Groups the binding grants the role to.", 1),
          Column("ServiceAccounts", "string",
                 "Service accounts (namespace/name) it grants the role to.", 1),
      },
      BindingCells);
}

TablePrinter WebhookConfigurationPrinter() {
  return MakePrinter(
      {NameColumn(), Column("Webhooks", "integer", "Number of webhooks."), AgeColumn()},
      [](const api::Object& o, TimePoint now) {
        json::array cells;
        cells.emplace_back(o.name());
        cells.emplace_back(Count(o.doc(), "webhooks"));
        cells.emplace_back(AgeOf(o, now));
        return cells;
      });
}

}  // namespace

void AddClusterPrinters(PrinterMap& map) {
  map[{"rbac.authorization.k8s.io", "rolebindings"}] = BindingPrinter();
  map[{"rbac.authorization.k8s.io", "clusterrolebindings"}] = BindingPrinter();
  map[{"rbac.authorization.k8s.io", "roles"}] = DefaultConvertorPrinter();
  map[{"rbac.authorization.k8s.io", "clusterroles"}] = DefaultConvertorPrinter();
  map[{"apiextensions.k8s.io", "customresourcedefinitions"}] = DefaultConvertorPrinter();

  map[{"coordination.k8s.io", "leases"}] = MakePrinter(
      {NameColumn(), Column("Holder", "string", "The lease's current holder."), AgeColumn()},
      [](const api::Object& o, TimePoint now) {
        json::array cells;
        cells.emplace_back(o.name());
        cells.emplace_back(Str(Sub(o.doc(), "spec"), "holderIdentity"));
        cells.emplace_back(AgeOf(o, now));
        return cells;
      });

  map[{"admissionregistration.k8s.io", "mutatingwebhookconfigurations"}] =
      WebhookConfigurationPrinter();
  map[{"admissionregistration.k8s.io", "validatingwebhookconfigurations"}] =
      WebhookConfigurationPrinter();
}

}  // namespace converge::apiserver::printers
