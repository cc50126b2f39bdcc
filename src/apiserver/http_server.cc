#include "apiserver/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>

#include <array>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "apiserver/errors.h"
#include "apiserver/http2_session.h"
#include "apiserver/http_request.h"
#include "util/metrics.h"
#include "util/thread_name.h"

namespace converge::apiserver {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::use_awaitable;

namespace {

constexpr size_t kHeaderLimit = 64 * 1024;

// Takes the body out of `r`.
http::response<http::string_body> ToHttp(Response& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> out{static_cast<http::status>(r.status), version};
  out.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) out.set(k, v);
  out.body() = std::move(r.body);
  out.keep_alive(keep_alive);
  out.prepare_payload();
  return out;
}

Response ErrorResponse(const ApiError& e) {
  Response r;
  r.status = e.code;
  r.body = e.ToJson();
  if (e.retry_after_seconds > 0) {
    r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_seconds));
  }
  return r;
}

// What the TLS handshake established about the client.
struct PeerIdentity {
  bool has_cert = false;
  std::string cn;
  std::vector<std::string> orgs;
  std::string error;
};

// Reads the client certificate of a finished handshake. Certificates are requested but not
// enforced at the TLS layer (as upstream: RequestClientCert), so that an unknown CA becomes a
// 401 from authentication rather than a handshake failure.
PeerIdentity IdentityOf(SSL* ssl) {
  PeerIdentity id;
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return id;
  id.has_cert = true;
  long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    id.error = std::string("x509: ") + X509_verify_cert_error_string(verify);
  } else {
    X509_NAME* name = X509_get_subject_name(cert);
    for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
      X509_NAME_ENTRY* e = X509_NAME_get_entry(name, i);
      int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
      unsigned char* utf8 = nullptr;
      int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
      if (len < 0) continue;
      std::string value(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
      OPENSSL_free(utf8);
      if (nid == NID_commonName) id.cn = value;
      if (nid == NID_organizationName) id.orgs.push_back(value);
    }
  }
  X509_free(cert);
  return id;
}

// Requests and connections by protocol ("HTTP/1.1", "HTTP/2.0"): shows what clients negotiate.
struct ProtocolMetrics {
  util::Counter& h1_requests;
  util::Counter& h2_requests;
  util::Counter& h1_connections;
  util::Counter& h2_connections;
  util::Counter& on_io_thread;  // handlers run on the I/O thread (nonblocking requests)

  static ProtocolMetrics& Get() {
    static util::CounterFamily& requests =
        util::DefaultRegistry().AddCounter({"apiserver_requests_by_protocol_total",
                                            "Requests received, by HTTP protocol version.",
                                            {"protocol"}});
    static util::CounterFamily& connections =
        util::DefaultRegistry().AddCounter({"apiserver_connections_total",
                                            "Connections accepted, by negotiated HTTP protocol.",
                                            {"protocol"}});
    static util::Counter& on_io_thread =
        util::DefaultRegistry()
            .AddCounter(
                {"apiserver_requests_on_io_thread_total",
                 "Requests whose handler ran on the connection's I/O thread instead of a worker.",
                 {}})
            .WithLabelValues({});
    static ProtocolMetrics* m = new ProtocolMetrics{
        requests.WithLabelValues({"HTTP/1.1"}), requests.WithLabelValues({"HTTP/2.0"}),
        connections.WithLabelValues({"HTTP/1.1"}), connections.WithLabelValues({"HTTP/2.0"}),
        on_io_thread};
    return *m;
  }
};

