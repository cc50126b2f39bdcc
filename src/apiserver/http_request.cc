#include "apiserver/http_request.h"

#include <boost/url.hpp>
#include <cctype>

namespace converge::apiserver {

void SetRequestTarget(std::string_view target, Request* req) {
  auto parsed = boost::urls::parse_origin_form(target);
  if (parsed) {
    req->path = parsed->path();
    for (auto p : parsed->params()) {
      req->query.emplace_back(p.key, p.has_value ? p.value : std::string());
    }
  } else {
    req->path = std::string(target.substr(0, target.find('?')));
  }
}

Request ToRequest(boost::beast::http::request<boost::beast::http::string_body> in,
                  const std::string& remote) {
  Request req;
  req.method = std::string(in.method_string());
  req.remote_address = remote;
  SetRequestTarget(in.target(), &req);
  for (const auto& f : in) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  req.body = std::move(in.body());
  return req;
}

}  // namespace converge::apiserver
