#include "server/inprocess_transport.h"

#include <gtest/gtest.h>

#include <deque>
#include <thread>

namespace converge::server {
namespace {

using apiserver::ResponseStream;

// A server-side stream the test feeds: Poll hands out what was pushed, else parks the wake.
class FakeServerStream final : public ResponseStream {
 public:
  PollResult Poll(std::vector<std::shared_ptr<const std::string>>* out,
                  std::function<void()> wake) override {
    std::lock_guard lock(mu_);
    if (!chunks_.empty()) {
      while (!chunks_.empty()) {
        out->push_back(chunks_.front());
        chunks_.pop_front();
      }
      return PollResult::kData;
    }
    if (ended_) return PollResult::kEnd;
    wake_ = std::move(wake);
    return PollResult::kPending;
  }
  void Close() override {
    std::lock_guard lock(mu_);
    closed_ = true;
  }

  void Push(std::shared_ptr<const std::string> chunk) {
    std::function<void()> wake;
    {
      std::lock_guard lock(mu_);
      chunks_.push_back(std::move(chunk));
      wake.swap(wake_);
    }
    if (wake) wake();  // outside the lock, as a server would
  }
  void End() {
    std::function<void()> wake;
    {
      std::lock_guard lock(mu_);
      ended_ = true;
      wake.swap(wake_);
    }
    if (wake) wake();
  }
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  bool parked() const {
    std::lock_guard lock(mu_);
    return static_cast<bool>(wake_);
  }

 private:
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<const std::string>> chunks_;
  std::function<void()> wake_;
  bool ended_ = false;
  bool closed_ = false;
};

TEST(InProcessTransportTest, HandsTheRequestOverAndTheResponseBack) {
  apiserver::Request seen;
  InProcessTransport t([&](apiserver::Request& r) {
    seen = r;
    apiserver::Response resp;
    resp.status = 201;
    resp.body = R"({"kind":"ConfigMap"})";
    resp.headers = {{"audit-id", "a1"}};
    return resp;
  });
  client::HttpRequest req{.method = "POST",
                          .path = "/api/v1/namespaces/a b/configmaps",
                          .query = {{"fieldManager", "x y"}},
                          .headers = {{"content-type", "application/json"}},
                          .body = R"({"metadata":{"name":"c"}})"};
  util::StatusOr<client::HttpResponse> resp = t.Do(req);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->body, R"({"kind":"ConfigMap"})");
  EXPECT_EQ(resp->Header("audit-id"), "a1");
  EXPECT_EQ(resp->Header("content-type"), "application/json");
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.path, "/api/v1/namespaces/a b/configmaps");  // no encoding in-process
  ASSERT_EQ(seen.query.size(), 1u);
  EXPECT_EQ(seen.query[0].second, "x y");
  EXPECT_EQ(seen.Header("content-type"), "application/json");
  EXPECT_EQ(seen.body, R"({"metadata":{"name":"c"}})");
  EXPECT_TRUE(seen.in_process);
  EXPECT_TRUE(seen.user.authenticated);
  EXPECT_EQ(seen.user.name, "system:apiserver");
}

TEST(InProcessTransportTest, TheCallersStopTokenReachesTheHandlerAsCancelled) {
  // A handler that loops over many objects (deletecollection) sees its caller give up mid-way.
  std::stop_source caller;
  bool before = true;
  bool after = false;
  InProcessTransport t([&](apiserver::Request& r) {
    before = r.cancelled.stop_requested();
    caller.request_stop();  // the caller's component shuts down while the handler works
    after = r.cancelled.stop_requested();
    apiserver::Response resp;
    resp.status = 200;
    return resp;
  });
  util::StatusOr<client::HttpResponse> resp =
      t.Do({.method = "DELETE", .path = "/api/v1/namespaces/a/pods", .stop = caller.get_token()});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_FALSE(before);
  EXPECT_TRUE(after);
}