// ALPN (RFC 7301): the server picks "h2" when the client offers it, else "http/1.1".
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void* arg) {
  const bool h2 = arg != nullptr;
  static const unsigned char kProtocols[] = "\x02h2\x08http/1.1";
  const unsigned char* server = h2 ? kProtocols : kProtocols + 3;
  unsigned int server_len = h2 ? sizeof(kProtocols) - 1 : sizeof(kProtocols) - 4;
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, server, server_len, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;  // no overlap: continue without ALPN (HTTP/1.1)
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

// One request on its way through admission and a worker. Lives until both the serving coroutine
// and the worker (or the pending response's continuation) are done with it; `result` and
// `abandoned` are touched only on the connection's I/O thread.
struct Call {
  Call(asio::any_io_executor ex, Request r) : executor(ex), timer(ex), req(std::move(r)) {
    req.cancelled = cancel.get_token();
  }
  asio::any_io_executor executor;
  asio::steady_timer timer;
  Request req;
  // Requested when the caller is answered 504: a handler that checks `req.cancelled` stops
  // (upstream cancels the request's context at its timeout).
  std::stop_source cancel;
  bool started = false;
  std::optional<Response> result;
  bool abandoned = false;  // the caller got 504 and went on
};

// Shared between a streaming response's writer and the callbacks that wake it.
struct StreamState {
  explicit StreamState(asio::any_io_executor ex) : timer(ex) {}
  asio::steady_timer timer;
  bool closed = false;  // the peer went away (set on the session's I/O thread)
};

}  // namespace

struct HttpServer::Impl {
  explicit Impl(HttpServerOptions o)
      : options(std::move(o)),
        // Exempt and long-running requests hold no seat: extra workers keep them from waiting
        // behind the seated ones.
        workers(static_cast<size_t>(std::max(1, options.worker_threads) + kUnseatedWorkers)) {
    if (options.classify) flow_control.emplace(options.flow_control);
  }

  static constexpr int kUnseatedWorkers = 4;

  HttpServerOptions options;
  // One context per I/O thread, each run by that thread alone: a connection lives on one of them
  // (assigned in turn as they are accepted), so its handlers never need a strand and a wake-up
  // never goes to a thread that has nothing of the connection's to do.
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  size_t next_context = 0;  // used by the accepting coroutine only
  asio::thread_pool workers;
  std::optional<tcp::acceptor> acceptor;
  std::optional<ssl::context> tls;
  std::vector<std::thread> threads;
  std::atomic<uint16_t> port{0};
  std::atomic<bool> stopped{false};

  std::optional<FlowControl> flow_control;

  // Requests given to the handler and not yet answered, pending commits included: Stop waits for
  // them while the I/O threads still run, because a pending response finishes on those threads
  // and uses the handler's objects until it does.
  std::mutex handlers_mu;
  std::condition_variable handlers_done;
  int handlers_running = 0;  // guarded by handlers_mu
  // Answers that a handler produced and an HTTP/1.1 session has not yet written: Stop lets them
  // reach their clients (for a bounded time) before the I/O threads end.
  int responses_owed = 0;  // guarded by handlers_mu

  // False once Stop began: the request is then not handed to the handler. Otherwise the request
  // counts as running until EndHandler, and its answer as owed until EndResponse.
  bool BeginHandler() {
    std::lock_guard lock(handlers_mu);
    if (stopped) return false;
    ++handlers_running;
    ++responses_owed;
    return true;
  }
  void EndHandler() {
    std::lock_guard lock(handlers_mu);
    if (--handlers_running == 0) handlers_done.notify_all();
  }
  void EndResponse() {
    std::lock_guard lock(handlers_mu);
    if (--responses_owed == 0) handlers_done.notify_all();
  }

  asio::awaitable<void> Accept();
  // Runs the handler on `call` and hands its answer (at once, or when a pending one completes) to
  // the connection's executor; then gives back the seat.
  void RunHandler(const std::shared_ptr<Call>& call, FlowControl::Ticket ticket, FlowControl* fc);
  // Admission, the handler on a worker and the request timeout (see the class comment). Sets
  // `*owed` when the handler ran: the caller then calls EndResponse once the answer is written
  // (or handed to a stream writer).
  asio::awaitable<Response> Serve(Request req, bool* owed);
  template <typename Stream>
  asio::awaitable<void> Session(Stream stream, std::string remote, PeerIdentity peer);
  template <typename Stream>
  asio::awaitable<bool> WriteStream(Stream& stream, Response& resp, unsigned version);
};

