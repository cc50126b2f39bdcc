// The Beast/Asio code of the client lives in this one translation unit (each costs ~20 s to
// compile).
#include "client/http_transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url.hpp>

#include <atomic>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

namespace converge::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

// TCP keep-alive probes so that a watch on a dead peer (partition, power loss) fails within about
// a minute instead of the kernel's two hours. Go's net.Dialer uses 15 s probes; we are a little
// more patient with idle watches.
constexpr int kKeepAliveIdleSeconds = 30;
constexpr int kKeepAliveIntervalSeconds = 10;
constexpr int kKeepAliveProbes = 3;
// Bytes requested per read of a streamed body.
constexpr size_t kStreamReadSize = 64 * 1024;
// How long a token read from a file is used before the file is read again (client-go's
// cachingTokenSource period).
constexpr std::chrono::minutes kTokenFileRefresh{1};

struct Endpoint {
  bool tls = false;
  std::string host;  // name or address, IPv6 without brackets
  std::string port;
  std::string host_header;  // host[:port] as written in the URL
  std::string base_path;    // URL path prefix without a trailing slash
  std::string verify_name;  // certificate name to verify (server_name or host)
};

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::string LowerCase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Error codes Beast and Asio report when a peer closed a connection we thought was alive.
bool IsConnectionClosed(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == ssl::error::stream_truncated;
}

// The byte stream under a connection (and under its TLS layer): a beast::tcp_stream for the
// asynchronous steps of connecting (resolve, connect, the TLS handshake), timed by its expiry,
// and synchronous read_some/write_some for everything after, which wait in poll(2) for the
// socket, the deadline or a cancel. A request is then one send, one poll and one receive (the
// asynchronous path took three to four more system calls per exchange: a speculative receive,
// epoll_wait passes for the operation and for its timer, a timerfd update), each dear on a
// virtual machine.
//
// Thread-safety: used by one thread at a time, except Cancel.
class PollingStream {
 public:
  using executor_type = beast::tcp_stream::executor_type;
  using lowest_layer_type = beast::tcp_stream::socket_type;

  explicit PollingStream(asio::io_context& ioc)
      : stream_(ioc), cancel_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~PollingStream() {
    if (cancel_fd_ >= 0) close(cancel_fd_);
  }
  PollingStream(const PollingStream&) = delete;
  PollingStream& operator=(const PollingStream&) = delete;

  beast::tcp_stream& timed() { return stream_; }
  executor_type get_executor() { return stream_.get_executor(); }
  lowest_layer_type& lowest_layer() { return stream_.socket(); }
  const lowest_layer_type& lowest_layer() const { return stream_.socket(); }

