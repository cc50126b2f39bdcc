// Transport: how the client library reaches an API server. One request in, one response out; or,
// for watches and followed logs, a response whose body arrives in pieces.
//
// Implementations: HttpTransport (HTTP/1.1 over TCP or TLS, http_transport.h), the in-process
// transport of the all-in-one server (src/server/inprocess_transport.h: it hands a Request to
// APIServer::Handle, so requests enter the same handler chain as HTTP), RateLimitedTransport
// (a decorator, rate_limited_transport.h) and the test doubles in fake_transport.h.
//
// Requests carry paths and query values unencoded; a transport that needs a wire form encodes
// them. That keeps the in-process transport free of any serialization beyond the JSON bodies.
//
// Errors: a Transport reports only failures to exchange a request (connect, TLS, timeout,
// cancellation) as a non-OK Status: kUnavailable for connection-level failures (retry later),
// kDeadlineExceeded for a passed timeout, kCancelled when the request's stop token fired. Any
// HTTP response, whatever its status code, is a successful exchange.
//
// Thread-safety: Transport implementations are safe for concurrent use. A ResponseStream is used
// by one reader thread; its stop token may fire from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace converge::client {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive lookup of the first header named `name`; "" when absent.
std::string_view FindHeader(const HeaderList& headers, std::string_view name);

struct HttpRequest {
  std::string method = "GET";  // upper case
  // Absolute path without the query and without percent-encoding ("/api/v1/namespaces/a/pods").
  std::string path;
  // Query parameters in order, unencoded.
  std::vector<std::pair<std::string, std::string>> query;
  // Header names in lower case (content-type, accept, ...).
  HeaderList headers;
  std::string body;
  // Deadline for the whole exchange (for a stream: until its last byte). Zero: the transport's
  // default (RestConfig::timeout for requests; none for streams).
  std::chrono::milliseconds timeout{0};
  // Cancels the request (or the stream) when stop is requested.
  std::stop_token stop;
};

struct HttpResponse {
  int status = 0;
  HeaderList headers;  // names in lower case
  std::string body;

  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }
};

// The body of a streamed response, read piece by piece.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;

  // Blocks until at least one chunk is available and appends it (possibly several) to `out`.
  // Returns true with chunks, false at the clean end of the body (nothing appended). Errors:
  // kCancelled (the request's stop token fired), kDeadlineExceeded, kUnavailable (connection
  // lost: the body ended early). Chunks are shared because servers fan the same bytes out to
  // every watcher; their boundaries mean nothing (an event may span chunks).
  virtual util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) = 0;
};

struct StreamedResponse {
  int status = 0;
  HeaderList headers;
  // Never null. For a non-2xx status it holds the error body (read it whole with ReadAll).
  std::unique_ptr<ResponseStream> body;

  std::string_view Header(std::string_view name) const { return FindHeader(headers, name); }
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends a request and returns its whole response.
  virtual util::StatusOr<HttpResponse> Do(HttpRequest request) = 0;

  // Sends a request and returns once the response status and headers are known; the body is
  // read from the returned stream. The stream lives on after the Transport call returns, but
  // not after the Transport itself is destroyed.
  virtual util::StatusOr<StreamedResponse> Stream(HttpRequest request) = 0;
};

// Reads a stream to its end and concatenates the chunks (error bodies, tests).
util::StatusOr<std::string> ReadAll(ResponseStream& stream);

// A stream over a body that is already complete (one chunk, then the end). For transports whose
// response was not streamed and for tests.
std::unique_ptr<ResponseStream> MakeStringStream(std::string body);

}  // namespace converge::client
