#include "kubelet/status_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "client/api_errors.h"

namespace converge::kubelet {

namespace {

const api::GroupVersionResource kPods{"", "v1", "pods"};

// Errors after which retrying the same write cannot succeed.
bool IsFinal(const util::Status& s) {
  return client::IsNotFound(s) || client::IsConflict(s) || client::IsInvalid(s) ||
         client::IsBadRequest(s) || client::IsForbidden(s);
}

}  // namespace

StatusWriter::StatusWriter(StatusWriterOptions options)
    : options_(options), clock_(options.clock ? options.clock : &util::RealClock()) {}

void StatusWriter::Submit(PodWrite w) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(w.key);
  if (it != pending_.end()) {
    w.delete_after = w.delete_after || it->second.delete_after;
    if (w.status_patch.empty()) w.status_patch = std::move(it->second.status_patch);
    it->second = std::move(w);
    ++stats_.superseded;
    return;
  }
  api::ObjectKey key = w.key;
  pending_.emplace(key, std::move(w));
  if (!processing_.count(key)) {
    queue_.push_back(std::move(key));
    cv_.notify_all();  // all: a retrying worker waits on cv_ too
  }
}

StatusWriter::Stats StatusWriter::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

size_t StatusWriter::queued() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

void StatusWriter::Run(std::stop_token stop) {
  std::stop_callback wake(stop, [this] {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  });
  std::vector<std::jthread> workers;
  for (int i = 1; i < std::max(1, options_.workers); ++i) {
    workers.emplace_back([this, stop] { Worker(stop); });
  }
  Worker(stop);
  for (auto& w : workers) w.join();
}

util::Status StatusWriter::Write(const PodWrite& w, std::stop_token stop, bool* patched) {
  client::RestClient* c = options_.client_for_node ? options_.client_for_node(w.node) : nullptr;
  if (c == nullptr) c = options_.client;
  if (!w.status_patch.empty() && !*patched) {
    // A raw PATCH of pods/status: the kubelet never reads the returned Pod, so it is not decoded
    // (client-go's Do(ctx).Error()).
    client::HttpRequest r;
    r.method = "PATCH";
    r.path = client::ResourcePath(kPods, w.key.ns, w.key.name, "status");
    r.headers = {{"accept", "application/json"},
                 {"content-type", "application/strategic-merge-patch+json"}};
    r.body = w.status_patch;
    r.stop = stop;
    auto resp = c->Do(std::move(r));
    if (!resp.ok()) return resp.status();
    *patched = true;
    std::lock_guard lock(mu_);
    ++stats_.patches;
  }
  if (w.delete_after) {
    client::DeleteOptions d;
    d.grace_period_seconds = 0;
    d.precondition_uid = w.uid;
    d.stop = stop;
    util::Status s = c->Delete(kPods, w.key, d);
    if (!s.ok()) return s;
    std::lock_guard lock(mu_);
    ++stats_.deletes;
  }
  return util::Status();
}

void StatusWriter::Worker(std::stop_token stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (queue_.empty()) {
      cv_.wait(lock, stop, [this] { return !queue_.empty(); });
      continue;
    }
    api::ObjectKey key = std::move(queue_.front());
    queue_.pop_front();
    PodWrite w = std::move(pending_.at(key));
    pending_.erase(key);
    processing_.insert(key);
    lock.unlock();

    bool patched = false;
    util::Clock::Duration delay = options_.retry_initial;
    while (!stop.stop_requested()) {
      util::Status s = Write(w, stop, &patched);
      if (s.ok()) break;
      if (IsFinal(s)) {
        if (!client::IsNotFound(s)) {
          spdlog::warn("kubelet: writing pod {}/{}: {}", key.ns, key.name, s.ToString());
        }
        std::lock_guard l(mu_);
        ++stats_.failures;
        break;
      }
      {
        std::unique_lock l(mu_);
        auto superseding = pending_.find(key);
        if (superseding != pending_.end()) {  // a newer write replaces this one
          superseding->second.delete_after |= w.delete_after;
          break;
        }
        ++stats_.retries;
        auto deadline = clock_->Now() + delay;
        while (!stop.stop_requested() && clock_->Now() < deadline && !pending_.count(key)) {
          clock_->WaitUntil(cv_, l, deadline);
        }
        if (auto it = pending_.find(key); it != pending_.end()) {
          it->second.delete_after |= w.delete_after;
          break;
        }
      }
      delay = std::min(delay * 2, options_.retry_max);
    }

    lock.lock();
    processing_.erase(key);
    if (pending_.count(key)) queue_.push_back(key);
  }
}

}  // namespace converge::kubelet
