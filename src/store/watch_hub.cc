#include "store/watch_hub.h"

#include <algorithm>

#include "store/revision.h"
#include "util/thread_name.h"

namespace converge::store {

namespace {

WatchResponse CanceledResponse(Revision header, const char* reason, Revision compact = 0) {
  WatchResponse r;
  r.header_revision = header;
  r.canceled = true;
  r.cancel_reason = reason;
  r.compact_revision = compact;
  return r;
}

// The events of `rev` on keys in [start, end) (an etcd range: see kv.h), with their stored
// previous values.
RevisionEventsPtr EventsInRange(const RevisionEvents& rev, std::string_view start,
                                std::string_view end) {
  auto out = std::make_shared<RevisionEvents>();
  out->revision = rev.revision;
  for (size_t i = 0; i < rev.events.size(); ++i) {
    if (!KeyInRange(rev.events[i].kv->key, start, end)) continue;
    out->Add(rev.events[i], rev.PrevAt(i));
  }
  return out;
}

}  // namespace

struct WatchHub::Group {
  struct LogEntry {
    Revision rev = 0;
    RevisionEventsPtr events;  // the group's events of revision `rev`
    uint64_t end_count = 0;    // events appended to the group up to and including this entry
  };

  Group(std::string k, std::string e, Revision covered)
      : key(std::move(k)), end(std::move(e)), covered_from(covered) {}
  uint64_t end_seq() const { return base_seq + log.size(); }
  const LogEntry& at(uint64_t seq) const { return log[seq - base_seq]; }

  const std::string key;
  const std::string end;
  // Members reading the log hold it shared (each writes only its own cursor); appending,
  // trimming and membership changes hold it exclusively. So waking every member costs one
  // wake-up each, not a convoy on one mutex.
  std::shared_mutex mu;
  std::condition_variable_any cv;
  std::deque<LogEntry> log;       // guarded by mu
  uint64_t base_seq = 0;          // guarded by mu: sequence number of log.front()
  uint64_t trimmed_count = 0;     // guarded by mu: end_count of the last dropped entry
  Revision covered_from;          // guarded by mu: every matching event >= it is in log
  std::vector<Watcher*> members;  // guarded by mu (changed with the hub's mu_ held too)
  bool closed = false;            // guarded by mu
};

// One watch stream. The consumer thread (the one calling Next) owns next_rev_, done_ and
// final_; group_ changes only under the hub's mu_ by the consumer, cursor_ only under
// group_->mu.
class WatchHub::Watcher final : public WatchStream {
 public:
  Watcher(std::shared_ptr<WatchHub> hub, const WatchRequest& req, Revision next_rev,
          std::optional<WatchResponse> final_response)
      : hub_(std::move(hub)),
        key_(req.key),
        end_(req.range_end),
        prev_kv_(req.prev_kv),
        prev_kv_prefixes_(req.prev_kv_prefixes),
        progress_notify_(req.progress_notify),
        next_rev_(next_rev),
        final_(std::move(final_response)) {}

  ~Watcher() override { hub_->Forget(this); }

  util::StatusOr<WatchResponse> Next(std::stop_token stop) override;

  void RequestProgress() override {
    progress_requested_.store(true);
    hub_->Wake(this);
  }

  void Cancel() override {
    cancel_requested_.store(true);
    hub_->Wake(this);
  }

 private:
  friend class WatchHub;
  util::StatusOr<WatchResponse> NextSynced(std::stop_token stop);
  WatchResponse Finish(WatchResponse response) {
    done_ = true;
    hub_->Leave(this);
    return response;
  }
  // Appends `events` to *resp, reading the previous values this watcher asked for that are not
  // in memory. Sets *compacted instead if compaction removed one.
  util::Status AppendEvents(const RevisionEvents& events, WatchResponse* resp,
                            Revision* compacted) const {
    for (size_t i = 0; i < events.events.size(); ++i) {
      const Event& e = events.events[i];
      KeyValuePtr prev;
      if (WantsPrev(e.kv->key)) {
        prev = e.prev_kv;
        if (const RevisionPair at = events.PrevAt(i); prev == nullptr && !at.IsZero()) {
          CONVERGE_ASSIGN_OR_RETURN(prev, hub_->ReadPrevious(at, events.revision, compacted));
          if (*compacted != 0) return util::Status::Ok();
        }
      }
      resp->events.push_back(Event{e.type, e.kv, std::move(prev)});
    }
    return util::Status::Ok();
  }

