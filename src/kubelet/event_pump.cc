#include "kubelet/event_pump.h"

#include <thread>

namespace converge::kubelet {

EventPump::EventPump(client::RestClient* client, util::Clock* clock, int workers,
                     std::function<client::RestClient*(std::string_view host)> client_for_node)
    : client_(client),
      client_for_node_(std::move(client_for_node)),
      clock_(clock ? clock : &util::RealClock()),
      workers_(std::max(1, workers)) {}

client::EventRecorder* EventPump::RecorderLocked(const std::string& host) {
  auto it = recorders_.find(host);
  if (it != recorders_.end()) return it->second.get();
  client::RestClient* c = client_for_node_ ? client_for_node_(host) : nullptr;
  auto sink = std::make_unique<client::RestEventSink>(c != nullptr ? c : client_);
  client::EventRecorderOptions o;
  o.source = {"kubelet", host};
  o.sink = sink.get();
  o.clock = clock_;
  // Small aggregation caches: one recorder per node, and a node sees few distinct events.
  o.cache_size = 256;
  o.max_tries = 3;
  o.retry_interval = std::chrono::seconds(1);
  auto r = std::make_unique<client::EventRecorder>(o);
  client::EventRecorder* raw = r.get();
  sinks_.emplace(host, std::move(sink));
  recorders_.emplace(host, std::move(r));
  return raw;
}

void EventPump::Record(const std::string& host, const client::ObjectReference& involved,
                       std::string_view type, std::string_view reason, std::string_view message) {
  client::EventRecorder* r;
  {
    std::lock_guard lock(mu_);
    r = RecorderLocked(host);
  }
  // Event() only queues (under the recorder's own lock); recorders live as long as the pump.
  r->Event(involved, type, reason, message);
  std::lock_guard lock(mu_);
  if (dirty_set_.insert(host).second) dirty_.push_back(host);
  cv_.notify_one();
}

int64_t EventPump::dropped() const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& [host, r] : recorders_) n += r->dropped();
  return n;
}

void EventPump::Run(std::stop_token stop) {
  std::stop_callback wake(stop, [this] {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  });
  std::vector<std::jthread> threads;
  for (int i = 1; i < workers_; ++i) threads.emplace_back([this, stop] { Worker(stop); });
  Worker(stop);
}

void EventPump::Worker(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    std::string host;
    for (size_t i = 0; i < dirty_.size(); ++i) {
      if (!flushing_.count(dirty_[i])) {
        host = dirty_[i];
        dirty_[i] = dirty_.back();
        dirty_.pop_back();
        break;
      }
    }
    if (host.empty()) {
      cv_.wait(lock, stop, [this] {
        for (const std::string& h : dirty_) {
          if (!flushing_.count(h)) return true;
        }
        return false;
      });
      continue;
    }
    dirty_set_.erase(host);
    flushing_.insert(host);
    client::EventRecorder* r = recorders_.at(host).get();
    lock.unlock();
    r->Flush(stop);
    lock.lock();
    flushing_.erase(host);
    cv_.notify_all();
  }
}

}  // namespace converge::kubelet
