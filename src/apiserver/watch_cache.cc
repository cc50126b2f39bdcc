#include "apiserver/watch_cache.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "util/thread_name.h"

namespace converge::apiserver {

namespace json = boost::json;

// ---------------------------------------------------------------------------------------------
// WatchEvent

std::string_view WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded: return "ADDED";
    case WatchEventType::kModified: return "MODIFIED";
    case WatchEventType::kDeleted: return "DELETED";
    case WatchEventType::kBookmark: return "BOOKMARK";
    case WatchEventType::kError: return "ERROR";
  }
  return "ERROR";
}

WatchEvent::WatchEvent(WatchEventType type, CachedObjectPtr object, CachedObjectPtr prev)
    : type_(type), object_(std::move(object)), prev_(std::move(prev)) {}

void WatchEvent::AppendFrame(WatchEventType as,
                             std::vector<std::shared_ptr<const std::string>>* out) const {
  static const auto* heads = [] {
    auto* h = new std::vector<std::shared_ptr<const std::string>>();
    for (WatchEventType t :
         {WatchEventType::kAdded, WatchEventType::kModified, WatchEventType::kDeleted,
          WatchEventType::kBookmark, WatchEventType::kError}) {
      h->push_back(std::make_shared<const std::string>(
          R"({"type":")" + std::string(WatchEventTypeName(t)) + R"(","object":)"));
    }
    return h;
  }();
  static const auto* tail =
      new std::shared_ptr<const std::string>(std::make_shared<const std::string>("}\n"));
  out->push_back((*heads)[static_cast<size_t>(as)]);
  out->push_back(object_->json());
  out->push_back(*tail);
}

// ---------------------------------------------------------------------------------------------
// WatchFilter