template <typename Stream>
asio::awaitable<bool> HttpServer::Impl::WriteStream(Stream& stream, Response& resp,
                                                    unsigned version) {
  http::response<http::empty_body> head{static_cast<http::status>(resp.status), version};
  head.set(http::field::content_type, resp.content_type);
  for (const auto& [k, v] : resp.headers) head.set(k, v);
  head.chunked(true);
  // The connection ends with the stream: a watch is a long-lived response and clients open a
  // new connection for the next one.
  head.keep_alive(false);
  http::response_serializer<http::empty_body> sr{head};
  beast::error_code ec;
  co_await http::async_write_header(stream, sr, asio::redirect_error(use_awaitable, ec));
  if (ec) {
    resp.stream->Close();
    co_return false;
  }

  auto ex = co_await asio::this_coro::executor;
  auto state = std::make_shared<StreamState>(ex);
  // Detect the client closing the connection while we wait for data.
  asio::co_spawn(
      ex,
      [&stream, state]() -> asio::awaitable<void> {
        char b[256];
        beast::error_code rec;
        while (!rec) {
          co_await beast::get_lowest_layer(stream).socket().async_read_some(
              asio::buffer(b), asio::redirect_error(use_awaitable, rec));
        }
        state->closed = true;
        state->timer.cancel();
      },
      asio::detached);

  const auto deadline = resp.stream_timeout.count() > 0
                            ? std::chrono::steady_clock::now() + resp.stream_timeout
                            : std::chrono::steady_clock::time_point::max();
  std::vector<std::shared_ptr<const std::string>> chunks;
  bool ok = true;
  while (!state->closed) {
    chunks.clear();
    std::weak_ptr<StreamState> weak = state;
    auto wake = [weak, ex] {
      asio::post(ex, [weak] {
        if (auto s = weak.lock()) s->timer.cancel();
      });
    };
    // Arm the timer before polling so that a wake between Poll and the wait is not lost.
    state->timer.expires_at(deadline);
    ResponseStream::PollResult r = resp.stream->Poll(&chunks, wake);
    if (r == ResponseStream::PollResult::kData) {
      std::vector<asio::const_buffer> bufs;
      bufs.reserve(chunks.size());
      size_t total = 0;
      for (const auto& c : chunks) {
        bufs.emplace_back(c->data(), c->size());
        total += c->size();
      }
      if (total == 0) continue;
      co_await asio::async_write(stream, http::make_chunk(bufs),
                                 asio::redirect_error(use_awaitable, ec));
      if (ec) {
        ok = false;
        break;
      }
      continue;
    }
    if (r == ResponseStream::PollResult::kEnd) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    co_await state->timer.async_wait(asio::redirect_error(use_awaitable, ec));
    if (!ec && std::chrono::steady_clock::now() >= deadline) break;  // timed out
  }
  resp.stream->Close();
  if (ok && !state->closed) {
    co_await asio::async_write(stream, http::make_chunk_last(),
                               asio::redirect_error(use_awaitable, ec));
  }
  co_return false;
}

void HttpServer::Impl::RunHandler(const std::shared_ptr<Call>& call, FlowControl::Ticket ticket,
                                  FlowControl* fc) {
  Response r = options.handler(call->req);
  // Runs once the response is final: where the handler ran, or on the connection's executor for
  // a pending one. On that executor `dispatch` runs it at once.
  auto finish = [this, call, ticket, fc](Response r) {
    if (fc && ticket != 0) fc->Finish(ticket);
    asio::dispatch(call->executor, [call, r = std::move(r)]() mutable {
      if (call->abandoned) {
        if (r.stream) r.stream->Close();
        return;
      }
      call->result = std::move(r);
      call->timer.cancel();
    });
    EndHandler();
  };
  if (r.pending) {
    auto pending = std::move(r.pending);
    pending(std::move(finish));
  } else {
    finish(std::move(r));
  }
}

