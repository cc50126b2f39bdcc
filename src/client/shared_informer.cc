#include "client/shared_informer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "util/thread_name.h"

namespace converge::client {

// What the reflector writes into: the FIFO, processed at once on the writing thread (the
// reflector's, or its resync timer's), plus one observation the FIFO cannot report — a first list
// that came back empty makes the informer synced with nothing to pop.
class SharedInformer::Store final : public ReflectorStore {
 public:
  explicit Store(SharedInformer* owner) : owner_(owner) {}
  void Add(api::ObjectPtr obj) override {
    owner_->fifo_.Add(std::move(obj));
    owner_->Process();
  }
  void Update(api::ObjectPtr obj) override {
    owner_->fifo_.Update(std::move(obj));
    owner_->Process();
  }
  void Delete(api::ObjectPtr obj) override {
    owner_->fifo_.Delete(std::move(obj));
    owner_->Process();
  }
  void Resync() override {
    owner_->fifo_.Resync();
    owner_->Process();
  }
  void Replace(std::vector<api::ObjectPtr> objects, const std::string& rv) override {
    // The first Replace comes before any other write (the reflector lists first), when the cache
    // is empty: with an empty list it queues nothing at all.
    const bool first_and_empty = !replaced_ && objects.empty();
    replaced_ = true;
    owner_->fifo_.Replace(std::move(objects), rv);
    owner_->Process();
    if (first_and_empty) owner_->MarkSynced();
  }