  bool WantsPrev(std::string_view key) const {
    if (!prev_kv_) return false;
    if (prev_kv_prefixes_.empty()) return true;
    return std::any_of(prev_kv_prefixes_.begin(), prev_kv_prefixes_.end(),
                       [key](const std::string& p) { return key.starts_with(p); });
  }

  // Constant after construction.
  const std::shared_ptr<WatchHub> hub_;
  const std::string key_;
  const std::string end_;
  const bool prev_kv_;
  const std::vector<std::string> prev_kv_prefixes_;
  const bool progress_notify_;

  Revision next_rev_;                   // consumer thread
  bool done_ = false;                   // consumer thread
  std::optional<WatchResponse> final_;  // consumer thread
  std::shared_ptr<Group> group_;        // see class comment
  uint64_t cursor_ = 0;                 // guarded by group_->mu

  std::atomic<bool> cancel_requested_{false};
  std::atomic<bool> progress_requested_{false};
};

util::StatusOr<WatchResponse> WatchHub::Watcher::Next(std::stop_token stop) {
  if (done_) return util::Cancelled("watch: stream was canceled");
  if (final_) {
    WatchResponse r = std::move(*final_);
    final_.reset();
    return Finish(std::move(r));
  }
  while (group_ == nullptr) {
    if (cancel_requested_.load()) {
      Finish(WatchResponse{});
      return util::Cancelled("watch: canceled by the client");
    }
    if (stop.stop_requested()) return util::Cancelled("watch: stop requested");
    Revision to = 0;
    switch (hub_->TryJoin(this, &to)) {
      case Join::kJoined: break;
      case Join::kStopped: return util::Unavailable("watch: the store is shutting down");
      case Join::kNeedHistory: {
        CONVERGE_ASSIGN_OR_RETURN(HistorySource::Chunk chunk, hub_->ReadHistory(*this, to));
        if (chunk.compacted != 0) {
          return Finish(CanceledResponse(to, kCancelReasonCompacted, chunk.compacted));
        }
        next_rev_ = chunk.next;
        if (!chunk.events.empty()) {
          WatchResponse r;
          r.header_revision = to;
          r.events = std::move(chunk.events);
          return r;
        }
        break;
      }
    }
  }
  return NextSynced(std::move(stop));
}

util::StatusOr<WatchResponse> WatchHub::Watcher::NextSynced(std::stop_token stop) {
  Group& g = *group_;
  std::shared_lock lock(g.mu);
  while (true) {
    if (cursor_ < g.base_seq) {
      const Revision header = std::max(hub_->notified_revision(), next_rev_ - 1);
      lock.unlock();
      return Finish(CanceledResponse(header, kCancelReasonSlow));
    }
    while (cursor_ < g.end_seq() && g.at(cursor_).rev < next_rev_) ++cursor_;
    if (cursor_ < g.end_seq()) {
      WatchResponse r;
      const size_t max_events = hub_->options_.max_events_per_response;
      const uint64_t before = cursor_ == g.base_seq ? g.trimmed_count : g.at(cursor_ - 1).end_count;
      r.events.reserve(std::min<uint64_t>(g.log.back().end_count - before, max_events + 64));
      while (cursor_ < g.end_seq() && (r.events.empty() || r.events.size() < max_events)) {
        const Group::LogEntry& e = g.at(cursor_++);
        Revision compacted = 0;
        CONVERGE_RETURN_IF_ERROR(AppendEvents(*e.events, &r, &compacted));
        if (compacted != 0) {
          // The watcher lagged behind a compaction (etcd cancels such a watcher the same way).
          const Revision header = std::max(hub_->notified_revision(), e.rev);
          lock.unlock();
          return Finish(CanceledResponse(header, kCancelReasonCompacted, compacted));
        }
        next_rev_ = e.rev + 1;
      }
      r.header_revision = std::max(hub_->notified_revision(), next_rev_ - 1);
      return r;
    }
    if (cancel_requested_.load()) {
      lock.unlock();
      Finish(WatchResponse{});
      return util::Cancelled("watch: canceled by the client");
    }
    if (g.closed) return util::Unavailable("watch: the store is shutting down");
    if (progress_requested_.exchange(false)) {
      // Every entry appended before the notified revision was published is consumed.
      WatchResponse r;
      r.header_revision = std::max(hub_->notified_revision(), next_rev_ - 1);
      return r;
    }
    if (stop.stop_requested()) return util::Cancelled("watch: stop requested");
    g.cv.wait(lock, stop, [&] {
      return cursor_ < g.base_seq || cursor_ < g.end_seq() || cancel_requested_.load() ||
             g.closed || progress_requested_.load();
    });
  }
}

WatchHub::WatchHub(Options options, HistorySource* history)
    : options_(options),
      clock_(options.clock != nullptr ? options.clock : &util::RealClock()),
      history_(history) {}

WatchHub::~WatchHub() {
  Stop();
}

void WatchHub::Start(Revision notified) {
  notified_.store(notified, std::memory_order_release);
  if (options_.progress_interval.count() > 0) {
    progress_ = std::thread([this] {
      util::SetThreadName("store-progress");
      ProgressLoop();
    });
  }
}

void WatchHub::Stop() {
  {
    std::lock_guard lock(progress_mu_);
    stopping_ = true;
  }
  progress_cv_.notify_all();
  if (progress_.joinable()) progress_.join();
  {
    // Publish delivers everything before this point (it holds mu_ while it does).
    std::lock_guard lock(mu_);
    stopped_ = true;
    auto close = [](Group& g) {
      std::lock_guard glock(g.mu);
      g.closed = true;
      g.cv.notify_all();
    };
    for (auto& [key, g] : single_groups_) close(*g);
    for (auto& [key, g] : range_groups_) close(*g);
  }
  std::unique_lock history_lock(history_mu_);
  history_closed_ = true;
}

void WatchHub::Publish(Revision last, std::vector<RevisionEventsPtr> revisions) {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  std::unordered_map<Group*, std::vector<Group::LogEntry>> pending;
  for (const RevisionEventsPtr& rev : revisions) {
    if (!single_groups_.empty()) {
      for (const Event& e : rev->events) {
        auto it = single_groups_.find(e.kv->key);
        if (it == single_groups_.end()) continue;
        std::vector<Group::LogEntry>& entries = pending[it->second.get()];
        // One entry per revision, with every event on the key (etcd allows one per txn).
        if (!entries.empty() && entries.back().rev == rev->revision) continue;
        entries.push_back(Group::LogEntry{rev->revision, EventsInRange(*rev, e.kv->key, ""), 0});
      }
    }
    for (auto& [range, g] : range_groups_) {
      size_t matches = 0;
      for (const Event& e : rev->events) matches += KeyInRange(e.kv->key, g->key, g->end);
      if (matches == 0) continue;
      RevisionEventsPtr events =
          matches == rev->events.size() ? rev : EventsInRange(*rev, g->key, g->end);
      pending[g.get()].push_back(Group::LogEntry{rev->revision, std::move(events), 0});
    }
  }
  for (auto& [g, entries] : pending) {
    {
      std::lock_guard glock(g->mu);
      uint64_t count = g->log.empty() ? g->trimmed_count : g->log.back().end_count;
      for (Group::LogEntry& e : entries) {
        count += e.events->events.size();
        e.end_count = count;
        g->log.push_back(std::move(e));
      }
      TrimLocked(*g);
    }
    g->cv.notify_all();
  }
  notified_.store(last, std::memory_order_release);
}

util::StatusOr<std::unique_ptr<WatchStream>> WatchHub::Watch(const WatchRequest& req,
                                                             Revision current, Revision compact) {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return util::Unavailable("watch: the store is shutting down");
    ++watchers_;
  }
  std::optional<WatchResponse> final_response;
  if (req.start_revision != 0 && req.start_revision < compact) {
    final_response = CanceledResponse(current, kCancelReasonCompacted, compact);
  }
  const Revision next = req.start_revision == 0 ? current + 1 : req.start_revision;
  return std::unique_ptr<WatchStream>(
      new Watcher(shared_from_this(), req, next, std::move(final_response)));
}

