// Two `converge apiserver --store etcd` processes on one etcd, as in a highly available control
// plane: each serves the whole API from its own watch cache fed by its own etcd watch; a write
// through one is seen by watchers on the other, with the same resourceVersion (an etcd revision,
// so comparable across servers); optimistic concurrency holds across them; when one dies,
// clients of the other keep working.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/etcd/etcd_cluster.h"
#include "store/etcd/etcd_store.h"
#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge::testing {
namespace {

std::string Rv(const boost::json::value& v) {
  return std::string(v.at("metadata").at("resourceVersion").as_string());
}

class EtcdApiserversTest : public ::testing::Test {
 protected:
  void SetUp() override {
    etcd_ = std::make_unique<store::etcd::EtcdCluster>(
        store::etcd::EtcdClusterOptions{.dir = etcd_dir_.path() + "/etcd", .members = 1});
    auto s = etcd_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // An API server on the etcd; with `share_pki_with`, the same CA and ServiceAccount key, as
  // the replicas of one control plane have.
  void StartApiserver(ServerProcess* server, const ServerProcess* share_pki_with) {
    ServerOptions o{.extra_args = {"--store", "etcd", "--etcd-endpoints", etcd_->EndpointsFlag()}};
    if (share_pki_with != nullptr) {
      dirs_.push_back(std::make_unique<TempDir>());
      o.data_dir = dirs_.back()->path();
      std::filesystem::copy(share_pki_with->data_dir() + "/pki", o.data_dir + "/pki",
                            std::filesystem::copy_options::recursive);
    }
    ASSERT_TRUE(server->Start(o));
  }

  TempDir etcd_dir_;
  std::unique_ptr<store::etcd::EtcdCluster> etcd_;
  std::vector<std::unique_ptr<TempDir>> dirs_;
};

TEST_F(EtcdApiserversTest, WritesThroughOneAreSeenOnTheOther) {
  ServerProcess a, b;
  StartApiserver(&a, nullptr);
  StartApiserver(&b, &a);
  ASSERT_FALSE(HasFatalFailure());
  auto ca = a.Client();
  auto cb = b.Client();
  const std::string cms = "/api/v1/namespaces/default/configmaps";

  auto list = cb->Get(cms);
  ASSERT_EQ(list.status, 200) << list.body;
  auto watch_b = cb->Watch(cms + "?watch=1&resourceVersion=" + Rv(list.Json()));
  ASSERT_EQ(watch_b->status(), 200);

  auto created = ca->Post(cms, R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"shared"},"data":{"k":"1"}})");
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string created_rv = Rv(created.Json());

  auto ev = watch_b->Next(std::chrono::seconds(30));
  ASSERT_TRUE(ev.has_value()) << "the watcher on B never saw the write through A";
  EXPECT_EQ(ev->at("type").as_string(), "ADDED");
  EXPECT_EQ(ev->at("object").at("metadata").at("name").as_string(), "shared");
  EXPECT_EQ(Rv(ev->at("object")), created_rv) << "resourceVersions are etcd revisions";

  // Stored where upstream keeps it, at the revision the API handed out.
  {
    auto kv =
        store::etcd::OpenEtcdStore(store::etcd::EtcdStoreOptions{.endpoints = etcd_->endpoints()});
    ASSERT_TRUE(kv.ok()) << kv.status().ToString();
    auto r = (*kv)->Range(store::RangeRequest{.key = "/registry/configmaps/default/shared"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->kvs.size(), 1u);
    EXPECT_EQ(std::to_string(r->kvs[0]->mod_revision), created_rv);
  }

  // Read-your-writes across servers: B serves the object at least as new as A's write.
  auto got_b = cb->Get(cms + "/shared");
  ASSERT_EQ(got_b.status, 200);
  EXPECT_EQ(Rv(got_b.Json()), created_rv);

  // Optimistic concurrency across servers: B updates; A's update from the old version loses.
  auto obj = got_b.Json().as_object();
  obj["data"].as_object()["k"] = "2";
  auto updated = cb->Put(cms + "/shared", boost::json::serialize(obj));
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_GT(std::stoll(Rv(updated.Json())), std::stoll(created_rv));
  obj["data"].as_object()["k"] = "stale";
  auto stale = ca->Put(cms + "/shared", boost::json::serialize(obj));
  EXPECT_EQ(stale.status, 409) << stale.body;

  // A watcher on A from the creation sees B's update.
  auto watch_a = ca->Watch(cms + "?watch=1&resourceVersion=" + created_rv);
  auto ev_a = watch_a->Next(std::chrono::seconds(30));
  ASSERT_TRUE(ev_a.has_value());
  EXPECT_EQ(ev_a->at("type").as_string(), "MODIFIED");
  EXPECT_EQ(ev_a->at("object").at("data").at("k").as_string(), "2");

  if (Kubectl::Available()) {
    TempDir cache;
    for (const ServerProcess* s : {&a, &b}) {
      Kubectl k(s->kubeconfig_path(), cache.path() + "/" + std::to_string(s->pid()));
      auto r = k.Run({"get", "configmap", "shared", "-o", "jsonpath={.data.k}"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, "2");
    }
  }

  // One API server dies: clients of the other keep working.
  a.Kill();
  auto after =
      cb->Post(cms, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"}})");
  EXPECT_EQ(after.status, 201) << after.body;
  auto ev_after = watch_b->Next(std::chrono::seconds(30));
  ASSERT_TRUE(ev_after.has_value());
  EXPECT_EQ(ev_after->at("type").as_string(), "MODIFIED");
  auto ev_after2 = watch_b->Next(std::chrono::seconds(30));
  ASSERT_TRUE(ev_after2.has_value());
  EXPECT_EQ(ev_after2->at("object").at("metadata").at("name").as_string(), "after");
}

}  // namespace
}  // namespace converge::testing
