// Turning what HTTP/1.1 and HTTP/2 receive into a Request: the request target (path and query,
// percent-decoded) and the header fields (names lower-cased).
//
// Thread-safety: free functions without shared state.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <string_view>

#include "apiserver/request.h"

namespace converge::apiserver {

// Sets req->path and req->query from an origin-form target ("/api/v1/pods?watch=1"). A target
// that does not parse keeps its raw path (up to '?') and no query.
void SetRequestTarget(std::string_view target, Request* req);

// An HTTP/1.1 request as parsed by Beast; its body is moved, not copied.
Request ToRequest(boost::beast::http::request<boost::beast::http::string_body> in,
                  const std::string& remote);

}  // namespace converge::apiserver