  // Switches to synchronous use: the socket stops blocking (a read or write that would block
  // waits in poll instead). No asynchronous operation may be started afterwards.
  beast::error_code BeginSynchronous() {
    beast::error_code ec;
    stream_.socket().non_blocking(true, ec);
    return ec;
  }
  // Bounds every later synchronous wait (nullopt: none).
  void set_deadline(std::optional<SteadyTime> deadline) { deadline_ = deadline; }
  // The next read waits for the socket first (an answer is awaited: reading at once would
  // only find nothing yet).
  void ExpectWait() { wait_before_read_ = true; }
  // Ends the current and every later synchronous wait with operation_aborted; from any thread.
  void Cancel() {
    const uint64_t one = 1;
    if (cancel_fd_ >= 0) (void)!write(cancel_fd_, &one, sizeof(one));
  }

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    if (std::exchange(wait_before_read_, false)) {
      if ((ec = Wait(POLLIN))) return 0;
    }
    for (;;) {
      size_t n = stream_.socket().read_some(buffers, ec);
      if (ec != asio::error::would_block && ec != asio::error::try_again) return n;
      if ((ec = Wait(POLLIN))) return 0;
    }
  }
  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, beast::error_code& ec) {
    for (;;) {
      size_t n = stream_.socket().write_some(buffers, ec);
      if (ec != asio::error::would_block && ec != asio::error::try_again) return n;
      if ((ec = Wait(POLLOUT))) return 0;
    }
  }
  // The throwing forms the SyncReadStream and SyncWriteStream concepts ask for.
  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    return OrThrow([&](beast::error_code& ec) { return read_some(buffers, ec); });
  }
  template <typename ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    return OrThrow([&](beast::error_code& ec) { return write_some(buffers, ec); });
  }

  // The asynchronous side, for connecting and the handshake.
  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return stream_.async_read_some(buffers, std::forward<Token>(token));
  }
  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return stream_.async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  template <typename Op>
  static size_t OrThrow(Op op) {
    beast::error_code ec;
    size_t n = op(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Waits until the socket is ready for `events` (or has an error to report), the deadline
  // passes (beast::error::timeout) or Cancel is called (operation_aborted).
  beast::error_code Wait(short events) {
    for (;;) {
      int timeout_ms = -1;
      if (deadline_) {
        auto left = *deadline_ - std::chrono::steady_clock::now();
        if (left <= decltype(left)::zero()) return beast::error::timeout;
        timeout_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
      }
      pollfd fds[2] = {{stream_.socket().native_handle(), events, 0}, {cancel_fd_, POLLIN, 0}};
      int n = poll(fds, cancel_fd_ >= 0 ? 2 : 1, timeout_ms);
      if (n < 0) {
        if (errno == EINTR) continue;
        return beast::error_code(errno, boost::system::system_category());
      }
      if (fds[1].revents != 0) return asio::error::operation_aborted;
      if (fds[0].revents != 0) return {};
      // Timed out (or woke early): the deadline is checked again.
    }
  }

  beast::tcp_stream stream_;
  const int cancel_fd_;  // an eventfd, written once by Cancel; -1 if none could be made
  std::optional<SteadyTime> deadline_;
  bool wait_before_read_ = false;
};

// One keep-alive connection: connected and handshaken asynchronously on its own io_context (run
// by the calling thread), then read and written synchronously (PollingStream).
//
// Thread-safety: used by one thread at a time, except CancelFromAnyThread.
class Connection {
 public:
  explicit Connection(ssl::context* tls_context) {
    if (tls_context != nullptr) {
      tls_.emplace(ioc_, *tls_context);
    } else {
      plain_.emplace(ioc_);
    }
  }

  // Sends a request and reads a response's header (read_header) or all of it, synchronously,
  // within the deadline set by SetDeadline.
  template <typename Request, typename Parser>
  beast::error_code Exchange(const Request& req, Parser& parser, bool read_header,
                             bool* wrote = nullptr) {
    beast::error_code ec;
    if (cancelled_.load(std::memory_order_acquire)) return asio::error::operation_aborted;
    WithStream([&](auto& s) { http::write(s, req, ec); });
    if (wrote != nullptr) *wrote = !ec;
    if (ec) return ec;
    polling().ExpectWait();
    WithStream([&](auto& s) {
      if (read_header) {
        http::read_header(s, buffer_, parser, ec);
      } else {
        http::read(s, buffer_, parser, ec);
      }
    });
    return ec;
  }

  // Reads some of a streamed body, synchronously.
  template <typename Parser>
  beast::error_code ReadSome(Parser& parser) {
    beast::error_code ec;
    if (cancelled_.load(std::memory_order_acquire)) return asio::error::operation_aborted;
    WithStream([&](auto& s) { http::read_some(s, buffer_, parser, ec); });
    return ec;
  }

  void SetDeadline(std::optional<SteadyTime> deadline) { polling().set_deadline(deadline); }

  // Aborts the pending operation and every later one; safe from any thread. A cancelled
  // connection is never reused.
  void CancelFromAnyThread() {
    cancelled_.store(true, std::memory_order_release);
    polling().Cancel();
    asio::post(ioc_, [this] { lowest().cancel(); });  // while connecting
  }

  beast::error_code Connect(const Endpoint& ep, std::optional<SteadyTime> deadline) {
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type addrs = resolver.resolve(ep.host, ep.port, ec);
    if (ec) return ec;
    SetAsyncDeadline(deadline);
    auto [cec, _] = Await([&](auto handler) {
      lowest().async_connect(
          addrs, [handler = std::move(handler)](beast::error_code e, const tcp::endpoint&) mutable {
            handler(e, 0);
          });
    });
    if (cec) return cec;
    tcp::socket& sock = lowest().socket();
    sock.set_option(tcp::no_delay(true), ec);
    sock.set_option(asio::socket_base::keep_alive(true), ec);
    int fd = sock.native_handle();
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepAliveIdleSeconds, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepAliveIntervalSeconds, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveProbes, sizeof(int));
    if (tls_) {
      SSL* ssl_handle = tls_->native_handle();
      if (!IsIpAddress(ep.verify_name)) {
        SSL_set_tlsext_host_name(ssl_handle, ep.verify_name.c_str());
      }
      if (tls_verify_) tls_->set_verify_callback(ssl::host_name_verification(ep.verify_name));
      auto [hec, _2] = Await([&](auto handler) {
        tls_->async_handshake(
            ssl::stream_base::client,
            [handler = std::move(handler)](beast::error_code e) mutable { handler(e, 0); });
      });
      if (hec) return hec;
    }
    lowest().expires_never();
    return polling().BeginSynchronous();
  }

  void set_tls_verify(bool verify) { tls_verify_ = verify; }

 private:
  PollingStream& polling() { return tls_ ? tls_->next_layer() : *plain_; }
  beast::tcp_stream& lowest() { return polling().timed(); }

  // Calls fn with the stream to read and write (TLS or plain).
  template <typename Fn>
  void WithStream(Fn&& fn) {
    if (tls_) {
      fn(*tls_);
    } else {
      fn(*plain_);
    }
  }

  // Starts an operation (start receives the completion handler) and runs the io_context until
  // it, and everything it left behind (timers), has finished.
  template <typename Start>
  std::pair<beast::error_code, size_t> Await(Start&& start) {
    beast::error_code result;
    size_t bytes = 0;
    start([&](beast::error_code ec, size_t n) {
      result = ec;
      bytes = n;
    });
    // A cancel posted while no operation was pending (after the connect completed and before
    // the handshake began) ran and found nothing to cancel; the flag makes it stick, so this
    // operation is cancelled too.
    if (cancelled_.load(std::memory_order_acquire)) lowest().cancel();
    ioc_.restart();
    ioc_.run();
    return {result, bytes};
  }

  void SetAsyncDeadline(std::optional<SteadyTime> deadline) {
    if (deadline) {
      lowest().expires_at(*deadline);
    } else {
      lowest().expires_never();
    }
  }

  asio::io_context ioc_;
  std::optional<PollingStream> plain_;
  std::optional<beast::ssl_stream<PollingStream>> tls_;
  bool tls_verify_ = true;
  // Bytes read past the end of one response, kept for the next one on this connection.
  beast::flat_buffer buffer_;
  std::atomic<bool> cancelled_{false};  // set by CancelFromAnyThread
};

