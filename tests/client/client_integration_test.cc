// The client library against a live `converge apiserver`: informers keep running while a writer
// churns objects, the server is restarted (every watch drops), killed while the informers are
// cut off from it long enough for compaction to pass their resourceVersion (410 → relist →
// tombstones), and restarted again. At the end each cache must equal a fresh list at the
// resourceVersion the cache claims.
//
// The server is reached only through the kubeconfig it writes (see FollowKubeconfigTransport).
// The informers have a transport of their own that the test can cut, like a network partition,
// so they cannot reconnect before compaction has passed them. Reflector waits run on a FakeClock
// that a ticker moves along, so backoffs stay short in real time.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "client/api_errors.h"
#include "client/http_transport.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"
#include "client/shared_informer_factory.h"
#include "testing/server.h"

namespace converge::client {
namespace {

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const api::GroupVersionResource kSecrets{"", "v1", "secrets"};
const api::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

// A transport that reads the server's kubeconfig for every new connection it needs, so a server
// restarted on another port is found again exactly as a fresh client would find it.
class FollowKubeconfigTransport final : public Transport {
 public:
  explicit FollowKubeconfigTransport(std::string path) : path_(std::move(path)) {}
  // While cut, every request fails as if the server were unreachable.
  void SetCut(bool cut) { cut_ = cut; }

  util::StatusOr<HttpResponse> Do(HttpRequest r) override {
    if (cut_) return util::Unavailable("partitioned by the test");
    CONVERGE_ASSIGN_OR_RETURN(std::shared_ptr<Transport> t, Current());
    return t->Do(std::move(r));
  }
  util::StatusOr<StreamedResponse> Stream(HttpRequest r) override {
    if (cut_) return util::Unavailable("partitioned by the test");
    CONVERGE_ASSIGN_OR_RETURN(std::shared_ptr<Transport> t, Current());
    return t->Stream(std::move(r));
  }

 private:
  util::StatusOr<std::shared_ptr<Transport>> Current() {
    util::StatusOr<RestConfig> config = LoadRestConfig(path_);
    std::lock_guard lock(mu_);
    if (!config.ok()) {
      if (current_ != nullptr) return current_;  // mid-restart: the old one fails on its own
      return util::Unavailable("no kubeconfig yet: " + config.status().ToString());
    }
    if (current_ == nullptr || config->server != server_) {
      // Old transports stay alive: streams they returned must outlive them.
      CONVERGE_ASSIGN_OR_RETURN(std::shared_ptr<Transport> t, NewTransportForConfig(*config));
      retired_.push_back(current_);
      current_ = std::move(t);
      server_ = config->server;
    }
    return current_;
  }

  const std::string path_;
  std::atomic<bool> cut_{false};
  std::mutex mu_;
  std::shared_ptr<Transport> current_;
  std::vector<std::shared_ptr<Transport>> retired_;
  std::string server_;
};

api::Object NewObject(const std::string& kind, const std::string& ns, const std::string& name,
                      const std::string& value) {
  api::Object o;
  o.SetGvk({"", "v1", kind});
  o.set_namespace(ns);
  o.set_name(name);
  o.mutable_doc()[kind == "Secret" ? "stringData" : "data"] = boost::json::object{{"v", value}};
  return o;
}

// Random creates, updates and deletes over a small pool of names, until stopped. Failures (the
// server is down) are expected and retried later.
class Writer {
 public:
  explicit Writer(RestClient* client) : client_(client) {}
  void Start() {
    thread_ = std::jthread([this](std::stop_token st) { Loop(st); });
  }
  void Stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  int64_t ok_writes() const { return ok_.load(); }
  int64_t deletes() const { return deletes_.load(); }

