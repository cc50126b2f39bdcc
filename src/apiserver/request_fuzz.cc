// libFuzzer target for request parsing: bytes off the wire → an HTTP/1.1 request (Beast's parser
// with the server's limits) → Request (target, query, headers) → RequestInfo, and the admission
// class. Run: scripts/fuzz-smoke.sh request_fuzz
// No input may crash; what RequestInfo says must be consistent with the path it came from.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "apiserver/flow_control.h"
#include "apiserver/http_request.h"
#include "apiserver/request_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace converge::apiserver;
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.header_limit(64 * 1024);
  parser.body_limit(3 * 1024 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (!parser.is_header_done()) return 0;
  Request req = ToRequest(parser.get(), "127.0.0.1:1");
  // The target alone, as HTTP/2 delivers it in :path.
  Request h2;
  SetRequestTarget(parser.get().target(), &h2);
  if (h2.path != req.path || h2.query != req.query) std::abort();
  RequestInfo ri = ParseRequestInfo(req);
  if (ri.is_resource_request) {
    if (ri.resource.empty() || ri.version.empty()) std::abort();
    if (ri.api_prefix != "api" && ri.api_prefix != "apis") std::abort();
  }
  UserInfo user{"fuzz", "", {"system:authenticated"}, true};
  RequestClass rc = ClassifyRequest(req, ri, user);
  if (rc.long_running && !ri.is_resource_request) std::abort();
  return 0;
}
