// Kubeconfig: the YAML file kubectl reads (clusters, users, contexts, current-context), and how a
// context resolves to a RestConfig.
//
// Supported: cluster server, certificate-authority(-data), insecure-skip-tls-verify,
// tls-server-name; user client-certificate(-data), client-key(-data), token, tokenFile; context
// cluster, user, namespace; current-context. Relative file paths resolve against the directory of
// the kubeconfig file that names them (as client-go does). Credential plugins (exec,
// auth-provider) and basic auth are not supported: a user that has only those is an error rather
// than a silently anonymous client.
//
// Thread-safety: values; the free functions read files and the environment only.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "client/rest_config.h"
#include "util/status.h"

namespace converge::client {

struct Kubeconfig {
  struct Cluster {
    std::string server;
    std::string certificate_authority;       // absolute path, or empty
    std::string certificate_authority_data;  // decoded PEM, or empty
    bool insecure_skip_tls_verify = false;
    std::string tls_server_name;
  };
  struct User {
    std::string client_certificate;       // absolute path, or empty
    std::string client_certificate_data;  // decoded PEM
    std::string client_key;               // absolute path, or empty
    std::string client_key_data;          // decoded PEM
    std::string token;
    std::string token_file;  // absolute path, or empty
    // The user authenticates through an exec or auth-provider plugin (unsupported).
    bool uses_plugin = false;
  };
  struct Context {
    std::string cluster;
    std::string user;
    std::string ns;
  };

  std::map<std::string, Cluster> clusters;
  std::map<std::string, User> users;
  std::map<std::string, Context> contexts;
  std::string current_context;

  // Parses one kubeconfig document. `base_dir` resolves relative file paths. Errors are
  // InvalidArgument naming the offending field.
  static util::StatusOr<Kubeconfig> Parse(std::string_view yaml, const std::string& base_dir);
  // Reads and parses a file. NotFound when it does not exist.
  static util::StatusOr<Kubeconfig> LoadFile(const std::string& path);
  // Reads several files and merges them as kubectl merges $KUBECONFIG: for every cluster, user
  // and context name the first file that defines it wins, and so does the first non-empty
  // current-context. Missing files are skipped; it is an error only when none exists.
  static util::StatusOr<Kubeconfig> LoadFiles(const std::vector<std::string>& paths);

  // Resolves a context (empty: current-context) to a RestConfig, reading the files it refers to.
  // NotFound when the context, its cluster or its user is missing; InvalidArgument when the
  // cluster has no server or a certificate/key is given without its partner; Unimplemented when
  // the user authenticates only through a plugin.
  util::StatusOr<RestConfig> ToRestConfig(std::string_view context = {}) const;
};

// Loads `path` and resolves `context` (empty: current-context).
util::StatusOr<RestConfig> LoadRestConfig(const std::string& path, std::string_view context = {});

// The configuration a command-line tool uses by default, in kubectl's order: the files of
// $KUBECONFIG (colon-separated, merged) when set, else ~/.kube/config when it exists, else the
// in-cluster configuration.
util::StatusOr<RestConfig> DefaultRestConfig(std::string_view context = {});

// The configuration of a process running in a pod: KUBERNETES_SERVICE_HOST/PORT, the mounted
// service-account token (re-read as it rotates), CA and namespace under `sa_dir`. NotFound when
// not running in a cluster.
util::StatusOr<RestConfig> InClusterConfig(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

}  // namespace converge::client