bool WatchFilter::Matches(const api::ResourceInfo& info, const CachedObject& obj) const {
  if (!ns.empty() && obj.ns() != ns) return false;
  if (!name.empty() && obj.name() != name) return false;
  if (!labels.Empty() && !obj.MatchesLabels(labels)) return false;
  if (!fields.Empty() &&
      !fields.Matches([&](std::string_view f) { return obj.FieldValue(info, f); })) {
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// CacheWatcher

CacheWatcher::CacheWatcher(WatchFilter filter, size_t buffer, bool bookmarks,
                           std::shared_ptr<std::atomic<int>> decoders)
    : filter_(std::move(filter)),
      buffer_(buffer),
      bookmarks_(bookmarks),
      decoders_(std::move(decoders)) {
  if (decoders_) decoders_->fetch_add(1, std::memory_order_relaxed);
}

CacheWatcher::~CacheWatcher() {
  Uncount();
}

void CacheWatcher::Uncount() {
  if (decoders_ && !uncounted_.exchange(true)) decoders_->fetch_sub(1, std::memory_order_relaxed);
}

CacheWatcher::PollResult CacheWatcher::Poll(std::vector<WatchItem>* out,
                                            std::function<void()> wake) {
  std::lock_guard lock(mu_);
  if (!queue_.empty()) {
    for (auto& item : queue_) out->push_back(std::move(item));
    queue_.clear();
    return PollResult::kData;
  }
  if (terminated_) return PollResult::kEnd;
  wake_ = std::move(wake);
  return PollResult::kPending;
}

void CacheWatcher::Stop() {
  stopped_ = true;
  Uncount();  // reads nothing more, though the cache drops it only at its next event
  std::lock_guard lock(mu_);
  terminated_ = true;
  queue_.clear();
  wake_ = nullptr;
}

std::function<void()> CacheWatcher::Push(WatchItem item) {
  std::lock_guard lock(mu_);
  if (terminated_) return nullptr;
  if (queue_.size() >= buffer_) {
    // Too slow: end the stream. The client resumes from the last resourceVersion it saw.
    terminated_ = true;
    queue_.clear();
    return std::exchange(wake_, nullptr);
  }
  if (item.event) last_revision_ = item.event->revision();
  queue_.push_back(std::move(item));
  return std::exchange(wake_, nullptr);
}

std::function<void()> CacheWatcher::Terminate() {
  std::lock_guard lock(mu_);
  terminated_ = true;
  return std::exchange(wake_, nullptr);
}

bool CacheWatcher::terminated() const {
  std::lock_guard lock(mu_);
  return terminated_;
}

// ---------------------------------------------------------------------------------------------
// WatchCache

WatchCache::WatchCache(std::shared_ptr<const api::ResourceInfo> info, WatchCacheOptions options)
    : info_(std::move(info)), options_(options) {}

WatchCache::ListResult WatchCache::List(const WatchFilter& filter, std::string_view start_key,
                                        size_t limit, bool* more) const {
  ListResult result;
  std::string prefix = StoragePrefix(*info_, filter.ns);
  std::lock_guard lock(mu_);
  result.revision = revision_;
  if (more) *more = false;
  if (!filter.name.empty()) {
    // A name pins at most one object per namespace: look it up instead of scanning.
    if (!filter.ns.empty() || !info_->namespaced) {
      auto it = FindLocked(StorageKey(*info_, filter.ns, filter.name));
      if (it != objects_.end() && (*it)->storage_key >= start_key && filter.Matches(*info_, **it)) {
        result.items.push_back(*it);
      }
      return result;
    }
  }
  auto it = objects_.lower_bound(std::max<std::string_view>(prefix, start_key));
  auto in_prefix = [&] {
    return it != objects_.end() && (*it)->storage_key.compare(0, prefix.size(), prefix) == 0;
  };
  for (; in_prefix(); ++it) {
    if (!filter.Matches(*info_, **it)) continue;
    if (limit > 0 && result.items.size() == limit) {
      if (more) *more = true;
      break;
    }
    result.items.push_back(*it);
  }
  if (in_prefix() && filter.name.empty() && filter.labels.Empty() && filter.fields.Empty()) {
    if (start_key <= prefix) {
      // Every object of the prefix before `it` is in the page: the rest is counted, not walked
      // (a page of 100 pods out of 100,000 walked them all, holding mu_ meanwhile).
      int64_t in_scope = static_cast<int64_t>(objects_.size());
      if (!filter.ns.empty()) {
        auto n = namespace_sizes_.find(filter.ns);
        in_scope = n == namespace_sizes_.end() ? 0 : n->second;
      }
      result.remaining = in_scope - static_cast<int64_t>(result.items.size());
    } else {
      int64_t remaining = 0;
      for (; in_prefix(); ++it) ++remaining;
      result.remaining = remaining;
    }
  }
  return result;
}

void WatchCache::InsertLocked(CachedObjectPtr obj, ObjectSet::const_iterator hint) {
  if (info_->namespaced) {
    auto n = namespace_sizes_.find(obj->ns());
    if (n == namespace_sizes_.end()) n = namespace_sizes_.emplace(std::string(obj->ns()), 0).first;
    ++n->second;
  }
  index_.insert(objects_.insert(hint, std::move(obj)));
}

void WatchCache::ReplaceLocked(ObjectSet::const_iterator it, CachedObjectPtr obj) {
  // The element's key does not change, so neither does its place in the set nor its hash: the
  // set's element may be assigned through the iterator (the set itself only hands out const).
  const_cast<CachedObjectPtr&>(*it) = std::move(obj);
}

void WatchCache::EraseLocked(ObjectSet::const_iterator it) {
  if (info_->namespaced) {
    auto n = namespace_sizes_.find((*it)->ns());
    if (n != namespace_sizes_.end() && --n->second == 0) namespace_sizes_.erase(n);
  }
  index_.erase(it);
  objects_.erase(it);
}

WatchCache::ObjectSet::const_iterator WatchCache::FindLocked(std::string_view storage_key) const {
  auto found = index_.find(storage_key);
  return found == index_.end() ? objects_.end() : *found;
}

CachedObjectPtr WatchCache::Get(const std::string& storage_key, store::Revision* revision) const {
  std::lock_guard lock(mu_);
  if (revision) *revision = revision_;
  auto it = FindLocked(storage_key);
  return it == objects_.end() ? nullptr : *it;
}

store::Revision WatchCache::revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

size_t WatchCache::size() const {
  std::lock_guard lock(mu_);
  return objects_.size();
}

util::StatusOr<std::shared_ptr<CacheWatcher>> WatchCache::Watch(WatchFilter filter,
                                                                WatchOptions options,
                                                                size_t buffer) {
  std::vector<std::function<void()>> wakes;
  std::shared_ptr<CacheWatcher> w;
  {
    std::lock_guard lock(mu_);
    if (options.from_revision && *options.from_revision < oldest_revision_) {
      return util::OutOfRange(
          "too old resource version: " + std::to_string(*options.from_revision) + " (" +
          std::to_string(oldest_revision_) + ")");
    }
    // The initial items may exceed the live buffer; size the queue to hold them.
    size_t initial = 0;
    std::vector<WatchItem> items;
    // The bookmark that ends the initial events (sendInitialEvents), at `revision`.
    auto end_initial_events = [&](store::Revision revision) {
      if (!options.initial_events_end_bookmark) return;
      WatchItem b;
      b.as = WatchEventType::kBookmark;
      b.bookmark_revision = revision;
      b.initial_events_end = true;
      items.push_back(std::move(b));
    };
    if (!options.from_revision) {
      std::string prefix = StoragePrefix(*info_, filter.ns);
      for (auto it = objects_.lower_bound(prefix);
           it != objects_.end() && (*it)->storage_key.compare(0, prefix.size(), prefix) == 0;
           ++it) {
        if (!filter.Matches(*info_, **it)) continue;
        items.push_back({std::make_shared<WatchEvent>(WatchEventType::kAdded, *it, nullptr),
                         WatchEventType::kAdded});
      }
      end_initial_events(revision_);
    } else {
      const store::Revision from = *options.from_revision;
      if (options.initial_objects) {
        for (CachedObjectPtr& o : *options.initial_objects) {
          if (!filter.Matches(*info_, *o)) continue;
          items.push_back(
              {std::make_shared<WatchEvent>(WatchEventType::kAdded, std::move(o), nullptr),
               WatchEventType::kAdded});
        }
        end_initial_events(from);
      }
      auto first = std::upper_bound(
          history_.begin(), history_.end(), from,
          [](store::Revision r, const HistoryEntry& h) { return r < h.event->revision(); });
      for (auto it = first; it != history_.end(); ++it) {
        const WatchEventPtr& ev = it->event;
        bool now = filter.Matches(*info_, *ev->object());
        bool before = ev->prev() && filter.Matches(*info_, *ev->prev());
        if (ev->type() == WatchEventType::kDeleted) {
          if (now) items.push_back({ev, WatchEventType::kDeleted});
        } else if (now && before) {
          items.push_back({ev, WatchEventType::kModified});
        } else if (now) {
          items.push_back({ev, WatchEventType::kAdded});
        } else if (before) {
          items.push_back({ev, WatchEventType::kDeleted});
        }
      }
    }
    initial = items.size();
    w = std::make_shared<CacheWatcher>(
        std::move(filter), buffer + initial, options.bookmarks,
        options.decodes_without_managed_fields ? decoders_ : nullptr);
    w->last_bookmark = std::chrono::steady_clock::now();
    for (auto& item : items) {
      if (auto wake = w->Push(std::move(item))) wakes.push_back(std::move(wake));
    }
    watchers_.push_back(w);
  }
  for (auto& wake : wakes) wake();
  return w;
}

void WatchCache::Offer(std::shared_ptr<PendingWrite> write) {
  std::lock_guard lock(offers_mu_);
  std::string key = write->storage_key();
  offers_.emplace(std::move(key), OfferedWrite{std::move(write)});
}

void WatchCache::Withdraw(const std::shared_ptr<PendingWrite>& write) {
  std::lock_guard lock(offers_mu_);
  auto [first, last] = offers_.equal_range(write->storage_key());
  for (auto it = first; it != last; ++it) {
    if (it->second.write == write) {
      offers_.erase(it);
      return;
    }
  }
}

void WatchCache::Committed(const std::shared_ptr<PendingWrite>& write, store::Revision revision) {
  std::lock_guard lock(offers_mu_);
  auto [first, last] = offers_.equal_range(write->storage_key());
  for (auto it = first; it != last; ++it) {
    if (it->second.write != write) continue;
    // Already applied without being taken (the event carried other bytes, or the cache was
    // reset past it): nothing will take it any more.
    if (revision <= offers_settled_) {
      offers_.erase(it);
    } else {
      it->second.committed = revision;
    }
    return;
  }
}

size_t WatchCache::offers() const {
  std::lock_guard lock(offers_mu_);
  return offers_.size();
}

CachedObjectPtr WatchCache::TakeOffer(const store::KeyValue& kv,
                                      std::shared_ptr<const std::string>* json) {
  std::shared_ptr<PendingWrite> taken;
  {
    std::lock_guard lock(offers_mu_);
    auto [first, last] = offers_.equal_range(kv.key);
    for (auto it = first; it != last; ++it) {
      if (it->second.write->json() == kv.value) {
        taken = std::move(it->second.write);
        offers_.erase(it);
        break;
      }
    }
  }
  if (!taken) return nullptr;
  CachedObjectPtr entry = taken->Entry(kv.mod_revision);
  *json = entry->JsonIfAtHand();  // while `taken`, which holds it, is alive
  return entry;
}

void WatchCache::SettleOffers(store::Revision revision) {
  std::lock_guard lock(offers_mu_);
  offers_settled_ = std::max(offers_settled_, revision);
  std::erase_if(offers_, [revision](const auto& entry) {
    return entry.second.committed != 0 && entry.second.committed <= revision;
  });
}

void WatchCache::Reset(std::vector<CachedObjectPtr> objects, store::Revision revision) {
  SettleOffers(revision);
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mu_);
    index_.clear();
    objects_.clear();
    namespace_sizes_.clear();
    if (options_.keep_objects) index_.reserve(objects.size());
    for (auto& o : objects) {
      if (!options_.keep_objects) break;
      InsertLocked(std::move(o), objects_.end());  // a list in key order: O(1) each
    }
    history_.clear();
    oldest_revision_ = revision;
    revision_ = revision;
    for (auto& w : watchers_) {
      if (auto wake = w->Terminate()) wakes.push_back(std::move(wake));
    }
    watchers_.clear();
  }
  for (auto& wake : wakes) wake();
}

