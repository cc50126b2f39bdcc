#include "client/watch.h"

#include <gtest/gtest.h>

#include "client/api_errors.h"
#include "client/fake_transport.h"

namespace converge::client {
namespace {

const char kStream[] =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"5"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"6"}}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}})"
    "\n"
    R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"10"}}})"
    "\n"
    R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","reason":"Expired",)"
    R"js("message":"too old resource version: 3 (7)","code":410}})js"
    "\n";

void ExpectTheStream(const std::deque<WatchEvent>& got) {
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].type, EventType::kAdded);
  EXPECT_EQ(got[0].object->name(), "a");
  EXPECT_EQ(got[0].object->resource_version(), "5");
  EXPECT_EQ(got[1].type, EventType::kModified);
  EXPECT_EQ(got[2].type, EventType::kBookmark);
  EXPECT_EQ(got[2].object->resource_version(), "9");
  EXPECT_EQ(got[3].type, EventType::kDeleted);
  EXPECT_EQ(got[4].type, EventType::kError);
  EXPECT_EQ(got[4].object, nullptr);
  EXPECT_TRUE(IsExpired(got[4].error));
  EXPECT_EQ(got[4].error.message(), "too old resource version: 3 (7)");
}

TEST(WatchDecoderTest, DecodesEveryChunkingOfTheSameBytes) {
  const std::string all = kStream;
  // Whole, byte by byte, and cut at every position into two pieces: boundaries never matter.
  {
    WatchDecoder d;
    std::deque<WatchEvent> got;
    ASSERT_TRUE(d.Feed(all, &got).ok());
    ExpectTheStream(got);
    EXPECT_FALSE(d.partial());
  }
  {
    WatchDecoder d;
    std::deque<WatchEvent> got;
    for (char c : all) ASSERT_TRUE(d.Feed(std::string_view(&c, 1), &got).ok());
    ExpectTheStream(got);
  }
  for (size_t cut = 1; cut < all.size(); cut += 7) {
    WatchDecoder d;
    std::deque<WatchEvent> got;
    ASSERT_TRUE(d.Feed(std::string_view(all).substr(0, cut), &got).ok());
    ASSERT_TRUE(d.Feed(std::string_view(all).substr(cut), &got).ok());
    ExpectTheStream(got);
  }
}

TEST(WatchDecoderTest, ConcatenatedDocumentsWithoutNewlines) {
  WatchDecoder d;
  std::deque<WatchEvent> got;
  ASSERT_TRUE(d.Feed(R"({"type":"ADDED","object":{}}{"type":"DELETED","object":{}})", &got).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].type, EventType::kDeleted);
}

TEST(WatchDecoderTest, MalformedInputIsDataLoss) {
  const char* bad[] = {R"({"type":"ADDED"})", R"({"type":"NOPE","object":{}})", R"([1,2])",
                       R"({"type":"ADDED","object":{]})"};
  for (const char* b : bad) {
    WatchDecoder d;
    std::deque<WatchEvent> got;
    EXPECT_EQ(d.Feed(b, &got).code(), util::Code::kDataLoss) << b;
  }
}

TEST(StreamWatcherTest, ReadsEventsThenTheEnd) {
  auto body = std::make_shared<FakeStream>();
  StreamWatcher w(body->NewReader({}));
  std::string all = kStream;
  body->Push(all.substr(0, 50));
  body->Push(all.substr(50));
  body->End();
  std::vector<EventType> types;
  for (;;) {
    util::StatusOr<std::optional<WatchEvent>> ev = w.Next();
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    if (!ev->has_value()) break;
    types.push_back((*ev)->type);
  }
  EXPECT_EQ(types,
            (std::vector<EventType>{EventType::kAdded, EventType::kModified, EventType::kBookmark,
                                    EventType::kDeleted, EventType::kError}));
}

TEST(StreamWatcherTest, AStreamCutInsideAnEventIsUnavailable) {
  auto body = std::make_shared<FakeStream>();
  StreamWatcher w(body->NewReader({}));
  body->Push(R"({"type":"ADDED","obj)");
  body->End();
  EXPECT_EQ(w.Next().status().code(), util::Code::kUnavailable);
}

TEST(StreamWatcherTest, TransportFailuresPassThrough) {
  auto body = std::make_shared<FakeStream>();
  StreamWatcher w(body->NewReader({}));
  body->Fail(util::Unavailable("connection reset"));
  EXPECT_EQ(w.Next().status().code(), util::Code::kUnavailable);
}

}  // namespace
}  // namespace converge::client