asio::awaitable<Response> HttpServer::Impl::Serve(Request req, bool* owed) {
  RequestClass rc;
  rc.level = PriorityLevel::kExempt;
  rc.long_running = true;
  if (options.classify) rc = options.classify(req);
  auto ex = co_await asio::this_coro::executor;
  auto call = std::make_shared<Call>(ex, std::move(req));
  beast::error_code ec;

  // Admission: wait for a seat (at most a quarter of the request timeout, as upstream's queues).
  FlowControl::Ticket ticket = 0;
  if (flow_control && !rc.long_running) {
    call->timer.expires_after(options.request_timeout / 4);
    ticket = flow_control->Admit(rc, [call] {
      asio::post(call->executor, [call] {
        call->started = true;
        call->timer.cancel();
      });
    });
    if (ticket == 0) {
      co_return ErrorResponse(
          TooManyRequests("Too many requests, please try again later.", /*retry_after=*/1));
    }
    co_await call->timer.async_wait(asio::redirect_error(use_awaitable, ec));
    if (!call->started && flow_control->Cancel(ticket)) {
      co_return ErrorResponse(
          TooManyRequests("Too many requests, please try again later.", /*retry_after=*/1));
    }
    while (!call->started) {  // it got its seat as it timed out: the post is on its way
      call->timer.expires_at(asio::steady_timer::time_point::max());
      co_await call->timer.async_wait(asio::redirect_error(use_awaitable, ec));
    }
  }

  // A handler that may block (on a store commit, a webhook) runs on a worker; a nonblocking one
  // (a create: its commit completes through `resume`) runs here, on the connection's I/O thread,
  // which spares a hand-off to a worker and back for every such request.
  if (!rc.long_running)
    call->timer.expires_after(options.request_timeout);
  else
    call->timer.expires_at(asio::steady_timer::time_point::max());
  FlowControl* fc = flow_control ? &*flow_control : nullptr;
  if (!BeginHandler()) {
    if (ticket != 0) fc->Finish(ticket);
    co_return ErrorResponse(ServiceUnavailable("the server is shutting down"));
  }
  *owed = true;
  // A pending response continues on this connection's executor (the store's thread hands it
  // over).
  call->req.resume = [ex = call->executor](std::function<void()> continuation) {
    asio::post(ex, std::move(continuation));
  };
  if (rc.nonblocking) {
    ProtocolMetrics::Get().on_io_thread.Inc();
    RunHandler(call, ticket, fc);
  } else {
    asio::post(workers, [this, call, ticket, fc] {
      // The pool's threads are Asio's: each names itself on its first request.
      static thread_local const bool named = (util::SetThreadName("http-worker"), true);
      (void)named;
      RunHandler(call, ticket, fc);
    });
  }
  while (!call->result) {
    co_await call->timer.async_wait(asio::redirect_error(use_awaitable, ec));
    if (!ec && !call->result) {
      call->abandoned = true;
      call->cancel.request_stop();
      co_return ErrorResponse(
          Timeout("request did not complete within requested timeout - context deadline exceeded"));
    }
  }
  co_return std::move(*call->result);
}

// A lingering close: after answering early (413) the client may still be sending the body. Closing
// at once would reset the connection before it reads the answer, so read and discard what it
// sends, for a bounded time and byte count, until it closes its side.
template <typename Stream>
asio::awaitable<void> DrainBeforeClose(Stream& stream) {
  constexpr size_t kMaxDrainBytes = 64 << 20;
  constexpr auto kMaxDrainTime = std::chrono::seconds(5);
  auto& lowest = beast::get_lowest_layer(stream);
  lowest.expires_after(kMaxDrainTime);
  std::array<char, 64 * 1024> scratch;
  size_t drained = 0;
  beast::error_code ec;
  while (drained < kMaxDrainBytes) {
    size_t n = co_await stream.async_read_some(asio::buffer(scratch),
                                               asio::redirect_error(use_awaitable, ec));
    if (ec) break;
    drained += n;
  }
  lowest.expires_never();
}

