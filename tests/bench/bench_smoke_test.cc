// `converge bench SCENARIO --json FILE` at tiny sizes, run as a process: each scenario must
// finish, and its JSON must hold the documented keys with sane values. Timings are not asserted.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "testing/converge_binary.h"
#include "testing/process.h"

namespace converge::testing {
namespace {

namespace json = boost::json;

class BenchSmokeTest : public ::testing::Test {
 protected:
  // Runs `converge bench ARGS... --json FILE --dir TMP` to its end and returns the parsed JSON
  // (an empty object, with a test failure, when it produced none).
  json::object RunBench(std::vector<std::string> args) {
    std::string json_path = dir_.path() + "/out.json";
    std::vector<std::string> argv = {CONVERGE_BINARY, "bench"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--json", json_path, "--dir", dir_.path()});
    std::string log = dir_.path() + "/bench.log";
    Process p;
    EXPECT_TRUE(p.Start(argv, log));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
    while (p.Running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(p.Running()) << "bench did not finish; log:\n" << ReadFile(log);
    std::string text = ReadFile(json_path);
    output_ = ReadFile(log);
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) {
      ADD_FAILURE() << "no JSON written; log:\n" << output_;
      return {};
    }
    return v.as_object();
  }

  // The number under `key`, or a test failure and -1.
  double Number(const json::object& o, const std::string& key) {
    const json::value* v = o.if_contains(key);
    if (v == nullptr || !v->is_number()) {
      ADD_FAILURE() << "missing number " << key << " in " << json::serialize(o) << "\nlog:\n"
                    << output_;
      return -1;
    }
    return v->to_number<double>();
  }

  TempDir dir_;
  std::string output_;
};

TEST_F(BenchSmokeTest, Api) {
  json::object o = RunBench({"api", "--clients", "1,4", "--seconds", "1"});
  EXPECT_EQ(json::value_to<std::string>(o["scenario"]), "api");
  for (std::string c : {"1", "4"}) {
    EXPECT_GT(Number(o, "api_" + c + "_clients_creates_per_second"), 0) << c;
    double p50 = Number(o, "api_" + c + "_clients_p50_ms");
    double p99 = Number(o, "api_" + c + "_clients_p99_ms");
    EXPECT_GT(p50, 0);
    EXPECT_GE(p99, p50);
    EXPECT_GT(Number(o, "store_embedded_" + c + "_clients_txns_per_second"), 0);
    EXPECT_GT(Number(o, "store_etcd_" + c + "_clients_txns_per_second"), 0);
    EXPECT_GT(Number(o, "api_to_etcd_" + c + "_clients_ratio"), 0);
    EXPECT_GT(Number(o, "embedded_to_etcd_" + c + "_clients_ratio"), 0);
  }
  // The store workload writes what the API server stored: a real pod, not an empty value.
  EXPECT_GT(Number(o, "stored_pod_bytes"), 100);
}

TEST_F(BenchSmokeTest, Watch) {
  json::object o = RunBench({"watch", "--watchers", "20", "--rate", "20", "--seconds", "1"});
  EXPECT_EQ(Number(o, "watchers"), 20);
  EXPECT_EQ(Number(o, "watchers_connected"), 20);
  EXPECT_EQ(Number(o, "writes"), 20);
  // Every watcher received every write.
  EXPECT_EQ(Number(o, "events_delivered"), 20 * 20);
  EXPECT_EQ(Number(o, "events_expected"), 20 * 20);
  double p50 = Number(o, "delivery_p50_ms");
  EXPECT_GT(p50, 0);
  EXPECT_GE(Number(o, "delivery_p99_ms"), p50);
}

TEST_F(BenchSmokeTest, List) {
  json::object o = RunBench({"list", "--pods", "200", "--page-size", "50", "--repeat", "1"});
  EXPECT_EQ(Number(o, "pods"), 200);
  EXPECT_EQ(Number(o, "list_items"), 200);
  EXPECT_GT(Number(o, "list_ms"), 0);
  EXPECT_GT(Number(o, "list_rv0_ms"), 0);
  EXPECT_GT(Number(o, "list_paginated_ms"), 0);
  // 200 pods in pages of 50: four pages, and about as many bytes as the whole list.
  EXPECT_EQ(Number(o, "list_paginated_pages"), 4);
  double whole = Number(o, "list_bytes");
  double paged = Number(o, "list_paginated_bytes");
  EXPECT_GT(whole, 200 * 100);
  EXPECT_GT(paged, whole * 0.9);
}

TEST_F(BenchSmokeTest, E2e) {
  json::object o =
      RunBench({"e2e", "--nodes", "3", "--pods", "10", "--timeout", "300", "--hold", "1"});
  EXPECT_EQ(Number(o, "pods"), 10);
  EXPECT_EQ(Number(o, "pods_ready"), 10);
  EXPECT_EQ(o.if_contains("timed_out"), nullptr);
  double seconds = Number(o, "seconds_to_all_ready");
  EXPECT_GT(seconds, 0);
  EXPECT_NEAR(Number(o, "pods_per_second"), 10 / seconds, 0.01 * 10 / seconds + 1e-3);
  double p50 = Number(o, "startup_p50_ms");
  EXPECT_GT(p50, 0);
  EXPECT_GE(Number(o, "startup_p99_ms"), p50);
  // Startup is measured within the run: no pod can take longer than the whole scale-up.
  EXPECT_LE(Number(o, "startup_p99_ms"), seconds * 1000 + 1);
  // Startup split where the pod is first seen bound: each part of every pod is within its whole.
  EXPECT_GT(Number(o, "scheduling_p50_ms"), 0);
  EXPECT_GT(Number(o, "bound_to_ready_p50_ms"), 0);
  EXPECT_LE(Number(o, "scheduling_p99_ms"), Number(o, "startup_p99_ms"));
  EXPECT_LE(Number(o, "bound_to_ready_p99_ms"), Number(o, "startup_p99_ms"));
  EXPECT_GT(Number(o, "api_p99_ms"), 0);
  // A running control plane with 3 nodes and 10 pods holds at least a few MB and at most GBs.
  double rss = Number(o, "peak_rss_bytes");
  EXPECT_GT(rss, 10 << 20);
  EXPECT_LT(rss, 8.0 * (1 << 30));
  EXPECT_GT(Number(o, "server_cpu_seconds"), 0);
  // --hold 1: the server's memory a second after all were Ready, split into private memory
  // and mapped files.
  EXPECT_EQ(Number(o, "held_seconds"), 1);
  double held = Number(o, "held_rss_bytes");
  EXPECT_GT(held, 10 << 20);
  EXPECT_LE(held, Number(o, "peak_rss_bytes") * 1.5);
  EXPECT_GT(Number(o, "held_rss_anon_bytes"), 0);
  EXPECT_GT(Number(o, "held_rss_file_bytes"), 0);
  EXPECT_LE(Number(o, "held_rss_anon_bytes") + Number(o, "held_rss_file_bytes"), held * 1.01 + 1);
}

// The same run with the server on a one-member etcd 3.4 that the bench starts: the pods are in
// etcd (counted there, past the server), and the bench stops etcd by its PID at the end.
TEST_F(BenchSmokeTest, E2eOnEtcd) {
  json::object o =
      RunBench({"e2e", "--nodes", "2", "--pods", "5", "--timeout", "300", "--store", "etcd"});
  EXPECT_EQ(json::value_to<std::string>(o["server_store"]), "etcd");
  EXPECT_EQ(Number(o, "pods_ready"), 5);
  EXPECT_EQ(Number(o, "etcd_pod_keys"), 5);
  // etcd's own process is measured beside the server's.
  EXPECT_GT(Number(o, "etcd_peak_rss_bytes"), 1 << 20);
  EXPECT_GE(Number(o, "etcd_cpu_seconds"), 0);
}

TEST_F(BenchSmokeTest, Startup) {
  json::object o = RunBench({"startup", "--objects", "200", "--repeat", "1"});
  EXPECT_GT(Number(o, "startup_empty_apiserver_ms"), 0);
  EXPECT_GT(Number(o, "startup_empty_server_ms"), 0);
  EXPECT_EQ(Number(o, "reopen_objects"), 200);
  EXPECT_GT(Number(o, "reopen_data_bytes"), 200 * 100);
  EXPECT_GT(Number(o, "startup_reopen_ms"), 0);
  EXPECT_GT(Number(o, "reopen_server_rss_bytes"), 0);
}

}  // namespace
}  // namespace converge::testing