void WatchCache::AddHistoryLocked(WatchEventPtr ev, util::Clock::TimePoint now) {
  history_.push_back({std::move(ev), now});
  TrimHistoryLocked(now);
}

void WatchCache::TrimHistoryLocked(util::Clock::TimePoint now) {
  const size_t keep = std::min(options_.history_min, options_.history_capacity);
  while (history_.size() > options_.history_capacity ||
         (history_.size() > keep && now - history_.front().recorded > options_.history_window)) {
    // History stays complete for revisions > oldest_revision_ (events of one revision may be
    // split: a watch from before the dropped one's revision is refused).
    oldest_revision_ = history_.front().event->revision();
    history_.pop_front();
  }
}

void WatchCache::ExpireHistory() {
  util::Clock::TimePoint now = options_.clock->Now();
  std::lock_guard lock(mu_);
  TrimHistoryLocked(now);
}

size_t WatchCache::history_size() const {
  std::lock_guard lock(mu_);
  return history_.size();
}

void WatchCache::DispatchLocked(const WatchEventPtr& ev,
                                std::vector<std::function<void()>>* wakes) {
  bool pruned = false;
  for (auto& w : watchers_) {
    if (w->stopped() || w->terminated()) {
      pruned = true;
      continue;
    }
    const WatchFilter& f = w->filter();
    bool now = f.Matches(*info_, *ev->object());
    bool before = ev->prev() && f.Matches(*info_, *ev->prev());
    WatchEventType as;
    if (ev->type() == WatchEventType::kDeleted) {
      if (!now) continue;
      as = WatchEventType::kDeleted;
    } else if (now && before) {
      as = WatchEventType::kModified;
    } else if (now) {
      as = WatchEventType::kAdded;
    } else if (before) {
      as = WatchEventType::kDeleted;
    } else {
      continue;
    }
    if (auto wake = w->Push({ev, as})) wakes->push_back(std::move(wake));
  }
  if (pruned) {
    std::erase_if(watchers_, [](const std::shared_ptr<CacheWatcher>& w) {
      return w->stopped() || w->terminated();
    });
  }
}