size_t WatchHub::WatcherCountForTest() const {
  std::lock_guard lock(mu_);
  return watchers_;
}

size_t WatchHub::GroupCountForTest() const {
  std::lock_guard lock(mu_);
  return single_groups_.size() + range_groups_.size();
}

WatchHub::Join WatchHub::TryJoin(Watcher* w, Revision* to) {
  std::lock_guard lock(mu_);
  if (stopped_) return Join::kStopped;
  const Revision notified = notified_.load(std::memory_order_relaxed);
  std::shared_ptr<Group> g;
  if (w->end_.empty()) {
    auto it = single_groups_.find(w->key_);
    if (it != single_groups_.end()) g = it->second;
  } else {
    auto it = range_groups_.find({w->key_, w->end_});
    if (it != range_groups_.end()) g = it->second;
  }
  if (w->next_rev_ <= notified) {
    // Older events are due: join only if the group's log still holds all of them.
    if (g == nullptr) {
      *to = notified;
      return Join::kNeedHistory;
    }
    std::lock_guard glock(g->mu);
    if (g->covered_from > w->next_rev_) {
      *to = notified;
      return Join::kNeedHistory;
    }
    uint64_t seq = g->base_seq;
    while (seq < g->end_seq() && g->at(seq).rev < w->next_rev_) ++seq;
    w->cursor_ = seq;
    g->members.push_back(w);
    w->group_ = std::move(g);
    return Join::kJoined;
  }
  if (g == nullptr) {
    g = std::make_shared<Group>(w->key_, w->end_, notified + 1);
    if (w->end_.empty()) {
      single_groups_.emplace(w->key_, g);
    } else {
      range_groups_.emplace(std::make_pair(w->key_, w->end_), g);
    }
  }
  std::lock_guard glock(g->mu);
  w->cursor_ = g->end_seq();
  g->members.push_back(w);
  w->group_ = std::move(g);
  return Join::kJoined;
}

