// The `api` scenario (scenarios.h): pod creates over HTTPS, and the same creates' store workload
// against the embedded store and etcd 3.4.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "bench/load.h"
#include "bench/pods.h"
#include "bench/scenarios.h"
#include "bench/server_process.h"
#include "store/embedded_store.h"
#include "store/etcd/etcd_cluster.h"
#include "store/etcd/etcd_store.h"

namespace converge::bench {

namespace {

namespace fs = std::filesystem;

// What the API server's create does to the store: put the object's bytes if the key is absent.
store::TxnRequest CreateTxn(std::string key, const std::string& value) {
  store::TxnRequest txn;
  store::Compare cmp;
  cmp.key = key;
  cmp.target = store::Compare::Target::kCreateRevision;
  cmp.result = store::Compare::Result::kEqual;
  cmp.number = 0;
  txn.compare.push_back(std::move(cmp));
  store::PutRequest put;
  put.key = std::move(key);
  put.value = value;
  txn.success.emplace_back(std::move(put));
  return txn;
}

ClosedLoopResult RunStoreLevel(store::KV& kv, const std::string& name, int clients,
                               std::chrono::milliseconds duration, const std::string& value) {
  ClosedLoopOptions lo;
  lo.clients = clients;
  lo.duration = duration;
  lo.label = name + " txns, " + std::to_string(clients) + " clients";
  lo.op = [&kv, &value, clients](int c, int64_t i) -> util::Status {
    auto r = kv.Txn(CreateTxn("/registry/pods/bench/s" + std::to_string(clients) + "-" +
                                  std::to_string(c) + "-" + std::to_string(i),
                              value));
    if (!r.ok()) return r.status();
    if (!r->succeeded) return util::Internal("create-if-absent found the key present");
    return util::Status::Ok();
  };
  return RunClosedLoop(lo);
}

void AddLevel(Report* report, const std::string& prefix, const std::string& rate_name,
              ClosedLoopResult& r) {
  report->Add(prefix + "_" + rate_name + "_per_second", r.per_second());
  report->Add(prefix + "_p50_ms", r.latencies.PercentileMs(50));
  report->Add(prefix + "_p99_ms", r.latencies.PercentileMs(99));
  if (r.errors > 0) {
    report->Add(prefix + "_errors", r.errors);
    report->Note(prefix + ": " + std::to_string(r.errors) +
                 " errors, first: " + r.first_error.ToString());
  }
}

}  // namespace

util::Status RunApi(const ApiOptions& options, Report* report) {
  const auto duration =
      std::chrono::milliseconds(static_cast<int64_t>(options.seconds * 1000 + 0.5));
  report->Add("load_average_1m_at_start", LoadAverage1m());
  report->AddString("server_store", options.common.store);
  std::vector<double> api_rates(options.clients.size());
  std::string stored_pod;  // a created pod's bytes, the value of the store workload
  {
    ServerProcess server({.binary = options.common.binary,
                          .command = "apiserver",
                          .temp_parent = options.common.dir,
                          .store = options.common.store,
                          .etcd_binary = options.common.etcd_binary});
    if (auto s = server.Start(); !s.ok()) return s;
    spdlog::info("bench api: apiserver pid {} ready", server.pid());
    for (size_t l = 0; l < options.clients.size(); ++l) {
      const int clients = options.clients[l];
      std::vector<std::unique_ptr<client::RestClient>> conns(clients);
      ClosedLoopOptions lo;
      lo.clients = clients;
      lo.duration = duration;
      lo.label = "pod creates, " + std::to_string(clients) + " clients";
      lo.init = [&](int c) -> util::Status {
        auto rc = ClientForKubeconfig(server.kubeconfig_path());
        if (!rc.ok()) return rc.status();
        conns[c] = std::move(*rc);
        return util::Status::Ok();
      };
      lo.op = [&](int c, int64_t i) -> util::Status {
        auto r = conns[c]->Create(kPodsResource, "default",
                                  MakePod("api-" + std::to_string(clients) + "-" +
                                          std::to_string(c) + "-" + std::to_string(i)));
        if (!r.ok()) return r.status();
        if (c == 0 && i == 0 && stored_pod.empty()) stored_pod = r->Serialize();
        return util::Status::Ok();
      };
      ClosedLoopResult r = RunClosedLoop(lo);
      if (r.ops == 0) return r.first_error.WithContext("no pod create succeeded");
      AddLevel(report, "api_" + std::to_string(clients) + "_clients", "creates", r);
      api_rates[l] = r.per_second();
    }
    report->Add("server_peak_rss_bytes", SampleProcess(server.pid()).peak_rss_bytes);
  }
  report->Add("stored_pod_bytes", static_cast<int64_t>(stored_pod.size()));

  // The store workload: the embedded store in this process, then etcd over gRPC on loopback.
  std::string parent =
      options.common.dir.empty() ? fs::temp_directory_path().string() : options.common.dir;
  std::string tmpl = parent + "/converge-bench-store-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return util::Unavailable("cannot create a temp dir");
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } remove_dir{tmpl};
  std::vector<double> embedded_rates(options.clients.size());
  {
    store::EmbeddedStoreOptions eo;
    eo.dir = tmpl + "/embedded";
    auto kv = store::OpenEmbeddedStore(eo);
    if (!kv.ok()) return kv.status();
    for (size_t l = 0; l < options.clients.size(); ++l) {
      ClosedLoopResult r =
          RunStoreLevel(**kv, "embedded", options.clients[l], duration, stored_pod);
      AddLevel(report, "store_embedded_" + std::to_string(options.clients[l]) + "_clients", "txns",
               r);
      embedded_rates[l] = r.per_second();
    }
  }
  if (!options.etcd) {
    report->Note("etcd comparison skipped (--no-etcd)");
  } else if (!fs::exists(options.common.etcd_binary)) {
    report->Note("etcd comparison skipped: " + options.common.etcd_binary + " not installed");
  } else {
    store::etcd::EtcdClusterOptions co;
    co.binary = options.common.etcd_binary;
    co.dir = tmpl + "/etcd";
    store::etcd::EtcdCluster etcd(co);
    if (auto s = etcd.Start(); !s.ok()) return s.WithContext("starting etcd");
    store::etcd::EtcdStoreOptions so;
    so.endpoints = etcd.endpoints();
    auto kv = store::etcd::OpenEtcdStore(so);
    if (!kv.ok()) return kv.status();
    for (size_t l = 0; l < options.clients.size(); ++l) {
      const std::string c = std::to_string(options.clients[l]);
      ClosedLoopResult r = RunStoreLevel(**kv, "etcd", options.clients[l], duration, stored_pod);
      AddLevel(report, "store_etcd_" + c + "_clients", "txns", r);
      double etcd_rate = r.per_second();
      report->Add("api_to_etcd_" + c + "_clients_ratio",
                  etcd_rate > 0 ? api_rates[l] / etcd_rate : 0.0);
      report->Add("embedded_to_etcd_" + c + "_clients_ratio",
                  etcd_rate > 0 ? embedded_rates[l] / etcd_rate : 0.0);
    }
    kv->reset();
    etcd.Stop();
  }
  report->Add("load_average_1m_at_end", LoadAverage1m());
  return util::Status::Ok();
}

}  // namespace converge::bench