void WatchCache::KeepJsonAtHandLocked(const CachedObject& obj,
                                      std::shared_ptr<const std::string> json) {
  if (options_.recent_json == 0 || !obj.compressed()) return;
  // Only what is at hand: the writer's spliced bytes (PendingWrite::Entry). A version built from
  // the store's event is not decompressed for this.
  if (json == nullptr) return;
  if (recent_json_.size() < options_.recent_json) {
    recent_json_.push_back(std::move(json));
    return;
  }
  recent_json_[recent_next_] = std::move(json);
  recent_next_ = (recent_next_ + 1) % recent_json_.size();
}

void WatchCache::KeepObjectAtHandLocked(const CachedObject& obj,
                                        std::vector<api::ObjectPtr>* dropped) {
  if (options_.recent_objects == 0) return;
  api::ObjectPtr parsed = obj.DecodedWithoutManagedFieldsIfAtHand();
  if (parsed == nullptr) return;
  if (recent_objects_.size() < options_.recent_objects) {
    recent_objects_.push_back(std::move(parsed));
    return;
  }
  std::swap(recent_objects_[recent_object_next_], parsed);
  recent_object_next_ = (recent_object_next_ + 1) % recent_objects_.size();
  dropped->push_back(std::move(parsed));
}

void WatchCache::Apply(const std::vector<store::Event>& events, store::Revision revision) {
  std::vector<std::function<void()>> wakes;
  // Build entries outside the lock: parsing and encoding is the expensive part.
  struct Change {
    const store::Event* ev;
    CachedObjectPtr obj;
    CachedObjectPtr prev;  // without keep_objects: the store's previous value, if any
    std::shared_ptr<const std::string> json = nullptr;  // obj's JSON, if an offer had it at hand
  };
  std::vector<Change> changes;
  changes.reserve(events.size());
  for (const store::Event& e : events) {
    CachedObjectPtr prev;
    if (!options_.keep_objects && e.prev_kv) {
      auto p = CachedObject::FromKeyValue(*info_, *e.prev_kv, Holding::kInCache);
      if (p.ok()) prev = std::move(*p);
    }
    if (!options_.keep_objects && e.type != store::Event::Type::kPut) {
      changes.push_back({&e, nullptr, std::move(prev)});
      continue;
    }
    if (e.type == store::Event::Type::kPut) {
      std::shared_ptr<const std::string> json;
      if (CachedObjectPtr offered = TakeOffer(*e.kv, &json)) {
        changes.push_back({&e, std::move(offered), std::move(prev), std::move(json)});
        continue;
      }
      auto obj = CachedObject::FromKeyValue(*info_, *e.kv, Holding::kInCache);
      if (!obj.ok()) {
        spdlog::error("watch cache {}: {}", info_->storage_prefix, obj.status().ToString());
        continue;
      }
      changes.push_back({&e, std::move(*obj), std::move(prev)});
    } else {
      changes.push_back({&e, nullptr, nullptr});
    }
  }
  SettleOffers(revision);
  const util::Clock::TimePoint now = options_.clock->Now();
  std::vector<api::ObjectPtr> dropped;  // destroyed after the lock is released
  {
    std::lock_guard lock(mu_);
    for (Change& c : changes) {
      if (c.obj) {
        KeepJsonAtHandLocked(*c.obj, std::move(c.json));
        KeepObjectAtHandLocked(*c.obj, &dropped);
      }
      if (!options_.keep_objects) {
        WatchEventPtr ev;
        if (c.obj) {
          ev = std::make_shared<WatchEvent>(
              c.prev ? WatchEventType::kModified : WatchEventType::kAdded, c.obj, c.prev);
        } else {
          if (!c.prev) continue;
          ev = std::make_shared<WatchEvent>(WatchEventType::kDeleted,
                                            c.prev->WithRevision(c.ev->kv->mod_revision), c.prev);
        }
        AddHistoryLocked(ev, now);
        DispatchLocked(ev, &wakes);
        continue;
      }
      const std::string& key = c.ev->kv->key;
      // A probe of the index; only a new key walks the tree (to insert).
      auto it = FindLocked(key);
      const bool found = it != objects_.end();
      CachedObjectPtr prev = found ? *it : nullptr;
      WatchEventPtr ev;
      if (c.obj) {
        ev = std::make_shared<WatchEvent>(prev ? WatchEventType::kModified : WatchEventType::kAdded,
                                          c.obj, prev);
        if (!found) {
          InsertLocked(c.obj, objects_.lower_bound(key));
        } else {
          prev->ReleaseSeed();  // superseded
          ReplaceLocked(it, c.obj);
        }
      } else {
        if (!prev) continue;  // deleting something we never saw (filtered earlier): nothing to say
        prev->ReleaseSeed();
        EraseLocked(it);
        // DELETED carries the last state with the deletion's resourceVersion (spliced in).
        ev = std::make_shared<WatchEvent>(WatchEventType::kDeleted,
                                          prev->WithRevision(c.ev->kv->mod_revision), prev);
      }
      AddHistoryLocked(ev, now);
      DispatchLocked(ev, &wakes);
    }
    revision_ = std::max(revision_, revision);
  }
  for (auto& wake : wakes) wake();
}

