// API conformance: Kubernetes REST semantics against a live `converge apiserver` on an ephemeral
// port, reached only through the kubeconfig it writes.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "testing/server.h"

namespace converge {
namespace {

namespace json = boost::json;
using testing::Escape;
using testing::HttpResponse;
using testing::ServerProcess;
using testing::TestClient;

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start({.extra_args = {"--watch-cache-size", "200"}}));
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(server_, nullptr);
    client_ = server_->Client();
  }

  // A namespace of the test's own.
  std::string Namespace() {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string ns;
    for (char c : name)
      ns += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    ns = "t-" + ns.substr(0, 50);
    HttpResponse r = client_->Post(
        "/api/v1/namespaces",
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
    EXPECT_TRUE(r.status == 201 || r.status == 409) << r.body;
    return ns;
  }

  static std::string ConfigMap(const std::string& name, const std::string& data_value = "v",
                               const std::string& labels = "{}") {
    return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
           R"(","labels":)" + labels + R"(},"data":{"k":")" + data_value + R"("}})";
  }

  static std::string Str(const json::value& v, std::initializer_list<const char*> path) {
    const json::value* cur = &v;
    for (const char* p : path) {
      if (!cur->is_object() || !cur->get_object().contains(p)) return "";
      cur = &cur->get_object().at(p);
    }
    return cur->is_string() ? std::string(cur->get_string()) : json::serialize(*cur);
  }

  static ServerProcess* server_;
  std::unique_ptr<TestClient> client_;
};

ServerProcess* ApiTest::server_ = nullptr;

TEST_F(ApiTest, VersionHealthAndSystemNamespaces) {
  HttpResponse v = client_->Get("/version");
  ASSERT_EQ(v.status, 200);
  EXPECT_EQ(Str(v.Json(), {"major"}), "1");
  EXPECT_EQ(Str(v.Json(), {"minor"}), "32");
  for (const char* p : {"/healthz", "/livez", "/readyz"})
    EXPECT_EQ(client_->Get(p).status, 200) << p;
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    HttpResponse r = client_->Get(std::string("/api/v1/namespaces/") + ns);
    EXPECT_EQ(r.status, 200) << ns;
    EXPECT_EQ(Str(r.Json(), {"status", "phase"}), "Active") << r.body;
  }
  HttpResponse m = client_->Get("/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("apiserver_request_total"), std::string::npos);
}

TEST_F(ApiTest, CreateGetAndAlreadyExists) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  HttpResponse c = client_->Post(base, ConfigMap("one"));
  ASSERT_EQ(c.status, 201) << c.body;
  json::value obj = c.Json();
  EXPECT_EQ(Str(obj, {"kind"}), "ConfigMap");
  EXPECT_EQ(Str(obj, {"metadata", "namespace"}), ns);
  EXPECT_EQ(Str(obj, {"metadata", "uid"}).size(), 36u);
  EXPECT_FALSE(Str(obj, {"metadata", "creationTimestamp"}).empty());
  EXPECT_FALSE(Str(obj, {"metadata", "resourceVersion"}).empty());

  HttpResponse g = client_->Get(base + "/one");
  ASSERT_EQ(g.status, 200);
  EXPECT_EQ(Str(g.Json(), {"metadata", "uid"}), Str(obj, {"metadata", "uid"}));
  EXPECT_EQ(Str(g.Json(), {"metadata", "resourceVersion"}),
            Str(obj, {"metadata", "resourceVersion"}));

  HttpResponse dup = client_->Post(base, ConfigMap("one"));
  ASSERT_EQ(dup.status, 409);
  EXPECT_EQ(Str(dup.Json(), {"reason"}), "AlreadyExists");
  EXPECT_EQ(Str(dup.Json(), {"message"}), R"(configmaps "one" already exists)");
  EXPECT_EQ(Str(dup.Json(), {"details", "kind"}), "configmaps");

  HttpResponse missing = client_->Get(base + "/nope");
  ASSERT_EQ(missing.status, 404);
  EXPECT_EQ(Str(missing.Json(), {"reason"}), "NotFound");
  EXPECT_EQ(Str(missing.Json(), {"message"}), R"(configmaps "nope" not found)");
}

TEST_F(ApiTest, GenerateName) {
  std::string ns = Namespace();
  std::set<std::string> names;
  for (int i = 0; i < 5; ++i) {
    HttpResponse c = client_->Post("/api/v1/namespaces/" + ns + "/configmaps",
                                   R"({"metadata":{"generateName":"gen-"},"data":{}})");
    ASSERT_EQ(c.status, 201) << c.body;
    std::string name = Str(c.Json(), {"metadata", "name"});
    EXPECT_EQ(name.size(), 9u) << name;
    EXPECT_EQ(name.rfind("gen-", 0), 0u);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 5u);
}

TEST_F(ApiTest, NamespaceMustExist) {
  HttpResponse c = client_->Post("/api/v1/namespaces/does-not-exist/configmaps", ConfigMap("x"));
  ASSERT_EQ(c.status, 404) << c.body;
  EXPECT_EQ(Str(c.Json(), {"message"}), R"(namespaces "does-not-exist" not found)");
}

TEST_F(ApiTest, UpdateConflictAndUnconditionalUpdate) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  HttpResponse c = client_->Post(base, ConfigMap("cm", "1"));
  ASSERT_EQ(c.status, 201);
  json::value obj = c.Json();
  std::string rv1 = Str(obj, {"metadata", "resourceVersion"});
  obj.get_object()["data"].get_object()["k"] = "2";
  HttpResponse u = client_->Put(base + "/cm", json::serialize(obj));
  ASSERT_EQ(u.status, 200) << u.body;
  std::string rv2 = Str(u.Json(), {"metadata", "resourceVersion"});
  EXPECT_NE(rv1, rv2);
  // The same stale resourceVersion again: 409 Conflict, upstream's message.
  obj.get_object()["data"].get_object()["k"] = "3";
  HttpResponse stale = client_->Put(base + "/cm", json::serialize(obj));
  ASSERT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(Str(stale.Json(), {"reason"}), "Conflict");
  EXPECT_EQ(
      Str(stale.Json(), {"message"}),
      R"(Operation cannot be fulfilled on configmaps "cm": the object has been modified; please apply your changes to the latest version and try again)");
  // Without a resourceVersion the update is unconditional.
  obj.get_object()["metadata"].get_object().erase("resourceVersion");
  HttpResponse uncond = client_->Put(base + "/cm", json::serialize(obj));
  ASSERT_EQ(uncond.status, 200) << uncond.body;
  EXPECT_EQ(Str(uncond.Json(), {"data", "k"}), "3");
  // uid and creationTimestamp are immutable. A uid in a PUT is a precondition (409); a patch
  // changing it is invalid (422); a changed creationTimestamp is ignored.
  const std::string uid = Str(c.Json(), {"metadata", "uid"});
  json::value tamper = uncond.Json();
  tamper.get_object()["metadata"].get_object()["uid"] = "00000000-0000-0000-0000-000000000000";
  tamper.get_object()["metadata"].get_object().erase("resourceVersion");
  HttpResponse t = client_->Put(base + "/cm", json::serialize(tamper));
  ASSERT_EQ(t.status, 409) << t.body;
  EXPECT_EQ(Str(t.Json(), {"message"}),
            R"(Operation cannot be fulfilled on configmaps "cm": Precondition failed: UID in )"
            "precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: " +
                uid);
  HttpResponse p =
      client_->Patch(base + "/cm", R"({"metadata":{"uid":"00000000-0000-0000-0000-000000000000"}})",
                     "application/merge-patch+json");
  ASSERT_EQ(p.status, 422) << p.body;
  EXPECT_EQ(Str(p.Json(), {"message"}),
            R"(ConfigMap "cm" is invalid: metadata.uid: Invalid value: )"
            R"("00000000-0000-0000-0000-000000000000": field is immutable)");
  tamper = uncond.Json();
  tamper.get_object()["metadata"].get_object()["creationTimestamp"] = "2001-01-01T00:00:00Z";
  tamper.get_object()["metadata"].get_object().erase("resourceVersion");
  t = client_->Put(base + "/cm", json::serialize(tamper));
  ASSERT_EQ(t.status, 200) << t.body;
  EXPECT_EQ(Str(t.Json(), {"metadata", "uid"}), uid);
  EXPECT_EQ(Str(t.Json(), {"metadata", "creationTimestamp"}),
            Str(c.Json(), {"metadata", "creationTimestamp"}));
}

