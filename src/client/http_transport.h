// HttpTransport: the Transport for a remote API server, HTTP/1.1 over TCP or TLS (Boost.Beast,
// OpenSSL).
//
// - Keep-alive: finished requests return their connection to a small pool; a request that finds
//   a pooled connection closed by the server (idle timeout, restart) is retried once on a fresh
//   connection when no byte of a response had arrived, so the server never saw it.
// - TLS: the server certificate is verified against TlsConfig::ca_pem (or the system store) and
//   the URL's host name or IP (or TlsConfig::server_name); a client certificate is presented when
//   configured. ALPN offers only http/1.1.
// - Authentication: a bearer token (RestConfig::bearer_token, or bearer_token_file re-read at
//   most once a minute) in the Authorization header.
// - Timeouts: HttpRequest::timeout, else RestConfig::timeout for requests; streams have no
//   default limit. Connecting is bounded by HttpTransportOptions::connect_timeout too.
// - Cancellation: HttpRequest::stop aborts a request or a stream read from any thread.
//
// The calling thread does the work: a connection is established asynchronously on an io_context
// of its own that the caller runs (resolve, connect and TLS handshake, bounded by the deadline),
// and is then read and written synchronously, each wait a poll(2) on the socket, the deadline and
// the connection's cancel eventfd: a request is one send, one poll and one receive. So the
// transport has no threads of its own and a blocked stream never holds up other requests.
// Streams get a connection of their own.
//
// Thread-safety: safe for concurrent use (see transport.h).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "client/rest_config.h"
#include "client/transport.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::client {

struct HttpTransportOptions {
  RestConfig config;
  // Idle keep-alive connections kept for reuse.
  int max_idle_connections = 16;
  // Upper bound for establishing a connection (TCP and TLS handshake), within the request's own
  // deadline. client-go's dialer uses 30 s.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
  // Time source for re-reading the token file. nullptr: util::RealClock().
  util::Clock* clock = nullptr;
};

class HttpTransport final : public Transport {
 public:
  // Validates the server URL and the TLS material (CA, certificate, key). InvalidArgument on a
  // malformed URL or unparsable PEM.
  static util::StatusOr<std::unique_ptr<HttpTransport>> New(HttpTransportOptions options);
  ~HttpTransport() override;

  util::StatusOr<HttpResponse> Do(HttpRequest request) override;
  util::StatusOr<StreamedResponse> Stream(HttpRequest request) override;

  // Connections opened so far (for tests of connection reuse and for metrics).
  int64_t connections_opened() const;

  struct Impl;

 private:
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  const std::unique_ptr<Impl> impl_;
};

}  // namespace converge::client