void WatchCache::Advance(store::Revision revision) {
  std::lock_guard lock(mu_);
  revision_ = std::max(revision_, revision);
}

void WatchCache::Tick(std::chrono::steady_clock::time_point now,
                      std::chrono::milliseconds interval) {
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mu_);
    for (auto& w : watchers_) {
      if (!w->wants_bookmarks() || now - w->last_bookmark < interval) continue;
      w->last_bookmark = now;
      WatchItem b;
      b.as = WatchEventType::kBookmark;
      b.bookmark_revision = revision_;
      if (auto wake = w->Push(std::move(b))) wakes.push_back(std::move(wake));
    }
  }
  for (auto& wake : wakes) wake();
}

void WatchCache::TerminateAll() {
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mu_);
    for (auto& w : watchers_) {
      if (auto wake = w->Terminate()) wakes.push_back(std::move(wake));
    }
    watchers_.clear();
  }
  for (auto& wake : wakes) wake();
}

void WatchCache::ForgetHistory() {
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mu_);
    history_.clear();
    oldest_revision_ = revision_;
    for (auto& w : watchers_) {
      if (auto wake = w->Terminate()) wakes.push_back(std::move(wake));
    }
    watchers_.clear();
  }
  for (auto& wake : wakes) wake();
}

// ---------------------------------------------------------------------------------------------
// Cacher