TEST_F(ApiTest, NoOpUpdateKeepsResourceVersion) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  HttpResponse c = client_->Post(base, ConfigMap("same"));
  ASSERT_EQ(c.status, 201);
  HttpResponse u = client_->Put(base + "/same", c.body);
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(Str(u.Json(), {"metadata", "resourceVersion"}),
            Str(c.Json(), {"metadata", "resourceVersion"}));
}

TEST_F(ApiTest, ConcurrentReadModifyWriteCounter) {
  std::string ns = Namespace();
  std::string url = "/api/v1/namespaces/" + ns + "/configmaps/counter";
  ASSERT_EQ(
      client_->Post("/api/v1/namespaces/" + ns + "/configmaps", ConfigMap("counter", "0")).status,
      201);
  constexpr int kClients = 50;
  constexpr int kAttempts = 10;
  std::atomic<int> successes{0};
  std::atomic<int> conflicts{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&] {
      auto c = server_->Client();
      for (int a = 0; a < kAttempts; ++a) {
        HttpResponse g = c->Get(url);
        if (g.status != 200) {
          ++errors;
          continue;
        }
        json::value obj = g.Json();
        int n = std::stoi(Str(obj, {"data", "k"}));
        obj.get_object()["data"].get_object()["k"] = std::to_string(n + 1);
        HttpResponse u = c->Put(url, json::serialize(obj));
        if (u.status == 200) {
          ++successes;
        } else if (u.status == 409) {
          ++conflicts;
        } else {
          ++errors;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(successes.load(), 0);
  EXPECT_EQ(successes + conflicts, kClients * kAttempts);
  HttpResponse g = client_->Get(url);
  ASSERT_EQ(g.status, 200);
  EXPECT_EQ(std::stoi(Str(g.Json(), {"data", "k"})), successes.load());
}

TEST_F(ApiTest, ListWithSelectors) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, ConfigMap("a", "1", R"({"app":"web","tier":"front"})")).status,
            201);
  ASSERT_EQ(client_->Post(base, ConfigMap("b", "1", R"({"app":"web","tier":"back"})")).status, 201);
  ASSERT_EQ(client_->Post(base, ConfigMap("c", "1", R"({"app":"db"})")).status, 201);
  auto names = [&](const std::string& query) {
    HttpResponse r = client_->Get(base + query);
    EXPECT_EQ(r.status, 200) << query << " " << r.body;
    std::vector<std::string> out;
    json::value v = r.Json();
    if (!v.is_object()) return out;
    EXPECT_EQ(Str(v, {"kind"}), "ConfigMapList");
    EXPECT_FALSE(Str(v, {"metadata", "resourceVersion"}).empty());
    for (const auto& item : v.at("items").as_array())
      out.push_back(Str(item, {"metadata", "name"}));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(""), (V{"a", "b", "c"}));
  EXPECT_EQ(names("?labelSelector=" + Escape("app=web")), (V{"a", "b"}));
  EXPECT_EQ(names("?labelSelector=" + Escape("app=web,tier!=front")), (V{"b"}));
  EXPECT_EQ(names("?labelSelector=" + Escape("tier in (front,back)")), (V{"a", "b"}));
  EXPECT_EQ(names("?labelSelector=" + Escape("!tier")), (V{"c"}));
  EXPECT_EQ(names("?fieldSelector=" + Escape("metadata.name=b")), (V{"b"}));
  EXPECT_EQ(names("?fieldSelector=" + Escape("metadata.name!=b")), (V{"a", "c"}));
  // Across all namespaces.
  HttpResponse all = client_->Get("/api/v1/configmaps?labelSelector=" + Escape("app=web"));
  ASSERT_EQ(all.status, 200);
  EXPECT_GE(all.Json().at("items").as_array().size(), 2u);
  // Bad selectors are 400 and change nothing.
  for (const std::string& bad :
       {"?labelSelector=" + Escape("app in (a"), "?fieldSelector=" + Escape("spec.unknown=x"),
        "?labelSelector=" + Escape("a b")}) {
    HttpResponse r = client_->Get(base + bad);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
    EXPECT_EQ(Str(r.Json(), {"reason"}), "BadRequest");
  }
}

TEST_F(ApiTest, PaginationOverOneSnapshot) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  for (int i = 0; i < 25; ++i) {
    ASSERT_EQ(client_->Post(base, ConfigMap("cm-" + std::to_string(100 + i))).status, 201);
  }
  std::vector<std::string> seen;
  std::string token;
  std::string rv;
  int pages = 0;
  // Without a selector each page but the last says how many items follow it (the first page
  // comes from the watch cache, the others from the store at the first page's revision).
  const std::vector<int64_t> remaining_after = {15, 5};
  do {
    std::string q = base + "?limit=10" + (token.empty() ? "" : "&continue=" + Escape(token));
    HttpResponse r = client_->Get(q);
    ASSERT_EQ(r.status, 200) << r.body;
    json::value v = r.Json();
    if (rv.empty()) rv = Str(v, {"metadata", "resourceVersion"});
    EXPECT_EQ(Str(v, {"metadata", "resourceVersion"}), rv) << "every page is the same snapshot";
    for (const auto& item : v.at("items").as_array())
      seen.push_back(Str(item, {"metadata", "name"}));
    token = Str(v, {"metadata", "continue"});
    const json::value* remaining = v.at("metadata").as_object().if_contains("remainingItemCount");
    if (static_cast<size_t>(pages) < remaining_after.size()) {
      ASSERT_TRUE(remaining) << "page " << pages << ": " << r.body.substr(0, 200);
      EXPECT_EQ(remaining->to_number<int64_t>(), remaining_after[pages]) << "page " << pages;
    } else {
      EXPECT_FALSE(remaining) << "the last page";
    }
    if (pages == 0) {
      // A write between pages does not show up in the paginated list.
      ASSERT_EQ(client_->Post(base, ConfigMap("cm-999")).status, 201);
    }
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 25u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 25u);
  // With a selector the count of the rest is not known without evaluating it: none is given,
  // from the cache or the store.
  HttpResponse first = client_->Get(base + "?limit=2&labelSelector=" + Escape("!absent"));
  ASSERT_EQ(first.status, 200) << first.body;
  json::value page = first.Json();
  std::string next = Str(page, {"metadata", "continue"});
  ASSERT_FALSE(next.empty());
  EXPECT_FALSE(page.at("metadata").as_object().contains("remainingItemCount")) << first.body;
  HttpResponse second = client_->Get(base + "?limit=2&labelSelector=" + Escape("!absent") +
                                     "&continue=" + Escape(next));
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(second.Json().at("items").as_array().size(), 2u);
  EXPECT_FALSE(second.Json().at("metadata").as_object().contains("remainingItemCount"));
  // A continue token with a resourceVersion is rejected.
  HttpResponse bad = client_->Get(base + "?limit=10&resourceVersion=5&continue=abc");
  EXPECT_EQ(bad.status, 400);
}

