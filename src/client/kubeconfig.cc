#include "client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/base64.h"

namespace converge::client {
namespace {

namespace fs = std::filesystem;

util::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return util::NotFound("cannot read " + path + ": no such file");
    return util::PermissionDenied("cannot read " + path);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// A scalar field of a map node; "" when absent or null.
util::StatusOr<std::string> ScalarField(const YAML::Node& node, const char* key,
                                        std::string_view where) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return std::string();
  if (!v.IsScalar()) {
    return util::InvalidArgument(std::string(where) + "." + key + ": expected a string");
  }
  return v.Scalar();
}

util::StatusOr<bool> BoolField(const YAML::Node& node, const char* key, std::string_view where) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return false;
  bool out = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
    return util::InvalidArgument(std::string(where) + "." + key + ": expected a boolean");
  }
  return out;
}

util::StatusOr<std::string> Base64Field(const YAML::Node& node, const char* key,
                                        std::string_view where) {
  CONVERGE_ASSIGN_OR_RETURN(std::string text, ScalarField(node, key, where));
  if (text.empty()) return text;
  std::string compact;
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') compact.push_back(c);
  }
  std::optional<std::string> decoded = util::Base64Decode(compact);
  if (!decoded) {
    return util::InvalidArgument(std::string(where) + "." + key + ": invalid base64");
  }
  return *decoded;
}

// Walks a named list (`clusters: [{name: x, cluster: {...}}]`), calling fn(name, body, where).
template <typename Fn>
util::Status ForEachNamed(const YAML::Node& root, const char* list, const char* body_key, Fn fn) {
  YAML::Node items = root[list];
  if (!items || items.IsNull()) return util::Status();
  if (!items.IsSequence()) return util::InvalidArgument(std::string(list) + ": expected a list");
  for (size_t i = 0; i < items.size(); ++i) {
    const YAML::Node& item = items[i];
    std::string where = std::string(list) + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) return util::InvalidArgument(where + ": expected a map");
    CONVERGE_ASSIGN_OR_RETURN(std::string name, ScalarField(item, "name", where));
    if (name.empty()) return util::InvalidArgument(where + ".name: required");
    YAML::Node body = item[body_key];
    if (body && !body.IsNull() && !body.IsMap()) {
      return util::InvalidArgument(where + "." + body_key + ": expected a map");
    }
    CONVERGE_RETURN_IF_ERROR(
        fn(name, body ? body : YAML::Node(YAML::NodeType::Map), where + "." + body_key));
  }
  return util::Status();
}