void WatchHub::Forget(Watcher* w) {
  Leave(w);
  std::lock_guard lock(mu_);
  --watchers_;
}

void WatchHub::Leave(Watcher* w) {
  std::lock_guard lock(mu_);
  std::shared_ptr<Group> g = std::move(w->group_);
  w->group_ = nullptr;
  if (g != nullptr) {
    bool empty = false;
    {
      std::lock_guard glock(g->mu);
      auto& m = g->members;
      m.erase(std::remove(m.begin(), m.end(), w), m.end());
      empty = m.empty();
    }
    if (empty) {
      if (g->end.empty()) {
        single_groups_.erase(g->key);
      } else {
        range_groups_.erase({g->key, g->end});
      }
    }
  }
}

void WatchHub::Wake(Watcher* w) {
  std::lock_guard lock(mu_);
  if (w->group_ == nullptr) return;
  std::lock_guard glock(w->group_->mu);
  w->group_->cv.notify_all();
}

util::StatusOr<HistorySource::Chunk> WatchHub::ReadHistory(const Watcher& w, Revision to) {
  std::shared_lock lock(history_mu_);
  if (history_closed_) return util::Unavailable("watch: the store is shutting down");
  return history_->ReadHistory(w.key_, w.end_, w.next_rev_, to, w.prev_kv_,
                               options_.max_events_per_response);
}

util::StatusOr<KeyValuePtr> WatchHub::ReadPrevious(RevisionPair at, Revision of,
                                                   Revision* compacted) {
  std::shared_lock lock(history_mu_);
  if (history_closed_) return util::Unavailable("watch: the store is shutting down");
  return history_->ReadPrevious(at, of, compacted);
}

void WatchHub::ProgressLoop() {
  util::Clock::TimePoint next_tick = clock_->Now() + options_.progress_interval;
  std::unique_lock lock(progress_mu_);
  while (!stopping_) {
    if (clock_->Now() < next_tick) {
      clock_->WaitUntil(progress_cv_, lock, next_tick);
      continue;
    }
    lock.unlock();
    ProgressTick();
    lock.lock();
    next_tick = clock_->Now() + options_.progress_interval;
  }
}

void WatchHub::TrimLocked(Group& g) {
  auto drop_front = [&g] {
    g.trimmed_count = g.log.front().end_count;
    g.covered_from = g.log.front().rev + 1;
    g.log.pop_front();
    ++g.base_seq;
  };
  // Entries every member has read.
  uint64_t min_cursor = g.end_seq();
  for (const Watcher* w : g.members) min_cursor = std::min(min_cursor, w->cursor_);
  while (!g.log.empty() && g.base_seq < min_cursor) drop_front();
  // The buffer bound: members still before a dropped entry are cancelled as slow.
  while (g.log.size() > 1 && g.log.back().end_count - g.trimmed_count > options_.watcher_buffer) {
    drop_front();
  }
}

void WatchHub::ProgressTick() {
  std::lock_guard lock(mu_);
  auto tick = [](Group& g) {
    std::lock_guard glock(g.mu);
    bool any = false;
    for (Watcher* w : g.members) {
      if (w->progress_notify_) {
        w->progress_requested_.store(true);
        any = true;
      }
    }
    if (any) g.cv.notify_all();
  };
  for (auto& [key, g] : single_groups_) tick(*g);
  for (auto& [key, g] : range_groups_) tick(*g);
}

}  // namespace converge::store