 private:
  void Loop(std::stop_token stop) {
    std::mt19937 rng(7);
    while (!stop.stop_requested()) {
      bool secret = rng() % 4 == 0;
      const api::GroupVersionResource& gvr = secret ? kSecrets : kConfigMaps;
      std::string ns = secret ? "it-a" : (rng() % 2 ? "it-a" : "it-b");
      std::string name = "obj-" + std::to_string(rng() % 25);
      std::string value = std::to_string(rng());
      util::Status s;
      switch (rng() % 3) {
        case 0:
          s = client_->Create(gvr, ns, NewObject(secret ? "Secret" : "ConfigMap", ns, name, value))
                  .status();
          break;
        case 1:
          s = client_
                  ->Patch(gvr, {ns, name}, PatchType::kMerge,
                          secret ? R"({"stringData":{"v":")" + value + "\"}}"
                                 : R"({"data":{"v":")" + value + "\"}}")
                  .status();
          break;
        case 2:
          s = client_->Delete(gvr, {ns, name});
          if (s.ok()) ++deletes_;
          break;
      }
      if (s.ok()) {
        ++ok_;
      } else if (!IsNotFound(s) && !IsAlreadyExists(s)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // server away
      }
    }
  }

  RestClient* const client_;
  std::atomic<int64_t> ok_{0};
  std::atomic<int64_t> deletes_{0};
  std::jthread thread_;
};

