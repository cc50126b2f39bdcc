// Limits and overload against a live server: hostile bodies (a 100k-deep JSON document, a
// "billion laughs" YAML) are refused with 400 while the server stays live and small; a cap on
// in-flight requests answers 429 with Retry-After; and with one client flooding, another still
// gets at least 90% of its fair share of the completed requests (counts, not timings), with
// /readyz answering throughout.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "testing/server.h"

namespace converge {
namespace {

using testing::ServerProcess;
using testing::TempDir;
using testing::TestClient;

// Peak resident memory of a process in MiB (VmHWM), -1 when unknown.
long PeakRssMiB(pid_t pid) {
  std::string status = testing::ReadFile("/proc/" + std::to_string(pid) + "/status");
  size_t pos = status.find("VmHWM:");
  if (pos == std::string::npos) return -1;
  return std::stol(status.substr(pos + 6)) / 1024;
}

std::string Reason(const testing::HttpResponse& r) {
  auto v = r.Json();
  if (!v.is_object() || !v.as_object().contains("reason")) return "";
  return std::string(v.as_object().at("reason").as_string());
}

// A server whose token file knows `users` (each in group "limits-test", bound to cluster-admin so
// that authorization never gets in the way).
class LimitsServer {
 public:
  bool Start(std::vector<std::string> users, std::vector<std::string> args) {
    std::string tokens = dir_.path() + "/tokens.csv";
    std::ofstream out(tokens);
    for (const auto& u : users)
      out << "token-" << u << "," << u << ",uid-" << u << ",limits-test\n";
    out.close();
    args.insert(args.end(), {"--token-auth-file", tokens});
    if (!server_.Start({.command = "apiserver", .extra_args = args})) return false;
    auto admin = server_.Client();
    auto r = admin->Post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                         R"({"metadata":{"name":"limits-test"},
                             "roleRef":{"apiGroup":"rbac.authorization.k8s.io",
                                        "kind":"ClusterRole","name":"cluster-admin"},
                             "subjects":[{"apiGroup":"rbac.authorization.k8s.io",
                                          "kind":"Group","name":"limits-test"}]})");
    EXPECT_EQ(r.status, 201) << r.body;
    r = admin->Post("/api/v1/namespaces", R"({"metadata":{"name":"limits"}})");
    EXPECT_EQ(r.status, 201) << r.body;
    return true;
  }
  std::unique_ptr<TestClient> As(const std::string& user) {
    testing::Kubeconfig kc = server_.kubeconfig();
    kc.client_cert_pem.clear();
    kc.client_key_pem.clear();
    kc.token = "token-" + user;
    return std::make_unique<TestClient>(kc);
  }
  ServerProcess& server() { return server_; }

 private:
  TempDir dir_;
  ServerProcess server_;
};

TEST(LimitsTest, HostileBodiesAreRejectedWhileTheServerStaysLive) {
  ServerProcess server;
  ASSERT_TRUE(server.Start());
  auto client = server.Client();
  const long rss_before = PeakRssMiB(server.pid());
  const std::string target = "/api/v1/namespaces/default/configmaps";

  // 100 000 levels of arrays inside a field, and of objects.
  const int kDepth = 100000;
  std::string arrays =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":)" +
      std::string(kDepth, '[') + std::string(kDepth, ']') + "}";
  std::string objects;
  for (int i = 0; i < kDepth; ++i) objects += R"({"a":)";
  objects += "1" + std::string(kDepth, '}');
  for (const std::string* body : {&arrays, &objects}) {
    auto r = client->Post(target, *body);
    EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
    EXPECT_EQ(Reason(r), "BadRequest") << r.body.substr(0, 300);
    EXPECT_EQ(client->Get("/readyz").status, 200);
  }
  auto r = client->Patch(target + "/missing", objects, "application/merge-patch+json");
  EXPECT_GE(r.status, 400) << r.body.substr(0, 300);
  EXPECT_LT(r.status, 500) << r.body.substr(0, 300);

  // "Billion laughs": nine aliases of nine aliases ... 9^9 strings if expanded.
  std::string laughs = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: laughs\n";
  laughs += "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  const char* names = "abcdefghi";
  for (int i = 1; i < 9; ++i) {
    std::string prev(1, names[i - 1]);
    laughs += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int j = 0; j < 9; ++j) laughs += (j ? ",*" : "*") + prev;
    laughs += "]\n";
  }
  r = client->Do("POST", target, laughs, {{"Content-Type", "application/yaml"}});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("aliasing"), std::string::npos) << r.body;
  r = client->Patch(target + "/laughs?fieldManager=test", laughs, "application/apply-patch+yaml");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(client->Get("/readyz").status, 200);
  // The quadratic variant: one long anchored string aliased many times (1 MiB × 2000 = 2 GB).
  std::string wide = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wide\ns: &s \"" +
                     std::string(1 << 20, 'x') + "\"\nl: [*s";
  for (int i = 0; i < 2000; ++i) wide += ",*s";
  wide += "]\n";
  r = client->Do("POST", target, wide, {{"Content-Type", "application/yaml"}});
  EXPECT_EQ(r.status, 400) << r.body.substr(0, 300);
  EXPECT_NE(r.body.find("aliasing"), std::string::npos) << r.body.substr(0, 300);
  EXPECT_EQ(client->Get("/readyz").status, 200);
  // Nothing was created, and the server never came near expanding anything.
  EXPECT_EQ(client->Get(target + "/laughs").status, 404);
  EXPECT_EQ(client->Get(target + "/deep").status, 404);
  const long rss_after = PeakRssMiB(server.pid());
  RecordProperty("peak_rss_mib_before", std::to_string(rss_before));
  RecordProperty("peak_rss_mib_after", std::to_string(rss_after));
  EXPECT_LT(rss_after - rss_before, 256)
      << "peak RSS grew from " << rss_before << " to " << rss_after << " MiB";
}

