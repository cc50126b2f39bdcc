// DelayedWatchTransport: fault injection for one component's informers — a Transport decorator
// that holds back the bytes of every watch stream, so that the component's caches run behind the
// API server by a chosen delay (the seed's §十二.4: "the controller just created an object, but
// its cache does not show it yet").
//
// Only watch streams are delayed (requests with watch=true). Lists, gets and writes go straight
// through: a component that relists sees the present, as it would with a lagging watch upstream.
// Each batch of bytes the inner stream returns is handed on once `delay` has passed since it was
// read, so every event reaches the informer between `delay` and twice `delay` late (bytes that
// arrive while a batch waits are read, and wait, as the next batch). The delay is read while
// waiting, so setting it to zero releases waiting batches at once.
//
// Thread-safety: WatchDelay is safe from any thread; the transport is safe for concurrent use as
// its inner transport is; each stream is read by one thread, as every ResponseStream.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "client/transport.h"

namespace converge::server {

// The delay of one component's watch streams, settable while they run.
class WatchDelay {
 public:
  void Set(std::chrono::milliseconds d) { ms_.store(d.count()); }
  std::chrono::milliseconds Get() const { return std::chrono::milliseconds(ms_.load()); }

 private:
  std::atomic<int64_t> ms_{0};
};

class DelayedWatchTransport final : public client::Transport {
 public:
  DelayedWatchTransport(std::shared_ptr<client::Transport> inner,
                        std::shared_ptr<const WatchDelay> delay)
      : inner_(std::move(inner)), delay_(std::move(delay)) {}

  util::StatusOr<client::HttpResponse> Do(client::HttpRequest request) override {
    return inner_->Do(std::move(request));
  }
  util::StatusOr<client::StreamedResponse> Stream(client::HttpRequest request) override;

 private:
  const std::shared_ptr<client::Transport> inner_;
  const std::shared_ptr<const WatchDelay> delay_;
};

}  // namespace converge::server
