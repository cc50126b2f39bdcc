#include "client/shared_informer_factory.h"

namespace converge::client {

SharedInformerFactory::SharedInformerFactory(SharedInformerFactoryOptions options)
    : options_(std::move(options)) {}

SharedInformerFactory::~SharedInformerFactory() {
  Shutdown();
}

SharedInformer& SharedInformerFactory::InformerFor(const api::GroupVersionResource& gvr) {
  std::lock_guard lock(mu_);
  auto it = informers_.find(gvr);
  if (it != informers_.end()) return *it->second.informer;
  SharedInformerOptions o;
  o.name = gvr.Gr().ToString();
  o.lister_watcher =
      std::make_unique<ListWatch>(ListWatchOptions{.client = options_.client,
                                                   .gvr = gvr,
                                                   .ns = options_.ns,
                                                   .tweak = options_.tweak_list_options});
  o.default_resync = options_.default_resync;
  o.clock = options_.clock;
  o.reflector = options_.reflector;
  Entry& e = informers_[gvr];
  e.informer = std::make_unique<SharedInformer>(std::move(o));
  return *e.informer;
}

util::StatusOr<SharedInformer*> SharedInformerFactory::InformerForKind(
    const api::GroupVersionKind& gvk) {
  CONVERGE_ASSIGN_OR_RETURN(api::GroupVersionResource gvr, ResourceForKind(gvk));
  return &InformerFor(gvr);
}

void SharedInformerFactory::Start(std::stop_token stop) {
  std::lock_guard lock(mu_);
  if (stop_.stop_requested()) return;
  external_stops_.push_back(std::make_unique<std::stop_callback<std::function<void()>>>(
      stop, [this] { stop_.request_stop(); }));
  std::stop_token token = stop_.get_token();
  for (auto& [gvr, e] : informers_) {
    if (e.thread.joinable()) continue;
    e.thread = std::jthread([inf = e.informer.get(), token] { inf->Run(token); });
  }
}

bool SharedInformerFactory::WaitForCacheSync(std::stop_token stop) {
  std::vector<const SharedInformer*> started;
  {
    std::lock_guard lock(mu_);
    for (auto& [gvr, e] : informers_) {
      if (e.thread.joinable()) started.push_back(e.informer.get());
    }
  }
  return client::WaitForCacheSync(stop, started);
}

void SharedInformerFactory::Shutdown() {
  stop_.request_stop();
  std::vector<std::jthread> threads;
  {
    std::lock_guard lock(mu_);
    for (auto& [gvr, e] : informers_) {
      if (e.thread.joinable()) threads.push_back(std::move(e.thread));
    }
    external_stops_.clear();
  }
  threads.clear();  // joins outside the lock
}

}  // namespace converge::client