util::Status ErrorStatus(const beast::error_code& ec, const std::stop_token& stop,
                         std::string_view what) {
  if (ec == beast::error::timeout) {
    return util::DeadlineExceeded(std::string(what) + ": timed out");
  }
  if (stop.stop_requested()) return util::Cancelled(std::string(what) + ": cancelled");
  std::string detail = ec.message();
  if (ec.category() == asio::error::get_ssl_category()) {
    char buf[256];
    ERR_error_string_n(static_cast<unsigned long>(ec.value()), buf, sizeof(buf));
    detail = buf;
  }
  return util::Unavailable(std::string(what) + ": " + detail);
}

HeaderList CopyHeaders(const http::fields& fields) {
  HeaderList out;
  for (const auto& f : fields) {
    out.emplace_back(LowerCase(f.name_string()), std::string(f.value()));
  }
  return out;
}

// The body of a streamed response, read from a connection that belongs to it alone.
class HttpResponseStream final : public ResponseStream {
 public:
  using Parser = http::response_parser<http::buffer_body>;

  HttpResponseStream(std::unique_ptr<Connection> conn, std::unique_ptr<Parser> parser,
                     std::stop_token stop, std::optional<SteadyTime> deadline, std::string what)
      : conn_(std::move(conn)),
        parser_(std::move(parser)),
        stop_(std::move(stop)),
        deadline_(deadline),
        what_(std::move(what)),
        on_stop_(stop_, [c = conn_.get()] { c->CancelFromAnyThread(); }),
        buf_(kStreamReadSize) {}

