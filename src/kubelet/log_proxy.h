// The API server's side of `kubectl logs` when kubelets run in other processes: a LogProvider
// for APIServer::SetLogProvider that checks the request as upstream's API server does
// (ResolveLogRequest), finds the pod's node, and proxies to that kubelet's
// GET /containerLogs/<ns>/<pod>/<container> at the node's InternalIP (else Hostname) and
// status.daemonEndpoints.kubeletEndpoint.Port — upstream's LogLocation + LocationStreamer.
// Followed logs are streamed through as they arrive; kubelet errors (400 "waiting to start",
// "previous terminated container ... not found") are passed on unchanged.
//
// Installing it in `converge apiserver`:
//   server.SetLogProvider(kubelet::NewKubeletLogProxy(&server));
// and in the all-in-one server, in front of the in-process kubelet:
//   server.SetLogProvider(kubelet::LocalOrProxyLogProvider(&kubelet, &server));
//
// Thread-safety: the provider may be called concurrently.
#pragma once

#include <chrono>

#include "apiserver/server.h"

namespace converge::kubelet {

class Kubelet;

struct KubeletLogProxyOptions {
  // Connecting to the kubelet; reading a non-followed log.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
};

// `server` must outlive the provider.
apiserver::APIServer::LogProvider NewKubeletLogProxy(apiserver::APIServer* server,
                                                     KubeletLogProxyOptions options = {});

// Serves pods of `local`'s nodes in-process and proxies the others.
apiserver::APIServer::LogProvider LocalOrProxyLogProvider(Kubelet* local,
                                                          apiserver::APIServer* server,
                                                          KubeletLogProxyOptions options = {});

}  // namespace converge::kubelet
