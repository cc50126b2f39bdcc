// The Service default/kubernetes and its Endpoints, as kube-apiserver keeps them: a client in a
// pod finds the API server at the first address of the service range (10.96.0.1), port 443
// ("https"), and the Endpoints of that Service name the API server's own address and port.
//
// ReconcileKubernetesService creates both, or brings their ports and addresses up to date (the
// port changes from start to start when the server listens on port 0). It is called once the
// server listens. Should another Service already hold the first address (data written before
// this existed), the Service gets the next free one.
#pragma once

#include <string>

#include "util/status.h"

namespace converge::apiserver {

class APIServer;

util::Status ReconcileKubernetesService(APIServer& server, const std::string& ip, int port);

}  // namespace converge::apiserver
