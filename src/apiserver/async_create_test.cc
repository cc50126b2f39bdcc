// Creates through a transport that can resume requests (Request::resume, as HttpServer's): the
// handler answers with a pending Response, the commit starts when the transport asks for the
// answer, and the answer — with warnings, metrics and the audit event — comes through `resume`
// once the object is stored. The same requests without `resume` are answered at once.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/audit.h"
#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

constexpr char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

class RecordingAuditSink : public AuditSink {
 public:
  void Write(std::string line) override {
    std::lock_guard lock(mu_);
    lines_.push_back(std::move(line));
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;  // guarded by mu_
};

// Continuations queued by `resume`, run by the test on its own thread when it says so.
class ResumeQueue {
 public:
  std::function<void(std::function<void()>)> Resume() {
    return [this](std::function<void()> continuation) {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(continuation));
      cv_.notify_all();
    };
  }
  // Waits for one continuation and runs it on this thread.
  void RunOne() {
    std::function<void()> continuation;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty(); });
      continuation = std::move(queue_.front());
      queue_.pop_front();
    }
    continuation();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
};

class AsyncCreateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir_.path()));
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    kv_ = std::move(*kv);
    APIServerOptions options;
    options.kv = kv_.get();
    options.compaction_interval = std::chrono::milliseconds(0);
    options.audit = &audit_;
    server_ = std::make_unique<APIServer>(options);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::unique_ptr<Request> MakeRequest(const std::string& method, const std::string& path,
                                       const std::string& body = "") {
    auto req = std::make_unique<Request>();
    req->method = method;
    req->path = path;
    req->headers = {{"content-type", "application/json"}};
    req->body = body;
    req->in_process = true;
    req->user.name = "system:admin";
    req->user.groups = {"system:masters", "system:authenticated"};
    req->user.authenticated = true;
    return req;
  }

  // Handles `req` through a resuming transport: the final response, and whether it was pending.
  Response HandleResumed(Request& req, bool* was_pending) {
    req.resume = resumes_.Resume();
    Response r = server_->Handle(req);
    *was_pending = static_cast<bool>(r.pending);
    if (!r.pending) return r;
    std::optional<Response> answer;
    r.pending([&answer](Response final_response) { answer = std::move(final_response); });
    resumes_.RunOne();  // the commit's acknowledgement hands the rest over
    EXPECT_TRUE(answer) << "the answer did not come through resume";
    return answer ? std::move(*answer) : Response{};
  }

  static std::string ConfigMap(const std::string& metadata) {
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)" + metadata +
           R"(,"data":{"k":"v"}})";
  }

  store::TempDir dir_;
  std::unique_ptr<store::KV> kv_;
  RecordingAuditSink audit_;
  ResumeQueue resumes_;
  std::unique_ptr<APIServer> server_;
};

TEST_F(AsyncCreateTest, CreateIsPendingUntilStoredThenAnsweredAndAuditedOnce) {
  auto req = MakeRequest("POST", kConfigMaps, ConfigMap(R"({"name":"one"})"));
  req->resume = resumes_.Resume();
  Response r = server_->Handle(*req);
  ASSERT_TRUE(r.pending) << r.status << " " << r.body;
  // Nothing is written and nothing audited before the transport asks for the answer.
  EXPECT_EQ(server_->Handle(*MakeRequest("GET", std::string(kConfigMaps) + "/one")).status, 404);
  const size_t audited_before = audit_.lines().size();

  std::optional<Response> answer;
  r.pending([&answer](Response final_response) { answer = std::move(final_response); });
  resumes_.RunOne();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 201) << answer->body;
  json::value created = json::parse(answer->body);
  EXPECT_EQ(created.at("metadata").at("name").as_string(), "one");
  EXPECT_FALSE(created.at("metadata").at("resourceVersion").as_string().empty());
  EXPECT_FALSE(created.at("metadata").at("uid").as_string().empty());

  // Audited once, with the final code, and the answer carries its Audit-Id.
  std::vector<std::string> lines = audit_.lines();
  ASSERT_EQ(lines.size(), audited_before + 1);
  json::value event = json::parse(lines.back());
  EXPECT_EQ(event.at("verb").as_string(), "create");
  EXPECT_EQ(event.at("responseStatus").at("code").as_int64(), 201);
  bool has_audit_id = false;
  for (const auto& [k, v] : answer->headers) has_audit_id |= k == "Audit-Id" && !v.empty();
  EXPECT_TRUE(has_audit_id);

  Response got = server_->Handle(*MakeRequest("GET", std::string(kConfigMaps) + "/one"));
  EXPECT_EQ(got.status, 200) << got.body;
}

TEST_F(AsyncCreateTest, ExistingNameIsAConflictThroughResume) {
  bool pending = false;
  auto first = MakeRequest("POST", kConfigMaps, ConfigMap(R"({"name":"taken"})"));
  EXPECT_EQ(HandleResumed(*first, &pending).status, 201);
  EXPECT_TRUE(pending);
  auto second = MakeRequest("POST", kConfigMaps, ConfigMap(R"({"name":"taken"})"));
  Response r = HandleResumed(*second, &pending);
  EXPECT_TRUE(pending);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(json::parse(r.body).at("reason").as_string(), "AlreadyExists");
}

TEST_F(AsyncCreateTest, ErrorsBeforeTheWriteAndDryRunsAreNotPending) {
  bool pending = true;
  auto invalid = MakeRequest("POST", kConfigMaps, ConfigMap(R"({"name":"Not_A_Name"})"));
  EXPECT_EQ(HandleResumed(*invalid, &pending).status, 422);
  EXPECT_FALSE(pending);

  pending = true;
  auto dry_run = MakeRequest("POST", kConfigMaps, ConfigMap(R"({"name":"dry"})"));
  dry_run->query = {{"dryRun", "All"}};
  EXPECT_EQ(HandleResumed(*dry_run, &pending).status, 201);
  EXPECT_FALSE(pending);
  EXPECT_EQ(server_->Handle(*MakeRequest("GET", std::string(kConfigMaps) + "/dry")).status, 404);
}

TEST_F(AsyncCreateTest, GeneratedNamesThroughResume) {
  for (int i = 0; i < 3; ++i) {
    bool pending = false;
    auto req = MakeRequest("POST", kConfigMaps, ConfigMap(R"({"generateName":"gen-"})"));
    Response r = HandleResumed(*req, &pending);
    EXPECT_TRUE(pending);
    ASSERT_EQ(r.status, 201) << r.body;
    std::string name(json::parse(r.body).at("metadata").at("name").as_string());
    EXPECT_TRUE(name.starts_with("gen-")) << name;
    EXPECT_EQ(server_->Handle(*MakeRequest("GET", std::string(kConfigMaps) + "/" + name)).status,
              200);
  }
}

// Without `resume` (the in-process transport) the same create is answered at once.
TEST_F(AsyncCreateTest, WithoutResumeTheCreateIsAnsweredAtOnce) {
  Response r = server_->Handle(*MakeRequest("POST", kConfigMaps, ConfigMap(R"({"name":"sync"})")));
  EXPECT_FALSE(r.pending);
  EXPECT_EQ(r.status, 201) << r.body;
}

}  // namespace
}  // namespace converge::apiserver