TEST_F(ApiTest, TooNewResourceVersionTimesOut) {
  HttpResponse r = client_->Get("/api/v1/namespaces/default/configmaps?resourceVersion=999999999");
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_EQ(Str(r.Json(), {"reason"}), "Timeout");
}

TEST_F(ApiTest, WatchInitialEventsThenChanges) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, ConfigMap("first")).status, 201);
  auto w = client_->Watch(base + "?watch=true&resourceVersion=0");
  ASSERT_EQ(w->status(), 200);
  auto e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "ADDED");
  EXPECT_EQ(Str(*e, {"object", "metadata", "name"}), "first");
  ASSERT_EQ(client_->Post(base, ConfigMap("second")).status, 201);
  e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "ADDED");
  EXPECT_EQ(Str(*e, {"object", "metadata", "name"}), "second");
  ASSERT_EQ(client_->Delete(base + "/first").status, 200);
  e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "DELETED");
  EXPECT_EQ(Str(*e, {"object", "metadata", "name"}), "first");
}

TEST_F(ApiTest, WatchResumesFromEveryRevision) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, ConfigMap("hist", "0")).status, 201);
  std::vector<std::string> rvs;
  constexpr int kWrites = 150;  // within the watch cache window this server runs with (200)
  for (int i = 1; i <= kWrites; ++i) {
    HttpResponse u = client_->Put(base + "/hist", ConfigMap("hist", std::to_string(i)));
    ASSERT_EQ(u.status, 200) << u.body;
    rvs.push_back(Str(u.Json(), {"metadata", "resourceVersion"}));
  }
  for (size_t start = 0; start < rvs.size(); ++start) {
    auto w = client_->Watch(base + "?watch=true&resourceVersion=" + rvs[start]);
    ASSERT_EQ(w->status(), 200);
    for (size_t i = start + 1; i < rvs.size(); ++i) {
      auto e = w->Next(std::chrono::seconds(10));
      ASSERT_TRUE(e) << "resumed from " << rvs[start] << ", missing " << rvs[i];
      ASSERT_EQ(Str(*e, {"type"}), "MODIFIED");
      ASSERT_EQ(Str(*e, {"object", "metadata", "resourceVersion"}), rvs[i]);
      ASSERT_EQ(Str(*e, {"object", "data", "k"}), std::to_string(i + 1));
    }
  }
}

TEST_F(ApiTest, WatchFromExpiredRevisionGets410Event) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  HttpResponse c = client_->Post(base, ConfigMap("old", "0"));
  ASSERT_EQ(c.status, 201);
  std::string first = Str(c.Json(), {"metadata", "resourceVersion"});
  // Push the first revision out of the watch cache window (200 events here).
  for (int i = 1; i <= 260; ++i) {
    ASSERT_EQ(client_->Put(base + "/old", ConfigMap("old", std::to_string(i))).status, 200);
  }
  auto w = client_->Watch(base + "?watch=true&resourceVersion=" + first);
  ASSERT_EQ(w->status(), 200);
  auto e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "ERROR");
  EXPECT_EQ(Str(*e, {"object", "kind"}), "Status");
  EXPECT_EQ(Str(*e, {"object", "code"}), "410");
  EXPECT_EQ(Str(*e, {"object", "reason"}), "Expired");
}

TEST_F(ApiTest, FinalizerLifecycle) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, R"({"metadata":{"name":"held","finalizers":["example.com/hold"]}})")
                .status,
            201);
  // Upstream answers 200 with the object while finalizers keep it (202 only for the deprecated
  // orphanDependents=false).
  HttpResponse d = client_->Delete(base + "/held");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(Str(d.Json(), {"kind"}), "ConfigMap");
  EXPECT_FALSE(Str(d.Json(), {"metadata", "deletionTimestamp"}).empty());
  EXPECT_EQ(client_->Delete(base + "/held?orphanDependents=false").status, 202);
  HttpResponse g = client_->Get(base + "/held");
  ASSERT_EQ(g.status, 200);
  EXPECT_FALSE(Str(g.Json(), {"metadata", "deletionTimestamp"}).empty());
  // A new finalizer cannot be added while deleting.
  json::value add = g.Json();
  add.get_object()["metadata"].get_object()["finalizers"].as_array().emplace_back(
      "example.com/more");
  EXPECT_EQ(client_->Put(base + "/held", json::serialize(add)).status, 422);
  // Removing the last finalizer removes the object.
  json::value obj = g.Json();
  obj.get_object()["metadata"].get_object().erase("finalizers");
  HttpResponse u = client_->Put(base + "/held", json::serialize(obj));
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(client_->Get(base + "/held").status, 404);
}

TEST_F(ApiTest, DeletePreconditions) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, ConfigMap("pre")).status, 201);
  HttpResponse d = client_->Delete(base + "/pre", R"({"preconditions":{"uid":"wrong"}})");
  ASSERT_EQ(d.status, 409) << d.body;
  EXPECT_NE(Str(d.Json(), {"message"}).find("Precondition failed: UID in precondition: wrong"),
            std::string::npos);
  EXPECT_EQ(client_->Get(base + "/pre").status, 200);
  EXPECT_EQ(client_->Delete(base + "/pre").status, 200);
  EXPECT_EQ(client_->Delete(base + "/pre").status, 404);
}

TEST_F(ApiTest, DeleteCollection) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, ConfigMap("x1", "1", R"({"del":"yes"})")).status, 201);
  ASSERT_EQ(client_->Post(base, ConfigMap("x2", "1", R"({"del":"yes"})")).status, 201);
  ASSERT_EQ(client_->Post(base, ConfigMap("keep")).status, 201);
  HttpResponse d = client_->Delete(base + "?labelSelector=" + Escape("del=yes"));
  ASSERT_EQ(d.status, 200) << d.body;
  HttpResponse l = client_->Get(base);
  ASSERT_EQ(l.Json().at("items").as_array().size(), 1u);
}

