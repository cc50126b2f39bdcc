// The root CA certificate publisher (upstream's root-ca-cert-publisher in
// kube-controller-manager): every namespace has a ConfigMap `kube-root-ca.crt` whose `ca.crt` is
// the cluster's CA bundle, so that pods can verify the API server. The pods' projected
// `kube-api-access-*` volumes (admission_pod_defaults.h) name it. A ConfigMap that is deleted or
// whose data is changed is put back. The key is the namespace's name.
//
// DesiredRootCaConfigMap is the decision (pure); NewRootCaCertPublisher the I/O: namespaces and
// ConfigMaps through the shared informers, creates and updates through the controller's client.
//
// Thread-safety: DesiredRootCaConfigMap is a pure function; the controller is run by the
// controller-manager, one namespace at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "api/object.h"
#include "controllers/manager/controller_context.h"

namespace converge::controllers::rootcacert {

inline constexpr char kConfigMapName[] = "kube-root-ca.crt";
inline constexpr char kDataKey[] = "ca.crt";

// What to write in namespace `ns` (whose object is `ns_object`) given the ConfigMap there now
// (`current`, null when there is none): a ConfigMap to create (no resourceVersion) or to update
// (`current`'s resourceVersion, its other fields kept), or nothing when it is right already or
// the namespace is being deleted.
std::optional<api::Object> DesiredRootCaConfigMap(const api::Object& ns_object,
                                                  const api::Object* current,
                                                  const std::string& ca_pem);

// Needs ctx.root_ca_pem; without it (a cluster served without TLS) the controller publishes
// nothing and says so once.
util::StatusOr<std::unique_ptr<RunnableController>> NewRootCaCertPublisher(ControllerContext& ctx);

}  // namespace converge::controllers::rootcacert
