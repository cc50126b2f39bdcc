// HttpServer's admission and request timeout, with a handler the test holds: the outcome never
// depends on timing (a held handler cannot answer before the timeout, a held seat cannot free).
#include "apiserver/http_server.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

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

Reply HttpGet(uint16_t port, const std::string& target) {
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
    if (req.path == "/until-cancelled") {
      // Polls as a long handler (deletecollection) checks between its steps.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!req.cancelled.stop_requested() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::lock_guard lock(mu_);
      saw_cancel_ = req.cancelled.stop_requested();
      finished_ = true;
      cv_.notify_all();
    }
    return Response{.status = 200, .body = "{}"};
  }
  // Whether the /until-cancelled handler ended because its request was cancelled.
  bool WaitFinishedAndSawCancel() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return finished_; });
    return saw_cancel_;
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
  bool finished_ = false;
  bool saw_cancel_ = false;
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

// A slow request gets 504 and its handler is told (Request::cancelled), so a long one
// (deletecollection) stops instead of working on for nobody; the server goes on.
TEST(HttpServerTest, SlowRequestGets504TimeoutItsHandlerIsCancelledAndTheServerGoesOn) {
  HeldHandler handler;
  HttpServerOptions o = Options(&handler);
  o.request_timeout = std::chrono::milliseconds(200);
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  Reply r = HttpGet(server.port(), "/hold");
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(r.reason, "Timeout");
  handler.Release();
  EXPECT_EQ(HttpGet(server.port(), "/other").status, 200);

  EXPECT_EQ(HttpGet(server.port(), "/until-cancelled").status, 504);
  EXPECT_TRUE(handler.WaitFinishedAndSawCancel())
      << "the handler ended at its own 20 s limit, never cancelled";
  server.Stop();
}

TEST(HttpServerTest, RequestBeyondTheInflightCapGets429WithRetryAfter) {
  HeldHandler handler;
  HttpServerOptions o = Options(&handler);
  o.flow_control.max_requests_inflight = 1;
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  auto held = std::async(std::launch::async, [&] { return HttpGet(server.port(), "/hold"); });
  handler.WaitHeld(1);
  Reply r = HttpGet(server.port(), "/other");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.reason, "TooManyRequests");
  EXPECT_EQ(r.retry_after, "1");
  // Exempt requests pass the cap.
  EXPECT_EQ(HttpGet(server.port(), "/readyz").status, 200);
  handler.Release();
  EXPECT_EQ(held.get().status, 200);
  EXPECT_EQ(HttpGet(server.port(), "/other").status, 200);
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
  auto held = std::async(std::launch::async, [&] { return HttpGet(server.port(), "/hold"); });
  handler.WaitHeld(1);
  auto queued = std::async(std::launch::async, [&] { return HttpGet(server.port(), "/hold"); });
  handler.Release();
  EXPECT_EQ(held.get().status, 200);
  EXPECT_EQ(queued.get().status, 200);
  server.Stop();
}

TEST(ThenTest, FinishesACompleteResponseAtOnceAndAPendingOneWhenItIsAnswered) {
  Response complete = Then(Response{.status = 201}, [](Response& r) { r.body = "finished"; });
  EXPECT_EQ(complete.body, "finished");

  std::function<void(Response)> answer;
  Response pending;
  pending.pending = [&answer](std::function<void(Response)> done) { answer = std::move(done); };
  pending = Then(std::move(pending), [](Response& r) { r.body += " inner"; });
  pending = Then(std::move(pending), [](Response& r) { r.body += " outer"; });
  ASSERT_TRUE(pending.pending);
  std::optional<Response> final_response;
  pending.pending([&](Response r) { final_response = std::move(r); });
  ASSERT_TRUE(answer);
  EXPECT_FALSE(final_response);
  answer(Response{.status = 201, .body = "stored"});
  ASSERT_TRUE(final_response);
  EXPECT_EQ(final_response->status, 201);
  EXPECT_EQ(final_response->body, "stored inner outer");
}

// Answers /pending with a pending response the test completes (as a create waiting for its
// commit), everything else at once.
class PendingHandler {
 public:
  Response Handle(Request& req) {
    if (req.path != "/pending") return Response{.status = 200, .body = "{}"};
    Response r;
    r.pending = [this, resume = req.resume](std::function<void(Response)> done) {
      std::lock_guard lock(mu_);
      held_.push_back({resume, std::move(done)});
      cv_.notify_all();
    };
    return r;
  }
  void WaitHeld(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_.size() >= n; });
  }
  // Answers every held request through its transport's `resume`, as the store's callback does.
  void AnswerAll() {
    std::lock_guard lock(mu_);
    for (auto& [resume, done] : held_) {
      resume([done = std::move(done)] { done(Response{.status = 201, .body = "stored"}); });
    }
    held_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<std::function<void(std::function<void()>)>, std::function<void(Response)>>>
      held_;  // guarded by mu_
};

// Sends `n` GETs of /pending at once, each on its own connection, and returns once `handler` holds
// all of them.
std::vector<std::future<Reply>> GetPendingConcurrently(uint16_t port, PendingHandler& handler,
                                                       size_t n) {
  std::vector<std::future<Reply>> pending;
  for (size_t i = 0; i < n; ++i) {
    pending.push_back(std::async(std::launch::async, [port] { return HttpGet(port, "/pending"); }));
  }
  handler.WaitHeld(n);
  return pending;
}

