#include "testing/http_client.h"

#include <yaml-cpp/yaml.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url.hpp>

#include <variant>

#include "util/base64.h"

namespace converge::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace json = boost::json;
using tcp = asio::ip::tcp;

namespace {

std::string Decode64(const std::string& s) {
  return util::Base64Decode(s).value_or("");
}

// Parses http(s)://host:port.
struct Endpoint {
  bool tls = false;
  std::string host;
  std::string port;
};

Endpoint ParseServer(const std::string& server) {
  Endpoint ep;
  auto u = boost::urls::parse_uri(server);
  if (!u) return ep;
  ep.tls = u->scheme() == "https";
  ep.host = u->host();
  ep.port = u->has_port() ? std::string(u->port()) : (ep.tls ? "443" : "80");
  return ep;
}

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection (plain or TLS) driven synchronously with per-operation timeouts.
class Connection {
 public:
  Connection(const Kubeconfig& cfg)
      : cfg_(cfg), ep_(ParseServer(cfg.server)), tls_ctx_(ssl::context::tls_client) {
    if (ep_.tls) {
      beast::error_code ec;
      if (!cfg.ca_pem.empty()) {
        tls_ctx_.add_certificate_authority(asio::buffer(cfg.ca_pem), ec);
      }
      tls_ctx_.set_verify_mode(cfg.insecure_skip_tls_verify ? ssl::verify_none : ssl::verify_peer);
      if (!cfg.client_cert_pem.empty()) {
        tls_ctx_.use_certificate_chain(asio::buffer(cfg.client_cert_pem), ec);
        tls_ctx_.use_private_key(asio::buffer(cfg.client_key_pem), ssl::context::pem, ec);
      }
    }
  }

  beast::error_code Connect(std::chrono::milliseconds timeout) {
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    auto results = resolver.resolve(ep_.host, ep_.port, ec);
    if (ec) return ec;
    if (ep_.tls) {
      stream_.emplace<TlsStream>(ioc_, tls_ctx_);
      auto& s = std::get<TlsStream>(stream_);
      SSL_set_tlsext_host_name(s.native_handle(), ep_.host.c_str());
      beast::get_lowest_layer(s).expires_after(timeout);
      ec = RunOp(
          [&](auto cb) {
            beast::get_lowest_layer(s).async_connect(results,
                                                     [cb](beast::error_code e, auto) { cb(e, 0); });
          },
          timeout);
      if (ec) return ec;
      ec = RunOp(
          [&](auto cb) {
            s.async_handshake(ssl::stream_base::client, [cb](beast::error_code e) { cb(e, 0); });
          },
          timeout);
      return ec;
    }
    stream_.emplace<PlainStream>(ioc_);
    auto& s = std::get<PlainStream>(stream_);
    return RunOp(
        [&](auto cb) { s.async_connect(results, [cb](beast::error_code e, auto) { cb(e, 0); }); },
        timeout);
  }

  bool connected() const { return !std::holds_alternative<std::monostate>(stream_); }
  void Reset() {
    stream_.emplace<std::monostate>();
    buffer_.clear();
  }

  template <typename Msg>
  beast::error_code Write(Msg& msg, std::chrono::milliseconds timeout) {
    return std::visit(
        [&](auto& s) -> beast::error_code {
          if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            return asio::error::not_connected;
          } else {
            return RunOp([&](auto cb) { http::async_write(s, msg, cb); }, timeout);
          }
        },
        stream_);
  }

  template <typename Parser>
  beast::error_code ReadHeader(Parser& p, std::chrono::milliseconds timeout) {
    return std::visit(
        [&](auto& s) -> beast::error_code {
          if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            return asio::error::not_connected;
          } else {
            return RunOp([&](auto cb) { http::async_read_header(s, buffer_, p, cb); }, timeout);
          }
        },
        stream_);
  }

  template <typename Parser>
  beast::error_code Read(Parser& p, std::chrono::milliseconds timeout) {
    return std::visit(
        [&](auto& s) -> beast::error_code {
          if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            return asio::error::not_connected;
          } else {
            return RunOp([&](auto cb) { http::async_read(s, buffer_, p, cb); }, timeout);
          }
        },
        stream_);
  }

  template <typename Parser>
  beast::error_code ReadSome(Parser& p, std::chrono::milliseconds timeout) {
    return std::visit(
        [&](auto& s) -> beast::error_code {
          if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
            return asio::error::not_connected;
          } else {
            return RunOp([&](auto cb) { http::async_read_some(s, buffer_, p, cb); }, timeout);
          }
        },
        stream_);
  }

  const Endpoint& endpoint() const { return ep_; }

 private:
  // Starts an async operation and runs the io_context until it completes or `timeout` passes;
  // on timeout the connection is closed (and must be reconnected).
  template <typename Start>
  beast::error_code RunOp(Start&& start, std::chrono::milliseconds timeout) {
    bool done = false;
    beast::error_code result;
    start([&](beast::error_code ec, size_t) {
      done = true;
      result = ec;
    });
    ioc_.restart();
    ioc_.run_for(timeout);
    if (!done) {
      std::visit(
          [](auto& s) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(s)>, std::monostate>) {
              beast::get_lowest_layer(s).close();
            }
          },
          stream_);
      ioc_.restart();
      ioc_.run();
      return asio::error::timed_out;
    }
    return result;
  }

  const Kubeconfig& cfg_;
  Endpoint ep_;
  asio::io_context ioc_;
  ssl::context tls_ctx_;
  std::variant<std::monostate, PlainStream, TlsStream> stream_;
  beast::flat_buffer buffer_;
};

