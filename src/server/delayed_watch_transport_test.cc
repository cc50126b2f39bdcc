#include "server/delayed_watch_transport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "client/fake_transport.h"

namespace converge::server {
namespace {

using client::FakeStream;
using client::FakeTransport;
using client::HttpRequest;

struct Fixture {
  std::shared_ptr<FakeStream> body = std::make_shared<FakeStream>();
  std::shared_ptr<WatchDelay> delay = std::make_shared<WatchDelay>();
  DelayedWatchTransport transport{
      std::make_shared<FakeTransport>(
          [](const HttpRequest&) { return FakeTransport::Json(200, "{}"); },
          [this](const HttpRequest&) {
            return FakeTransport::StreamAnswer{.status = 200, .body = body};
          }),
      delay};
};

HttpRequest WatchRequest(std::stop_token stop = {}) {
  return HttpRequest{.path = "/api/v1/pods", .query = {{"watch", "true"}}, .stop = stop};
}

TEST(DelayedWatchTransportTest, WatchBytesWaitUntilTheDelayIsLifted) {
  Fixture f;
  f.delay->Set(std::chrono::hours(1));
  auto resp = f.transport.Stream(WatchRequest());
  ASSERT_TRUE(resp.ok());
  f.body->Push("event-1\n");
  std::atomic<bool> returned{false};
  std::vector<std::shared_ptr<const std::string>> chunks;
  std::thread reader([&] {
    auto r = resp->body->Read(&chunks);
    EXPECT_TRUE(r.ok() && *r);
    returned = true;
  });
  // An hour's delay: the bytes were read from the server but are not handed on.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load());
  f.delay->Set(std::chrono::milliseconds(0));  // a waiting batch is released at once
  reader.join();
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(*chunks[0], "event-1\n");
}

TEST(DelayedWatchTransportTest, StopCancelsAWaitingBatch) {
  Fixture f;
  f.delay->Set(std::chrono::hours(1));
  std::stop_source stop;
  auto resp = f.transport.Stream(WatchRequest(stop.get_token()));
  ASSERT_TRUE(resp.ok());
  f.body->Push("event-1\n");
  util::Status result;
  std::thread reader([&] {
    std::vector<std::shared_ptr<const std::string>> chunks;
    result = resp->body->Read(&chunks).status();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop.request_stop();
  reader.join();
  EXPECT_EQ(result.code(), util::Code::kCancelled) << result.ToString();
}

TEST(DelayedWatchTransportTest, OtherStreamsAndRequestsAreNotDelayed) {
  Fixture f;
  f.delay->Set(std::chrono::hours(1));
  // A followed log is a stream but not a watch: it must come through (else this test hangs).
  auto resp = f.transport.Stream(HttpRequest{.path = "/api/v1/namespaces/a/pods/p/log"});
  ASSERT_TRUE(resp.ok());
  f.body->Push("line\n");
  std::vector<std::shared_ptr<const std::string>> chunks;
  auto r = resp->body->Read(&chunks);
  ASSERT_TRUE(r.ok() && *r);
  auto get = f.transport.Do(HttpRequest{.path = "/api/v1/pods"});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, 200);
}

TEST(DelayedWatchTransportTest, TheEndOfAStreamIsNotDelayed) {
  Fixture f;
  f.delay->Set(std::chrono::hours(1));
  auto resp = f.transport.Stream(WatchRequest());
  ASSERT_TRUE(resp.ok());
  f.body->End();
  std::vector<std::shared_ptr<const std::string>> chunks;
  auto r = resp->body->Read(&chunks);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
}

}  // namespace
}  // namespace converge::server