TEST(InProcessTransportTest, StreamsPassTheServersChunksWithoutCopies) {
  auto source = std::make_shared<FakeServerStream>();
  InProcessTransport t([&](apiserver::Request&) {
    apiserver::Response resp;
    resp.stream = source;
    return resp;
  });
  util::StatusOr<client::StreamedResponse> resp = t.Stream({.path = "/api/v1/pods"});
  ASSERT_TRUE(resp.ok());
  auto chunk = std::make_shared<const std::string>("{\"type\":\"ADDED\"}\n");
  std::thread server([&] {
    while (!source->parked()) std::this_thread::yield();
    source->Push(chunk);  // wakes the reader parked on kPending
  });
  std::vector<std::shared_ptr<const std::string>> out;
  util::StatusOr<bool> more = resp->body->Read(&out);
  server.join();
  ASSERT_TRUE(more.ok());
  ASSERT_TRUE(*more);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(), chunk.get());  // the very bytes the server encoded once

  source->End();
  out.clear();
  more = resp->body->Read(&out);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
  EXPECT_TRUE(source->closed());
}

TEST(InProcessTransportTest, StopTokenCancelsAParkedReadAndClosesTheSource) {
  auto source = std::make_shared<FakeServerStream>();
  InProcessTransport t([&](apiserver::Request&) {
    apiserver::Response resp;
    resp.stream = source;
    return resp;
  });
  std::stop_source stop;
  util::StatusOr<client::StreamedResponse> resp =
      t.Stream({.path = "/api/v1/pods", .stop = stop.get_token()});
  ASSERT_TRUE(resp.ok());
  std::thread canceller([&] {
    while (!source->parked()) std::this_thread::yield();
    stop.request_stop();
  });
  std::vector<std::shared_ptr<const std::string>> out;
  util::StatusOr<bool> more = resp->body->Read(&out);
  canceller.join();
  EXPECT_EQ(more.status().code(), util::Code::kCancelled);
  EXPECT_TRUE(source->closed());
  source->Push(std::make_shared<const std::string>("late"));  // a late wake is harmless
}

TEST(InProcessTransportTest, ServerStreamTimeoutEndsTheStreamCleanly) {
  auto source = std::make_shared<FakeServerStream>();
  InProcessTransport t([&](apiserver::Request&) {
    apiserver::Response resp;
    resp.stream = source;
    resp.stream_timeout = std::chrono::milliseconds(1);
    return resp;
  });
  util::StatusOr<client::StreamedResponse> resp = t.Stream({.path = "/api/v1/pods"});
  ASSERT_TRUE(resp.ok());
  std::vector<std::shared_ptr<const std::string>> out;
  util::StatusOr<bool> more = resp->body->Read(&out);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
  EXPECT_TRUE(source->closed());
}

TEST(InProcessTransportTest, DroppingAStreamClosesTheSource) {
  auto source = std::make_shared<FakeServerStream>();
  InProcessTransport t([&](apiserver::Request&) {
    apiserver::Response resp;
    resp.stream = source;
    return resp;
  });
  {
    util::StatusOr<client::StreamedResponse> resp = t.Stream({.path = "/api/v1/pods"});
    ASSERT_TRUE(resp.ok());
  }
  EXPECT_TRUE(source->closed());
}

TEST(InProcessTransportTest, ErrorsAndPlainBodiesStreamAsOneChunk) {
  InProcessTransport t([&](apiserver::Request&) {
    apiserver::Response resp;
    resp.status = 410;
    resp.body = R"({"kind":"Status","reason":"Expired"})";
    return resp;
  });
  util::StatusOr<client::StreamedResponse> resp = t.Stream({.path = "/api/v1/pods"});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 410);
  util::StatusOr<std::string> body = client::ReadAll(*resp->body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body, R"({"kind":"Status","reason":"Expired"})");
}

}  // namespace
}  // namespace converge::server
