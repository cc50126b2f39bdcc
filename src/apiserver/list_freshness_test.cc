// Lists served from the watch cache never miss a write acknowledged before the list began, even
// while the cache lags behind the store: a list with resourceVersion "" or "0" waits for the
// cache to catch up (a GET at "0" does not: the server's own hot-path lookups use it).
// resourceVersion "0" allows any version upstream; ours is served fresh so that an informer
// starting after a write (a controller restarted after its own creates) sees it.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "apiserver/handler_test_util.h"
#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/gated_kv_test_util.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

constexpr char kConfigMapsUrl[] = "/api/v1/namespaces/default/configmaps";

class ListFreshnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir_.path()));
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    kv_ = std::make_unique<store::GatedKV>(std::move(*kv), &gate_);
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
    Request req = AdminRequest(method, query.empty() ? path : path + "?" + query, body);
    return server_->Handle(req);
  }

  // Creates a ConfigMap while the caches cannot see it, lists with `query` while they lag, and
  // returns the names listed. The gate opens 300 ms into the list.
  std::vector<std::string> ListWhileTheCacheLags(const std::string& name,
                                                 const std::string& query) {
    gate_.Close();
    Response created = Do("POST", kConfigMapsUrl, "",
                          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                              R"("},"data":{"k":"v"}})");
    EXPECT_EQ(created.status, 201) << created.body;
    std::jthread opener([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      gate_.Open();
    });
    Response listed = Do("GET", kConfigMapsUrl, query);
    EXPECT_EQ(listed.status, 200) << listed.body;
    std::vector<std::string> names;
    json::value v = json::parse(listed.body);
    for (const json::value& item : v.at("items").as_array()) {
      names.emplace_back(item.at("metadata").at("name").as_string());
    }
    return names;
  }

  store::TempDir dir_;
  store::WatchGate gate_;
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
