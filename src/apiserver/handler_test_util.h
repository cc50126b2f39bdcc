// What handler tests share: a request to APIServer::Handle from an in-process cluster admin.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "apiserver/request.h"

namespace converge::apiserver {

// A request from an in-process cluster admin (system:masters). `target` is a path with an
// optional query ("/api/v1/pods?limit=1&watch=true"), taken as it is (no percent-decoding).
inline Request AdminRequest(std::string method, std::string_view target, std::string body = "",
                            std::string content_type = "application/json") {
  Request req;
  req.method = std::move(method);
  const size_t q = target.find('?');
  req.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view rest = target.substr(q + 1);
    size_t start = 0;
    while (start <= rest.size()) {
      size_t amp = rest.find('&', start);
      if (amp == std::string_view::npos) amp = rest.size();
      std::string_view kv = rest.substr(start, amp - start);
      const size_t eq = kv.find('=');
      req.query.emplace_back(std::string(kv.substr(0, eq)),
                             eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
      start = amp + 1;
    }
  }
  req.headers = {{"content-type", std::move(content_type)}};
  req.body = std::move(body);
  req.in_process = true;
  req.user.name = "system:admin";
  req.user.groups = {"system:masters", "system:authenticated"};
  req.user.authenticated = true;
  return req;
}

}  // namespace converge::apiserver