template <typename Stream>
asio::awaitable<void> HttpServer::Impl::Session(Stream stream, std::string remote,
                                                PeerIdentity peer) {
  beast::flat_buffer buffer;
  beast::error_code ec;
  while (!stopped) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(options.max_body_bytes);
    co_await http::async_read(stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
    if (ec == http::error::body_limit) {
      Response r =
          ErrorResponse(RequestEntityTooLarge("the request body is larger than the limit of " +
                                              std::to_string(options.max_body_bytes) + " bytes"));
      auto out = ToHttp(r, 11, false);
      co_await http::async_write(stream, out, asio::redirect_error(use_awaitable, ec));
      if (!ec) co_await DrainBeforeClose(stream);
      break;
    }
    if (ec) break;
    http::request<http::string_body> in = parser.release();
    const unsigned version = in.version();
    const bool keep_alive = in.keep_alive();
    Request req = ToRequest(std::move(in), remote);
    req.has_client_cert = peer.has_cert;
    req.client_cert_cn = peer.cn;
    req.client_cert_orgs = peer.orgs;
    req.client_cert_error = peer.error;
    ProtocolMetrics::Get().h1_requests.Inc();
    bool owed = false;
    Response resp = co_await Serve(std::move(req), &owed);
    if (resp.stream) {
      if (owed) EndResponse();  // a stream ends when the server stops
      co_await WriteStream(stream, resp, version);
      break;
    }
    auto out = ToHttp(resp, version, keep_alive);
    co_await http::async_write(stream, out, asio::redirect_error(use_awaitable, ec));
    if (owed) EndResponse();
    if (ec || !keep_alive) break;
  }
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
}

asio::awaitable<void> HttpServer::Impl::Accept() {
  while (!stopped) {
    beast::error_code ec;
    asio::io_context& context = *contexts[next_context];
    next_context = (next_context + 1) % contexts.size();
    tcp::socket socket =
        co_await acceptor->async_accept(context, asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (stopped) co_return;
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    std::string remote;
    auto ep = socket.remote_endpoint(ec);
    if (!ec) remote = ep.address().to_string() + ":" + std::to_string(ep.port());
    auto ex = socket.get_executor();
    if (tls) {
      asio::co_spawn(
          ex,
          [this, s = std::move(socket), remote]() mutable -> asio::awaitable<void> {
            beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(s)), *tls);
            beast::error_code hec;
            co_await stream.async_handshake(ssl::stream_base::server,
                                            asio::redirect_error(use_awaitable, hec));
            if (hec) co_return;
            PeerIdentity peer = IdentityOf(stream.native_handle());
            const unsigned char* alpn = nullptr;
            unsigned int alpn_len = 0;
            SSL_get0_alpn_selected(stream.native_handle(), &alpn, &alpn_len);
            if (std::string_view(reinterpret_cast<const char*>(alpn), alpn_len) == "h2") {
              ProtocolMetrics::Get().h2_connections.Inc();
              Request base;
              base.remote_address = remote;
              base.has_client_cert = peer.has_cert;
              base.client_cert_cn = peer.cn;
              base.client_cert_orgs = peer.orgs;
              base.client_cert_error = peer.error;
              Http2SessionOptions h2;
              h2.max_body_bytes = options.max_body_bytes;
              h2.serve = [this](Request req) -> asio::awaitable<Response> {
                ProtocolMetrics::Get().h2_requests.Inc();
                // HTTP/2 frames are written by the session's own writer: the answer counts as
                // delivered once it is handed over.
                bool owed = false;
                Response resp = co_await Serve(std::move(req), &owed);
                if (owed) EndResponse();
                co_return resp;
              };
              co_await RunHttp2Session(std::move(stream), std::move(base), std::move(h2));
              co_return;
            }
            ProtocolMetrics::Get().h1_connections.Inc();
            co_await Session(std::move(stream), remote, std::move(peer));
          },
          asio::detached);
    } else {
      ProtocolMetrics::Get().h1_connections.Inc();
      asio::co_spawn(ex, Session(beast::tcp_stream(std::move(socket)), remote, PeerIdentity{}),
                     asio::detached);
    }
  }
}