http::request<http::string_body> MakeRequest(const Kubeconfig& cfg, const Endpoint& ep,
                                             const std::string& method, const std::string& target,
                                             const std::string& body,
                                             const TestClient::Headers& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, ep.host + ":" + ep.port);
  req.set(http::field::user_agent, "converge-tests");
  if (!cfg.token.empty() && ep.tls) req.set(http::field::authorization, "Bearer " + cfg.token);
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty()) req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

template <typename Fields>
std::map<std::string, std::string> LowerHeaders(const Fields& fields) {
  std::map<std::string, std::string> out;
  for (const auto& f : fields) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out[name] = std::string(f.value());
  }
  return out;
}

constexpr std::chrono::seconds kRequestTimeout{60};

class StreamImpl final : public TestClient::Stream {
 public:
  StreamImpl(const Kubeconfig& cfg, const std::string& target, const TestClient::Headers& headers)
      : conn_(cfg) {
    if (conn_.Connect(kRequestTimeout)) {
      ended_ = true;
      return;
    }
    auto req = MakeRequest(cfg, conn_.endpoint(), "GET", target, "", headers);
    if (conn_.Write(req, kRequestTimeout)) {
      ended_ = true;
      return;
    }
    parser_.body_limit(boost::none);
    if (conn_.ReadHeader(parser_, kRequestTimeout)) {
      ended_ = true;
      return;
    }
    status_ = static_cast<int>(parser_.get().result_int());
  }

  int status() const override { return status_; }
  bool ended() const override { return ended_ && pending_.empty(); }

  std::optional<json::value> Next(std::chrono::milliseconds timeout) override {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (auto line = TakeLine()) {
        boost::system::error_code ec;
        json::value v = json::parse(*line, ec);
        if (!ec) return v;
        continue;
      }
      if (ended_) return std::nullopt;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      auto ec = conn_.ReadSome(parser_, left);
      std::string& body = parser_.get().body();
      pending_ += body;
      body.clear();
      if (ec == asio::error::timed_out) {
        // The connection was closed to stop the read: the stream is over for us.
        ended_ = true;
        return std::nullopt;
      }
      if (ec || parser_.is_done()) ended_ = true;
    }
  }

 private:
  std::optional<std::string> TakeLine() {
    auto nl = pending_.find('\n');
    if (nl == std::string::npos) {
      if (ended_ && !pending_.empty()) {
        std::string rest = std::move(pending_);
        pending_.clear();
        return rest;
      }
      return std::nullopt;
    }
    std::string line = pending_.substr(0, nl);
    pending_.erase(0, nl + 1);
    return line;
  }

  Connection conn_;
  http::response_parser<http::string_body> parser_;
  std::string pending_;
  int status_ = 0;
  bool ended_ = false;
};

}  // namespace

util::StatusOr<Kubeconfig> Kubeconfig::Load(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return util::InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
  std::string current = root["current-context"].as<std::string>("");
  std::string cluster_name, user_name;
  for (const auto& c : root["contexts"]) {
    if (c["name"].as<std::string>("") == current) {
      cluster_name = c["context"]["cluster"].as<std::string>("");
      user_name = c["context"]["user"].as<std::string>("");
    }
  }
  Kubeconfig kc;
  for (const auto& c : root["clusters"]) {
    if (c["name"].as<std::string>("") != cluster_name) continue;
    kc.server = c["cluster"]["server"].as<std::string>("");
    kc.ca_pem = Decode64(c["cluster"]["certificate-authority-data"].as<std::string>(""));
    kc.insecure_skip_tls_verify = c["cluster"]["insecure-skip-tls-verify"].as<bool>(false);
  }
  for (const auto& u : root["users"]) {
    if (u["name"].as<std::string>("") != user_name) continue;
    kc.client_cert_pem = Decode64(u["user"]["client-certificate-data"].as<std::string>(""));
    kc.client_key_pem = Decode64(u["user"]["client-key-data"].as<std::string>(""));
    kc.token = u["user"]["token"].as<std::string>("");
  }
  if (kc.server.empty())
    return util::InvalidArgument("kubeconfig: no server for the current context");
  return kc;
}

json::value HttpResponse::Json() const {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  return ec ? json::value() : v;
}

struct TestClient::Conn {
  explicit Conn(const Kubeconfig& cfg) : c(cfg) {}
  Connection c;
};

TestClient::TestClient(Kubeconfig config) : config_(std::move(config)) {}
TestClient::~TestClient() = default;

HttpResponse TestClient::Do(const std::string& method, const std::string& target,
                            const std::string& body, const Headers& headers) {
  HttpResponse out;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!conn_) conn_ = std::make_unique<Conn>(config_);
    if (!conn_->c.connected()) {
      if (auto ec = conn_->c.Connect(kRequestTimeout)) {
        out.error = "connect: " + ec.message();
        conn_.reset();
        return out;
      }
    }
    auto req = MakeRequest(config_, conn_->c.endpoint(), method, target, body, headers);
    auto ec = conn_->c.Write(req, kRequestTimeout);
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    if (!ec) ec = conn_->c.Read(parser, kRequestTimeout);
    if (ec) {
      // A kept-alive connection the server closed: retry once on a fresh one.
      conn_.reset();
      out.error = ec.message();
      continue;
    }
    auto& res = parser.get();
    out.status = static_cast<int>(res.result_int());
    out.headers = LowerHeaders(res);
    out.body = std::move(res.body());
    out.error.clear();
    if (!res.keep_alive()) conn_.reset();
    return out;
  }
  return out;
}

std::unique_ptr<TestClient::Stream> TestClient::Watch(const std::string& target,
                                                      const Headers& headers) {
  return std::make_unique<StreamImpl>(config_, target, headers);
}

std::string Escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace converge::testing
