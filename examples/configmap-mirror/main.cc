// configmap-mirror: an example controller on the Converge client library.
//
//   configmap-mirror --from team-a --to team-a-mirror [--kubeconfig PATH] [--workers N]
//                    [--leader-elect]
//
// Wiring, in the order a controller process sets things up:
//   1. a RestConfig from a kubeconfig (or the in-cluster service account), and a RestClient;
//   2. a SharedInformerFactory: one list+watch and one cache per resource for the whole process;
//   3. a Controller whose event handlers only enqueue keys and whose reconcile reads the cache;
//   4. an EventRecorder, so that what the controller does shows up in `kubectl get events`;
//   5. optionally leader election, so that of several replicas only one acts;
//   6. start, wait for the caches, run until SIGINT/SIGTERM, shut down in reverse order.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/kubeconfig.h"
#include "client/leader_elector.h"
#include "client/rest_client.h"
#include "client/shared_informer_factory.h"
#include "mirror.h"

namespace client = converge::client;

namespace {

constexpr const char* kUsage =
    "usage: configmap-mirror --from NAMESPACE --to NAMESPACE [--kubeconfig PATH] [--workers N]\n"
    "                        [--leader-elect]\n"
    "Keeps a copy of every ConfigMap of --from in --to.\n";

struct Flags {
  std::string from;
  std::string to;
  std::string kubeconfig;
  int workers = 2;
  bool leader_elect = false;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string workers;
    if (a == "--from" && value(&f->from)) continue;
    if (a == "--to" && value(&f->to)) continue;
    if (a == "--kubeconfig" && value(&f->kubeconfig)) continue;
    if (a == "--workers" && value(&workers)) {
      f->workers = std::atoi(workers.c_str());
      continue;
    }
    if (a == "--leader-elect") {
      f->leader_elect = true;
      continue;
    }
    return false;
  }
  return !f->from.empty() && !f->to.empty() && f->from != f->to && f->workers > 0;
}

// Runs the controller until `stop`; returns when it has shut down.
void RunController(const Flags& flags, client::RestClient& rest, std::stop_token stop) {
  // 2. One cache of ConfigMaps (all namespaces here; a real controller would narrow it with a
  //    namespace or a label selector).
  client::SharedInformerFactory factory({.client = &rest});
  client::SharedInformer& configmaps = factory.InformerFor({"", "v1", "configmaps"});

  // 4. Events, written in the background.
  client::RestEventSink sink(&rest);
  client::EventRecorder recorder({.source = {.component = "configmap-mirror"}, .sink = &sink});

  // 3. The controller.
  mirror::MirrorReconciler reconciler({.source_ns = flags.from,
                                       .target_ns = flags.to,
                                       .client = &rest,
                                       .cache = &configmaps.indexer(),
                                       .recorder = &recorder});
  client::Controller controller(
      {.name = "configmap_mirror",
       .reconcile = [&](const converge::api::ObjectKey& key,
                        std::stop_token st) { return reconciler.Reconcile(key, st); },
       .workers = flags.workers,
       .wait_for_sync = {&configmaps},
       .recorder = &recorder,
       .lookup =
           [&](const converge::api::ObjectKey& key) { return configmaps.indexer().Get(key); }});

  // Handlers only map an object to a key and enqueue it.
  auto enqueue = [&](const converge::api::ObjectPtr& obj) {
    if (obj == nullptr) return;
    if (std::optional<converge::api::ObjectKey> key = reconciler.KeyFor(*obj)) {
      controller.Enqueue(*key);
    }
  };
  auto handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  handler->add = [&](const converge::api::ObjectPtr& obj, bool) { enqueue(obj); };
  handler->update = [&](const converge::api::ObjectPtr&, const converge::api::ObjectPtr& obj) {
    enqueue(obj);
  };
  handler->del = [&](const client::DeletedObject& d) {
    // A tombstone may carry no object; the key alone is enough for a source ConfigMap.
    if (d.object != nullptr) {
      enqueue(d.object);
    } else if (d.key.ns == flags.from) {
      controller.Enqueue(d.key);
    }
  };
  if (!configmaps.AddEventHandler(handler).ok()) return;

  // 6. Start everything; Controller::Run waits for the cache before its first reconcile.
  std::jthread events([&](std::stop_token st) { recorder.Run(st); });
  factory.Start(stop);
  controller.Run(stop);  // blocks until stop
  // Shutdown in reverse: the controller has stopped; now the informers, then the events.
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

  // Signals are handled by one thread with sigwait; every other thread has them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // 1. Configuration and the REST client.
  converge::util::StatusOr<client::RestConfig> config =
      flags.kubeconfig.empty() ? client::DefaultRestConfig()
                               : client::LoadRestConfig(flags.kubeconfig);
  if (!config.ok()) {
    std::fprintf(stderr, "configmap-mirror: %s\n", config.status().ToString().c_str());
    return 1;
  }
  converge::util::StatusOr<std::unique_ptr<client::RestClient>> rest =
      client::RestClient::ForConfig(*config);
  if (!rest.ok()) {
    std::fprintf(stderr, "configmap-mirror: %s\n", rest.status().ToString().c_str());
    return 1;
  }

  std::stop_source stop;
  std::jthread signal_waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stop.request_stop();
  });

  if (!flags.leader_elect) {
    RunController(flags, **rest, stop.get_token());
  } else {
    // 5. Only the replica holding the Lease runs the controller.
    char host[256] = "unknown";
    gethostname(host, sizeof(host) - 1);
    client::LeaseLock lock({.client = rest->get(),
                            .lease = {flags.to, "configmap-mirror"},
                            .identity = std::string(host) + "_" + std::to_string(getpid())});
    converge::util::StatusOr<std::unique_ptr<client::LeaderElector>> elector =
        client::LeaderElector::New(
            {.lock = &lock, .on_started_leading = [&](std::stop_token leading) {
               RunController(flags, **rest, leading);
             }});
    if (!elector.ok()) {
      std::fprintf(stderr, "configmap-mirror: %s\n", elector.status().ToString().c_str());
      return 1;
    }
    (*elector)->Run(stop.get_token());
  }
  // Unblock the signal thread if we are stopping for another reason.
  if (!stop.stop_requested()) {
    stop.request_stop();
    kill(getpid(), SIGTERM);
  }
  return 0;
}