util::StatusOr<Kubeconfig> ParseImpl(std::string_view yaml, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return util::InvalidArgument(std::string("kubeconfig is not valid YAML: ") + e.what());
  }
  Kubeconfig kc;
  if (!root || root.IsNull()) return kc;  // an empty file is an empty config, as in kubectl
  if (!root.IsMap()) return util::InvalidArgument("kubeconfig: expected a map at the top");

  CONVERGE_RETURN_IF_ERROR(ForEachNamed(
      root, "clusters", "cluster",
      [&](const std::string& name, const YAML::Node& b, const std::string& where) -> util::Status {
        Kubeconfig::Cluster c;
        CONVERGE_ASSIGN_OR_RETURN(c.server, ScalarField(b, "server", where));
        CONVERGE_ASSIGN_OR_RETURN(std::string ca, ScalarField(b, "certificate-authority", where));
        c.certificate_authority = Resolve(base_dir, ca);
        CONVERGE_ASSIGN_OR_RETURN(c.certificate_authority_data,
                                  Base64Field(b, "certificate-authority-data", where));
        CONVERGE_ASSIGN_OR_RETURN(c.insecure_skip_tls_verify,
                                  BoolField(b, "insecure-skip-tls-verify", where));
        CONVERGE_ASSIGN_OR_RETURN(c.tls_server_name, ScalarField(b, "tls-server-name", where));
        kc.clusters.emplace(name, std::move(c));  // the first definition wins
        return util::Status();
      }));
  CONVERGE_RETURN_IF_ERROR(ForEachNamed(
      root, "users", "user",
      [&](const std::string& name, const YAML::Node& b, const std::string& where) -> util::Status {
        Kubeconfig::User u;
        CONVERGE_ASSIGN_OR_RETURN(std::string cert, ScalarField(b, "client-certificate", where));
        u.client_certificate = Resolve(base_dir, cert);
        CONVERGE_ASSIGN_OR_RETURN(u.client_certificate_data,
                                  Base64Field(b, "client-certificate-data", where));
        CONVERGE_ASSIGN_OR_RETURN(std::string key, ScalarField(b, "client-key", where));
        u.client_key = Resolve(base_dir, key);
        CONVERGE_ASSIGN_OR_RETURN(u.client_key_data, Base64Field(b, "client-key-data", where));
        CONVERGE_ASSIGN_OR_RETURN(u.token, ScalarField(b, "token", where));
        CONVERGE_ASSIGN_OR_RETURN(std::string token_file, ScalarField(b, "tokenFile", where));
        u.token_file = Resolve(base_dir, token_file);
        u.uses_plugin = (b["exec"] && !b["exec"].IsNull()) ||
                        (b["auth-provider"] && !b["auth-provider"].IsNull());
        kc.users.emplace(name, std::move(u));
        return util::Status();
      }));
  CONVERGE_RETURN_IF_ERROR(ForEachNamed(
      root, "contexts", "context",
      [&](const std::string& name, const YAML::Node& b, const std::string& where) -> util::Status {
        Kubeconfig::Context c;
        CONVERGE_ASSIGN_OR_RETURN(c.cluster, ScalarField(b, "cluster", where));
        CONVERGE_ASSIGN_OR_RETURN(c.user, ScalarField(b, "user", where));
        CONVERGE_ASSIGN_OR_RETURN(c.ns, ScalarField(b, "namespace", where));
        kc.contexts.emplace(name, std::move(c));
        return util::Status();
      }));
  CONVERGE_ASSIGN_OR_RETURN(kc.current_context, ScalarField(root, "current-context", "kubeconfig"));
  return kc;
}

// PEM from inline data or a file; data wins, as in client-go.
util::StatusOr<std::string> DataOrFile(const std::string& data, const std::string& file) {
  if (!data.empty()) return data;
  if (file.empty()) return std::string();
  return ReadWholeFile(file);
}

}  // namespace

