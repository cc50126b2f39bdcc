// deletecollection stops between objects once its caller gives up (Request::cancelled): a
// component shutting down in the all-in-one server must not wait for the deletion of a namespace
// of 150,000 pods it asked for over the in-process transport.
#include <gtest/gtest.h>

#include <memory>
#include <stop_token>
#include <string>

#include <boost/json.hpp>

#include "apiserver/handler_test_util.h"
#include "apiserver/server.h"
#include "store/embedded_store.h"
#include "store/store_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

constexpr char kConfigMapsUrl[] = "/api/v1/namespaces/default/configmaps";

class DeleteCollectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kv = store::OpenEmbeddedStore(store::TestStoreOptions(dir_.path()));
    ASSERT_TRUE(kv.ok()) << kv.status().message();
    kv_ = std::move(*kv);
    APIServerOptions options;
    options.kv = kv_.get();
    options.compaction_interval = std::chrono::milliseconds(0);
    server_ = std::make_unique<APIServer>(options);
    ASSERT_TRUE(server_->Start().ok());
    for (int i = 0; i < 5; ++i) {
      Response created = Do("POST", kConfigMapsUrl,
                            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" +
                                std::to_string(i) + R"("},"data":{"k":"v"}})");
      ASSERT_EQ(created.status, 201) << created.body;
    }
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  Response Do(const std::string& method, const std::string& path, const std::string& body = "",
              std::stop_token cancelled = {}) {
    Request req = AdminRequest(method, path, body);
    req.cancelled = std::move(cancelled);
    return server_->Handle(req);
  }

  size_t Listed() {
    Response listed = Do("GET", kConfigMapsUrl);
    EXPECT_EQ(listed.status, 200) << listed.body;
    return json::parse(listed.body).at("items").as_array().size();
  }

  store::TempDir dir_;
  std::unique_ptr<store::KV> kv_;
  std::unique_ptr<APIServer> server_;
};

TEST_F(DeleteCollectionTest, DeletesEveryObjectOfTheCollection) {
  Response deleted = Do("DELETE", kConfigMapsUrl);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(json::parse(deleted.body).at("items").as_array().size(), 5u);
  EXPECT_EQ(Listed(), 0u);
}

TEST_F(DeleteCollectionTest, ACancelledRequestStopsBeforeTheNextObject) {
  std::stop_source caller;
  caller.request_stop();
  Response deleted = Do("DELETE", kConfigMapsUrl, "", caller.get_token());
  EXPECT_EQ(deleted.status, 500) << deleted.body;
  EXPECT_NE(deleted.body.find("deletecollection stopped after 0 of 5 objects"), std::string::npos)
      << deleted.body;
  EXPECT_EQ(Listed(), 5u) << "nothing was deleted once the caller had given up";
}

}  // namespace
}  // namespace converge::apiserver
