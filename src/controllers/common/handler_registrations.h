// The event handlers a controller added to shared informers, removed again when it goes away.
//
// A controller's handlers call into its own state, and the informers outlive it (they belong to
// the controller-manager), so the handlers must be removed before that state is destroyed.
// Members are destroyed in reverse order of declaration: declare the HandlerRegistrations member
// last, and removal (after which no handler is running or called again) happens first.
//
// Thread-safety: Add and destruction from one thread (the controller's Init and destructor).
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "client/shared_informer.h"
#include "util/status.h"

namespace converge::controllers {

class HandlerRegistrations {
 public:
  HandlerRegistrations() = default;
  HandlerRegistrations(const HandlerRegistrations&) = delete;
  HandlerRegistrations& operator=(const HandlerRegistrations&) = delete;
  ~HandlerRegistrations() {
    for (auto& [informer, registration] : registrations_)
      informer->RemoveEventHandler(registration);
  }

  // Whether every handler added here has been handed its informer's whole initial list
  // (upstream's ResourceEventHandlerRegistration.HasSynced). A controller's workers start only
  // then: an informer's cache is complete before its handlers have seen every initial object,
  // and a handler that counts what it observes (expectations) must not count the initial objects
  // after the first sync already acted on them.
  bool HasSynced() const {
    for (const auto& [informer, registration] : registrations_) {
      if (!registration.HasSynced()) return false;
    }
    return true;
  }
  // Blocks until HasSynced() or `stop`; returns HasSynced().
  bool WaitForSynced(std::stop_token stop) const {
    while (!HasSynced()) {
      if (stop.stop_requested()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Handlers added here are called inline, on the informer's thread
  // (client::HandlerOptions::inline_delivery): a controller's handlers only look things up in
  // caches and enqueue keys, and must stay that way.
  util::Status Add(client::SharedInformer& informer,
                   std::shared_ptr<client::ResourceEventHandler> handler) {
    auto r = informer.AddEventHandler(std::move(handler), {.inline_delivery = true});
    if (!r.ok()) return r.status();
    registrations_.emplace_back(&informer, *r);
    return util::Status();
  }

 private:
  std::vector<std::pair<client::SharedInformer*, client::HandlerRegistration>> registrations_;
};

}  // namespace converge::controllers