HttpServer::HttpServer(HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() {
  Stop();
}

uint16_t HttpServer::port() const {
  return impl_->port.load();
}

util::Status HttpServer::Start() {
  const std::string& listen = impl_->options.listen;
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return util::InvalidArgument("--listen must be HOST:PORT");
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  uint16_t port = 0;
  std::string_view port_text = std::string_view(listen).substr(colon + 1);
  if (std::from_chars(port_text.data(), port_text.data() + port_text.size(), port).ec !=
      std::errc()) {
    return util::InvalidArgument("invalid port in --listen " + listen);
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) return util::InvalidArgument("invalid address in --listen " + listen);

  if (!impl_->options.cert_file.empty()) {
    impl_->tls.emplace(ssl::context::tls_server);
    impl_->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                            ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                            ssl::context::no_tlsv1_1);
    impl_->tls->use_certificate_chain_file(impl_->options.cert_file, ec);
    if (ec) return util::InvalidArgument("loading certificate: " + ec.message());
    impl_->tls->use_private_key_file(impl_->options.key_file, ssl::context::pem, ec);
    if (ec) return util::InvalidArgument("loading private key: " + ec.message());
    if (!impl_->options.client_ca_file.empty()) {
      impl_->tls->load_verify_file(impl_->options.client_ca_file, ec);
      if (ec) return util::InvalidArgument("loading client CA: " + ec.message());
      // Ask for a certificate, verify it, but let the handshake succeed either way:
      // authentication turns a bad certificate into 401 (see IdentityOf).
      impl_->tls->set_verify_mode(ssl::verify_peer);
      impl_->tls->set_verify_callback([](bool, ssl::verify_context&) { return true; });
    }
    SSL_CTX_set_alpn_select_cb(impl_->tls->native_handle(), &SelectAlpn,
                               impl_->options.enable_http2 ? impl_.get() : nullptr);
  }

  tcp::endpoint ep(address, port);
  const int io_threads = std::max(1, impl_->options.io_threads);
  for (int i = 0; i < io_threads; ++i) {
    impl_->contexts.push_back(std::make_unique<asio::io_context>(1));  // hint: one thread
  }
  asio::io_context& first = *impl_->contexts.front();
  impl_->acceptor.emplace(first);
  impl_->acceptor->open(ep.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(ep, ec);
  if (!ec) impl_->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return util::Unavailable("cannot listen on " + listen + ": " + ec.message());
  impl_->port = impl_->acceptor->local_endpoint().port();
  asio::co_spawn(first, impl_->Accept(), asio::detached);
  for (auto& context : impl_->contexts) {
    // Sessions keep their context busy; the guard keeps a context without connections running.
    impl_->threads.emplace_back([c = context.get()] {
      util::SetThreadName("http-io");
      auto guard = asio::make_work_guard(*c);
      c->run();
    });
  }
  return util::Status();
}

void HttpServer::Stop() {
  {
    std::lock_guard lock(impl_->handlers_mu);
    if (impl_->stopped.exchange(true)) return;
  }
  if (impl_->contexts.empty()) return;  // never started
  asio::post(*impl_->contexts.front(), [this] {
    beast::error_code ec;
    if (impl_->acceptor) impl_->acceptor->close(ec);
  });
  {
    // Handlers must finish (they use objects their owner frees after Stop); answers already made
    // get a bounded time to be written, since a client that stopped reading would hold Stop.
    constexpr auto kAnswerGrace = std::chrono::seconds(5);
    std::unique_lock lock(impl_->handlers_mu);
    impl_->handlers_done.wait(lock, [this] { return impl_->handlers_running == 0; });
    impl_->handlers_done.wait_for(lock, kAnswerGrace,
                                  [this] { return impl_->responses_owed == 0; });
  }
  for (auto& context : impl_->contexts) context->stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  impl_->workers.join();
}

}  // namespace converge::apiserver
