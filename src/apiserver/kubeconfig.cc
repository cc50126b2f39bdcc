#include "apiserver/kubeconfig.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/base64.h"

namespace converge::apiserver {

namespace {

// Double-quoted YAML scalar.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

util::Status WriteKubeconfig(const std::string& path, const KubeconfigOptions& o) {
  std::string y;
  y += "apiVersion: v1\nkind: Config\n";
  y += "clusters:\n- name: " + Quote(o.cluster_name) + "\n  cluster:\n";
  y += "    server: " + Quote(o.server) + "\n";
  if (!o.ca_pem.empty()) {
    y += "    certificate-authority-data: " + util::Base64Encode(o.ca_pem) + "\n";
  }
  y += "users:\n- name: " + Quote(o.user_name) + "\n  user:\n";
  bool any = false;
  if (!o.client_cert_pem.empty()) {
    y += "    client-certificate-data: " + util::Base64Encode(o.client_cert_pem) + "\n";
    y += "    client-key-data: " + util::Base64Encode(o.client_key_pem) + "\n";
    any = true;
  }
  if (!o.token.empty()) {
    y += "    token: " + Quote(o.token) + "\n";
    any = true;
  }
  if (!any) y.replace(y.size() - 1, 1, " {}\n");
  y += "contexts:\n- name: " + Quote(o.cluster_name) + "\n  context:\n";
  y += "    cluster: " + Quote(o.cluster_name) + "\n";
  y += "    user: " + Quote(o.user_name) + "\n";
  y += "    namespace: " + Quote(o.ns) + "\n";
  y += "current-context: " + Quote(o.cluster_name) + "\n";

  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return util::Unavailable("writing " + tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < y.size()) {
    ssize_t n = ::write(fd, y.data() + off, y.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return util::Unavailable("writing " + tmp + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return util::Unavailable("renaming " + tmp + ": " + std::strerror(errno));
  }
  return util::Status();
}

}  // namespace converge::apiserver
