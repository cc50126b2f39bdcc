// Http2Session: one HTTP/2 connection (RFC 9113, through nghttp2) on a TLS stream whose ALPN
// chose "h2". Every stream becomes a Request, served by the same function that serves HTTP/1.1
// requests, and its Response goes back on that stream: a plain body, or a streamed one (watch
// events, followed logs) pulled from the ResponseStream only while the peer's flow-control window
// has room — a client that stops reading stops the pulling, and the watcher's own bounded buffer
// decides what happens next (see ResponseStream).
//
// Streams are independent: a slow handler or a long watch never delays another stream. A stream
// the client resets (RST_STREAM), or every stream of a connection that closes or receives GOAWAY,
// releases its ResponseStream (a watch stops at once).
//
// Thread-safety: a session lives on its connection's I/O thread (its io_context has one);
// nghttp2 is only called there.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstdint>
#include <functional>

#include "apiserver/request.h"

namespace converge::apiserver {

using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

struct Http2SessionOptions {
  // Serves one request (on the session's I/O thread; it may suspend while a worker runs it).
  std::function<boost::asio::awaitable<Response>(Request)> serve;
  // Larger request bodies get 413.
  size_t max_body_bytes = 3 * 1024 * 1024;
  // Streams a client may open at once (SETTINGS_MAX_CONCURRENT_STREAMS; upstream's default for
  // --http2-max-streams-per-connection is 1000: every informer of a client shares one connection).
  uint32_t max_concurrent_streams = 1000;
};

// Serves the connection until the peer closes it, the protocol fails or the server stops.
// `base` holds what every request of the connection shares (remote address, client certificate).
boost::asio::awaitable<void> RunHttp2Session(TlsStream stream, Request base,
                                             Http2SessionOptions options);

}  // namespace converge::apiserver
