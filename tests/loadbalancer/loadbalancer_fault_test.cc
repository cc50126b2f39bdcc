// Issue #12's fault test: the LoadBalancer operator (examples/loadbalancer-operator) against a
// real `converge apiserver` and `converge cloud-sim`, three separate processes, while
//   - the operator is killed while two creates it sent were performed but not answered, and one
//     of the two objects is deleted before it comes back,
//   - 10% of cloud calls time out after they were performed,
//   - the cloud answers bursts of 5xx,
//   - the cloud is down for an outage (30 s; LB_TEST_OUTAGE_SECONDS shortens it),
//   - the operator is killed with SIGKILL mid-reconcile and restarted (twice),
//   - objects are deleted while their load balancers are being created, and ports change.
// Once the faults stop: exactly one cloud load balancer per live object, none for deleted
// objects (which are gone from the API), and every status is correct (externalID, address,
// Ready=True/Available, observedGeneration).
//
// No timing assertions: every wait is a condition polled up to a generous deadline.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "api/yaml.h"
#include "loadbalancer_paths.h"
#include "testing/server.h"

namespace converge::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

constexpr const char* kCollection = "/apis/lb.converge.io/v1/namespaces/default/loadbalancers";
constexpr const char* kCrds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

int OutageSeconds() {
  const char* v = std::getenv("LB_TEST_OUTAGE_SECONDS");
  return v != nullptr ? std::atoi(v) : 30;
}

// Polls `done` every 100 ms until it holds or `limit` passes.
template <typename F>
bool WaitUntil(F done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return done();
}