Cacher::Cacher(store::KV* kv, CacherOptions options) : kv_(kv), options_(std::move(options)) {}

Cacher::~Cacher() {
  Stop();
}

namespace {

// One stored object of a full load and the cache entry built from it.
struct EntryLoad {
  WatchCache* cache;  // whose entry it becomes
  const store::KeyValue* kv;
  util::StatusOr<CachedObjectPtr> entry = CachedObjectPtr();
};

// Loads of at least this many objects are built on every core.
constexpr size_t kParallelLoadMin = 2000;

// Builds every load's entry (Holding::kInCache). Parsing, encoding and compressing is ~40 µs for
// a pod: a start-up with 150,000 of them builds on every core (up to 8), in contiguous slices.
void BuildEntries(std::vector<EntryLoad>& loads) {
  auto build = [&loads](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      loads[i].entry =
          CachedObject::FromKeyValue(loads[i].cache->info(), *loads[i].kv, Holding::kInCache);
    }
  };
  const size_t threads = loads.size() < kParallelLoadMin
                             ? 1
                             : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) {
    helpers.emplace_back(build, loads.size() * t / threads, loads.size() * (t + 1) / threads);
  }
  build(0, loads.size() / threads);
  for (std::thread& h : helpers) h.join();
}

}  // namespace

WatchCache* Cacher::AddResource(std::shared_ptr<const api::ResourceInfo> info) {
  std::lock_guard dispatch(dispatch_mu_);
  {
    std::shared_lock lock(caches_mu_);
    if (auto it = caches_.find(info->storage_prefix); it != caches_.end()) return it->second.get();
  }
  WatchCacheOptions cache_options = options_.cache;
  cache_options.clock = options_.clock;
  cache_options.keep_objects = !options_.history_only.contains(info->storage_prefix);
  auto cache = std::make_unique<WatchCache>(info, cache_options);
  WatchCache* raw = cache.get();
  if (thread_.joinable() && !cache_options.keep_objects) {
    cache->Reset({}, applied_.load());
  } else if (thread_.joinable()) {
    // Running: load the prefix at the applied revision. The dispatcher cannot apply anything
    // while we hold dispatch_mu_, so the next event it applies for this prefix is newer.
    store::Revision rev = applied_.load();
    store::RangeRequest req;
    req.key = info->storage_prefix + "/";
    req.range_end = store::PrefixEnd(req.key);
    req.revision = rev;
    std::vector<CachedObjectPtr> objects;
    if (auto resp = kv_->Range(req); resp.ok()) {
      std::vector<EntryLoad> loads;
      loads.reserve(resp->kvs.size());
      for (const auto& kv : resp->kvs) loads.push_back(EntryLoad{raw, kv.get()});
      BuildEntries(loads);
      for (EntryLoad& l : loads) {
        if (l.entry.ok()) objects.push_back(std::move(*l.entry));
      }
    } else {
      spdlog::error("watch cache: loading {}: {}", info->storage_prefix, resp.status().ToString());
    }
    cache->Reset(std::move(objects), rev);
  }
  std::unique_lock lock(caches_mu_);
  caches_.emplace(info->storage_prefix, std::move(cache));
  return raw;
}

