// API conformance: Kubernetes REST semantics against a live `converge apiserver` on an ephemeral
// port, reached only through the kubeconfig it writes.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

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
  // uid and creationTimestamp are immutable: attempts are ignored.
  json::value tamper = uncond.Json();
  tamper.get_object()["metadata"].get_object()["uid"] = "00000000-0000-0000-0000-000000000000";
  tamper.get_object()["metadata"].get_object().erase("resourceVersion");
  HttpResponse t = client_->Put(base + "/cm", json::serialize(tamper));
  ASSERT_EQ(t.status, 200) << t.body;
  EXPECT_EQ(Str(t.Json(), {"metadata", "uid"}), Str(c.Json(), {"metadata", "uid"}));
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
    if (pages == 0) {
      // A write between pages does not show up in the paginated list.
      ASSERT_EQ(client_->Post(base, ConfigMap("cm-999")).status, 201);
    }
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 25u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 25u);
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
  HttpResponse d = client_->Delete(base + "/held");
  ASSERT_EQ(d.status, 202) << d.body;
  EXPECT_FALSE(Str(d.Json(), {"metadata", "deletionTimestamp"}).empty());
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

TEST_F(ApiTest, UnknownResourcesAndMethods) {
  EXPECT_EQ(client_->Get("/api/v1/namespaces/default/widgets").status, 404);
  EXPECT_EQ(client_->Get("/apis/nope.example.com/v1/things").status, 404);
  EXPECT_EQ(client_->Get("/nothing/here").status, 404);
}

}  // namespace
}  // namespace converge