TEST_F(ApiTest, DryRunPersistsNothing) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  HttpResponse c = client_->Post(base + "?dryRun=All", ConfigMap("dry"));
  ASSERT_EQ(c.status, 201) << c.body;
  EXPECT_EQ(Str(c.Json(), {"metadata", "name"}), "dry");
  EXPECT_EQ(client_->Get(base + "/dry").status, 404);
  EXPECT_EQ(client_->Post(base + "?dryRun=Bogus", ConfigMap("dry")).status, 400);
}

TEST_F(ApiTest, BadInputLeavesStoreUnchanged) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  struct Case {
    const char* name;
    std::string body;
    int code;
  } cases[] = {
      {"malformed json", "{\"metadata\":", 400},
      {"not an object", "[1,2]", 400},
      {"wrong apiVersion", R"({"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}})",
       400},
      {"wrong kind", R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}})", 400},
      {"other namespace", R"({"metadata":{"name":"x","namespace":"elsewhere"}})", 400},
      {"invalid name", R"({"metadata":{"name":"Not_Valid"}})", 422},
      {"missing name", R"({"metadata":{}})", 422},
      {"bad label", R"({"metadata":{"name":"x","labels":{"a b":"c"}}})", 422},
  };
  for (const auto& c : cases) {
    HttpResponse r = client_->Post(base, c.body);
    EXPECT_EQ(r.status, c.code) << c.name << ": " << r.body;
    EXPECT_EQ(Str(r.Json(), {"kind"}), "Status") << c.name;
  }
  HttpResponse invalid = client_->Post(base, R"({"metadata":{"name":"Not_Valid"}})");
  EXPECT_EQ(Str(invalid.Json(), {"reason"}), "Invalid");
  EXPECT_EQ(Str(invalid.Json(), {"details", "kind"}), "ConfigMap");
  EXPECT_NE(
      Str(invalid.Json(), {"message"})
          .find(R"(ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid")"),
      std::string::npos)
      << invalid.body;
  // Unknown and repeated fields under fieldValidation=Strict (kubectl's default) are 400.
  HttpResponse strict =
      client_->Post(base + "?fieldValidation=Strict",
                    R"({"metadata":{"name":"x","name":"y"},"bogus":1,"data":{"k":"v"}})");
  EXPECT_EQ(strict.status, 400) << strict.body;
  EXPECT_EQ(Str(strict.Json(), {"reason"}), "BadRequest");
  EXPECT_EQ(Str(strict.Json(), {"message"}),
            R"(ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding )"
            R"(error: duplicate field "metadata.name", unknown field "bogus")");
  // An oversized body (over 3 MiB) is 413.
  std::string big = R"({"metadata":{"name":"big"},"data":{"k":")" +
                    std::string(3 * 1024 * 1024 + 10, 'x') + "\"}}";
  HttpResponse r = client_->Post(base, big);
  EXPECT_EQ(r.status, 413) << r.error;
  auto fresh = server_->Client();
  HttpResponse l = fresh->Get(base);
  ASSERT_EQ(l.status, 200);
  EXPECT_EQ(l.Json().at("items").as_array().size(), 0u) << l.body;
  // Unsupported media type.
  HttpResponse m = client_->Do("POST", base, "x", {{"Content-Type", "text/csv"}});
  EXPECT_EQ(m.status, 415);
}

// ---- create: server-set metadata, defaults, validation, terminating namespaces ---------------

constexpr char kDeploymentJson[] = R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},
  "spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}})";

TEST_F(ApiTest, CreateSetsGenerationAndUpstreamDefaults) {
  std::string ns = Namespace();
  HttpResponse c =
      client_->Post("/apis/apps/v1/namespaces/" + ns + "/deployments", kDeploymentJson);
  ASSERT_EQ(c.status, 201) << c.body;
  json::value d = c.Json();
  EXPECT_EQ(Str(d, {"metadata", "generation"}), "1");
  EXPECT_EQ(Str(d, {"spec", "replicas"}), "1");
  EXPECT_EQ(Str(d, {"spec", "revisionHistoryLimit"}), "10");
  EXPECT_EQ(Str(d, {"spec", "progressDeadlineSeconds"}), "600");
  EXPECT_EQ(Str(d, {"spec", "strategy", "type"}), "RollingUpdate");
  EXPECT_EQ(Str(d, {"spec", "strategy", "rollingUpdate", "maxSurge"}), "25%");
  EXPECT_EQ(Str(d, {"spec", "strategy", "rollingUpdate", "maxUnavailable"}), "25%");
  const json::value& tmpl = d.at("spec").at("template").at("spec");
  EXPECT_EQ(Str(tmpl, {"restartPolicy"}), "Always");
  EXPECT_EQ(Str(tmpl, {"terminationGracePeriodSeconds"}), "30");
  EXPECT_EQ(Str(tmpl, {"dnsPolicy"}), "ClusterFirst");
  EXPECT_EQ(Str(tmpl, {"schedulerName"}), "default-scheduler");
  EXPECT_EQ(Str(tmpl.at("containers").at(0), {"imagePullPolicy"}), "IfNotPresent");
  EXPECT_EQ(Str(tmpl.at("containers").at(0), {"terminationMessagePath"}), "/dev/termination-log");

  HttpResponse p = client_->Post("/api/v1/namespaces/" + ns + "/pods",
                                 R"({"metadata":{"name":"p"},"spec":{"containers":[
                                     {"name":"c","image":"nginx"}]}})");
  ASSERT_EQ(p.status, 201) << p.body;
  json::value pod = p.Json();
  EXPECT_EQ(Str(pod, {"spec", "restartPolicy"}), "Always");
  EXPECT_EQ(Str(pod, {"spec", "terminationGracePeriodSeconds"}), "30");
  EXPECT_EQ(Str(pod, {"spec", "dnsPolicy"}), "ClusterFirst");
  EXPECT_EQ(Str(pod, {"spec", "schedulerName"}), "default-scheduler");
  EXPECT_EQ(Str(pod.at("spec").at("containers").at(0), {"imagePullPolicy"}), "Always");  // :latest
  EXPECT_EQ(Str(pod, {"status", "phase"}), "Pending");
}

