#include "client/http_transport.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client/http_test_server.h"
#include "client/test_pki.h"

namespace converge::client {
namespace {

using testing::TestHttpServer;
using testing::TestRequest;
using testing::TestResponse;

// A gate a server handler blocks on until the test opens it (or the test ends).
class Gate {
 public:
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Chunks a streaming handler sends when the test pushes them; nullopt ends the body.
class ChunkFeed {
 public:
  void Push(std::optional<std::string> chunk) {
    std::lock_guard lock(mu_);
    chunks_.push_back(std::move(chunk));
    cv_.notify_all();
  }
  std::optional<std::string> Next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !chunks_.empty(); });
    std::optional<std::string> c = std::move(chunks_.front());
    chunks_.pop_front();
    return c;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::optional<std::string>> chunks_;
};

std::unique_ptr<HttpTransport> NewTransport(RestConfig config, util::Clock* clock = nullptr) {
  util::StatusOr<std::unique_ptr<HttpTransport>> t =
      HttpTransport::New({.config = std::move(config), .clock = clock});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TestResponse Ok(std::string body = R"({"kind":"Status"})") {
  TestResponse r;
  r.body = std::move(body);
  return r;
}

TEST(HttpTransportTest, SendsEncodedTargetHeadersAndBody) {
  TestHttpServer server([](const TestRequest& r) { return Ok("{\"echo\":\"" + r.method + "\"}"); });
  server.Start();
  auto t = NewTransport(
      {.server = server.url() + "/prefix/", .bearer_token = "s3cret", .user_agent = "test-agent"});
  HttpRequest req;
  req.method = "POST";
  req.path = "/api/v1/namespaces/ns 1/configmaps";
  req.query = {{"labelSelector", "app in (a,b),tier!=x"}, {"dryRun", "All"}};
  req.headers = {{"content-type", "application/json"}};
  req.body = R"({"a":1})";
  util::StatusOr<HttpResponse> resp = t->Do(req);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body, R"({"echo":"POST"})");
  EXPECT_EQ(resp->Header("Content-Type"), "application/json");

  std::vector<TestRequest> got = server.requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].target,
            "/prefix/api/v1/namespaces/ns%201/configmaps?labelSelector=app%20in%20(a,b),tier!=x"
            "&dryRun=All");
  EXPECT_EQ(got[0].Header("authorization"), "Bearer s3cret");
  EXPECT_EQ(got[0].Header("user-agent"), "test-agent");
  EXPECT_EQ(got[0].Header("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(got[0].Header("content-type"), "application/json");
  EXPECT_EQ(got[0].body, R"({"a":1})");
}

TEST(HttpTransportTest, ErrorStatusesAreResponsesNotTransportErrors) {
  TestHttpServer server([](const TestRequest&) {
    TestResponse r;
    r.status = 404;
    r.body = R"({"kind":"Status","code":404})";
    return r;
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  util::StatusOr<HttpResponse> resp = t->Do({.path = "/api/v1/namespaces/x"});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 404);
}

TEST(HttpTransportTest, KeepAliveReusesOneConnection) {
  TestHttpServer server([](const TestRequest&) { return Ok(); });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(t->Do({.path = "/version"}).ok());
  }
  EXPECT_EQ(t->connections_opened(), 1);
  EXPECT_EQ(server.connections_accepted(), 1);
  for (const TestRequest& r : server.requests()) EXPECT_EQ(r.connection, 1);
}

TEST(HttpTransportTest, RetriesOnceOnAPooledConnectionTheServerClosed) {
  TestHttpServer server([](const TestRequest&) { return Ok(); });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  ASSERT_TRUE(t->Do({.path = "/a"}).ok());
  server.CloseAllConnections();
  while (server.open_connections() > 0) std::this_thread::yield();

  util::StatusOr<HttpResponse> resp = t->Do({.method = "POST", .path = "/b", .body = "{}"});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(t->connections_opened(), 2);
  std::vector<TestRequest> got = server.requests();
  ASSERT_EQ(got.size(), 2u);  // /b reached the server exactly once
  EXPECT_EQ(got[1].target, "/b");
  EXPECT_EQ(got[1].connection, 2);
}

TEST(HttpTransportTest, ConnectionCloseResponseIsNotPooled) {
  TestHttpServer server([](const TestRequest&) {
    TestResponse r = Ok();
    r.close = true;
    return r;
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  ASSERT_TRUE(t->Do({.path = "/a"}).ok());
  ASSERT_TRUE(t->Do({.path = "/b"}).ok());
  EXPECT_EQ(t->connections_opened(), 2);
}

TEST(HttpTransportTest, RequestTimeoutIsDeadlineExceeded) {
  Gate gate;
  TestHttpServer server([&](const TestRequest&) {
    gate.Wait();
    return Ok();
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  util::StatusOr<HttpResponse> resp = t->Do({.method = "POST",
                                             .path = "/slow",
                                             .body = R"({"kind":"Pod"})",
                                             .timeout = std::chrono::milliseconds(50)});
  EXPECT_EQ(resp.status().code(), util::Code::kDeadlineExceeded) << resp.status().ToString();
  // The error names the request, whose body went into the HTTP message (and to the server).
  EXPECT_EQ(resp.status().message(), "POST " + server.url() + "/slow: timed out");
  gate.Open();
  // The client gave up after 50 ms; the server's thread may read the request later than that.
  ASSERT_TRUE(server.WaitForRequests(1));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].body, R"({"kind":"Pod"})");
}

TEST(HttpTransportTest, StopTokenCancelsARequestInFlight) {
  Gate gate;
  TestHttpServer server([&](const TestRequest&) {
    gate.Wait();
    return Ok();
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  std::stop_source stop;
  std::thread canceller([&] {
    while (server.requests().empty()) std::this_thread::yield();
    stop.request_stop();
  });
  util::StatusOr<HttpResponse> resp = t->Do({.path = "/slow", .stop = stop.get_token()});
  canceller.join();
  EXPECT_EQ(resp.status().code(), util::Code::kCancelled) << resp.status().ToString();
  gate.Open();
}

TEST(HttpTransportTest, ConnectionRefusedIsUnavailable) {
  uint16_t port;
  {
    TestHttpServer server([](const TestRequest&) { return Ok(); });
    server.Start();
    port = server.port();
  }
  auto t = NewTransport({.server = "http://127.0.0.1:" + std::to_string(port)});
  util::StatusOr<HttpResponse> resp = t->Do({.path = "/"});
  EXPECT_EQ(resp.status().code(), util::Code::kUnavailable) << resp.status().ToString();
}

TEST(HttpTransportTest, StreamDeliversEachChunkBeforeTheNextIsSent) {
  ChunkFeed feed;
  TestHttpServer server([&](const TestRequest&) {
    TestResponse r;
    r.stream = [&] { return feed.Next(); };
    return r;
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  util::StatusOr<StreamedResponse> resp = t->Stream({.path = "/watch"});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->status, 200);

  // Each chunk must come out of Read while the server is still waiting to send the next one:
  // a transport that buffered the body would block here forever.
  for (std::string chunk : {"{\"type\":\"ADDED\"}\n", "{\"type\":\"MODIFIED\"}\n"}) {
    feed.Push(chunk);
    std::string got;
    while (got.size() < chunk.size()) {
      std::vector<std::shared_ptr<const std::string>> out;
      util::StatusOr<bool> more = resp->body->Read(&out);
      ASSERT_TRUE(more.ok()) << more.status().ToString();
      ASSERT_TRUE(*more);
      for (const auto& c : out) got += *c;
    }
    EXPECT_EQ(got, chunk);
  }
  feed.Push(std::nullopt);
  std::vector<std::shared_ptr<const std::string>> out;
  util::StatusOr<bool> more = resp->body->Read(&out);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
}

TEST(HttpTransportTest, StopTokenEndsABlockedStreamRead) {
  ChunkFeed feed;
  TestHttpServer server([&](const TestRequest&) {
    TestResponse r;
    r.stream = [&] { return feed.Next(); };
    return r;
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  std::stop_source stop;
  util::StatusOr<StreamedResponse> resp = t->Stream({.path = "/watch", .stop = stop.get_token()});
  ASSERT_TRUE(resp.ok());
  std::thread canceller([&] { stop.request_stop(); });
  std::vector<std::shared_ptr<const std::string>> out;
  util::StatusOr<bool> more = resp->body->Read(&out);
  canceller.join();
  EXPECT_EQ(more.status().code(), util::Code::kCancelled) << more.status().ToString();
  feed.Push(std::nullopt);
}

TEST(HttpTransportTest, StreamOfAnErrorResponseCarriesTheBody) {
  TestHttpServer server([](const TestRequest&) {
    TestResponse r;
    r.status = 410;
    r.body = R"({"kind":"Status","reason":"Expired"})";
    return r;
  });
  server.Start();
  auto t = NewTransport({.server = server.url()});
  util::StatusOr<StreamedResponse> resp = t->Stream({.path = "/watch"});
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 410);
  util::StatusOr<std::string> body = ReadAll(*resp->body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body, R"({"kind":"Status","reason":"Expired"})");
}

class HttpTransportTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new testing::TestPki(testing::MakeTestPki()); }
  static void TearDownTestSuite() { delete pki_; }
  static testing::TestPki* pki_;
};
testing::TestPki* HttpTransportTlsTest::pki_ = nullptr;

TEST_F(HttpTransportTlsTest, VerifiesTheServerAndPresentsTheClientCertificate) {
  TestHttpServer server([](const TestRequest&) { return Ok(); },
                        {.pki = pki_, .require_client_cert = true});
  server.Start();
  auto t = NewTransport({.server = server.url(),
                         .tls = {.ca_pem = pki_->ca_pem,
                                 .client_cert_pem = pki_->client_cert_pem,
                                 .client_key_pem = pki_->client_key_pem}});
  util::StatusOr<HttpResponse> resp = t->Do({.path = "/version"});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  ASSERT_TRUE(t->Do({.path = "/version"}).ok());  // over the same TLS connection
  EXPECT_EQ(t->connections_opened(), 1);
  std::vector<TestRequest> got = server.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].client_cn, "test-user");
}

// Bodies far larger than a socket buffer and a TLS record: the writer waits for the socket to
// drain, the reader for many records, and both arrive intact on a reused connection.
TEST_F(HttpTransportTlsTest, LargeBodiesCrossIntactBothWays) {
  std::string big(6 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i * 7919) % 26);
  TestHttpServer server(
      [&big](const TestRequest& r) { return Ok(r.body == big ? big : std::string("mismatch")); },
      {.pki = pki_});
  server.Start();
  auto t = NewTransport({.server = server.url(), .tls = {.ca_pem = pki_->ca_pem}});
  for (int i = 0; i < 2; ++i) {
    util::StatusOr<HttpResponse> resp =
        t->Do({.method = "PUT", .path = "/big", .query = {}, .headers = {}, .body = big});
    ASSERT_TRUE(resp.ok()) << resp.status().ToString();
    EXPECT_EQ(resp->body.size(), big.size());
    EXPECT_TRUE(resp->body == big);
  }
  EXPECT_EQ(t->connections_opened(), 1);
}

// A stream's deadline bounds every wait for more of its body: over TLS, a stream that stalls
// after its first chunk ends in DeadlineExceeded once the request's timeout has passed.
TEST_F(HttpTransportTlsTest, AStalledStreamEndsAtItsDeadline) {
  ChunkFeed feed;
  TestHttpServer server(
      [&](const TestRequest&) {
        TestResponse r;
        r.stream = [&] { return feed.Next(); };
        return r;
      },
      {.pki = pki_});
  server.Start();
  auto t = NewTransport({.server = server.url(), .tls = {.ca_pem = pki_->ca_pem}});
  util::StatusOr<StreamedResponse> resp =
      t->Stream({.path = "/watch", .timeout = std::chrono::milliseconds(300)});
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  feed.Push(std::string("{\"type\":\"ADDED\"}\n"));
  std::string got;
  util::Status end;
  while (end.ok()) {
    std::vector<std::shared_ptr<const std::string>> out;
    util::StatusOr<bool> more = resp->body->Read(&out);
    for (const auto& c : out) got += *c;
    if (!more.ok()) end = more.status();
    ASSERT_TRUE(!more.ok() || *more) << "the stream ended without an error";
  }
  EXPECT_EQ(got, "{\"type\":\"ADDED\"}\n");
  EXPECT_EQ(end.code(), util::Code::kDeadlineExceeded) << end.ToString();
  feed.Push(std::nullopt);
}

TEST_F(HttpTransportTlsTest, RejectsAServerSignedByAnotherAuthority) {
  TestHttpServer server([](const TestRequest&) { return Ok(); }, {.pki = pki_});
  server.Start();
  testing::TestPki other = testing::MakeTestPki("other-ca");
  auto t = NewTransport({.server = server.url(), .tls = {.ca_pem = other.ca_pem}});
  util::StatusOr<HttpResponse> resp = t->Do({.path = "/version"});
  EXPECT_EQ(resp.status().code(), util::Code::kUnavailable);
  EXPECT_NE(resp.status().message().find("certificate verify failed"), std::string::npos)
      << resp.status().message();
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpTransportTlsTest, RejectsACertificateForAnotherName) {
  TestHttpServer server([](const TestRequest&) { return Ok(); }, {.pki = pki_});
  server.Start();
  auto t = NewTransport(
      {.server = server.url(), .tls = {.ca_pem = pki_->ca_pem, .server_name = "api.example.com"}});
  EXPECT_EQ(t->Do({.path = "/version"}).status().code(), util::Code::kUnavailable);
  EXPECT_TRUE(server.requests().empty());
  // The name the certificate does carry works.
  auto ok = NewTransport(
      {.server = server.url(), .tls = {.ca_pem = pki_->ca_pem, .server_name = "localhost"}});
  EXPECT_TRUE(ok->Do({.path = "/version"}).ok());
}

TEST_F(HttpTransportTlsTest, InsecureSkipVerifyTalksToAnyServer) {
  TestHttpServer server([](const TestRequest&) { return Ok(); }, {.pki = pki_});
  server.Start();
  auto t = NewTransport({.server = server.url(), .tls = {.insecure_skip_verify = true}});
  EXPECT_TRUE(t->Do({.path = "/version"}).ok());
}

TEST_F(HttpTransportTlsTest, MismatchedClientKeyIsRejectedUpFront) {
  testing::TestPki other = testing::MakeTestPki("other-ca");
  util::StatusOr<std::unique_ptr<HttpTransport>> t =
      HttpTransport::New({.config = {.server = "https://127.0.0.1:1",
                                     .tls = {.client_cert_pem = pki_->client_cert_pem,
                                             .client_key_pem = other.client_key_pem}}});
  EXPECT_EQ(t.status().code(), util::Code::kInvalidArgument);
}

TEST(HttpTransportTest, TokenFileIsReReadAfterAMinute) {
  TestHttpServer server([](const TestRequest&) { return Ok(); });
  server.Start();
  std::string path =
      (std::filesystem::temp_directory_path() / ("converge-token-" + std::to_string(::getpid())))
          .string();
  std::ofstream(path) << "first\n";
  util::FakeClock clock;
  auto t = NewTransport({.server = server.url(), .bearer_token_file = path}, &clock);
  ASSERT_TRUE(t->Do({.path = "/a"}).ok());
  std::ofstream(path) << "second\n";
  ASSERT_TRUE(t->Do({.path = "/b"}).ok());  // cached
  clock.Step(std::chrono::seconds(61));
  ASSERT_TRUE(t->Do({.path = "/c"}).ok());
  std::filesystem::remove(path);
  std::vector<TestRequest> got = server.requests();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].Header("authorization"), "Bearer first");
  EXPECT_EQ(got[1].Header("authorization"), "Bearer first");
  EXPECT_EQ(got[2].Header("authorization"), "Bearer second");
}

TEST(HttpTransportTest, RejectsMalformedServerUrls) {
  EXPECT_FALSE(HttpTransport::New({.config = {.server = "ftp://x"}}).ok());
  EXPECT_FALSE(HttpTransport::New({.config = {.server = "not a url"}}).ok());
  EXPECT_TRUE(HttpTransport::New({.config = {.server = "https://[::1]:6443"}}).ok());
}

}  // namespace
}  // namespace converge::client
