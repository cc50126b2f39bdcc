// HttpServer: HTTP/1.1 with keep-alive (Boost.Beast, C++20 coroutines), turning each request
// into a transport-independent Request for the handler and streaming Responses (watch, logs)
// with chunked encoding.
//
// Threads: `io_threads` run the sockets; handlers, which may block on a store commit, run on a
// separate pool of `worker_threads` so that an fsync never stalls I/O. Streams are drained on
// the I/O threads; a stream that has nothing to send costs no thread.
//
// Thread-safety: Start/Stop from one thread; the handler is called concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

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
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving. Fails if the address cannot be bound.
  util::Status Start();
  // Stops accepting, ends every connection and joins the threads.
  void Stop();
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace converge::apiserver