TEST_F(ApiTest, InvalidObjectsAre422WithCausesNamingFields) {
  std::string ns = Namespace();
  std::string body = kDeploymentJson;
  body.replace(body.find(R"("spec":{"selector")"), 8, R"("spec":{"replicas":-1,)");
  HttpResponse r = client_->Post("/apis/apps/v1/namespaces/" + ns + "/deployments", body);
  ASSERT_EQ(r.status, 422) << r.body;
  json::value v = r.Json();
  EXPECT_EQ(Str(v, {"reason"}), "Invalid");
  EXPECT_EQ(Str(v, {"details", "group"}), "apps");
  EXPECT_EQ(Str(v, {"details", "kind"}), "Deployment");
  EXPECT_EQ(Str(v, {"details", "name"}), "web");
  EXPECT_EQ(Str(v, {"message"})
                .rfind(R"(Deployment.apps "web" is invalid: spec.replicas: )"
                       "Invalid value: -1: must be greater than or equal to 0",
                       0),
            0u)
      << r.body;
  const json::value& cause = v.at("details").at("causes").at(0);
  EXPECT_EQ(Str(cause, {"reason"}), "FieldValueInvalid");
  EXPECT_EQ(Str(cause, {"field"}), "spec.replicas");
  EXPECT_EQ(client_->Get("/apis/apps/v1/namespaces/" + ns + "/deployments/web").status, 404);
}

TEST_F(ApiTest, TerminatingNamespaceRefusesCreates) {
  std::string ns = Namespace();
  // The "kubernetes" finalizer keeps the namespace Terminating (no namespace controller here).
  HttpResponse d = client_->Delete("/api/v1/namespaces/" + ns);
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(Str(d.Json(), {"status", "phase"}), "Terminating");
  // Admission reads namespaces from the watch cache (upstream: from an informer): wait until
  // the cache has the deletion, as a cached read (resourceVersion=0) shows it.
  for (int i = 0; i < 200; ++i) {
    HttpResponse cached = client_->Get("/api/v1/namespaces/" + ns + "?resourceVersion=0");
    if (Str(cached.Json(), {"status", "phase"}) == "Terminating") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  HttpResponse c = client_->Post("/api/v1/namespaces/" + ns + "/configmaps", ConfigMap("late"));
  ASSERT_EQ(c.status, 403) << c.body;
  EXPECT_EQ(Str(c.Json(), {"reason"}), "Forbidden");
  EXPECT_EQ(Str(c.Json(), {"message"}),
            "configmaps \"late\" is forbidden: unable to create new content in namespace " + ns +
                " because it is being terminated");
  EXPECT_EQ(Str(c.Json().at("details").at("causes").at(0), {"reason"}), "NamespaceTerminating");
}

// The ServiceAccount admission plugin mounts a token volume unless the pod or its
// ServiceAccount opts out (automountServiceAccountToken: false).
TEST_F(ApiTest, AServiceAccountThatOptsOutGetsPodsWithoutATokenVolume) {
  std::string ns = Namespace();
  HttpResponse sa = client_->Post("/api/v1/namespaces/" + ns + "/serviceaccounts",
                                  R"({"metadata":{"name":"quiet"},
                                      "automountServiceAccountToken":false})");
  ASSERT_EQ(sa.status, 201) << sa.body;
  // Admission reads ServiceAccounts from the watch cache: wait until a cached read has it.
  for (int i = 0; i < 200; ++i) {
    if (client_->Get("/api/v1/namespaces/" + ns + "/serviceaccounts/quiet?resourceVersion=0")
            .status == 200) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto volumes = [&](const std::string& name, const std::string& account) {
    HttpResponse p =
        client_->Post("/api/v1/namespaces/" + ns + "/pods",
                      R"({"metadata":{"name":")" + name + R"("},"spec":{)" +
                          (account.empty() ? "" : R"("serviceAccountName":")" + account + R"(",)") +
                          R"("containers":[{"name":"c","image":"nginx"}]}})");
    EXPECT_EQ(p.status, 201) << p.body;
    std::vector<std::string> out;
    const json::value pod = p.Json();
    if (const json::value* v = pod.at("spec").as_object().if_contains("volumes")) {
      for (const json::value& vol : v->as_array()) out.push_back(Str(vol, {"name"}).substr(0, 16));
    }
    return out;
  };
  EXPECT_EQ(volumes("quiet-pod", "quiet"), std::vector<std::string>{});
  EXPECT_EQ(volumes("default-pod", ""), std::vector<std::string>{"kube-api-access-"});
}

// ---- reads: resourceVersion semantics, per-kind field selectors -----------------------------

TEST_F(ApiTest, ListResourceVersionMatchSemantics) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  HttpResponse c = client_->Post(base, ConfigMap("v", "1"));
  ASSERT_EQ(c.status, 201);
  const std::string rv1 = Str(c.Json(), {"metadata", "resourceVersion"});
  HttpResponse u = client_->Put(base + "/v", ConfigMap("v", "2"));
  ASSERT_EQ(u.status, 200);
  auto data = [&](const std::string& query) {
    HttpResponse r = client_->Get(base + query);
    EXPECT_EQ(r.status, 200) << query << " " << r.body;
    const json::value v = r.Json();
    if (!v.is_object() || v.at("items").as_array().empty()) return std::string("<none>");
    return Str(v.at("items").at(0), {"data", "k"});
  };
  EXPECT_EQ(data(""), "2");                         // unset: the most recent
  EXPECT_EQ(data("?resourceVersion=0"), "2");       // any (served from the cache)
  EXPECT_EQ(data("?resourceVersion=" + rv1), "2");  // not older than rv1
  EXPECT_EQ(data("?resourceVersion=" + rv1 + "&resourceVersionMatch=NotOlderThan"), "2");
  EXPECT_EQ(data("?resourceVersion=" + rv1 + "&resourceVersionMatch=Exact"), "1");
  HttpResponse exact =
      client_->Get(base + "?resourceVersion=" + rv1 + "&resourceVersionMatch=Exact");
  EXPECT_EQ(Str(exact.Json(), {"metadata", "resourceVersion"}), rv1);

  // Upstream's ValidateListOptions.
  HttpResponse bad = client_->Get(base + "?resourceVersionMatch=Exact");
  EXPECT_EQ(bad.status, 422) << bad.body;
  EXPECT_EQ(Str(bad.Json(), {"message"}),
            R"(ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: )"
            "resourceVersionMatch is forbidden unless resourceVersion is provided");
  bad = client_->Get(base + "?resourceVersion=0&resourceVersionMatch=Exact");
  EXPECT_EQ(bad.status, 422) << bad.body;
  bad = client_->Get(base + "?resourceVersion=1&resourceVersionMatch=Sometimes");
  EXPECT_EQ(bad.status, 422) << bad.body;
}

TEST_F(ApiTest, CompactedResourceVersionsAre410) {
  // A server of its own: compaction ends every watch and forgets the watch cache's history.
  ServerProcess server;
  ASSERT_TRUE(server.Start({.extra_args = {"--enable-fault-injection"}}));
  auto client = server.Client();
  std::string base = "/api/v1/namespaces/default/configmaps";
  HttpResponse c = client->Post(base, ConfigMap("old", "1"));
  ASSERT_EQ(c.status, 201);
  const std::string rv1 = Str(c.Json(), {"metadata", "resourceVersion"});
  ASSERT_EQ(client->Put(base + "/old", ConfigMap("old", "2")).status, 200);
  HttpResponse compact = client->Post("/converge/faults/compact", "{}");
  ASSERT_EQ(compact.status, 200) << compact.body;
  const std::string compacted = Str(compact.Json(), {"compactedRevision"});

  HttpResponse r = client->Get(base + "?resourceVersion=" + rv1 + "&resourceVersionMatch=Exact");
  EXPECT_EQ(r.status, 410) << r.body;
  EXPECT_EQ(Str(r.Json(), {"reason"}), "Expired");
  EXPECT_EQ(Str(r.Json(), {"message"}),
            "too old resource version: " + rv1 + " (" + compacted + ")");
  auto w = client->Watch(base + "?watch=true&resourceVersion=" + rv1);
  ASSERT_EQ(w->status(), 200);
  auto e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "ERROR");
  EXPECT_EQ(Str(*e, {"object", "code"}), "410");
  EXPECT_EQ(Str(*e, {"object", "reason"}), "Expired");
  // The current state is still served.
  EXPECT_EQ(client->Get(base + "/old").status, 200);
}

