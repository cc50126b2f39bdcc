// HttpServer: HTTP/1.1 with keep-alive (Boost.Beast, C++20 coroutines), turning each request
// into a transport-independent Request for the handler and streaming Responses (watch, logs)
// with chunked encoding.
//
// Threads: `io_threads` run the sockets, each its own io_context and the connections assigned to
// it as they are accepted. Handlers that may block run on a separate pool of `worker_threads`, so
// that nothing a handler waits for stalls I/O; a request the classifier marks `nonblocking` (a
// create: it never waits on anything but its commit) is handled on its connection's I/O thread.
// A create does not hold a thread while the store commits: the handler returns a pending
// Response (request.h), the commit's acknowledgement hands the rest of the request to the
// connection's I/O thread, and that thread answers. Streams are drained on the I/O threads; a
// stream that has nothing to send costs no thread.
//
// Over TLS, ALPN offers "h2" and "http/1.1": an HTTP/2 connection (http2_session.h) multiplexes
// streams that are served exactly like HTTP/1.1 requests.
//
// Every request goes through Serve: admission by FlowControl (429 with Retry-After when refused),
// then the handler on a worker, bounded by the request timeout (504 Timeout; the handler still
// runs to completion and keeps its seat until it does, as upstream's timeout filter). Long-running
// requests (watches, followed logs) skip both.
//
// Thread-safety: Start/Stop from one thread; the handler is called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "apiserver/flow_control.h"
#include "apiserver/request.h"
#include "util/status.h"

namespace converge::apiserver {

struct HttpServerOptions {
  std::string listen = "127.0.0.1:6443";  // HOST:PORT; port 0 picks a free one
  int io_threads = 2;
  int worker_threads = 64;
  // Bodies above this get 413 (upstream's limit is 3 MiB).
  size_t max_body_bytes = 3 * 1024 * 1024;
  // TLS: PEM files. Empty cert_file = plain HTTP.
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // when set, client certificates are requested and verified
  std::function<Response(Request&)> handler;
  // Offer HTTP/2 (ALPN "h2") on TLS connections.
  bool enable_http2 = true;
  // How each request is admitted. Null: no admission control and no request timeout.
  std::function<RequestClass(const Request&)> classify;
  // Seats and caps; used when `classify` is set. Seats are taken by requests that run on workers,
  // so `concurrency` should not exceed `worker_threads`.
  FlowControlOptions flow_control;
  // Requests (other than long-running ones) not answered in this time get 504 Timeout.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving. Fails if the address cannot be bound.
  util::Status Start();
  // Stops accepting, waits for the requests being handled (pending commits included; later
  // requests get 503), ends every connection and joins the threads.
  void Stop();
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace converge::apiserver
