// The controllers the controller-manager runs. One line per controller.
#include "controllers/deployment/deployment_controller.h"
#include "controllers/disruption/disruption_controller.h"
#include "controllers/endpoint/endpoints_controller.h"
#include "controllers/garbagecollector/garbage_collector.h"
#include "controllers/job/job_controller.h"
#include "controllers/manager/controller_context.h"
#include "controllers/namespace/namespace_controller.h"
#include "controllers/nodelifecycle/controller.h"
#include "controllers/replicaset/replicaset_controller.h"
#include "controllers/rootcacert/publisher.h"
#include "controllers/serviceaccount/serviceaccount_controller.h"
#include "controllers/ttlafterfinished/ttl_after_finished.h"

namespace converge::controllers {

const std::vector<ControllerDescriptor>& BuiltinControllers() {
  static const std::vector<ControllerDescriptor> all = {
      // Controllers register here as they land (#6, #7).
      {"replicaset", replicaset::NewReplicaSetController, "replicaset-controller"},
      {"serviceaccount", serviceaccount::NewServiceAccountController, "service-account-controller"},
      {"deployment", deployment::NewDeploymentController, "deployment-controller"},
      {"garbagecollector", garbagecollector::InitGarbageCollector, "generic-garbage-collector"},
      {"namespace", namespace_::InitNamespaceController, "namespace-controller"},
      {"job", job::InitJobController, "job-controller"},
      {"ttl-after-finished", ttlafterfinished::InitTtlAfterFinished,
       "ttl-after-finished-controller"},
      nodelifecycle::Descriptor(),
      {"disruption", disruption::NewDisruptionController, "disruption-controller"},
      {"endpoint", endpoint::NewEndpointsController, "endpoint-controller"},
      {"root-ca-cert-publisher", rootcacert::NewRootCaCertPublisher, "root-ca-cert-publisher"},
  };
  return all;
}

}  // namespace converge::controllers