  util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
    if (failed_) return failure_;
    for (;;) {
      if (parser_->is_done()) return false;
      if (stop_.stop_requested()) return Fail(util::Cancelled(what_ + ": cancelled"));
      auto& body = parser_->get().body();
      body.data = buf_.data();
      body.size = buf_.size();
      conn_->SetDeadline(deadline_);
      beast::error_code ec = conn_->ReadSome(*parser_);
      if (ec == http::error::need_buffer) ec = {};
      size_t got = buf_.size() - body.size;
      if (got > 0) {
        out->push_back(std::make_shared<const std::string>(buf_.data(), got));
      }
      if (ec) {
        if (got > 0) {  // deliver what arrived; report the error on the next Read
          (void)Fail(ErrorStatus(ec, stop_, what_));
          return true;
        }
        return Fail(ErrorStatus(ec, stop_, what_));
      }
      if (got > 0) return true;
    }
  }

 private:
  util::Status Fail(util::Status s) {
    failed_ = true;
    failure_ = s;
    return s;
  }

  std::unique_ptr<Connection> conn_;
  std::unique_ptr<Parser> parser_;
  std::stop_token stop_;
  const std::optional<SteadyTime> deadline_;
  const std::string what_;
  // Destroyed before conn_ (declared after it): no cancel can be posted to a dead io_context.
  std::stop_callback<std::function<void()>> on_stop_;
  std::vector<char> buf_;
  bool failed_ = false;
  util::Status failure_;
};

}  // namespace

struct HttpTransport::Impl {
  HttpTransportOptions options;
  util::Clock* clock = nullptr;
  Endpoint endpoint;
  std::optional<ssl::context> tls_context;
  std::atomic<int64_t> connections_opened{0};

  std::mutex pool_mu;
  std::vector<std::unique_ptr<Connection>> idle;  // guarded by pool_mu

  std::mutex token_mu;
  std::string file_token;                    // guarded by token_mu
  util::Clock::TimePoint file_token_read{};  // guarded by token_mu
  bool file_token_valid = false;             // guarded by token_mu

  std::unique_ptr<Connection> TakeIdle() {
    std::lock_guard lock(pool_mu);
    if (idle.empty()) return nullptr;
    std::unique_ptr<Connection> c = std::move(idle.back());
    idle.pop_back();
    return c;
  }

  void ReturnIdle(std::unique_ptr<Connection> c) {
    std::lock_guard lock(pool_mu);
    if (static_cast<int>(idle.size()) < options.max_idle_connections) {
      idle.push_back(std::move(c));
    }
  }