// Moves a FakeClock forward 50x faster than real time, so reflector backoffs stay short.
class Ticker {
 public:
  explicit Ticker(util::FakeClock* clock) : clock_(clock) {
    thread_ = std::jthread([this](std::stop_token st) {
      while (!st.stop_requested()) {
        clock_->Step(std::chrono::milliseconds(500));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }

 private:
  util::FakeClock* const clock_;
  std::jthread thread_;
};

std::map<std::string, std::string> KeyToVersion(const std::vector<api::ObjectPtr>& objs) {
  std::map<std::string, std::string> out;
  for (const auto& o : objs) out[o->key().ToString()] = std::string(o->resource_version());
  return out;
}

// The cache must equal a list at exactly the resourceVersion the informer has reached. Returns
// false (and checks nothing) when the server has compacted past that resourceVersion meanwhile.
bool ExpectCacheEqualsList(RestClient& client, const SharedInformer& informer,
                           const api::GroupVersionResource& gvr, const std::string& ns) {
  std::string rv = informer.LastSyncResourceVersion();
  std::map<std::string, std::string> cached = KeyToVersion(informer.indexer().List());
  util::StatusOr<ObjectList> list =
      client.List(gvr, ns, {.resource_version = rv, .resource_version_match = "Exact"});
  if (IsExpired(list.status())) return false;
  EXPECT_TRUE(list.ok()) << gvr.resource << " at " << rv << ": " << list.status().ToString();
  if (!list.ok()) return true;
  std::map<std::string, std::string> listed;
  for (const api::Object& o : list->items) {
    listed[o.key().ToString()] = std::string(o.resource_version());
  }
  EXPECT_EQ(cached, listed) << gvr.resource << " in \"" << ns << "\" at resourceVersion " << rv;
  EXPECT_FALSE(listed.empty());
  return true;
}

template <typename Pred>
bool Eventually(Pred pred, std::chrono::seconds limit = std::chrono::seconds(60)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

TEST(ClientIntegrationTest, InformersConvergeThroughRestartsAndCompaction) {
  testing::ServerProcess server;
  ASSERT_TRUE(server.Start({.extra_args = {"--compaction-interval", "1"}}));
  auto transport = std::make_shared<FollowKubeconfigTransport>(server.kubeconfig_path());
  RestClient client({.transport = transport});
  auto informer_transport = std::make_shared<FollowKubeconfigTransport>(server.kubeconfig_path());
  RestClient informer_client({.transport = informer_transport});
  for (const char* ns : {"it-a", "it-b"}) {
    api::Object n;
    n.SetGvk({"", "v1", "Namespace"});
    n.set_name(ns);
    ASSERT_TRUE(client.Create(kNamespaces, "", n).ok());
  }

  util::FakeClock clock;
  Ticker ticker(&clock);
  SharedInformerFactory all({.client = &informer_client, .clock = &clock});
  SharedInformerFactory only_a({.client = &informer_client, .ns = "it-a", .clock = &clock});
  SharedInformer& configmaps = all.InformerFor(kConfigMaps);
  SharedInformer& secrets = only_a.InformerFor(kSecrets);
  std::mutex mu;
  std::set<std::string> tombstones;
  auto handler = std::make_shared<ResourceEventHandlerFuncs>();
  handler->del = [&](const DeletedObject& d) {
    if (!d.final_state_unknown) return;
    std::lock_guard lock(mu);
    tombstones.insert(d.key.ToString());
  };
  ASSERT_TRUE(configmaps.AddEventHandler(handler).ok());
  std::stop_source stop;
  all.Start(stop.get_token());
  only_a.Start(stop.get_token());
  ASSERT_TRUE(all.WaitForCacheSync(stop.get_token()));
  ASSERT_TRUE(only_a.WaitForCacheSync(stop.get_token()));

  Writer writer(&client);
  writer.Start();
  ASSERT_TRUE(Eventually([&] { return writer.ok_writes() > 200; }));

  // 1. A graceful restart: every watch drops; the reflectors resume (or relist) on their own.
  ASSERT_TRUE(server.Restart());
  int64_t before = writer.ok_writes();
  ASSERT_TRUE(Eventually([&] { return writer.ok_writes() > before + 200; }));

  // 2. A crash while the informers are cut off: the writer deletes objects they know, and
  //    compaction passes their resourceVersion.
  informer_transport->SetCut(true);
  server.Kill();
  std::string stale_rv = configmaps.LastSyncResourceVersion();
  ASSERT_TRUE(server.Restart());
  before = writer.ok_writes();
  ASSERT_TRUE(Eventually([&] {
    if (writer.ok_writes() < before + 200) return false;
    util::StatusOr<ObjectList> old = client.List(
        kConfigMaps, "", {.resource_version = stale_rv, .resource_version_match = "Exact"});
    return IsExpired(old.status());  // compacted
  })) << "the server never compacted past "
      << stale_rv;
  // The restarted server's watch cache starts at the revision it found on disk, which may still
  // be the informers' own; one more restart moves its window past them, as compaction moved the
  // store's, so resuming their watches must fail with 410.
  ASSERT_TRUE(server.Restart());
  informer_transport->SetCut(false);
  // The informers come back, find their resourceVersion gone, relist, and learn about the
  // deletions they missed as tombstones.
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return !tombstones.empty();
  })) << "no tombstone after the relist";

  // 3. One more restart under load, then quiesce and compare.
  ASSERT_TRUE(server.Restart());
  before = writer.ok_writes();
  ASSERT_TRUE(Eventually([&] { return writer.ok_writes() > before + 100; }));
  writer.Stop();
  // A last write to each collection; once the cache holds it, it holds everything before it.
  // The server compacts every second, to its newest revision: when that passes the informer's
  // resourceVersion before the exact list, write another marker and compare again.
  auto converged = [&](SharedInformer& informer, const api::GroupVersionResource& gvr,
                       const char* kind, const std::string& ns, const std::string& list_ns) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      std::string name = "marker-" + std::to_string(attempt);
      util::StatusOr<api::Object> marker = client.Create(gvr, ns, NewObject(kind, ns, name, "m"));
      EXPECT_TRUE(marker.ok()) << marker.status().ToString();
      if (!marker.ok()) return;
      EXPECT_TRUE(Eventually([&] { return informer.indexer().Get({ns, name}) != nullptr; }));
      if (ExpectCacheEqualsList(client, informer, gvr, list_ns)) return;
    }
    ADD_FAILURE() << gvr.resource << ": compaction always passed the informer";
  };
  converged(configmaps, kConfigMaps, "ConfigMap", "it-b", "");
  converged(secrets, kSecrets, "Secret", "it-a", "it-a");

  stop.request_stop();
  all.Shutdown();
  only_a.Shutdown();
  std::printf("writes: %lld (deletes %lld), tombstones: %zu\n",
              static_cast<long long>(writer.ok_writes()), static_cast<long long>(writer.deletes()),
              tombstones.size());
}

}  // namespace
}  // namespace converge::client