void Cacher::RetireResource(std::string_view storage_prefix) {
  WatchCache* retired = nullptr;
  {
    std::lock_guard dispatch(dispatch_mu_);
    std::unique_lock lock(caches_mu_);
    auto it = caches_.find(storage_prefix);
    if (it == caches_.end()) return;
    retired = it->second.get();
    retired_.push_back(std::move(it->second));
    caches_.erase(it);
  }
  retired->TerminateAll();
}

WatchCache* Cacher::ForPrefix(std::string_view storage_prefix) const {
  std::shared_lock lock(caches_mu_);
  auto it = caches_.find(storage_prefix);
  return it == caches_.end() ? nullptr : it->second.get();
}

WatchCache* Cacher::CacheForKeyLocked(std::string_view key) const {
  // Storage prefixes are "/registry/<resource>" or "/registry/<group>/<resource>".
  size_t pos = options_.prefix.size();
  for (int segments = 0; segments < 2; ++segments) {
    size_t slash = key.find('/', pos);
    if (slash == std::string_view::npos) return nullptr;
    auto it = caches_.find(key.substr(0, slash));
    if (it != caches_.end()) return it->second.get();
    pos = slash + 1;
  }
  return nullptr;
}

void Cacher::SetApplied(store::Revision revision) {
  {
    std::lock_guard lock(wait_mu_);
    applied_ = revision;
  }
  cv_.notify_all();
}

util::Status Cacher::LoadAllLocked(store::Revision* revision) {
  store::RangeRequest req;
  req.key = options_.prefix;
  req.range_end = store::PrefixEnd(options_.prefix);
  auto resp = kv_->Range(req);
  if (!resp.ok()) return resp.status();
  std::map<WatchCache*, std::vector<CachedObjectPtr>> by_cache;
  std::shared_lock lock(caches_mu_);
  for (auto& [prefix, cache] : caches_) by_cache[cache.get()];
  std::vector<EntryLoad> loads;
  loads.reserve(resp->kvs.size());
  for (const auto& kv : resp->kvs) {
    WatchCache* cache = CacheForKeyLocked(kv->key);
    if (cache && cache->keeps_objects()) loads.push_back(EntryLoad{cache, kv.get()});
  }
  BuildEntries(loads);
  for (EntryLoad& l : loads) {
    if (!l.entry.ok()) return l.entry.status();
    by_cache[l.cache].push_back(std::move(*l.entry));
  }
  for (auto& [cache, objects] : by_cache) cache->Reset(std::move(objects), resp->header_revision);
  *revision = resp->header_revision;
  SetApplied(resp->header_revision);
  return util::Status();
}

util::StatusOr<std::unique_ptr<store::WatchStream>> Cacher::WatchFrom(store::Revision start) {
  store::WatchRequest wr;
  wr.key = options_.prefix;
  wr.range_end = store::PrefixEnd(options_.prefix);
  wr.start_revision = start;
  wr.progress_notify = true;
  // Caches without objects take a change's previous state from the event (upstream's cacher
  // always asks for it); the others have it, and the store need not decompress it for them.
  wr.prev_kv = !options_.history_only.empty();
  wr.prev_kv_prefixes.assign(options_.history_only.begin(), options_.history_only.end());
  return kv_->Watch(wr);
}

util::Status Cacher::Start() {
  store::Revision rev = 0;
  {
    std::lock_guard dispatch(dispatch_mu_);
    CONVERGE_RETURN_IF_ERROR(LoadAllLocked(&rev));
  }
  auto w = WatchFrom(rev + 1);
  if (!w.ok()) return w.status();
  {
    std::lock_guard lock(watch_mu_);
    watch_ = std::move(*w);
  }
  thread_ = std::jthread([this](std::stop_token st) {
    util::SetThreadName("watch-cache");
    Run(st);
  });
  ticker_ = std::jthread([this](std::stop_token st) {
    util::SetThreadName("watch-tick");
    RunTicker(st);
  });
  return util::Status();
}