 private:
  SharedInformer* const owner_;
  bool replaced_ = false;  // the reflector's thread only
};

bool HandlerRegistration::HasSynced() const {
  return listener_ != nullptr && informer_->HasSynced() && listener_->HasSynced();
}

SharedInformer::SharedInformer(SharedInformerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      indexer_(std::move(options_.indexers)),
      fifo_(DeltaFifoOptions{.known_objects = &indexer_}),
      store_(std::make_unique<Store>(this)) {}

SharedInformer::~SharedInformer() = default;

std::string SharedInformer::LastSyncResourceVersion() const {
  std::lock_guard lock(reflector_mu_);
  return reflector_ != nullptr ? reflector_->LastSyncResourceVersion() : std::string();
}

util::Status SharedInformer::AddIndexers(Indexers indexers) {
  return indexer_.AddIndexers(std::move(indexers));
}

void SharedInformer::StartListenerLocked(Entry& entry) {
  if (entry.listener->is_inline()) return;  // delivered on the informer's thread
  entry.thread = std::jthread([l = entry.listener](std::stop_token st) {
    util::SetThreadName("informer-handlr");  // one per registered handler
    l->Run(st);
  });
}

util::StatusOr<HandlerRegistration> SharedInformer::AddEventHandler(
    std::shared_ptr<ResourceEventHandler> handler, HandlerOptions options) {
  if (stopped_.load()) {
    return util::FailedPrecondition("informer " + options_.name + " has stopped");
  }
  if (options.resync_period.count() == 0) options.resync_period = options_.default_resync;
  std::lock_guard lock(delivery_mu_);
  if (running_ && options.resync_period.count() > 0 &&
      (resync_check_period_.count() == 0 || options.resync_period < resync_check_period_)) {
    // The reflector's resync timer is already set; a faster handler resyncs at its pace.
    options.resync_period = resync_check_period_;
  }
  auto listener = std::make_shared<ProcessorListener>(std::move(handler), options, clock_);
  Entry& entry = listeners_.emplace_back(Entry{listener, {}});
  // Started before the replay, so that a bounded listener drains while it is filled.
  if (running_) StartListenerLocked(entry);
  // Replay the cache. delivery_mu_ keeps Process out, so every change is either in
  // this replay or distributed to the new listener afterwards, never both or neither.
  for (api::ObjectPtr& obj : indexer_.List()) {
    listener->Add(Notification{
        .kind = Notification::Kind::kAdd, .obj = std::move(obj), .is_initial_list = true});
  }
  {
    std::lock_guard sync_lock(sync_mu_);
    if (synced_) listener->MarkUpstreamSynced();
  }
  HandlerRegistration reg;
  reg.listener_ = std::move(listener);
  reg.informer_ = this;
  return reg;
}

void SharedInformer::RemoveEventHandler(const HandlerRegistration& registration) {
  std::jthread thread;
  {
    std::lock_guard lock(delivery_mu_);
    auto it = std::find_if(listeners_.begin(), listeners_.end(),
                           [&](const Entry& e) { return e.listener == registration.listener_; });
    if (it == listeners_.end()) return;
    thread = std::move(it->thread);
    // An inline listener is delivered to under delivery_mu_, so none is under way now.
    if (it->listener->is_inline()) it->listener->Stop();
    listeners_.erase(it);
    syncing_.erase(std::remove(syncing_.begin(), syncing_.end(), registration.listener_),
                   syncing_.end());
  }
  // Joined without the lock: the handler may be in the middle of a long call.
}

bool SharedInformer::ShouldResync() {
  std::lock_guard lock(delivery_mu_);
  util::Clock::TimePoint now = clock_->Now();
  syncing_.clear();
  for (Entry& e : listeners_) {
    if (e.listener->ShouldResync(now)) {
      syncing_.push_back(e.listener);
      e.listener->DetermineNextResync(now);
    }
  }
  return !syncing_.empty();
}

void SharedInformer::ApplyLocked(Deltas& deltas, bool is_in_initial_list,
                                 std::vector<Notification>* out, std::vector<bool>* sync_only) {
  for (Delta& d : deltas.items) {
    if (d.type == DeltaType::kDeleted) {
      api::ObjectPtr removed = indexer_.Delete(deltas.key);
      DeletedObject deleted{deltas.key, d.object != nullptr ? d.object : removed,
                            d.final_state_unknown};
      out->push_back(Notification{.kind = Notification::Kind::kDelete,
                                  .deleted = std::move(deleted),
                                  .is_initial_list = is_in_initial_list});
      sync_only->push_back(false);
      continue;
    }
    api::ObjectPtr old = indexer_.Upsert(d.object);
    if (old != nullptr) {
      // An update that did not change the resourceVersion (a Sync, or a relist finding the
      // object unchanged) goes only to the handlers that asked for a resync now.
      bool is_sync = old->resource_version() == d.object->resource_version();
      out->push_back(Notification{.kind = Notification::Kind::kUpdate,
                                  .old_obj = std::move(old),
                                  .obj = std::move(d.object),
                                  .is_initial_list = is_in_initial_list});
      sync_only->push_back(is_sync);
    } else {
      out->push_back(Notification{.kind = Notification::Kind::kAdd,
                                  .obj = std::move(d.object),
                                  .is_initial_list = is_in_initial_list});
      sync_only->push_back(false);
    }
  }
}

void SharedInformer::Process() {
  std::vector<Notification> notes;
  std::vector<bool> sync_only;
  for (;;) {
    notes.clear();
    sync_only.clear();
    std::unique_lock<std::mutex> delivery(delivery_mu_, std::defer_lock);
    bool synced_after = false;
    const bool popped = fifo_.TryPop(
        [&](Deltas& deltas, bool is_in_initial_list) {
          delivery.lock();  // kept past TryPop: distribution happens under it, without the FIFO's
          ApplyLocked(deltas, is_in_initial_list, &notes, &sync_only);
        },
        &synced_after);
    if (!popped) return;
    for (size_t i = 0; i < notes.size(); ++i) DistributeLocked(notes[i], sync_only[i]);
    if (synced_after) MarkSyncedLocked();
  }
}

void SharedInformer::DistributeLocked(const Notification& n, bool sync_only) {
  if (sync_only) {
    for (const auto& l : syncing_) l->Add(n);
    return;
  }
  for (Entry& e : listeners_) e.listener->Add(n);
}

void SharedInformer::MarkSyncedLocked() {
  {
    std::lock_guard sync_lock(sync_mu_);
    if (synced_) return;
    synced_ = true;
  }
  for (Entry& e : listeners_) e.listener->MarkUpstreamSynced();
  sync_cv_.notify_all();
}

void SharedInformer::MarkSynced() {
  std::lock_guard lock(delivery_mu_);
  MarkSyncedLocked();
}

void SharedInformer::Run(std::stop_token stop) {
  util::SetThreadName("informer");  // Run is the thread's body
  std::shared_ptr<Reflector> reflector;
  {
    std::lock_guard lock(delivery_mu_);
    // The reflector's resync timer ticks at the fastest handler's period.
    util::Clock::Duration check{0};
    for (const Entry& e : listeners_) {
      util::Clock::Duration p = e.listener->resync_period();
      if (p.count() > 0 && (check.count() == 0 || p < check)) check = p;
    }
    if (check.count() == 0) check = options_.default_resync;
    resync_check_period_ = check;
    ReflectorOptions ro = options_.reflector;
    ro.name = options_.name;
    ro.lister_watcher = options_.lister_watcher.get();
    ro.store = store_.get();
    ro.clock = clock_;
    ro.resync_period = check;
    ro.should_resync = [this] { return ShouldResync(); };
    reflector = std::make_shared<Reflector>(std::move(ro));
    running_ = true;
    for (Entry& e : listeners_) StartListenerLocked(e);
  }
  {
    std::lock_guard lock(reflector_mu_);
    reflector_ = reflector;
  }

  // The reflector runs here; what it stores is applied and distributed on this thread too (Store).
  reflector->Run(stop);
  fifo_.Close();  // the reflector and its resync timer have ended: nothing is queued after this

  // Shutdown, in this order: the reflector's list or watch was cancelled by `stop` and it has
  // returned (above); then the handler threads are stopped, dropping what they have not
  // delivered, and joined.
  std::vector<std::jthread> threads;
  {
    std::lock_guard lock(delivery_mu_);
    running_ = false;
    for (Entry& e : listeners_) {
      if (e.listener->is_inline()) e.listener->Stop();
      e.thread.request_stop();
      threads.push_back(std::move(e.thread));
    }
  }
  threads.clear();  // joins
  stopped_.store(true);
  { std::lock_guard sync_lock(sync_mu_); }
  sync_cv_.notify_all();
}

bool SharedInformer::HasSynced() const {
  std::lock_guard lock(sync_mu_);
  return synced_;
}

bool SharedInformer::WaitForCacheSync(std::stop_token stop) const {
  std::unique_lock lock(sync_mu_);
  sync_cv_.wait(lock, stop, [this] { return synced_ || stopped_.load(); });
  return synced_;
}

bool WaitForCacheSync(std::stop_token stop, const std::vector<const SharedInformer*>& informers) {
  for (const SharedInformer* i : informers) {
    if (!i->WaitForCacheSync(stop)) return false;
  }
  return true;
}

}  // namespace converge::client