TEST_F(ApiTest, FieldSelectorsPerKind) {
  std::string ns = Namespace();
  std::string pods = "/api/v1/namespaces/" + ns + "/pods";
  auto pod = [](const std::string& name, const std::string& node) {
    return R"({"metadata":{"name":")" + name + R"("},"spec":{)" +
           (node.empty() ? "" : R"("nodeName":")" + node + R"(",)") +
           R"("containers":[{"name":"c","image":"nginx"}]}})";
  };
  ASSERT_EQ(client_->Post(pods, pod("a", "n1")).status, 201);
  ASSERT_EQ(client_->Post(pods, pod("b", "n2")).status, 201);
  ASSERT_EQ(client_->Post(pods, pod("c", "")).status, 201);
  auto names = [&](const std::string& url) {
    HttpResponse r = client_->Get(url);
    EXPECT_EQ(r.status, 200) << url << " " << r.body;
    std::vector<std::string> out;
    const json::value v = r.Json();
    if (!v.is_object()) return out;
    for (const auto& item : v.at("items").as_array())
      out.push_back(Str(item, {"metadata", "name"}));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(pods + "?fieldSelector=" + Escape("spec.nodeName=n1")), V{"a"});
  EXPECT_EQ(names(pods + "?fieldSelector=" + Escape("spec.nodeName=")), V{"c"});
  EXPECT_EQ(names(pods + "?fieldSelector=" + Escape("status.phase=Pending,spec.nodeName!=n1")),
            (V{"b", "c"}));
  EXPECT_EQ(names("/api/v1/pods?fieldSelector=" +
                  Escape("metadata.namespace=" + ns + ",spec.nodeName=n2")),
            V{"b"});

  std::string events = "/api/v1/namespaces/" + ns + "/events";
  ASSERT_EQ(client_
                ->Post(events, R"({"metadata":{"name":"e1"},"involvedObject":{"kind":"Pod",
                                       "name":"a","namespace":")" +
                                   ns + R"("},"reason":"Started",
                                       "type":"Normal"})")
                .status,
            201);
  ASSERT_EQ(client_
                ->Post(events, R"({"metadata":{"name":"e2"},"involvedObject":{"kind":"Pod",
                                       "name":"b","namespace":")" +
                                   ns + R"("},"reason":"BackOff",
                                       "type":"Warning"})")
                .status,
            201);
  EXPECT_EQ(
      names(events + "?fieldSelector=" + Escape("involvedObject.kind=Pod,involvedObject.name=a")),
      V{"e1"});
  EXPECT_EQ(names(events + "?fieldSelector=" + Escape("type=Warning")), V{"e2"});
  HttpResponse bad = client_->Get(pods + "?fieldSelector=" + Escape("spec.containers=x"));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(Str(bad.Json(), {"message"}), R"(field label not supported: spec.containers)");
}

// ---- watch: selectors, timeoutSeconds, initial events ----------------------------------------

TEST_F(ApiTest, WatchWithSelectorsSeesObjectsEnterAndLeave) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  auto w = client_->Watch(base + "?watch=true&labelSelector=" + Escape("app=web"));
  ASSERT_EQ(w->status(), 200);
  ASSERT_EQ(client_->Post(base, ConfigMap("other", "1", R"({"app":"db"})")).status, 201);
  ASSERT_EQ(client_->Post(base, ConfigMap("web", "1", R"({"app":"web"})")).status, 201);
  auto e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "ADDED");
  EXPECT_EQ(Str(*e, {"object", "metadata", "name"}), "web");
  // Leaving the selector is a DELETED event; entering it an ADDED one.
  ASSERT_EQ(client_->Put(base + "/web", ConfigMap("web", "2", R"({"app":"gone"})")).status, 200);
  e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "DELETED");
  EXPECT_EQ(Str(*e, {"object", "metadata", "name"}), "web");
  ASSERT_EQ(client_->Put(base + "/other", ConfigMap("other", "2", R"({"app":"web"})")).status, 200);
  e = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(Str(*e, {"type"}), "ADDED");
  EXPECT_EQ(Str(*e, {"object", "metadata", "name"}), "other");
}

TEST_F(ApiTest, WatchTimeoutSecondsEndsTheStream) {
  std::string ns = Namespace();
  auto w = client_->Watch("/api/v1/namespaces/" + ns + "/configmaps?watch=true&timeoutSeconds=1");
  ASSERT_EQ(w->status(), 200);
  // Nothing happens; the server ends the response on its own.
  while (w->Next(std::chrono::seconds(30))) {
  }
  EXPECT_TRUE(w->ended());
}

