#include "server/delayed_watch_transport.h"

#include <condition_variable>
#include <mutex>

namespace converge::server {

namespace {

bool IsWatch(const client::HttpRequest& r) {
  for (const auto& [k, v] : r.query) {
    if (k == "watch") return v == "true" || v == "1";
  }
  return false;
}

class DelayedStream final : public client::ResponseStream {
 public:
  DelayedStream(std::unique_ptr<client::ResponseStream> inner,
                std::shared_ptr<const WatchDelay> delay, std::stop_token stop)
      : inner_(std::move(inner)), delay_(std::move(delay)), stop_(std::move(stop)) {}

  util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
    util::StatusOr<bool> r = inner_->Read(out);
    if (!r.ok() || !*r) return r;
    const auto read_at = std::chrono::steady_clock::now();
    // Waits in slices so that a changed (or cleared) delay applies to a batch already waiting.
    constexpr auto kSlice = std::chrono::milliseconds(50);
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    for (;;) {
      auto due = read_at + delay_->Get();
      auto now = std::chrono::steady_clock::now();
      if (now >= due) return true;
      cv.wait_for(lock, stop_, std::min<std::chrono::steady_clock::duration>(due - now, kSlice),
                  [] { return false; });
      if (stop_.stop_requested()) return util::Cancelled("watch: cancelled");
    }
  }

 private:
  const std::unique_ptr<client::ResponseStream> inner_;
  const std::shared_ptr<const WatchDelay> delay_;
  const std::stop_token stop_;
};

}  // namespace

util::StatusOr<client::StreamedResponse> DelayedWatchTransport::Stream(
    client::HttpRequest request) {
  const bool watch = IsWatch(request);
  std::stop_token stop = request.stop;
  util::StatusOr<client::StreamedResponse> resp = inner_->Stream(std::move(request));
  if (!resp.ok() || !watch || resp->status < 200 || resp->status >= 300) return resp;
  resp->body = std::make_unique<DelayedStream>(std::move(resp->body), delay_, std::move(stop));
  return resp;
}

}  // namespace converge::server
