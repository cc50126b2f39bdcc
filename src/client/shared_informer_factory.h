// SharedInformerFactory: one informer per resource per process, so that every controller that
// watches pods shares one list, one watch and one cache (client-go's SharedInformerFactory).
//
//   SharedInformerFactory factory({.client = &client, .default_resync = std::chrono::minutes(10)});
//   SharedInformer& pods = factory.InformerFor({"", "v1", "pods"});
//   pods.AddEventHandler(...);
//   factory.Start(stop);                  // starts every informer requested so far
//   factory.WaitForCacheSync(stop);
//   ...
//   factory.Shutdown();                   // stops and joins them (also done by the destructor)
//
// Informers requested after Start are started by the next Start call.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "api/types.h"
#include "client/rest_client.h"
#include "client/shared_informer.h"

namespace converge::client {

struct SharedInformerFactoryOptions {
  RestClient* client = nullptr;  // not owned
  util::Clock::Duration default_resync{0};
  // Restricts every informer to one namespace; empty: all namespaces.
  std::string ns;
  // Applied to every list and watch (label or field selectors).
  std::function<void(ListOptions&)> tweak_list_options;
  util::Clock* clock = nullptr;
  // Reflector settings shared by every informer (backoff, page size, watch timeout).
  ReflectorOptions reflector;
};

class SharedInformerFactory {
 public:
  explicit SharedInformerFactory(SharedInformerFactoryOptions options);
  ~SharedInformerFactory();
  SharedInformerFactory(const SharedInformerFactory&) = delete;
  SharedInformerFactory& operator=(const SharedInformerFactory&) = delete;

  // The informer for a resource, created on first request (with the namespace index). The
  // reference stays valid for the factory's lifetime.
  SharedInformer& InformerFor(const api::GroupVersionResource& gvr);
  // The informer for a built-in kind; NotFound for unknown kinds.
  util::StatusOr<SharedInformer*> InformerForKind(const api::GroupVersionKind& gvk);

  // Starts every informer not yet started, each on a thread of the factory's. They run until
  // `stop` fires or Shutdown.
  void Start(std::stop_token stop);
  // Waits until every started informer has synced (or stop); returns whether all did.
  bool WaitForCacheSync(std::stop_token stop);
  // Stops every informer and joins its thread. Idempotent.
  void Shutdown();

 private:
  struct Entry {
    std::unique_ptr<SharedInformer> informer;
    std::jthread thread;  // joinable once started
  };

  const SharedInformerFactoryOptions options_;
  std::mutex mu_;
  std::map<api::GroupVersionResource, Entry> informers_;  // guarded by mu_
  std::stop_source stop_;  // stops every informer started by this factory
  std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>>
      external_stops_;  // guarded by mu_
};

}  // namespace converge::client
