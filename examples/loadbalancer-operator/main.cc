// loadbalancer-operator: gives every LoadBalancer object (lb.converge.io/v1) exactly one load
// balancer in a cloud — here the simulated cloud of `converge cloud-sim` — and removes it when
// the object goes. See docs/OPERATOR.md for the design and README-style usage.
//
//   loadbalancer-operator --cloud http://127.0.0.1:8790 [--kubeconfig PATH] [--workers N]
//                         [--cloud-timeout-ms MS] [--backoff-base-ms MS] [--backoff-max-ms MS]
//                         [--resync-seconds S] [--orphan-sweep-seconds S] [--namespace NS]
//
// Wiring (the configmap-mirror example explains each step): REST client from a kubeconfig, one
// informer for LoadBalancers, a Controller whose handlers only enqueue keys, a Reconciler that
// reads the cache and talks to the cloud, events, and shutdown on SIGINT/SIGTERM.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/kubeconfig.h"
#include "client/rate_limiters.h"
#include "client/rest_client.h"
#include "client/shared_informer_factory.h"
#include "decide.h"
#include "http_cloud.h"
#include "reconciler.h"
#include "sweeper.h"

namespace client = converge::client;
namespace api = converge::api;
namespace util = converge::util;

namespace {

constexpr const char* kUsage =
    "usage: loadbalancer-operator --cloud URL [--kubeconfig PATH] [--workers N]\n"
    "                             [--cloud-timeout-ms MS] [--backoff-base-ms MS]\n"
    "                             [--backoff-max-ms MS] [--resync-seconds S]\n"
    "                             [--orphan-sweep-seconds S] [--namespace NS]\n"
    "Gives every LoadBalancer (lb.converge.io/v1) exactly one cloud load balancer.\n";

struct Flags {
  std::string cloud;
  std::string kubeconfig;
  std::string ns;
  int workers = 4;
  // 2 s: see HttpCloudOptions::timeout.
  int64_t cloud_timeout_ms = 2000;
  // 250 ms doubling per consecutive failure of a key, capped at 30 s: a cloud blip costs a
  // quarter of a second; a long outage is probed twice a minute per object, not hammered.
  int64_t backoff_base_ms = 250;
  int64_t backoff_max_ms = 30000;
  int64_t resync_seconds = 60;
  // 30 s: orphans only come from calls that landed after the operator gave up on them, which is
  // rare; a sweep lists every managed load balancer, so it should not run often. 0: off.
  int64_t orphan_sweep_seconds = 30;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return false;
    std::string v = argv[++i];
    if (a == "--cloud") {
      f->cloud = v;
    } else if (a == "--kubeconfig") {
      f->kubeconfig = v;
    } else if (a == "--namespace") {
      f->ns = v;
    } else if (a == "--workers") {
      f->workers = std::atoi(v.c_str());
    } else if (a == "--cloud-timeout-ms") {
      f->cloud_timeout_ms = std::atoll(v.c_str());
    } else if (a == "--backoff-base-ms") {
      f->backoff_base_ms = std::atoll(v.c_str());
    } else if (a == "--backoff-max-ms") {
      f->backoff_max_ms = std::atoll(v.c_str());
    } else if (a == "--resync-seconds") {
      f->resync_seconds = std::atoll(v.c_str());
    } else if (a == "--orphan-sweep-seconds") {
      f->orphan_sweep_seconds = std::atoll(v.c_str());
    } else {
      return false;
    }
  }
  return !f->cloud.empty() && f->workers > 0 && f->cloud_timeout_ms > 0 && f->backoff_base_ms > 0 &&
         f->backoff_max_ms >= f->backoff_base_ms && f->resync_seconds > 0 &&
         f->orphan_sweep_seconds >= 0;
}

