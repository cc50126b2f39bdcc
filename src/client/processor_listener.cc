#include "client/processor_listener.h"

#include <spdlog/spdlog.h>

#include <exception>

namespace converge::client {

ProcessorListener::ProcessorListener(std::shared_ptr<ResourceEventHandler> handler,
                                     HandlerOptions options, util::Clock* clock)
    : handler_(std::move(handler)), options_(options), clock_(clock) {
  next_resync_ = clock_->Now() + options_.resync_period;
}

void ProcessorListener::Add(Notification n) {
  if (options_.inline_delivery) {
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
    }
    Deliver(n);  // no lock held, as on a listener's own thread
    std::lock_guard lock(mu_);
    ++delivered_;
    return;
  }
  std::unique_lock lock(mu_);
  if (options_.buffer_limit > 0) {
    room_cv_.wait(lock, [this] { return stopped_ || buffer_.size() < options_.buffer_limit; });
  }
  if (stopped_) return;
  if (n.is_initial_list) ++initial_pending_;
  buffer_.push_back(std::move(n));
  cv_.notify_one();
}

void ProcessorListener::Deliver(const Notification& n) {
  try {
    switch (n.kind) {
      case Notification::Kind::kAdd: handler_->OnAdd(n.obj, n.is_initial_list); break;
      case Notification::Kind::kUpdate: handler_->OnUpdate(n.old_obj, n.obj); break;
      case Notification::Kind::kDelete: handler_->OnDelete(n.deleted); break;
    }
  } catch (const std::exception& e) {
    spdlog::error("informer event handler threw: {}", e.what());
  } catch (...) {
    spdlog::error("informer event handler threw a non-standard exception");
  }
}

void ProcessorListener::Run(std::stop_token stop) {
  std::stop_callback on_stop(stop, [this] { Stop(); });
  for (;;) {
    Notification n;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopped_ || !buffer_.empty(); });
      if (stopped_) return;
      n = std::move(buffer_.front());
      buffer_.pop_front();
      room_cv_.notify_one();
    }
    Deliver(n);  // no lock held: the handler may take as long as it likes
    std::lock_guard lock(mu_);
    ++delivered_;
    if (n.is_initial_list && initial_pending_ > 0) --initial_pending_;
  }
}

void ProcessorListener::Stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  buffer_.clear();
  cv_.notify_all();
  room_cv_.notify_all();
}

void ProcessorListener::MarkUpstreamSynced() {
  std::lock_guard lock(mu_);
  upstream_synced_ = true;
}

bool ProcessorListener::HasSynced() const {
  std::lock_guard lock(mu_);
  return upstream_synced_ && initial_pending_ == 0;
}

bool ProcessorListener::ShouldResync(util::Clock::TimePoint now) {
  std::lock_guard lock(mu_);
  if (options_.resync_period.count() == 0) return false;
  return now >= next_resync_;
}

void ProcessorListener::DetermineNextResync(util::Clock::TimePoint now) {
  std::lock_guard lock(mu_);
  next_resync_ = now + options_.resync_period;
}

util::Clock::Duration ProcessorListener::resync_period() const {
  std::lock_guard lock(mu_);
  return options_.resync_period;
}

void ProcessorListener::set_resync_period(util::Clock::Duration d) {
  std::lock_guard lock(mu_);
  options_.resync_period = d;
}

size_t ProcessorListener::pending() const {
  std::lock_guard lock(mu_);
  return buffer_.size();
}

int64_t ProcessorListener::delivered() const {
  std::lock_guard lock(mu_);
  return delivered_;
}

}  // namespace converge::client
