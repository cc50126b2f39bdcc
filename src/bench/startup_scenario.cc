// The `startup` scenario (scenarios.h): fork to the first 200 from /readyz, on an empty data dir
// and on one that holds N pods.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "bench/pods.h"
#include "bench/scenarios.h"
#include "bench/server_process.h"
#include "bench/stats.h"

namespace converge::bench {

namespace {

namespace fs = std::filesystem;

double Ms(std::chrono::nanoseconds d) {
  return static_cast<double>(d.count()) / 1e6;
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median start-to-ready of `repeat` fresh servers, each on an empty data dir.
util::StatusOr<double> EmptyStart(const StartupOptions& options, const std::string& command,
                                  std::vector<std::string> args) {
  std::vector<double> ms;
  for (int i = 0; i < options.repeat; ++i) {
    ServerProcess server({.binary = options.common.binary,
                          .command = command,
                          .args = args,
                          .temp_parent = options.common.dir});
    if (auto s = server.Start(); !s.ok()) return s;
    ms.push_back(Ms(server.ready_after()));
  }
  return MedianOf(ms);
}

}  // namespace

util::Status RunStartup(const StartupOptions& options, Report* report) {
  if (options.common.store != "embedded") {
    // Reopening measures the embedded store's start; with etcd the data lives outside the server.
    return util::InvalidArgument("bench startup measures the embedded store only");
  }
  report->Add("load_average_1m_at_start", LoadAverage1m());
  auto apiserver = EmptyStart(options, "apiserver", {});
  if (!apiserver.ok()) return apiserver.status();
  report->Add("startup_empty_apiserver_ms", *apiserver);
  auto all_in_one = EmptyStart(options, "server", {"--nodes", "0"});
  if (!all_in_one.ok()) return all_in_one.status();
  report->Add("startup_empty_server_ms", *all_in_one);

  // A data dir with `objects` pods, written through the API by a --no-fsync apiserver, then
  // reopened by a normal one (fsync on, as users run it).
  std::string parent =
      options.common.dir.empty() ? fs::temp_directory_path().string() : options.common.dir;
  std::string tmpl = parent + "/converge-bench-reopen-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return util::Unavailable("cannot create a temp dir");
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_dir{tmpl};
  {
    ServerProcess filler({.binary = options.common.binary,
                          .command = "apiserver",
                          .args = {"--no-fsync"},
                          .data_dir = tmpl});
    if (auto s = filler.Start(); !s.ok()) return s;
    Progress progress("creating pods", options.objects);
    auto created =
        CreatePods(filler.kubeconfig_path(), "default", "st-", options.objects, 32, &progress);
    progress.Finish();
    if (!created.ok()) return created.status();
    report->Add("reopen_objects", created->created);
  }
  report->Add("reopen_data_bytes", DirectoryBytes(tmpl + "/store"));
  std::vector<double> ms;
  int64_t rss = 0;
  for (int i = 0; i < options.repeat; ++i) {
    ServerProcess server(
        {.binary = options.common.binary, .command = "apiserver", .data_dir = tmpl});
    if (auto s = server.Start(); !s.ok()) return s;
    ms.push_back(Ms(server.ready_after()));
    rss = std::max(rss, SampleProcess(server.pid()).rss_bytes);
  }
  report->Add("startup_reopen_ms", MedianOf(ms));
  report->Add("reopen_server_rss_bytes", rss);
  report->Add("load_average_1m_at_end", LoadAverage1m());
  report->Note("medians of " + std::to_string(options.repeat) +
               " starts; from fork to the first 200 from /readyz; warm page cache");
  return util::Status::Ok();
}

}  // namespace converge::bench