void Run(const Flags& flags, client::RestClient& rest, lboperator::CloudApi& cloud,
         std::stop_token stop) {
  client::SharedInformerFactory factory({.client = &rest, .ns = flags.ns});
  client::SharedInformer& informer = factory.InformerFor(lboperator::kLoadBalancers);

  client::RestEventSink sink(&rest);
  client::EventRecorder recorder({.source = {.component = "loadbalancer-operator"}, .sink = &sink});

  lboperator::Reconciler reconciler(
      {.client = &rest,
       .cache = &informer.indexer(),
       .cloud = &cloud,
       .recorder = &recorder,
       .decide = {.resync = std::chrono::seconds(flags.resync_seconds)}});

  // Per-key exponential backoff: while the cloud is down each object waits longer and longer
  // between attempts, independently of the others.
  auto limiter = std::make_unique<client::ItemExponentialFailureRateLimiter<api::ObjectKey>>(
      client::ExponentialFailureOptions{
          .base_delay = std::chrono::milliseconds(flags.backoff_base_ms),
          .max_delay = std::chrono::milliseconds(flags.backoff_max_ms)});
  client::Controller controller(
      {.name = "loadbalancer_operator",
       .reconcile = [&](const api::ObjectKey& key,
                        std::stop_token st) { return reconciler.Reconcile(key, st); },
       .workers = flags.workers,
       .rate_limiter = std::move(limiter),
       .wait_for_sync = {&informer},
       .recorder = &recorder,
       .lookup = [&](const api::ObjectKey& key) { return informer.indexer().Get(key); }});

  auto handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  handler->add = [&](const api::ObjectPtr& obj, bool) { controller.Enqueue(obj->key()); };
  handler->update = [&](const api::ObjectPtr& old_obj, const api::ObjectPtr& obj) {
    // Our own status writes come back as updates; they need no reconcile.
    if (lboperator::NeedsReconcile(*old_obj, *obj)) controller.Enqueue(obj->key());
  };
  handler->del = [&](const client::DeletedObject& d) { controller.Enqueue(d.key); };
  if (auto registration = informer.AddEventHandler(handler); !registration.ok()) {
    spdlog::error("loadbalancer-operator: {}", registration.status().ToString());
    return;
  }

  lboperator::OrphanSweeper sweeper({.cloud = &cloud,
                                     .informer = &informer,
                                     .ns = flags.ns,
                                     .interval = std::chrono::seconds(flags.orphan_sweep_seconds)});

  std::jthread events([&](std::stop_token st) { recorder.Run(st); });
  std::jthread sweeps;
  if (flags.orphan_sweep_seconds > 0) {
    sweeps = std::jthread([&](std::stop_token st) { sweeper.Run(st); });
  }
  factory.Start(stop);
  spdlog::info("loadbalancer-operator: running ({} workers, cloud {})", flags.workers, flags.cloud);
  controller.Run(stop);
  // Shutdown in reverse: the controller has stopped; the sweeper, the informers, the events.
  if (sweeps.joinable()) {
    sweeps.request_stop();
    sweeps.join();
  }
  factory.Shutdown();
  events.request_stop();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  Flags flags;
  if (!ParseFlags(argc, argv, &flags)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  util::StatusOr<client::RestConfig> config = flags.kubeconfig.empty()
                                                  ? client::DefaultRestConfig()
                                                  : client::LoadRestConfig(flags.kubeconfig);
  if (!config.ok()) {
    std::fprintf(stderr, "loadbalancer-operator: %s\n", config.status().ToString().c_str());
    return 1;
  }
  config->user_agent = "loadbalancer-operator/0.1";
  util::StatusOr<std::unique_ptr<client::RestClient>> rest = client::RestClient::ForConfig(*config);
  if (!rest.ok()) {
    std::fprintf(stderr, "loadbalancer-operator: %s\n", rest.status().ToString().c_str());
    return 1;
  }
  util::StatusOr<std::unique_ptr<lboperator::HttpCloud>> cloud =
      lboperator::HttpCloud::ForUrl(flags.cloud, std::chrono::milliseconds(flags.cloud_timeout_ms));
  if (!cloud.ok()) {
    std::fprintf(stderr, "loadbalancer-operator: %s\n", cloud.status().ToString().c_str());
    return 1;
  }

  std::stop_source stop;
  std::jthread signal_waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stop.request_stop();
  });
  Run(flags, **rest, **cloud, stop.get_token());
  if (!stop.stop_requested()) {
    stop.request_stop();
    kill(getpid(), SIGTERM);
  }
  return 0;
}