// A request whose response is pending holds no worker: with more of them than workers, other
// requests are still served, and each pending one is answered once completed.
TEST(HttpServerTest, PendingResponsesHoldNoWorker) {
  PendingHandler handler;
  HttpServerOptions o;
  o.listen = "127.0.0.1:0";
  o.worker_threads = 1;  // plus the few unseated workers: fewer than the pending requests
  o.handler = [&handler](Request& req) { return handler.Handle(req); };
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  std::vector<std::future<Reply>> pending = GetPendingConcurrently(server.port(), handler, 12);
  EXPECT_EQ(HttpGet(server.port(), "/other").status, 200);
  handler.AnswerAll();
  for (auto& p : pending) EXPECT_EQ(p.get().status, 201);
  server.Stop();
}

// Stop waits for pending responses and lets them be answered and written before the connections
// end. (Once Stop ended the I/O threads as soon as the last handler finished, before its answer
// was written: a client could wait forever. Several held requests make that race likely.)
TEST(HttpServerTest, StopAnswersPendingResponsesFirst) {
  PendingHandler handler;
  HttpServerOptions o;
  o.listen = "127.0.0.1:0";
  o.handler = [&handler](Request& req) { return handler.Handle(req); };
  HttpServer server(o);
  ASSERT_TRUE(server.Start().ok());
  std::vector<std::future<Reply>> pending = GetPendingConcurrently(server.port(), handler, 8);

  // A keep-alive connection tells when Stop has begun: its next request is refused.
  boost::asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server.port()));
  auto exchange = [&socket]() -> int {
    http::request<http::empty_body> req{http::verb::get, "/other", 11};
    req.set(http::field::host, "127.0.0.1");
    boost::system::error_code ec;
    http::write(socket, req, ec);
    if (ec) return 0;
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res, ec);
    return ec ? 0 : res.result_int();
  };
  ASSERT_EQ(exchange(), 200);
  auto stopped = std::async(std::launch::async, [&] { server.Stop(); });
  while (exchange() == 200) {
  }
  handler.AnswerAll();
  for (auto& p : pending) EXPECT_EQ(p.get().status, 201);
  stopped.get();
}

// Records the name and id of the thread each request's handler ran on; /pending is answered
// later through `resume`, as a create waiting for its commit.
class ThreadRecorder {
 public:
  Response Handle(Request& req) {
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    {
      std::lock_guard lock(mu_);
      names_[req.path] = name;
      ids_.insert(std::this_thread::get_id());
    }
    if (req.path == "/pending") return pending_.Handle(req);
    return Response{.status = 200, .body = "{}"};
  }
  std::string NameFor(const std::string& path) {
    std::lock_guard lock(mu_);
    return names_[path];
  }
  size_t distinct_threads() {
    std::lock_guard lock(mu_);
    return ids_.size();
  }
  PendingHandler& pending() { return pending_; }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> names_;  // guarded by mu_
  std::set<std::thread::id> ids_;             // guarded by mu_
  PendingHandler pending_;
};

HttpServerOptions InlineOptions(ThreadRecorder* recorder, int io_threads) {
  HttpServerOptions o;
  o.listen = "127.0.0.1:0";
  o.io_threads = io_threads;
  o.worker_threads = 2;
  o.handler = [recorder](Request& req) { return recorder->Handle(req); };
  o.classify = [](const Request& req) {
    RequestClass c;
    c.flow = "user";
    c.nonblocking = req.path == "/inline" || req.path == "/pending";
    return c;
  };
  return o;
}

// A request classified nonblocking is handled on its connection's I/O thread; any other on a
// worker.
TEST(HttpServerTest, NonblockingRequestsRunOnTheIoThreadAndOthersOnAWorker) {
  ThreadRecorder recorder;
  HttpServer server(InlineOptions(&recorder, 1));
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpGet(server.port(), "/inline").status, 200);
  EXPECT_EQ(HttpGet(server.port(), "/other").status, 200);
  EXPECT_EQ(recorder.NameFor("/inline"), "http-io");
  EXPECT_EQ(recorder.NameFor("/other"), "http-worker");
  server.Stop();
}

// A pending answer of a request handled on the I/O thread does not hold that thread: with one
// I/O thread, other connections are served while it waits, and it is answered once completed.
TEST(HttpServerTest, PendingAnswerOnTheIoThreadLeavesItFree) {
  ThreadRecorder recorder;
  HttpServer server(InlineOptions(&recorder, 1));
  ASSERT_TRUE(server.Start().ok());
  std::vector<std::future<Reply>> pending =
      GetPendingConcurrently(server.port(), recorder.pending(), 3);
  EXPECT_EQ(HttpGet(server.port(), "/inline").status, 200);
  EXPECT_EQ(recorder.NameFor("/pending"), "http-io");
  recorder.pending().AnswerAll();
  for (auto& p : pending) EXPECT_EQ(p.get().status, 201);
  server.Stop();
}

// Each I/O thread runs its own connections: connections accepted one after another go to the
// threads in turn.
TEST(HttpServerTest, ConnectionsAreSpreadOverTheIoThreads) {
  ThreadRecorder recorder;
  HttpServer server(InlineOptions(&recorder, 2));
  ASSERT_TRUE(server.Start().ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(HttpGet(server.port(), "/inline").status, 200);
  EXPECT_EQ(recorder.distinct_threads(), 2u);
  server.Stop();
}

}  // namespace
}  // namespace converge::apiserver
