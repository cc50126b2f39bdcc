// Lists served from the watch cache never miss a write acknowledged before the list began, even
// while the cache lags behind the store: a list with resourceVersion "" or "0" waits for the
// cache to catch up (a GET at "0" does not: the server's own hot-path lookups use it).
// resourceVersion "0" allows any version upstream; ours is served fresh so that an informer
// starting after a restart sees what its previous incarnation wrote (otherwise a restarted
// ReplicaSet controller creates the same pods again).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

// Holds every watch response back while closed; the caches behind it lag the store.
class Gate {
 public:
  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // False if `stop` was requested before the gate opened.
  bool Wait(const std::stop_token& stop) {
    std::unique_lock lock(mu_);
    while (!open_) {
      if (stop.stop_requested()) return false;
      cv_.wait_for(lock, std::chrono::milliseconds(10));
    }
    return true;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;  // guarded by mu_
};

class GatedWatchStream final : public store::WatchStream {
 public:
  GatedWatchStream(std::unique_ptr<store::WatchStream> inner, Gate* gate)
      : inner_(std::move(inner)), gate_(gate) {}
  util::StatusOr<store::WatchResponse> Next(std::stop_token stop) override {
    auto resp = inner_->Next(stop);
    if (resp.ok() && !gate_->Wait(stop)) return util::Cancelled("stopped");
    return resp;
  }
  void RequestProgress() override { inner_->RequestProgress(); }
  void Cancel() override { inner_->Cancel(); }

 private:
  std::unique_ptr<store::WatchStream> inner_;
  Gate* const gate_;
};

// The embedded store, with every watch stream behind `gate`.
class GatedKV final : public store::KV {
 public:
  GatedKV(std::unique_ptr<store::KV> inner, Gate* gate) : inner_(std::move(inner)), gate_(gate) {}
  util::StatusOr<store::RangeResponse> Range(const store::RangeRequest& req) override {
    return inner_->Range(req);
  }
  util::StatusOr<store::PutResponse> Put(const store::PutRequest& req) override {
    return inner_->Put(req);
  }
  util::StatusOr<store::DeleteRangeResponse> DeleteRange(
      const store::DeleteRangeRequest& req) override {
    return inner_->DeleteRange(req);
  }
  util::StatusOr<store::TxnResponse> Txn(const store::TxnRequest& req) override {
    return inner_->Txn(req);
  }
  void TxnAsync(store::TxnRequest req, TxnCallback done) override {
    inner_->TxnAsync(std::move(req), std::move(done));
  }
  util::StatusOr<store::CompactResponse> Compact(store::Revision revision) override {
    return inner_->Compact(revision);
  }
  util::StatusOr<std::unique_ptr<store::WatchStream>> Watch(
      const store::WatchRequest& req) override {
    auto w = inner_->Watch(req);
    if (!w.ok()) return w.status();
    return std::unique_ptr<store::WatchStream>(new GatedWatchStream(std::move(*w), gate_));
  }
  store::Revision CurrentRevision() const override { return inner_->CurrentRevision(); }
  store::Revision CompactRevision() const override { return inner_->CompactRevision(); }

 private:
  std::unique_ptr<store::KV> inner_;
  Gate* const gate_;
};

constexpr char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

class ListFreshnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir_.path()));
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    kv_ = std::make_unique<GatedKV>(std::move(*kv), &gate_);
    APIServerOptions options;
    options.kv = kv_.get();
    options.compaction_interval = std::chrono::milliseconds(0);
    server_ = std::make_unique<APIServer>(options);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    gate_.Open();
    if (server_) server_->Stop();
  }

  Response Do(const std::string& method, const std::string& path, const std::string& query,
              const std::string& body = "") {
    Request req;
    req.method = method;
    req.path = path;
    if (!query.empty()) {
      const size_t eq = query.find('=');
      req.query.emplace_back(query.substr(0, eq), query.substr(eq + 1));
    }
    req.headers = {{"content-type", "application/json"}};
    req.body = body;
    req.in_process = true;
    req.user.name = "system:admin";
    req.user.groups = {"system:masters", "system:authenticated"};
    req.user.authenticated = true;
    return server_->Handle(req);
  }

  // Creates a ConfigMap while the caches cannot see it, lists with `query` while they lag, and
  // returns the names listed. The gate opens 300 ms into the list.
  std::vector<std::string> ListWhileTheCacheLags(const std::string& name,
                                                 const std::string& query) {
    gate_.Close();
    Response created = Do("POST", kConfigMaps, "",
                          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                              R"("},"data":{"k":"v"}})");
    EXPECT_EQ(created.status, 201) << created.body;
    std::jthread opener([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      gate_.Open();
    });
    Response listed = Do("GET", kConfigMaps, query);
    EXPECT_EQ(listed.status, 200) << listed.body;
    std::vector<std::string> names;
    json::value v = json::parse(listed.body);
    for (const json::value& item : v.at("items").as_array()) {
      names.emplace_back(item.at("metadata").at("name").as_string());
    }
    return names;
  }

  store::TempDir dir_;
  Gate gate_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<APIServer> server_;
};

TEST_F(ListFreshnessTest, AnyVersionListSeesEveryAcknowledgedWrite) {
  EXPECT_EQ(ListWhileTheCacheLags("first", "resourceVersion=0"), std::vector<std::string>{"first"});
}

TEST_F(ListFreshnessTest, ConsistentListSeesEveryAcknowledgedWrite) {
  EXPECT_EQ(ListWhileTheCacheLags("first", ""), std::vector<std::string>{"first"});
}

}  // namespace
}  // namespace converge::apiserver
