// Test-only: a small threaded HTTP/1.1 server (plain or TLS, optionally requiring a client
// certificate) that answers with a handler function, records what it received, and can stream
// chunked responses. Header-only so that it stays out of the library; include it from one test
// translation unit.
#pragma once

#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/test_pki.h"
#include "client/transport.h"

namespace converge::client::testing {

struct TestRequest {
  std::string method;
  std::string target;  // as sent: encoded path and query
  HeaderList headers;  // lower-case names
  std::string body;
  int connection = 0;     // 1-based id of the connection it came on
  std::string client_cn;  // CN of the verified client certificate, when TLS
  std::string Header(std::string_view name) const { return std::string(FindHeader(headers, name)); }
};

struct TestResponse {
  int status = 200;
  std::string body;
  HeaderList headers;  // content-type defaults to application/json
  bool close = false;  // answer with Connection: close and close the connection
  // When set, the body is sent chunked: one chunk per call until it returns nullopt.
  std::function<std::optional<std::string>()> stream;
};

struct TestHttpServerOptions {
  const TestPki* pki = nullptr;  // TLS when set
  bool require_client_cert = false;
};

class TestHttpServer {
 public:
  using Handler = std::function<TestResponse(const TestRequest&)>;
  using Options = TestHttpServerOptions;

  explicit TestHttpServer(Handler handler, Options options = {})
      : handler_(std::move(handler)), options_(options) {}
  ~TestHttpServer() { Stop(); }

  // Listens on 127.0.0.1 on an ephemeral port.
  void Start() {
    namespace asio = boost::asio;
    if (options_.pki != nullptr) {
      tls_.emplace(asio::ssl::context::tls_server);
      tls_->use_certificate_chain(asio::buffer(options_.pki->server_cert_pem));
      tls_->use_private_key(asio::buffer(options_.pki->server_key_pem), asio::ssl::context::pem);
      if (options_.require_client_cert) {
        tls_->add_certificate_authority(asio::buffer(options_.pki->ca_pem));
        tls_->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
      }
    }
    acceptor_.emplace(
        ioc_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    port_ = acceptor_->local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  void Stop() {
    if (!accept_thread_.joinable()) return;
    stopping_ = true;
    {  // wake the blocking accept
      boost::asio::io_context ioc;
      boost::asio::ip::tcp::socket s(ioc);
      boost::system::error_code ec;
      s.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);
    }
    accept_thread_.join();
    CloseAllConnections();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      threads.swap(conn_threads_);
    }
    for (auto& t : threads) t.join();
  }

  std::string url() const {
    return std::string(options_.pki != nullptr ? "https" : "http") +
           "://127.0.0.1:" + std::to_string(port_);
  }
  uint16_t port() const { return port_; }

  std::vector<TestRequest> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Waits until the server has read at least n requests (its connection threads may lag the
  // client on a loaded machine); false when `limit` passes first.
  bool WaitForRequests(size_t n, std::chrono::milliseconds limit = std::chrono::seconds(30)) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (requests().size() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }
  int connections_accepted() const { return accepted_.load(); }
  int open_connections() const {
    std::lock_guard lock(mu_);
    return static_cast<int>(open_fds_.size());
  }

  // Shuts down every open connection (a server restart, or idle connections timing out).
  void CloseAllConnections() {
    std::lock_guard lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }

 private:
  void AcceptLoop() {
    for (;;) {
      boost::asio::ip::tcp::socket sock(ioc_);
      boost::system::error_code ec;
      acceptor_->accept(sock, ec);
      if (stopping_ || ec) return;
      int id = ++accepted_;
      std::lock_guard lock(mu_);
      open_fds_.insert(sock.native_handle());
      conn_threads_.emplace_back(
          [this, id, s = std::move(sock)]() mutable { Serve(std::move(s), id); });
    }
  }

  void Serve(boost::asio::ip::tcp::socket sock, int id) {
    namespace beast = boost::beast;
    namespace asio = boost::asio;
    int fd = sock.native_handle();
    if (tls_) {
      asio::ssl::stream<asio::ip::tcp::socket> stream(std::move(sock), *tls_);
      boost::system::error_code ec;
      stream.handshake(asio::ssl::stream_base::server, ec);
      std::string cn;
      if (!ec) {
        if (X509* peer = SSL_get1_peer_certificate(stream.native_handle())) {
          char buf[256] = {0};
          X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof(buf));
          cn = buf;
          X509_free(peer);
        }
        ServeRequests(stream, id, cn);
      }
      Forget(fd);  // before close: a recycled fd must never be shut down by CloseAllConnections
      beast::get_lowest_layer(stream).close(ec);
    } else {
      ServeRequests(sock, id, "");
      Forget(fd);
      boost::system::error_code ec;
      sock.close(ec);
    }
  }

  void Forget(int fd) {
    std::lock_guard lock(mu_);
    open_fds_.erase(fd);
  }

  template <typename Stream>
  void ServeRequests(Stream& stream, int id, const std::string& cn) {
    namespace beast = boost::beast;
    namespace http = beast::http;
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(boost::none);  // tests send bodies of several MiB
      boost::system::error_code ec;
      http::read(stream, buffer, parser, ec);
      if (ec) return;
      http::request<http::string_body> req = parser.release();
      TestRequest tr;
      tr.method = std::string(req.method_string());
      tr.target = std::string(req.target());
      for (const auto& f : req) {
        std::string name(f.name_string());
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        tr.headers.emplace_back(std::move(name), std::string(f.value()));
      }
      tr.body = req.body();
      tr.connection = id;
      tr.client_cn = cn;
      {
        std::lock_guard lock(mu_);
        requests_.push_back(tr);
      }
      TestResponse resp = handler_(tr);
      if (resp.stream) {
        http::response<http::empty_body> res{static_cast<http::status>(resp.status), 11};
        res.set(http::field::content_type, "application/json");
        for (const auto& [k, v] : resp.headers) res.set(k, v);
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        http::write_header(stream, sr, ec);
        if (ec) return;
        while (std::optional<std::string> chunk = resp.stream()) {
          boost::asio::write(stream, http::make_chunk(boost::asio::buffer(*chunk)), ec);
          if (ec) return;
        }
        boost::asio::write(stream, http::make_chunk_last(), ec);
        if (ec) return;
        continue;
      }
      http::response<http::string_body> res{static_cast<http::status>(resp.status), 11};
      res.set(http::field::content_type, "application/json");
      for (const auto& [k, v] : resp.headers) res.set(k, v);
      res.body() = resp.body;
      res.keep_alive(!resp.close && req.keep_alive());
      res.prepare_payload();
      http::write(stream, res, ec);
      if (ec || resp.close || !req.keep_alive()) return;
    }
  }

  const Handler handler_;
  const Options options_;
  boost::asio::io_context ioc_;
  std::optional<boost::asio::ssl::context> tls_;
  std::optional<boost::asio::ip::tcp::acceptor> acceptor_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread accept_thread_;

  mutable std::mutex mu_;
  std::vector<TestRequest> requests_;      // guarded by mu_
  std::vector<std::thread> conn_threads_;  // guarded by mu_
  std::set<int> open_fds_;                 // guarded by mu_
};

}  // namespace converge::client::testing