std::string Str(const json::value* v) {
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

std::string Dump(const json::value* v) {
  return v != nullptr ? json::serialize(*v) : "null";
}

const json::value* At(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* cur = &v;
  for (std::string_view k : path) {
    if (!cur->is_object()) return nullptr;
    cur = cur->as_object().if_contains(k);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

class LoadBalancerFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start({.command = "apiserver"}));
    api_ = server_.Client();
    ApplyCrd();
    if (IsSkipped()) return;
    StartCloud();
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "---- operator log (tail) ----\n"
                << Tail(ReadFile(OperatorLog()), 8000) << "\n---- cloud-sim log (tail) ----\n"
                << Tail(ReadFile(dir_.path() + "/cloud.log"), 4000) << "\n";
    }
    operator_.Stop();
    cloud_.Stop();
  }

  static std::string Tail(const std::string& s, size_t n) {
    return s.size() <= n ? s : s.substr(s.size() - n);
  }
  std::string OperatorLog() const { return dir_.path() + "/operator.log"; }

  void StartCloud() {
    const std::string address_file = dir_.path() + "/cloud-url";
    ASSERT_TRUE(cloud_.Start(
        {CONVERGE_BINARY, "cloud-sim", "--listen", "127.0.0.1:0", "--address-file", address_file,
         "--provisioning-ms", "300", "--hang-ms", "3000", "--seed", "12"},
        dir_.path() + "/cloud.log"));
    ASSERT_TRUE(WaitUntil([&] { return std::filesystem::exists(address_file); }, 30s))
        << ReadFile(dir_.path() + "/cloud.log");
    cloud_url_ = ReadFile(address_file);
    while (!cloud_url_.empty() && std::isspace(static_cast<unsigned char>(cloud_url_.back()))) {
      cloud_url_.pop_back();
    }
    Kubeconfig kc;
    kc.server = cloud_url_;
    cloud_admin_ = std::make_unique<TestClient>(kc);
    ASSERT_EQ(cloud_admin_->Get("/healthz").status, 200);
  }

  void ApplyCrd() {
    util::StatusOr<json::value> crd = api::YamlToJson(ReadFile(LOADBALANCER_CRD_YAML));
    ASSERT_TRUE(crd.ok()) << crd.status().ToString();
    HttpResponse r = api_->Post(kCrds, json::serialize(*crd));
    ASSERT_EQ(r.status, 201) << r.body;
    // A server that stores CRDs but does not serve them never marks them Established.
    const std::string crd_path = std::string(kCrds) + "/loadbalancers.lb.converge.io";
    auto established = [&] {
      json::value crd = api_->Get(crd_path).Json();
      const json::value* conds = At(crd, {"status", "conditions"});
      if (conds == nullptr || !conds->is_array()) return false;
      for (const json::value& c : conds->as_array()) {
        if (Str(At(c, {"type"})) == "Established" && Str(At(c, {"status"})) == "True") return true;
      }
      return false;
    };
    ASSERT_TRUE(WaitUntil(established, 30s)) << "the LoadBalancer CRD never became Established";
    ASSERT_TRUE(WaitUntil([&] { return api_->Get(kCollection).status == 200; }, 30s))
        << "the LoadBalancer resource was never served";
  }

  void StartOperator() {
    ASSERT_TRUE(operator_.Start(
        {LOADBALANCER_OPERATOR_BINARY, "--kubeconfig", server_.kubeconfig_path(), "--cloud",
         cloud_url_, "--workers", "4", "--cloud-timeout-ms", "1000", "--backoff-base-ms", "100",
         "--backoff-max-ms", "3000", "--resync-seconds", "5"},
        OperatorLog()));
  }

  void Faults(const std::string& patch) {
    HttpResponse r = cloud_admin_->Put("/admin/faults", patch);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  json::object Counters() { return cloud_admin_->Get("/admin/counters").Json().as_object(); }
  int64_t Counter(const char* name) { return Counters().at(name).as_int64(); }

  // Creates LoadBalancer `name` with one port; returns its UID.
  std::string Create(const std::string& name, int port) {
    json::object o{{"apiVersion", "lb.converge.io/v1"},
                   {"kind", "LoadBalancer"},
                   {"metadata", json::object{{"name", name}}},
                   {"spec", json::object{{"ports", json::array{json::object{{"port", port}}}},
                                         {"tags", json::object{{"test", "faults"}}}}}};
    HttpResponse r = api_->Post(kCollection, json::serialize(o));
    EXPECT_EQ(r.status, 201) << r.body;
    std::string uid = Str(At(r.Json(), {"metadata", "uid"}));
    uids_[name] = uid;
    live_.insert(name);
    return uid;
  }
  void Delete(const std::string& name) {
    HttpResponse r = api_->Delete(std::string(kCollection) + "/" + name);
    EXPECT_TRUE(r.status == 200 || r.status == 202) << r.body;
    live_.erase(name);
    deleted_.insert(name);
  }
  void SetPorts(const std::string& name, const std::string& ports_json) {
    HttpResponse r =
        api_->Patch(std::string(kCollection) + "/" + name,
                    R"({"spec":{"ports":)" + ports_json + "}}", "application/merge-patch+json");
    EXPECT_EQ(r.status, 200) << r.body;
  }

  // Whether the system has converged; `why` says what is still off.
  bool Converged(std::string* why) {
    json::value lbs = cloud_admin_->Get("/admin/loadbalancers").Json();
    const json::value* items = At(lbs, {"items"});
    if (items == nullptr || !items->is_array()) {
      *why = "cloud list failed";
      return false;
    }
    std::map<std::string, std::vector<json::object>> by_uid;
    for (const json::value& lb : items->as_array()) {
      by_uid[Str(At(lb, {"tags", "lb.converge.io/uid"}))].push_back(lb.as_object());
    }
    for (const std::string& name : deleted_) {
      HttpResponse r = api_->Get(std::string(kCollection) + "/" + name);
      if (r.status != 404) {
        *why = name + " (deleted) still exists: " + std::to_string(r.status);
        return false;
      }
      if (by_uid.contains(uids_[name])) {
        *why = name + " (deleted) still has a cloud load balancer";
        return false;
      }
    }
    for (const std::string& name : live_) {
      HttpResponse r = api_->Get(std::string(kCollection) + "/" + name);
      if (r.status != 200) {
        *why = name + ": " + std::to_string(r.status);
        return false;
      }
      json::value obj = r.Json();
      const std::vector<json::object>& mine = by_uid[uids_[name]];
      if (mine.size() != 1) {
        *why = name + " has " + std::to_string(mine.size()) + " cloud load balancers";
        return false;
      }
      const json::object& lb = mine[0];
      if (Str(At(obj, {"status", "externalID"})) != Str(lb.if_contains("id")) ||
          Str(At(obj, {"status", "address"})) != Str(lb.if_contains("address"))) {
        *why = name + ": status " + Dump(At(obj, {"status"})) + " vs cloud " + json::serialize(lb);
        return false;
      }
      const json::value* gen = At(obj, {"metadata", "generation"});
      const json::value* observed = At(obj, {"status", "observedGeneration"});
      if (gen == nullptr || observed == nullptr || *gen != *observed) {
        *why = name + ": observedGeneration lags";
        return false;
      }
      bool ready = false;
      if (const json::value* conds = At(obj, {"status", "conditions"});
          conds && conds->is_array()) {
        for (const json::value& c : conds->as_array()) {
          if (Str(At(c, {"type"})) == "Ready" && Str(At(c, {"status"})) == "True" &&
              Str(At(c, {"reason"})) == "Available") {
            ready = true;
          }
        }
      }
      if (!ready) {
        *why = name + ": not Ready/Available: " + Dump(At(obj, {"status"}));
        return false;
      }
      // Ports in the cloud are the spec's (protocol TCP when unset).
      std::set<std::pair<int64_t, std::string>> want, have;
      const json::value* spec_ports = At(obj, {"spec", "ports"});
      if (spec_ports == nullptr || !spec_ports->is_array()) {
        *why = name + ": no spec.ports";
        return false;
      }
      for (const json::value& p : spec_ports->as_array()) {
        std::string proto = Str(At(p, {"protocol"}));
        want.emplace(At(p, {"port"})->as_int64(), proto.empty() ? "TCP" : proto);
      }
      for (const json::value& p : lb.at("ports").as_array()) {
        have.emplace(At(p, {"port"})->as_int64(), Str(At(p, {"protocol"})));
      }
      if (want != have) {
        *why = name + ": cloud ports differ from spec";
        return false;
      }
    }
    if (items->as_array().size() != live_.size()) {
      *why = "cloud has " + std::to_string(items->as_array().size()) + " load balancers for " +
             std::to_string(live_.size()) + " live objects";
      return false;
    }
    return true;
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<TestClient> api_;
  Process cloud_;
  Process operator_;
  std::string cloud_url_;
  std::unique_ptr<TestClient> cloud_admin_;
  std::map<std::string, std::string> uids_;  // every object ever created
  std::set<std::string> live_;
  std::set<std::string> deleted_;
};

TEST_F(LoadBalancerFaultTest, ExactlyOneLoadBalancerPerLiveObjectAfterFaults) {
  StartOperator();

  // Phase 0, deterministic: two creates are performed and then stall; while the operator waits
  // for their answers (mid-reconcile) it is killed. One of the two objects is deleted while the
  // operator is down: its load balancer exists, but nobody ever heard of it.
  Faults(R"({"timeoutNextCreates":2,"hangMs":60000})");
  Create("crash-a", 7001);
  Create("crash-b", 7002);
  ASSERT_TRUE(WaitUntil([&] { return Counter("creates") >= 2; }, 60s));
  operator_.Kill();
  Delete("crash-a");
  Faults(R"({"hangMs":3000})");

  // 10% of calls are performed and then stall past the operator's 1 s timeout.
  Faults(R"({"timeoutAfterActionProbability":0.1,"latencyMs":5})");
  StartOperator();

  // Phase 1: objects arrive; every fifth is deleted at once (mid-creation); a 5xx burst.
  for (int i = 0; i < 20; ++i) {
    const std::string name = "lb-" + std::to_string(i);
    Create(name, 8000 + i);
    if (i % 5 == 0) Delete(name);
    if (i == 6) Faults(R"({"errorBurst":15})");
  }
  // Kill the operator while it is busy creating (mid-reconcile), then start it again.
  WaitUntil([&] { return Counter("creates") >= 6; }, 60s);
  operator_.Kill();
  Create("lb-20", 8020);
  Delete("lb-1");  // quite possibly mid-creation: the operator is down
  StartOperator();
  SetPorts("lb-7", R"([{"port":443},{"port":53,"protocol":"UDP"}])");

  // Phase 2: a full outage. Objects come and go meanwhile; the operator is killed once more.
  WaitUntil([&] { return Counter("creates") >= 12; }, 60s);
  const int outage = OutageSeconds();
  Faults(R"({"outageSeconds":)" + std::to_string(outage) + "}");
  for (int i = 21; i < 26; ++i) Create("lb-" + std::to_string(i), 8000 + i);
  Delete("lb-8");
  Delete("lb-21");
  operator_.Kill();
  StartOperator();
  SetPorts("lb-9", R"([{"port":9999}])");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return cloud_admin_->Get("/admin/faults").Json().as_object().at("outageRemainingMs") == 0;
      },
      std::chrono::seconds(outage + 30)));

  // Phase 3: another burst on the way out, then the faults stop.
  Faults(R"({"errorBurst":10})");
  Delete("lb-11");
  const int64_t calls = Counter("calls");
  WaitUntil([&] { return Counter("calls") >= calls + 20; }, 60s);
  Faults(
      R"({"timeoutAfterActionProbability":0,"latencyMs":0,"errorBurst":0,"errorProbability":0,"outage":false})");

  std::string why;
  EXPECT_TRUE(WaitUntil([&] { return Converged(&why); }, 180s)) << why;

  // The faults really happened (else this test proves nothing).
  json::object c = Counters();
  EXPECT_GT(c.at("injectedTimeouts").as_int64(), 0) << json::serialize(c);
  EXPECT_GT(c.at("injectedErrors").as_int64(), 0) << json::serialize(c);
  EXPECT_GT(c.at("outageRejections").as_int64(), 0) << json::serialize(c);
  std::cerr << "cloud counters: " << json::serialize(c) << "\n";
}

}  // namespace
}  // namespace converge::testing