void Cacher::Stop() {
  // Shutdown order: the ticker (it pokes the watch), then the dispatcher (cancelling the store
  // watch unblocks it), then every watcher's stream is ended.
  if (ticker_.joinable()) {
    ticker_.request_stop();
    ticker_.join();
  }
  if (!thread_.joinable()) return;
  thread_.request_stop();
  {
    std::lock_guard lock(watch_mu_);
    if (watch_) watch_->Cancel();
  }
  thread_.join();
  std::shared_lock lock(caches_mu_);
  for (auto& [p, c] : caches_) c->TerminateAll();
}

void Cacher::TerminateWatchers() {
  std::shared_lock lock(caches_mu_);
  for (auto& [p, c] : caches_) c->TerminateAll();
}

void Cacher::ForgetHistory() {
  // "Everything before now": first let the caches apply what the store has committed, or an
  // event committed before the call would land in the fresh history (bounded: a cache that cannot
  // catch up forgets what it has).
  WaitFresh(std::chrono::seconds(10));
  // Under dispatch_mu_, so that no batch is half applied while the histories go.
  std::lock_guard dispatch(dispatch_mu_);
  std::shared_lock lock(caches_mu_);
  for (auto& [p, c] : caches_) c->ForgetHistory();
}

void Cacher::RunTicker(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(mu);
      cv.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    }
    if (stop.stop_requested()) return;
    auto now = std::chrono::steady_clock::now();
    {
      std::shared_lock lock(caches_mu_);
      for (auto& [p, c] : caches_) {
        c->Tick(now, options_.bookmark_interval);
        c->ExpireHistory();
      }
    }
    // Keeps applied_ moving when revisions advance without events under our prefix.
    std::lock_guard lock(watch_mu_);
    if (watch_) watch_->RequestProgress();
  }
}

void Cacher::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    std::shared_ptr<store::WatchStream> watch;
    {
      std::lock_guard lock(watch_mu_);
      watch = watch_;
    }
    auto resp = watch->Next(stop);
    if (stop.stop_requested()) return;
    if (resp.ok() && !resp->canceled) {
      std::lock_guard dispatch(dispatch_mu_);
      std::shared_lock lock(caches_mu_);
      // Group by revision: all events of one revision are applied to a cache together.
      std::map<WatchCache*, std::vector<store::Event>> batch;
      store::Revision batch_rev = 0;
      auto flush = [&] {
        for (auto& [cache, evs] : batch) cache->Apply(evs, batch_rev);
        batch.clear();
      };
      for (const store::Event& e : resp->events) {
        store::Revision r = e.kv->mod_revision;
        if (r != batch_rev) {
          flush();
          batch_rev = r;
        }
        if (WatchCache* cache = CacheForKeyLocked(e.kv->key)) batch[cache].push_back(e);
      }
      flush();
      store::Revision applied =
          resp->events.empty() ? resp->header_revision : resp->events.back().kv->mod_revision;
      if (applied > applied_.load()) {
        for (auto& [p, c] : caches_) c->Advance(applied);
        SetApplied(applied);
      }
      continue;
    }
    // The store watch ended: resume after the last applied revision, or reload everything when
    // that history is gone (every cache watcher is then terminated and its client relists).
    spdlog::warn("watch cache: store watch ended ({}); resuming",
                 resp.ok() ? resp->cancel_reason : resp.status().ToString());
    std::lock_guard dispatch(dispatch_mu_);
    auto w = WatchFrom(applied_.load() + 1);
    if (!w.ok() && store::IsCompacted(w.status())) {
      store::Revision rev = 0;
      if (auto s = LoadAllLocked(&rev); !s.ok()) {
        spdlog::error("watch cache: reload failed: {}", s.ToString());
      } else {
        w = WatchFrom(rev + 1);
      }
    }
    if (!w.ok()) {
      spdlog::error("watch cache: cannot re-watch: {}", w.status().ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    std::lock_guard lock(watch_mu_);
    watch_ = std::move(*w);
  }
}

bool Cacher::WaitForRevision(store::Revision revision, std::chrono::milliseconds timeout) {
  if (applied_.load() >= revision) return true;
  {
    std::lock_guard lock(watch_mu_);
    if (watch_) watch_->RequestProgress();
  }
  std::unique_lock lock(wait_mu_);
  return cv_.wait_for(lock, timeout, [&] { return applied_.load() >= revision; });
}

bool Cacher::WaitFresh(std::chrono::milliseconds timeout) {
  return WaitForRevision(kv_->CurrentRevision(), timeout);
}

}  // namespace converge::apiserver
