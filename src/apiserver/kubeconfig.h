// Writes the kubeconfig file a server hands to its users (DIR/kubeconfig).
#pragma once

#include <string>

#include "util/status.h"

namespace converge::apiserver {

struct KubeconfigOptions {
  std::string server;  // https://127.0.0.1:6443 or http://...
  std::string cluster_name = "converge";
  std::string user_name = "admin";
  std::string ca_pem;           // embedded as certificate-authority-data when set
  std::string client_cert_pem;  // client-certificate-data
  std::string client_key_pem;   // client-key-data
  std::string token;
  std::string ns = "default";
};

// Writes atomically (temporary file + rename) with mode 0600: it may hold credentials.
util::Status WriteKubeconfig(const std::string& path, const KubeconfigOptions& options);

}  // namespace converge::apiserver
