// The `list` scenario (scenarios.h): LIST of P pods whole and in pages. Timings are of the raw
// HTTP exchanges (request sent to last body byte read); decoding the body in this process is not
// counted, and a page's continue token is read after its timing stops.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <vector>

#include "bench/pods.h"
#include "bench/scenarios.h"
#include "bench/server_process.h"
#include "bench/stats.h"

namespace converge::bench {

namespace {

using Clock = std::chrono::steady_clock;
constexpr char kPath[] = "/api/v1/namespaces/default/pods";

struct Exchange {
  double ms = 0;
  int64_t bytes = 0;
  std::string continue_token;
  int64_t items = 0;
};

// One LIST request; `parse` reads the continue token and item count (outside the timing).
util::StatusOr<Exchange> ListOnce(client::RestClient& rest, int64_t limit,
                                  const std::string& continue_token,
                                  const std::string& resource_version, bool parse) {
  client::HttpRequest req;
  req.path = kPath;
  if (limit > 0) req.query.emplace_back("limit", std::to_string(limit));
  if (!continue_token.empty()) req.query.emplace_back("continue", continue_token);
  if (!resource_version.empty()) req.query.emplace_back("resourceVersion", resource_version);
  req.headers.emplace_back("accept", "application/json");
  Clock::time_point t0 = Clock::now();
  auto r = rest.Do(std::move(req));
  Exchange e;
  e.ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!r.ok()) return r.status();
  e.bytes = static_cast<int64_t>(r->body.size());
  if (parse) {
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(r->body, ec);
    if (ec || !v.is_object()) return util::DataLoss("undecodable list body");
    const boost::json::object& o = v.as_object();
    if (const auto* meta = o.if_contains("metadata"); meta && meta->is_object()) {
      if (const auto* c = meta->as_object().if_contains("continue"); c && c->is_string()) {
        e.continue_token = std::string(c->as_string());
      }
    }
    if (const auto* items = o.if_contains("items"); items && items->is_array()) {
      e.items = static_cast<int64_t>(items->as_array().size());
    }
  }
  return e;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

util::Status RunList(const ListOptions& options, Report* report) {
  report->Add("load_average_1m_at_start", LoadAverage1m());
  // The store's durability does not change a LIST; --no-fsync only makes filling it quicker.
  ServerProcess server({.binary = options.common.binary,
                        .command = "apiserver",
                        .args = {"--no-fsync"},
                        .temp_parent = options.common.dir,
                        .store = options.common.store,
                        .etcd_binary = options.common.etcd_binary});
  if (auto s = server.Start(); !s.ok()) return s;
  {
    Progress progress("creating pods", options.pods);
    auto created =
        CreatePods(server.kubeconfig_path(), "default", "bl-", options.pods, 32, &progress);
    progress.Finish();
    if (!created.ok()) return created.status();
    report->Add("pods", created->created);
    report->Add(
        "create_pods_per_second",
        created->seconds > 0 ? static_cast<double>(created->created) / created->seconds : 0.0);
  }
  auto rc = ClientForKubeconfig(server.kubeconfig_path());
  if (!rc.ok()) return rc.status();
  client::RestClient& rest = **rc;

  Progress progress("lists", options.repeat * 3);
  std::vector<double> full_ms, full_rv0_ms, paged_ms;
  int64_t full_bytes = 0, paged_bytes = 0, pages = 0, items = 0;
  Latencies page_latencies;
  for (int rep = 0; rep < options.repeat; ++rep) {
    // Whole, most recent (a consistent read: what kubectl get does).
    auto full = ListOnce(rest, 0, "", "", rep == 0);
    if (!full.ok()) return full.status();
    full_ms.push_back(full->ms);
    full_bytes = full->bytes;
    if (rep == 0) items = full->items;
    progress.Set(rep * 3 + 1);
    // Whole, resourceVersion=0 (any state the server has: what informers' first LIST does).
    auto rv0 = ListOnce(rest, 0, "", "0", false);
    if (!rv0.ok()) return rv0.status();
    full_rv0_ms.push_back(rv0->ms);
    progress.Set(rep * 3 + 2);
    // In pages.
    double total = 0;
    int64_t bytes = 0, n = 0;
    std::string token;
    do {
      auto page = ListOnce(rest, options.page_size, token, "", true);
      if (!page.ok()) return page.status();
      total += page->ms;
      bytes += page->bytes;
      page_latencies.AddMs(page->ms);
      token = page->continue_token;
      ++n;
    } while (!token.empty());
    paged_ms.push_back(total);
    paged_bytes = bytes;
    pages = n;
    progress.Set(rep * 3 + 3);
  }
  progress.Finish();
  report->Add("list_items", items);
  report->Add("list_ms", Median(full_ms));
  report->Add("list_bytes", full_bytes);
  report->Add("list_rv0_ms", Median(full_rv0_ms));
  report->Add("list_paginated_ms", Median(paged_ms));
  report->Add("list_paginated_bytes", paged_bytes);
  report->Add("list_paginated_page_size", options.page_size);
  report->Add("list_paginated_pages", pages);
  report->Add("list_page_p50_ms", page_latencies.PercentileMs(50));
  report->Add("list_page_p99_ms", page_latencies.PercentileMs(99));
  report->Add("server_rss_bytes", SampleProcess(server.pid()).rss_bytes);
  report->Add("server_peak_rss_bytes", SampleProcess(server.pid()).peak_rss_bytes);
  report->Add("load_average_1m_at_end", LoadAverage1m());
  report->Note("timings are medians of " + std::to_string(options.repeat) +
               " runs; list_paginated_ms sums the pages' request times");
  return util::Status::Ok();
}

}  // namespace converge::bench
