#include "apiserver/request_info.h"

#include <algorithm>

namespace converge::apiserver {

namespace {

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string ToLower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsTrue(std::string_view v) {
  return v == "true" || v == "1";
}

}  // namespace

std::string_view Request::Query(std::string_view key, bool* present) const {
  for (const auto& [k, v] : query) {
    if (k == key) {
      if (present) *present = true;
      return v;
    }
  }
  if (present) *present = false;
  return {};
}

bool Request::HasQuery(std::string_view key) const {
  bool present = false;
  Query(key, &present);
  return present;
}

std::string_view Request::Header(std::string_view lower_case_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_case_name) return v;
  }
  return {};
}

RequestInfo ParseRequestInfo(const Request& req) {
  RequestInfo info;
  info.path = req.path;
  info.verb = ToLower(req.method);
  std::vector<std::string> parts = SplitPath(req.path);
  if (parts.empty() || (parts[0] != "api" && parts[0] != "apis")) return info;
  info.api_prefix = parts[0];
  parts.erase(parts.begin());
  info.parts = parts;
  size_t pos = 0;
  if (info.api_prefix == "apis") {
    if (parts.size() < 2) return info;  // /apis, /apis/<group>: discovery
    info.group = parts[0];
    info.version = parts[1];
    pos = 2;
  } else {
    if (parts.empty()) return info;  // /api: discovery
    info.version = parts[0];
    pos = 1;
  }
  if (pos >= parts.size()) return info;  // /api/v1, /apis/g/v: discovery
  info.is_resource_request = true;
  std::vector<std::string> rest(parts.begin() + static_cast<long>(pos), parts.end());

  bool deprecated_watch = false;
  if (rest[0] == "watch") {
    deprecated_watch = true;
    rest.erase(rest.begin());
    if (rest.empty()) {
      info.is_resource_request = false;
      return info;
    }
  }
  if (rest[0] == "namespaces" && rest.size() > 1) {
    info.ns = rest[1];
    // /namespaces/<ns>/status and /finalize are subresources of the namespace itself.
    if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  info.resource = rest[0];
  if (rest.size() > 1) info.name = rest[1];
  if (rest.size() > 2) info.subresource = rest[2];

  const std::string& m = req.method;
  if (deprecated_watch || ((m == "GET") && IsTrue(req.Query("watch")))) {
    info.verb = "watch";
  } else if (m == "GET" || m == "HEAD") {
    info.verb = info.name.empty() ? "list" : "get";
  } else if (m == "POST") {
    info.verb = "create";
  } else if (m == "PUT") {
    info.verb = "update";
  } else if (m == "PATCH") {
    info.verb = "patch";
  } else if (m == "DELETE") {
    info.verb = info.name.empty() ? "deletecollection" : "delete";
  }
  return info;
}

}  // namespace converge::apiserver