TEST(LimitsTest, InflightCapAnswers429WithRetryAfter) {
  LimitsServer s;
  ASSERT_TRUE(s.Start({"busy"}, {"--max-requests-inflight", "1"}));
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0};
  std::atomic<int> rejected{0};
  std::mutex mu;
  testing::HttpResponse sample;
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      auto c = s.As("busy");
      for (int i = 0; i < 300 && !stop; ++i) {
        auto r = c->Get("/api/v1/namespaces/limits/configmaps");
        if (r.status == 200) ++ok;
        if (r.status == 429) {
          ++rejected;
          stop = true;
          std::lock_guard lock(mu);
          sample = r;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_GT(rejected.load(), 0) << ok.load() << " requests succeeded and none was refused";
  EXPECT_EQ(Reason(sample), "TooManyRequests") << sample.body;
  EXPECT_EQ(sample.headers["retry-after"], "1");
  // Probes and administrators are exempt.
  EXPECT_EQ(s.server().Client()->Get("/readyz").status, 200);
}

TEST(LimitsTest, FloodingClientCannotStarveAnother) {
  LimitsServer s;
  // Two seats: one for the system lane, one shared by the two flows below. A single seat keeps
  // the seat the bottleneck (each create waits for its fsync) rather than the I/O threads or
  // this process, so the flows really queue and the schedule decides who is served.
  ASSERT_TRUE(s.Start({"flooder", "victim"}, {"--workers", "2"}));
  const int kFlooders = 48;
  // Enough concurrency that the victim always has requests waiting at the server even when this
  // process is starved of CPU (a client that sends too little has no share to lose). Without
  // fair queuing its share would be its part of the connections, 12/60.
  const int kVictims = 12;
  const int kVictimRequests = 15;
  std::atomic<bool> window{false};
  std::atomic<bool> stop{false};
  std::atomic<int> flooder_ok_in_window{0};
  std::atomic<int> flooder_rejected{0};
  std::atomic<int> victim_ok{0};
  std::atomic<int> victim_failed{0};
  std::atomic<int> readyz_ok{0};
  std::atomic<int> readyz_failed{0};
  auto body = [](const std::string& prefix) {
    return R"({"metadata":{"generateName":")" + prefix + R"(-"},"data":{"k":"v"}})";
  };
  const std::string target = "/api/v1/namespaces/limits/configmaps";

  std::vector<std::thread> flooders;
  for (int t = 0; t < kFlooders; ++t) {
    flooders.emplace_back([&] {
      auto c = s.As("flooder");
      while (!stop) {
        auto r = c->Post(target, body("f"));
        if (r.status == 201 && window) ++flooder_ok_in_window;
        if (r.status == 429) {
          ++flooder_rejected;
          // A client that ignores Retry-After, but not one that spins.
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    });
  }
  std::thread prober([&] {
    auto c = s.server().Client();
    while (!stop) {
      (c->Get("/readyz").status == 200 ? readyz_ok : readyz_failed)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  // Let the flood build up (every flooder has sent at least once) before the victim starts.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  // The share is counted only while both flows are backlogged: from the moment every victim is
  // connected (a loaded machine can take a while over twelve TLS handshakes, while the flood goes
  // on) until the first victim is done (after that the victim has fewer requests waiting).
  std::atomic<int> victims_connected{0};
  std::atomic<int> victim_ok_in_window{0};
  std::vector<std::thread> victims;
  for (int t = 0; t < kVictims; ++t) {
    victims.emplace_back([&] {
      auto c = s.As("victim");
      (void)c->Get("/readyz");  // connects
      ++victims_connected;
      while (!window) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      for (int i = 0; i < kVictimRequests; ++i) {
        bool ok = c->Post(target, body("v")).status == 201;
        (ok ? victim_ok : victim_failed)++;
        if (ok && window) ++victim_ok_in_window;
      }
      window = false;
    });
  }
  while (victims_connected < kVictims) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  window = true;
  for (auto& t : victims) t.join();
  stop = true;
  for (auto& t : flooders) t.join();
  prober.join();

  const int total = victim_ok_in_window + flooder_ok_in_window;
  const double share = total ? static_cast<double>(victim_ok_in_window) / total : 0;
  RecordProperty("victim_ok", victim_ok.load());
  RecordProperty("victim_ok_in_window", victim_ok_in_window.load());
  RecordProperty("flooder_ok_in_window", flooder_ok_in_window.load());
  RecordProperty("flooder_rejected", flooder_rejected.load());
  std::printf(
      "victim %d (%d while both flows were backlogged), flooder %d in that window (victim "
      "share %.2f; fair 0.50), flooder 429s %d, readyz %d ok %d failed\n",
      victim_ok.load(), victim_ok_in_window.load(), flooder_ok_in_window.load(), share,
      flooder_rejected.load(), readyz_ok.load(), readyz_failed.load());
  EXPECT_EQ(victim_ok, kVictims * kVictimRequests);
  EXPECT_EQ(victim_failed, 0);
  // Two backlogged flows: the fair share is half of what completed while both were sending.
  EXPECT_GE(share, 0.9 * 0.5);
  EXPECT_GT(readyz_ok, 0);
  EXPECT_EQ(readyz_failed, 0);
}

}  // namespace
}  // namespace converge
