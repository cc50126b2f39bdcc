// A small synchronous HTTP(S) client for tests: talks to a server found through the kubeconfig it
// wrote (server URL, CA, client certificate or token), so tests keep working when TLS and
// authentication change. Requests use one keep-alive connection; watches get their own.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace converge::testing {

struct Kubeconfig {
  std::string server;  // http(s)://host:port
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;
  bool insecure_skip_tls_verify = false;

  static util::StatusOr<Kubeconfig> Load(const std::string& path);
};

struct HttpResponse {
  int status = 0;  // 0: the request failed at the transport level (see `error`)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;
  // The body as JSON (null when it is not JSON).
  boost::json::value Json() const;
};

class TestClient {
 public:
  explicit TestClient(Kubeconfig config);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  using Headers = std::vector<std::pair<std::string, std::string>>;
  HttpResponse Do(const std::string& method, const std::string& target,
                  const std::string& body = "", const Headers& headers = {});
  HttpResponse Get(const std::string& target, const Headers& headers = {}) {
    return Do("GET", target, "", headers);
  }
  HttpResponse Post(const std::string& target, const std::string& json_body) {
    return Do("POST", target, json_body, {{"Content-Type", "application/json"}});
  }
  HttpResponse Put(const std::string& target, const std::string& json_body) {
    return Do("PUT", target, json_body, {{"Content-Type", "application/json"}});
  }
  HttpResponse Patch(const std::string& target, const std::string& body,
                     const std::string& content_type) {
    return Do("PATCH", target, body, {{"Content-Type", content_type}});
  }
  HttpResponse Delete(const std::string& target, const std::string& json_body = "") {
    return Do("DELETE", target, json_body,
              json_body.empty() ? Headers{} : Headers{{"Content-Type", "application/json"}});
  }

  // A streaming response read event by event (one JSON document per line).
  class Stream {
   public:
    virtual ~Stream() = default;
    // The HTTP status of the response (0 if the request failed).
    virtual int status() const = 0;
    // The next event, or nullopt when the stream ended or `timeout` passed (see ended()).
    virtual std::optional<boost::json::value> Next(std::chrono::milliseconds timeout) = 0;
    virtual bool ended() const = 0;
  };
  std::unique_ptr<Stream> Watch(const std::string& target, const Headers& headers = {});

  const Kubeconfig& config() const { return config_; }

 private:
  struct Conn;
  Kubeconfig config_;
  std::unique_ptr<Conn> conn_;
};

// URL-encodes a query value.
std::string Escape(const std::string& s);

}  // namespace converge::testing