TEST_F(ApiTest, WatchSendInitialEventsEndsWithABookmark) {
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  ASSERT_EQ(client_->Post(base, ConfigMap("a")).status, 201);
  ASSERT_EQ(client_->Post(base, ConfigMap("b")).status, 201);
  auto w = client_->Watch(base +
                          "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                          "&allowWatchBookmarks=true");
  ASSERT_EQ(w->status(), 200);
  std::set<std::string> added;
  std::optional<json::value> bookmark;
  while (!bookmark) {
    auto e = w->Next(std::chrono::seconds(10));
    ASSERT_TRUE(e);
    if (Str(*e, {"type"}) == "BOOKMARK") {
      bookmark = *e;
    } else {
      EXPECT_EQ(Str(*e, {"type"}), "ADDED");
      added.insert(Str(*e, {"object", "metadata", "name"}));
    }
  }
  EXPECT_EQ(added, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(Str(*bookmark, {"object", "metadata", "annotations", "k8s.io/initial-events-end"}),
            "true");
  EXPECT_FALSE(Str(*bookmark, {"object", "metadata", "resourceVersion"}).empty());
  // sendInitialEvents needs NotOlderThan (upstream's ValidateListOptions).
  HttpResponse bad = client_->Get(base + "?watch=true&sendInitialEvents=true");
  EXPECT_EQ(bad.status, 422) << bad.body;
}

// ---- update: status, generation ----------------------------------------------------------------

TEST_F(ApiTest, StatusIsItsOwnSubresourceAndGenerationFollowsTheSpec) {
  std::string ns = Namespace();
  std::string url = "/apis/apps/v1/namespaces/" + ns + "/deployments/web";
  ASSERT_EQ(
      client_->Post("/apis/apps/v1/namespaces/" + ns + "/deployments", kDeploymentJson).status,
      201);
  // The main resource ignores status.
  json::value d = client_->Get(url).Json();
  d.get_object()["status"] = json::object{{"replicas", 7}};
  HttpResponse u = client_->Put(url, json::serialize(d));
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(Str(u.Json(), {"status", "replicas"}), "");
  EXPECT_EQ(Str(u.Json(), {"metadata", "generation"}), "1");
  // Metadata changes keep the generation; spec changes move it.
  d = u.Json();
  d.get_object()["metadata"].get_object()["labels"] = json::object{{"tier", "front"}};
  u = client_->Put(url, json::serialize(d));
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(Str(u.Json(), {"metadata", "generation"}), "1");
  d = u.Json();
  d.get_object()["spec"].get_object()["replicas"] = 3;
  u = client_->Put(url, json::serialize(d));
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(Str(u.Json(), {"metadata", "generation"}), "2");
  // /status takes status only.
  d = u.Json();
  d.get_object()["spec"].get_object()["replicas"] = 9;
  d.get_object()["status"] = json::object{{"replicas", 3}, {"observedGeneration", 2}};
  u = client_->Put(url + "/status", json::serialize(d));
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(Str(u.Json(), {"spec", "replicas"}), "3");
  EXPECT_EQ(Str(u.Json(), {"status", "replicas"}), "3");
  EXPECT_EQ(Str(u.Json(), {"metadata", "generation"}), "2");
}

TEST_F(ApiTest, BodyWithoutContentTypeIsJson) {
  std::string ns = Namespace();
  HttpResponse r =
      client_->Do("POST", "/api/v1/namespaces/" + ns + "/configmaps", ConfigMap("plain"), {});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(r.Json(), {"data", "k"}), "v");
}

// ---- patch
// ---------------------------------------------------------------------------------------

TEST_F(ApiTest, PatchTypes) {
  std::string ns = Namespace();
  std::string url = "/apis/apps/v1/namespaces/" + ns + "/deployments/web";
  std::string body = kDeploymentJson;
  body.replace(body.find(R"([{"name":"c","image":"nginx:1.27"}])"), 35,
               R"([{"name":"c","image":"nginx:1.27"},{"name":"d","image":"busybox",)"
               R"("args":["a","b","c"]}])");
  ASSERT_EQ(client_->Post("/apis/apps/v1/namespaces/" + ns + "/deployments", body).status, 201);
  auto containers = [&](const HttpResponse& r) {
    std::vector<std::string> out;
    const json::value v = r.Json();
    if (!v.is_object()) return out;
    for (const auto& c : v.at("spec").at("template").at("spec").at("containers").as_array()) {
      out.push_back(Str(c, {"name"}) + "=" + Str(c, {"image"}));
    }
    return out;
  };
  using V = std::vector<std::string>;
  // JSON merge patch replaces lists whole.
  HttpResponse r = client_->Patch(url, R"({"metadata":{"labels":{"a":"1"}},"spec":{"replicas":2}})",
                                  "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Str(r.Json(), {"metadata", "labels", "a"}), "1");
  EXPECT_EQ(Str(r.Json(), {"spec", "replicas"}), "2");
  // Strategic merge patch merges containers by name, with its directives.
  r = client_->Patch(
      url, R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}}})",
      "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(containers(r), (V{"c=nginx:2", "d=busybox"}));
  r = client_->Patch(
      url,
      R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"d"},{"name":"c"}],"containers":[{"name":"d","image":"busybox:1"}]}}}})",
      "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(containers(r), (V{"d=busybox:1", "c=nginx:2"}));
  r = client_->Patch(
      url, R"({"spec":{"template":{"spec":{"containers":[{"name":"d","$patch":"delete"}]}}}})",
      "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(containers(r), (V{"c=nginx:2"}));
  r = client_->Patch(url, R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}})",
                     "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::serialize(r.Json().at("spec").at("strategy")), R"({"type":"Recreate"})");
  r = client_->Patch(url, R"({"metadata":{"finalizers":["a/x","a/y","a/z"]}})",
                     "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  r = client_->Patch(url, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a/y"]}})",
                     "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::serialize(r.Json().at("metadata").at("finalizers")), R"(["a/x","a/z"])");
  // JSON patch: a failed test is 422; an over-long patch is 413.
  r = client_->Patch(url, R"([{"op":"test","path":"/spec/replicas","value":5}])",
                     "application/json-patch+json");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Str(r.Json(), {"reason"}), "Invalid");
  std::string many = "[";
  for (int i = 0; i <= 10000; ++i) {
    many += std::string(i ? "," : "") + R"({"op":"test","path":"/kind","value":"Deployment"})";
  }
  many += "]";
  r = client_->Patch(url, many, "application/json-patch+json");
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(Str(r.Json(), {"reason"}), "RequestEntityTooLarge");
  EXPECT_EQ(Str(r.Json(), {"message"}),
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
            "got 10001");
  r = client_->Patch(url, R"([{"op":"replace","path":"/spec/replicas","value":4}])",
                     "application/json-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Str(r.Json(), {"spec", "replicas"}), "4");
  // Bad patch documents leave the object alone.
  const std::string rv = Str(r.Json(), {"metadata", "resourceVersion"});
  for (const auto& [type, patch, code] : std::vector<std::tuple<std::string, std::string, int>>{
           {"application/merge-patch+json", "{bad", 400},
           {"application/json-patch+json", R"({"op":"add"})", 400},
           {"application/strategic-merge-patch+json",
            R"({"metadata":{"$deleteFromPrimitiveList/finalizers":"a/x"}})", 400},
           {"application/x-unknown", "{}", 415}}) {
    HttpResponse bad = client_->Patch(url, patch, type);
    EXPECT_EQ(bad.status, code) << type << " " << patch << " " << bad.body;
    EXPECT_EQ(Str(bad.Json(), {"kind"}), "Status") << bad.body;
  }
  EXPECT_EQ(Str(client_->Get(url).Json(), {"metadata", "resourceVersion"}), rv);
}

TEST_F(ApiTest, ApplyCreatesConflictsAndForceTakesOwnership) {
  std::string ns = Namespace();
  std::string url = "/api/v1/namespaces/" + ns + "/configmaps/applied";
  const std::string one =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"k":"1"}})";
  const std::string two =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"k":"2"}})";
  HttpResponse r = client_->Patch(url + "?fieldManager=alice", one, "application/apply-patch+yaml");
  ASSERT_EQ(r.status, 201) << r.body;
  r = client_->Patch(url + "?fieldManager=bob", two, "application/apply-patch+yaml");
  ASSERT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(Str(r.Json(), {"reason"}), "Conflict");
  EXPECT_EQ(Str(r.Json(), {"message"}),
            R"(Apply failed with 1 conflict: conflict with "alice": .data.k)");
  const json::value conflict = r.Json();
  const json::value& cause = conflict.at("details").at("causes").at(0);
  EXPECT_EQ(Str(cause, {"reason"}), "FieldManagerConflict");
  EXPECT_EQ(Str(cause, {"field"}), ".data.k");
  EXPECT_EQ(Str(client_->Get(url).Json(), {"data", "k"}), "1");
  r = client_->Patch(url + "?fieldManager=bob&force=true", two, "application/apply-patch+yaml");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Str(r.Json(), {"data", "k"}), "2");
  // alice no longer owns the field: her next apply of another value conflicts with bob.
  r = client_->Patch(url + "?fieldManager=alice", one, "application/apply-patch+yaml");
  ASSERT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(Str(r.Json(), {"message"}),
            R"(Apply failed with 1 conflict: conflict with "bob": .data.k)");
}

