// HttpServer's admission and request timeout, with a handler the test holds: the outcome never
// depends on timing (a held handler cannot answer before the timeout, a held seat cannot free).
#include "apiserver/http_server.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <condition_variable>
#include <future>
#include <mutex>

namespace converge::apiserver {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

struct Reply {
  int status = 0;
  std::string retry_after;
  std::string reason;
};

Reply Get(uint16_t port, const std::string& target) {
  boost::asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(socket, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  Reply r;
  r.status = res.result_int();
  r.retry_after = std::string(res[http::field::retry_after]);
  boost::system::error_code ec;
  auto v = boost::json::parse(res.body(), ec);
  if (!ec && v.is_object() && v.as_object().contains("reason")) {
    r.reason = std::string(v.as_object().at("reason").as_string());
  }
  return r;
}

// A handler that blocks requests to /hold until Release.
class HeldHandler {
 public:
  Response Handle(Request& req) {
    if (req.path == "/hold") {
      std::unique_lock lock(mu_);
      ++held_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    }
    return Response{.status = 200, .body = "{}"};
  }
  void WaitHeld(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_ >= n; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int held_ = 0;
  bool released_ = false;
};

HttpServerOptions Options(HeldHandler* h) {
  HttpServerOptions o;
  o.listen = "127.0.0.1:0";
  o.worker_threads = 4;
  o.handler = [h](Request& req) { return h->Handle(req); };
  o.classify = [](const Request& req) {
    RequestClass c;
    c.flow = "user";
    c.level = req.path == "/readyz" ? PriorityLevel::kExempt : PriorityLevel::kGlobal;
    return c;
  };
  return o;
}

TEST(HttpServerTest, SlowRequestGets504TimeoutAndTheServerGoesOn) {
  HeldHandler handler;
  HttpServerOptions o = Options(&handler);
  o.request_timeout = std::chrono::milliseconds(200);
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  Reply r = Get(server.port(), "/hold");
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(r.reason, "Timeout");
  handler.Release();
  EXPECT_EQ(Get(server.port(), "/other").status, 200);
  server.Stop();
}

TEST(HttpServerTest, RequestBeyondTheInflightCapGets429WithRetryAfter) {
  HeldHandler handler;
  HttpServerOptions o = Options(&handler);
  o.flow_control.max_requests_inflight = 1;
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  auto held = std::async(std::launch::async, [&] { return Get(server.port(), "/hold"); });
  handler.WaitHeld(1);
  Reply r = Get(server.port(), "/other");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.reason, "TooManyRequests");
  EXPECT_EQ(r.retry_after, "1");
  // Exempt requests pass the cap.
  EXPECT_EQ(Get(server.port(), "/readyz").status, 200);
  handler.Release();
  EXPECT_EQ(held.get().status, 200);
  EXPECT_EQ(Get(server.port(), "/other").status, 200);
  server.Stop();
}

// One seat: a request queued behind a held one waits for the seat instead of being refused.
TEST(HttpServerTest, QueuedRequestRunsWhenTheSeatFrees) {
  HeldHandler handler;
  HttpServerOptions o = Options(&handler);
  o.flow_control.concurrency = 2;
  o.flow_control.system_seats = 1;  // the global level has one seat
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  auto held = std::async(std::launch::async, [&] { return Get(server.port(), "/hold"); });
  handler.WaitHeld(1);
  auto queued = std::async(std::launch::async, [&] { return Get(server.port(), "/hold"); });
  handler.Release();
  EXPECT_EQ(held.get().status, 200);
  EXPECT_EQ(queued.get().status, 200);
  server.Stop();
}

}  // namespace
}  // namespace converge::apiserver
