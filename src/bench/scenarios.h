// The scenarios of `converge bench` (issue #9). Each fills a Report with its figures (keys are
// stable, snake_case, units in the name) or returns an error; none asserts anything about speed.
// Servers a scenario starts are `converge apiserver`/`converge server` processes on loopback with
// a temporary data dir, stopped by their PID when the scenario ends.
//
// Thread-safety: each Run* is called from one thread (it starts and joins its own workers) and
// must be called from a thread that outlives the servers it starts (PR_SET_PDEATHSIG).
#pragma once

#include <string>
#include <vector>

#include "bench/report.h"
#include "util/status.h"

namespace converge::bench {

struct CommonOptions {
  // Parent of temporary data dirs (server and etcd). Empty: the system temp dir.
  std::string dir;
  // The converge binary for servers. Empty: the running executable.
  std::string binary;
  // The store of the servers the bench starts: "embedded" or "etcd" (ServerProcessOptions).
  std::string store = "embedded";
  // etcd 3.4 for store "etcd" and for the store comparison of `api`.
  std::string etcd_binary = "/usr/bin/etcd";
};

// api: pod creates over HTTPS by C concurrent clients (each level for `seconds`), then the store
// workload of those creates (a create-if-absent transaction of the stored pod's bytes) against
// the embedded store and against etcd 3.4 (started on loopback), with the same concurrency.
struct ApiOptions {
  CommonOptions common;
  std::vector<int> clients = {1, 16, 64};
  double seconds = 10;
  bool etcd = true;  // run the etcd comparison
};
util::Status RunApi(const ApiOptions& options, Report* report);

// watch: W watchers on one namespace's pods while pods are created at a steady rate; delivery
// latency is from just before the create is sent to the watcher reading its ADDED event.
struct WatchOptions {
  CommonOptions common;
  int watchers = 1000;
  double writes_per_second = 50;
  double seconds = 10;
};
util::Status RunWatch(const WatchOptions& options, Report* report);

// list: P pods created (through the API, on a --no-fsync server: the store's durability does not
// change a LIST), then LIST of all of them at once and in pages of `page_size`.
struct ListOptions {
  CommonOptions common;
  int pods = 100000;
  int page_size = 500;
  int repeat = 3;
};
util::Status RunList(const ListOptions& options, Report* report);

// e2e: a `converge server --nodes N` (or the server a kubeconfig points at), one Deployment
// scaled from 0 to M replicas; time until every pod is Running and Ready, startup latency of each
// pod (first seen through a watch to Ready seen through the watch), API latency meanwhile, and
// the server's peak RSS and CPU. With `hold_seconds`, the server's memory once it has held the
// pods that long after all were Ready (issue #9's "RSS holding N pods"; the simulated kubelets'
// Events are still being written for a while after a large scale-up).
struct E2eOptions {
  CommonOptions common;
  int nodes = 100;
  int pods = 1000;
  std::string kubeconfig;  // target this server instead of starting one
  int server_pid = 0;      // with kubeconfig: the server's PID, for RSS and CPU (0: not measured)
  double timeout_seconds = 1800;
  double hold_seconds = 0;               // then report held_rss_bytes (0: not measured)
  std::vector<std::string> server_args;  // extra flags for the server the bench starts
};
util::Status RunE2e(const E2eOptions& options, Report* report);

// startup: process start to /readyz on an empty data dir (apiserver and the all-in-one server),
// and reopening a data dir that holds `objects` pods (apiserver).
struct StartupOptions {
  CommonOptions common;
  int objects = 150000;
  int repeat = 3;
};
util::Status RunStartup(const StartupOptions& options, Report* report);

}  // namespace converge::bench
