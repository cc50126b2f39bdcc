#include "apiserver/authn.h"

#include <sstream>

namespace converge::apiserver {

namespace {

UserInfo WithAuthenticated(UserInfo u) {
  u.authenticated = true;
  bool has = false;
  for (const auto& g : u.groups) has |= g == "system:authenticated";
  if (!has && u.name != "system:anonymous") u.groups.push_back("system:authenticated");
  return u;
}

std::string Trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r");
  size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Splits one CSV line, honouring double quotes.
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(Trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(Trim(cur));
  return out;
}

}  // namespace

bool IsPublicPath(std::string_view path) {
  if (path == "/healthz" || path == "/livez" || path == "/readyz" || path == "/version" ||
      path == "/version/" || path == "/api" || path == "/api/" || path == "/apis" ||
      path == "/apis/" || path.starts_with("/healthz/") || path.starts_with("/livez/") ||
      path.starts_with("/readyz/")) {
    return true;
  }
  // Discovery documents: /api/v1, /apis/<group>, /apis/<group>/<version>.
  auto count = [](std::string_view p) {
    size_t n = 0;
    for (char c : p) n += c == '/';
    return n;
  };
  std::string_view p = path;
  if (p.ends_with('/')) p.remove_suffix(1);
  if (p.starts_with("/api/")) return count(p) == 2;
  if (p.starts_with("/apis/")) return count(p) <= 3;
  return false;
}

util::StatusOr<std::map<std::string, UserInfo, std::less<>>> ParseTokenFile(std::string_view text) {
  std::map<std::string, UserInfo, std::less<>> out;
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = CsvFields(line);
    if (f.size() < 3 || f[0].empty() || f[1].empty()) {
      return util::InvalidArgument("token file line " + std::to_string(n) +
                                   ": want token,user,uid[,\"groups\"]");
    }
    UserInfo u;
    u.name = f[1];
    u.uid = f[2];
    // The fourth column is one quoted, comma-separated list of groups.
    for (size_t i = 3; i < f.size(); ++i) {
      std::istringstream groups(f[i]);
      std::string g;
      while (std::getline(groups, g, ',')) {
        g = Trim(g);
        if (!g.empty()) u.groups.push_back(g);
      }
    }
    out[f[0]] = WithAuthenticated(std::move(u));
  }
  return out;
}

ApiOr<UserInfo> Authenticator::Authenticate(const Request& req) const {
  if (req.in_process || req.preauthenticated) return req.user;
  if (req.has_client_cert) {
    if (!req.client_cert_error.empty()) {
      return Unauthorized("Unauthorized: verifying certificate failed: " + req.client_cert_error);
    }
    if (!req.client_cert_cn.empty()) {
      UserInfo u;
      u.name = req.client_cert_cn;
      u.groups = req.client_cert_orgs;
      return WithAuthenticated(std::move(u));
    }
  }
  std::string_view auth = req.Header("authorization");
  if (!auth.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    if (!auth.starts_with(kBearer)) return Unauthorized("Unauthorized");
    std::string_view token = auth.substr(kBearer.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    if (auto it = options_.static_tokens.find(token); it != options_.static_tokens.end()) {
      return it->second;
    }
    if (options_.token_verifier) {
      if (auto r = options_.token_verifier(token)) {
        if (!r->ok()) return r->error();
        return WithAuthenticated(**r);
      }
    }
    return Unauthorized("Unauthorized");
  }
  if (!options_.anonymous) return Unauthorized("Unauthorized");
  UserInfo anon;
  anon.name = "system:anonymous";
  anon.groups = {"system:unauthenticated"};
  return anon;
}

}  // namespace converge::apiserver