// ---- delete ----------------------------------------------------------------------------------

TEST_F(ApiTest, DeleteAnswersPropagationAndGracePeriods) {
  std::string ns = Namespace();
  std::string cms = "/api/v1/namespaces/" + ns + "/configmaps";
  // A delete that removes the object answers a Success Status (most kinds) ...
  HttpResponse c = client_->Post(cms, ConfigMap("gone"));
  ASSERT_EQ(c.status, 201);
  HttpResponse d = client_->Delete(cms + "/gone");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(Str(d.Json(), {"kind"}), "Status");
  EXPECT_EQ(Str(d.Json(), {"status"}), "Success");
  EXPECT_EQ(Str(d.Json(), {"details", "name"}), "gone");
  EXPECT_EQ(Str(d.Json(), {"details", "kind"}), "configmaps");
  EXPECT_EQ(Str(d.Json(), {"details", "uid"}), Str(c.Json(), {"metadata", "uid"}));
  // ... Foreground and Orphan leave it marked with their finalizer (no garbage collector here).
  ASSERT_EQ(client_->Post(cms, ConfigMap("fg")).status, 201);
  d = client_->Delete(cms + "/fg", R"({"propagationPolicy":"Foreground"})");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(json::serialize(d.Json().at("metadata").at("finalizers")), R"(["foregroundDeletion"])");
  ASSERT_EQ(client_->Post(cms, ConfigMap("orphan")).status, 201);
  d = client_->Delete(cms + "/orphan?propagationPolicy=Orphan");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(json::serialize(d.Json().at("metadata").at("finalizers")), R"(["orphan"])");
  d = client_->Delete(cms + "/orphan?propagationPolicy=Sideways");
  EXPECT_EQ(d.status, 422) << d.body;
  d = client_->Delete(cms + "/orphan?propagationPolicy=Orphan&orphanDependents=true");
  EXPECT_EQ(d.status, 422) << d.body;

  // Pods: a bound pod is deleted gracefully (the kubelet finishes it); an unbound one at once.
  std::string pods = "/api/v1/namespaces/" + ns + "/pods";
  ASSERT_EQ(client_
                ->Post(pods, R"({"metadata":{"name":"bound"},"spec":{"nodeName":"n1",
                                    "containers":[{"name":"c","image":"nginx"}]}})")
                .status,
            201);
  d = client_->Delete(pods + "/bound?gracePeriodSeconds=45");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(Str(d.Json(), {"kind"}), "Pod");
  EXPECT_FALSE(Str(d.Json(), {"metadata", "deletionTimestamp"}).empty());
  EXPECT_EQ(Str(d.Json(), {"metadata", "deletionGracePeriodSeconds"}), "45");
  EXPECT_EQ(client_->Get(pods + "/bound").status, 200);
  d = client_->Delete(pods + "/bound?gracePeriodSeconds=0");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(client_->Get(pods + "/bound").status, 404);
  ASSERT_EQ(client_
                ->Post(pods, R"({"metadata":{"name":"unbound"},"spec":{
                                    "containers":[{"name":"c","image":"nginx"}]}})")
                .status,
            201);
  d = client_->Delete(pods + "/unbound");
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(Str(d.Json(), {"kind"}), "Pod");  // pods answer with the deleted object
  EXPECT_EQ(client_->Get(pods + "/unbound").status, 404);
}

// ---- metrics ------------------------------------------------------------------------------------

TEST_F(ApiTest, MetricsCountRequestsWatchesAndStoreLatency) {
  std::string ns = Namespace();
  ASSERT_EQ(client_->Post("/api/v1/namespaces/" + ns + "/configmaps", ConfigMap("m")).status, 201);
  auto w = client_->Watch("/api/v1/namespaces/" + ns + "/configmaps?watch=true");
  ASSERT_EQ(w->status(), 200);
  const std::string m = client_->Get("/metrics").body;
  for (
      const char* needle : {
          R"(apiserver_request_total{verb="POST",group="",version="v1",resource="configmaps",)",
          R"(apiserver_request_duration_seconds_bucket{verb="POST",group="",version="v1",)",
          R"(apiserver_current_inflight_requests{request_kind="readOnly"})",
          R"(apiserver_current_inflight_requests{request_kind="mutating"})",
          R"(apiserver_longrunning_requests{verb="WATCH",group="",version="v1",resource="configmaps"} )",
          R"(etcd_request_duration_seconds_bucket{operation="create",type="/registry/configmaps/",le=)",
          R"(etcd_request_duration_seconds_count{operation="create",type="/registry/configmaps/"} )",
      }) {
    EXPECT_NE(m.find(needle), std::string::npos) << needle;
  }
}

// The value of a counter without labels in the Prometheus text of /metrics (-1 when absent).
double CounterValue(const std::string& metrics, const std::string& name) {
  const std::string line_start = "\n" + name + " ";
  size_t at = metrics.find(line_start);
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + line_start.size()));
}

// Creates are handled on the connection's I/O thread (their commit is awaited without a thread);
// reads and other writes, which may block, on a worker.
TEST_F(ApiTest, CreatesRunOnTheIoThreadAndOtherRequestsOnWorkers) {
  constexpr char kCounter[] = "apiserver_requests_on_io_thread_total";
  std::string ns = Namespace();
  std::string base = "/api/v1/namespaces/" + ns + "/configmaps";
  const double before = CounterValue(client_->Get("/metrics").body, kCounter);
  HttpResponse c = client_->Post(base, ConfigMap("io"));
  ASSERT_EQ(c.status, 201) << c.body;
  const double after_create = CounterValue(client_->Get("/metrics").body, kCounter);
  EXPECT_EQ(after_create, std::max(before, 0.0) + 1);

  json::value obj = c.Json();
  obj.at("data").as_object()["k"] = "changed";
  ASSERT_EQ(client_->Put(base + "/io", json::serialize(obj)).status, 200);
  ASSERT_EQ(client_->Get(base + "/io").status, 200);
  EXPECT_EQ(CounterValue(client_->Get("/metrics").body, kCounter), after_create);
}

TEST_F(ApiTest, UnknownResourcesAndMethods) {
  EXPECT_EQ(client_->Get("/api/v1/namespaces/default/widgets").status, 404);
  EXPECT_EQ(client_->Get("/apis/nope.example.com/v1/things").status, 404);
  EXPECT_EQ(client_->Get("/nothing/here").status, 404);
}

}  // namespace
}  // namespace converge