  std::string Token() {
    if (!options.config.bearer_token.empty()) return options.config.bearer_token;
    if (options.config.bearer_token_file.empty()) return {};
    std::lock_guard lock(token_mu);
    util::Clock::TimePoint now = clock->Now();
    if (!file_token_valid || now - file_token_read >= kTokenFileRefresh) {
      std::ifstream in(options.config.bearer_token_file);
      if (in) {
        std::ostringstream s;
        s << in.rdbuf();
        std::string t = s.str();
        while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) {
          t.pop_back();
        }
        file_token = std::move(t);
        file_token_read = now;
        file_token_valid = true;
      }  // an unreadable file keeps the last token (rotation writes a new file atomically)
    }
    return file_token;
  }

  // Takes the body out of `r`: the caller's copy of the request is spent.
  http::request<http::string_body> BuildRequest(HttpRequest& r) {
    boost::urls::url u;
    u.set_path(endpoint.base_path + r.path);
    for (const auto& [k, v] : r.query) u.params().append({k, v});
    http::verb verb = http::string_to_verb(r.method);
    http::request<http::string_body> req;
    if (verb == http::verb::unknown) {
      req.method_string(r.method);
    } else {
      req.method(verb);
    }
    req.target(std::string(u.encoded_target()));
    req.version(11);
    req.set(http::field::host, endpoint.host_header);
    req.set(http::field::user_agent, options.config.user_agent);
    for (const auto& [k, v] : r.headers) req.set(k, v);
    if (std::string token = Token(); !token.empty()) {
      req.set(http::field::authorization, "Bearer " + token);
    }
    if (!r.body.empty() || verb == http::verb::post || verb == http::verb::put ||
        verb == http::verb::patch) {
      req.body() = std::move(r.body);
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  std::optional<SteadyTime> Deadline(const HttpRequest& r, bool stream) const {
    std::chrono::milliseconds t = r.timeout;
    if (t.count() == 0 && !stream) t = options.config.timeout;
    if (t.count() == 0) return std::nullopt;
    return std::chrono::steady_clock::now() + t;
  }

  std::optional<SteadyTime> ConnectDeadline(std::optional<SteadyTime> request_deadline) const {
    SteadyTime d = std::chrono::steady_clock::now() + options.connect_timeout;
    if (request_deadline && *request_deadline < d) return request_deadline;
    return d;
  }

  std::string Describe(const HttpRequest& r) const {
    return r.method + " " + options.config.server + r.path;
  }

  util::StatusOr<std::unique_ptr<Connection>> NewConnection() {
    auto c = std::make_unique<Connection>(tls_context ? &*tls_context : nullptr);
    c->set_tls_verify(!options.config.tls.insecure_skip_verify);
    return c;
  }
};

util::StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::New(HttpTransportOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->clock = options.clock != nullptr ? options.clock : &util::RealClock();
  boost::system::result<boost::urls::url_view> parsed =
      boost::urls::parse_uri(options.config.server);
  if (!parsed) {
    return util::InvalidArgument("invalid server URL \"" + options.config.server + "\"");
  }
  const boost::urls::url_view& url = *parsed;
  std::string scheme = LowerCase(url.scheme());
  if (scheme != "http" && scheme != "https") {
    return util::InvalidArgument("server URL \"" + options.config.server +
                                 "\": scheme must be http or https");
  }
  Endpoint& ep = impl->endpoint;
  ep.tls = scheme == "https";
  ep.host = std::string(url.host_address());
  if (ep.host.empty()) {
    return util::InvalidArgument("server URL \"" + options.config.server + "\" has no host");
  }
  ep.port = url.has_port() ? std::string(url.port()) : (ep.tls ? "443" : "80");
  ep.host_header = std::string(url.encoded_host_and_port());
  ep.base_path = std::string(url.path());
  while (!ep.base_path.empty() && ep.base_path.back() == '/') ep.base_path.pop_back();
  ep.verify_name =
      options.config.tls.server_name.empty() ? ep.host : options.config.tls.server_name;

  if (ep.tls) {
    const TlsConfig& tls = options.config.tls;
    impl->tls_context.emplace(ssl::context::tls_client);
    ssl::context& ctx = *impl->tls_context;
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                    ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    beast::error_code ec;
    if (!tls.ca_pem.empty()) {
      ctx.add_certificate_authority(asio::buffer(tls.ca_pem), ec);
      if (ec) return util::InvalidArgument("certificate authority: " + ec.message());
    } else {
      ctx.set_default_verify_paths(ec);
    }
    if (tls.client_cert_pem.empty() != tls.client_key_pem.empty()) {
      return util::InvalidArgument("client certificate and key must be given together");
    }
    if (!tls.client_cert_pem.empty()) {
      ctx.use_certificate_chain(asio::buffer(tls.client_cert_pem), ec);
      if (ec) return util::InvalidArgument("client certificate: " + ec.message());
      ctx.use_private_key(asio::buffer(tls.client_key_pem), ssl::context::pem, ec);
      if (ec) return util::InvalidArgument("client key: " + ec.message());
    }
    ctx.set_verify_mode(tls.insecure_skip_verify ? ssl::verify_none : ssl::verify_peer);
    static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(ctx.native_handle(), kAlpn, sizeof(kAlpn));
  }
  impl->options = std::move(options);
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
}

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpTransport::~HttpTransport() = default;

int64_t HttpTransport::connections_opened() const {
  return impl_->connections_opened.load();
}

util::StatusOr<HttpResponse> HttpTransport::Do(HttpRequest request) {
  Impl& impl = *impl_;
  // Named in errors only: not built for the requests that succeed.
  auto what = [&] { return impl.Describe(request); };
  if (request.stop.stop_requested()) return util::Cancelled(what() + ": cancelled");
  const std::optional<SteadyTime> deadline = impl.Deadline(request, /*stream=*/false);
  http::request<http::string_body> req = impl.BuildRequest(request);

  // At most two attempts: the second only when a pooled connection turned out to be closed
  // before any byte of a response arrived (the server cannot have processed the request).
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> conn = attempt == 0 ? impl.TakeIdle() : nullptr;
    const bool reused = conn != nullptr;
    if (!reused) {
      CONVERGE_ASSIGN_OR_RETURN(conn, impl.NewConnection());
    }
    std::optional<util::StatusOr<HttpResponse>> result;
    bool keep_alive = false;
    bool retry = false;
    {
      std::stop_callback on_stop(request.stop, [c = conn.get()] { c->CancelFromAnyThread(); });
      if (!reused) {
        impl.connections_opened.fetch_add(1);
        if (beast::error_code ec = conn->Connect(impl.endpoint, impl.ConnectDeadline(deadline))) {
          return ErrorStatus(ec, request.stop, what());
        }
      }
      conn->SetDeadline(deadline);
      http::response_parser<http::string_body> parser;
      parser.body_limit(boost::none);  // lists of many objects are large; memory is the limit
      bool wrote = false;
      beast::error_code ec = conn->Exchange(req, parser, /*read_header=*/false, &wrote);
      if (ec) {
        retry = reused && attempt == 0 && !parser.got_some() &&
                (!wrote || IsConnectionClosed(ec)) && !request.stop.stop_requested();
        if (!retry) result = ErrorStatus(ec, request.stop, what());
      } else {
        http::response<http::string_body> res = parser.release();
        keep_alive = res.keep_alive();
        HttpResponse out;
        out.status = static_cast<int>(res.result_int());
        out.headers = CopyHeaders(res.base());
        out.body = std::move(res.body());
        result = std::move(out);
      }
    }
    if (retry) continue;
    // A stop that fired during the exchange may have left a cancel queued on the connection's
    // io_context; such a connection is not reused.
    if (result->ok() && keep_alive && !request.stop.stop_requested()) {
      impl.ReturnIdle(std::move(conn));
    }
    return std::move(*result);
  }
}

