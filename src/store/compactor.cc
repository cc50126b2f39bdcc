#include "store/compactor.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "store/backend.h"
#include "util/thread_name.h"

namespace converge::store {

Compactor::Compactor(Options options, Index* index, Committer* committer)
    : options_(options), index_(index), committer_(committer) {}

Compactor::~Compactor() {
  Stop();
}

void Compactor::Start(Revision finished, Revision target) {
  {
    std::lock_guard lock(mu_);
    finished_ = finished;
    target_ = std::max(finished, target);
    running_ = true;
  }
  thread_ = std::thread([this] {
    util::SetThreadName("store-compact");
    Loop();
  });
}

void Compactor::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Compactor::Request(Revision revision) {
  {
    std::lock_guard lock(mu_);
    target_ = std::max(target_, revision);
  }
  cv_.notify_all();
}

Revision Compactor::WaitIdle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return finished_ >= target_ || !running_; });
  return finished_;
}

void Compactor::Loop() {
  while (true) {
    Revision at = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || target_ > finished_; });
      if (stopping_) break;
      at = target_;
    }
    if (!CompactAt(at)) break;
    {
      std::lock_guard lock(mu_);
      finished_ = at;
    }
    cv_.notify_all();
  }
  {
    std::lock_guard lock(mu_);
    running_ = false;
  }
  cv_.notify_all();
}

bool Compactor::CompactAt(Revision at) {
  auto stopping = [this] {
    std::lock_guard lock(mu_);
    return stopping_;
  };
  std::vector<RevisionPair> dropped;
  std::optional<std::string> from = std::string();
  while (from) {
    if (stopping()) return false;
    from = index_->CompactChunk(at, *from, options_.index_chunk_keys, &dropped);
  }
  std::sort(dropped.begin(), dropped.end());
  for (size_t i = 0; i < dropped.size(); i += options_.batch) {
    if (stopping()) return false;
    const size_t end = std::min(dropped.size(), i + options_.batch);
    std::vector<RevisionPair> batch(dropped.begin() + static_cast<ptrdiff_t>(i),
                                    dropped.begin() + static_cast<ptrdiff_t>(end));
    if (!committer_->Maintain(std::move(batch), {}).ok()) return false;
  }
  return committer_->Maintain({}, {{kMetaFinishedCompact, static_cast<uint64_t>(at)}}).ok();
}

}  // namespace converge::store