util::StatusOr<Kubeconfig> Kubeconfig::Parse(std::string_view yaml, const std::string& base_dir) {
  try {
    return ParseImpl(yaml, base_dir);
  } catch (const YAML::Exception& e) {
    return util::InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

util::StatusOr<Kubeconfig> Kubeconfig::LoadFile(const std::string& path) {
  CONVERGE_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  std::string dir = fs::absolute(fs::path(path)).parent_path().string();
  util::StatusOr<Kubeconfig> kc = Parse(text, dir);
  if (!kc.ok()) return kc.status().WithContext(path);
  return kc;
}

util::StatusOr<Kubeconfig> Kubeconfig::LoadFiles(const std::vector<std::string>& paths) {
  Kubeconfig merged;
  bool any = false;
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    util::StatusOr<Kubeconfig> kc = LoadFile(path);
    if (!kc.ok()) {
      if (kc.status().code() == util::Code::kNotFound) continue;
      return kc.status();
    }
    any = true;
    merged.clusters.merge(kc->clusters);  // merge keeps existing keys: the first file wins
    merged.users.merge(kc->users);
    merged.contexts.merge(kc->contexts);
    if (merged.current_context.empty()) merged.current_context = kc->current_context;
  }
  if (!any) return util::NotFound("no kubeconfig file found");
  return merged;
}

util::StatusOr<RestConfig> Kubeconfig::ToRestConfig(std::string_view context) const {
  std::string name(context.empty() ? std::string_view(current_context) : context);
  if (name.empty()) return util::NotFound("kubeconfig has no current-context");
  auto ctx = contexts.find(name);
  if (ctx == contexts.end()) return util::NotFound("context \"" + name + "\" not found");
  auto cluster = clusters.find(ctx->second.cluster);
  if (cluster == clusters.end()) {
    return util::NotFound("cluster \"" + ctx->second.cluster + "\" of context \"" + name +
                          "\" not found");
  }
  const Cluster& c = cluster->second;
  if (c.server.empty()) {
    return util::InvalidArgument("cluster \"" + ctx->second.cluster + "\" has no server");
  }

  RestConfig config;
  config.server = c.server;
  config.ns = ctx->second.ns.empty() ? "default" : ctx->second.ns;
  config.tls.insecure_skip_verify = c.insecure_skip_tls_verify;
  config.tls.server_name = c.tls_server_name;
  CONVERGE_ASSIGN_OR_RETURN(config.tls.ca_pem,
                            DataOrFile(c.certificate_authority_data, c.certificate_authority));

  if (!ctx->second.user.empty()) {
    auto user = users.find(ctx->second.user);
    if (user == users.end()) {
      return util::NotFound("user \"" + ctx->second.user + "\" of context \"" + name +
                            "\" not found");
    }
    const User& u = user->second;
    CONVERGE_ASSIGN_OR_RETURN(config.tls.client_cert_pem,
                              DataOrFile(u.client_certificate_data, u.client_certificate));
    CONVERGE_ASSIGN_OR_RETURN(config.tls.client_key_pem,
                              DataOrFile(u.client_key_data, u.client_key));
    if (config.tls.client_cert_pem.empty() != config.tls.client_key_pem.empty()) {
      return util::InvalidArgument("user \"" + ctx->second.user +
                                   "\": client certificate and key must be given together");
    }
    config.bearer_token = u.token;
    config.bearer_token_file = u.token_file;
    if (u.uses_plugin && config.bearer_token.empty() && config.bearer_token_file.empty() &&
        config.tls.client_cert_pem.empty()) {
      return util::Unimplemented("user \"" + ctx->second.user +
                                 "\" authenticates through an exec or auth-provider plugin, "
                                 "which this client does not support");
    }
  }
  return config;
}

util::StatusOr<RestConfig> LoadRestConfig(const std::string& path, std::string_view context) {
  CONVERGE_ASSIGN_OR_RETURN(Kubeconfig kc, Kubeconfig::LoadFile(path));
  return kc.ToRestConfig(context);
}

util::StatusOr<RestConfig> DefaultRestConfig(std::string_view context) {
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::vector<std::string> paths;
    std::string_view rest(env);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      paths.emplace_back(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    CONVERGE_ASSIGN_OR_RETURN(Kubeconfig kc, Kubeconfig::LoadFiles(paths));
    return kc.ToRestConfig(context);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    std::string path = std::string(home) + "/.kube/config";
    std::error_code ec;
    if (fs::exists(path, ec)) return LoadRestConfig(path, context);
  }
  return InClusterConfig();
}

util::StatusOr<RestConfig> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return util::NotFound(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset");
  }
  RestConfig config;
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 literal
  config.server = "https://" + h + ":" + port;
  config.bearer_token_file = sa_dir + "/token";
  std::error_code ec;
  if (!fs::exists(config.bearer_token_file, ec)) {
    return util::NotFound("service-account token " + config.bearer_token_file + " not found");
  }
  if (util::StatusOr<std::string> ca = ReadWholeFile(sa_dir + "/ca.crt"); ca.ok()) {
    config.tls.ca_pem = *std::move(ca);
  }
  if (util::StatusOr<std::string> ns = ReadWholeFile(sa_dir + "/namespace"); ns.ok()) {
    std::string v = *ns;
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    if (!v.empty()) config.ns = v;
  }
  return config;
}

}  // namespace converge::client