util::StatusOr<StreamedResponse> HttpTransport::Stream(HttpRequest request) {
  Impl& impl = *impl_;
  const std::string what = impl.Describe(request);
  if (request.stop.stop_requested()) return util::Cancelled(what + ": cancelled");
  const std::optional<SteadyTime> deadline = impl.Deadline(request, /*stream=*/true);
  http::request<http::string_body> req = impl.BuildRequest(request);

  // Streams always open a connection of their own: a stream holds it for minutes, and a fresh
  // connection needs no stale-connection retry.
  CONVERGE_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, impl.NewConnection());
  auto parser = std::make_unique<HttpResponseStream::Parser>();
  parser->body_limit(boost::none);
  {
    std::stop_callback on_stop(request.stop, [c = conn.get()] { c->CancelFromAnyThread(); });
    impl.connections_opened.fetch_add(1);
    if (beast::error_code ec = conn->Connect(impl.endpoint, impl.ConnectDeadline(deadline))) {
      return ErrorStatus(ec, request.stop, what);
    }
    conn->SetDeadline(deadline);
    if (beast::error_code ec = conn->Exchange(req, *parser, /*read_header=*/true)) {
      return ErrorStatus(ec, request.stop, what);
    }
  }
  if (request.stop.stop_requested()) return util::Cancelled(what + ": cancelled");
  StreamedResponse out;
  out.status = static_cast<int>(parser->get().result_int());
  out.headers = CopyHeaders(parser->get().base());
  out.body = std::make_unique<HttpResponseStream>(std::move(conn), std::move(parser),
                                                  std::move(request.stop), deadline, what);
  return out;
}

}  // namespace converge::client
