#include "client/controller.h"
#include "util/thread_name.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <thread>

namespace converge::client {
namespace json = boost::json;

namespace {

QueueOptions MakeQueueOptions(const ControllerOptions& o) {
  return QueueOptions{.name = o.name, .clock = o.clock, .registry = o.metrics};
}

// The key of the controlling owner of `obj` when it has the given group and kind.
std::optional<api::ObjectKey> ControllerOf(const api::Object& obj, std::string_view group,
                                           std::string_view kind) {
  for (api::View v : obj.owner_references()) {
    if (!v.is_object()) continue;
    const api::ObjectView ref = v.as_object();
    if (!api::FindBool(ref, {"controller"})) continue;
    if (api::Object::GetString(ref, "kind") != kind) continue;
    if (api::GroupVersion::Parse(api::Object::GetString(ref, "apiVersion")).group != group) {
      continue;
    }
    // Owners are in the object's namespace (or cluster-scoped: then the namespace is ignored by
    // the owner's lister anyway, and an owner key with a namespace simply is not found).
    return api::ObjectKey{std::string(obj.namespace_()),
                          std::string(api::Object::GetString(ref, "name"))};
  }
  return std::nullopt;
}

}  // namespace

Controller::Controller(ControllerOptions options)
    : name_(options.name),
      reconcile_(std::move(options.reconcile)),
      workers_(std::max(1, options.workers)),
      wait_for_sync_(std::move(options.wait_for_sync)),
      recorder_(options.recorder),
      lookup_(std::move(options.lookup)),
      queue_(MakeQueueOptions(options), std::move(options.rate_limiter)) {}

Controller::~Controller() {
  queue_.ShutDown();
}

Controller::Stats Controller::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

std::shared_ptr<ResourceEventHandler> Controller::EnqueueHandler() {
  auto h = std::make_shared<ResourceEventHandlerFuncs>();
  h->add = [this](const api::ObjectPtr& obj, bool) { Enqueue(obj->key()); };
  h->update = [this](const api::ObjectPtr&, const api::ObjectPtr& obj) { Enqueue(obj->key()); };
  h->del = [this](const DeletedObject& d) { Enqueue(d.key); };
  return h;
}

std::shared_ptr<ResourceEventHandler> Controller::EnqueueOwnerHandler(std::string owner_group,
                                                                      std::string owner_kind) {
  auto h = std::make_shared<ResourceEventHandlerFuncs>();
  auto enqueue_owner = [this, owner_group, owner_kind](const api::ObjectPtr& obj) {
    if (obj == nullptr) return;
    if (std::optional<api::ObjectKey> owner = ControllerOf(*obj, owner_group, owner_kind)) {
      Enqueue(*owner);
    }
  };
  h->add = [enqueue_owner](const api::ObjectPtr& obj, bool) { enqueue_owner(obj); };
  h->update = [enqueue_owner](const api::ObjectPtr& old_obj, const api::ObjectPtr& obj) {
    // An owner change (adoption, release) concerns both the old and the new owner.
    enqueue_owner(old_obj);
    enqueue_owner(obj);
  };
  h->del = [enqueue_owner](const DeletedObject& d) { enqueue_owner(d.object); };
  return h;
}

ReconcileResult Controller::ReconcileGuarded(const api::ObjectKey& key, std::stop_token stop) {
  try {
    return reconcile_(key, std::move(stop));
  } catch (const std::exception& e) {
    std::lock_guard lock(stats_mu_);
    ++stats_.panics;
    return ReconcileResult::Error(
        util::Internal(std::string("reconciler threw: ") + e.what()).WithReason("Panic"));
  } catch (...) {
    std::lock_guard lock(stats_mu_);
    ++stats_.panics;
    return ReconcileResult::Error(util::Internal("reconciler threw").WithReason("Panic"));
  }
}

void Controller::HandleResult(const api::ObjectKey& key, const ReconcileResult& result) {
  // Counted once the decision below has been carried out, so that a reader of stats() sees the
  // queue in its new state.
  struct CountOnExit {
    Controller* c;
    const ReconcileResult& r;
    ~CountOnExit() {
      std::lock_guard lock(c->stats_mu_);
      ++c->stats_.reconciles;
      if (!r.error.ok()) ++c->stats_.errors;
      if (!r.error.ok() && r.terminal) ++c->stats_.terminal_errors;
      if (r.error.ok() && r.requeue_after.count() > 0) ++c->stats_.requeue_after;
    }
  } count_on_exit{this, result};
  if (!result.error.ok()) {
    if (result.terminal) {
      // Retrying cannot help; the object's owner has to change something. Say so on the object.
      queue_.Forget(key);
      spdlog::error("{}: reconcile of {} failed for good: {}", name_, key.ToString(),
                    result.error.ToString());
      if (recorder_ != nullptr) {
        api::ObjectPtr obj = lookup_ ? lookup_(key) : nullptr;
        if (obj != nullptr) {
          recorder_->Event(*obj, kEventTypeWarning, "ReconcileError", result.error.message());
        }
      }
      return;
    }
    spdlog::warn("{}: reconcile of {} failed (retry {}): {}", name_, key.ToString(),
                 queue_.NumRequeues(key) + 1, result.error.ToString());
    queue_.AddRateLimited(key);
    return;
  }
  if (result.requeue_after.count() > 0) {
    // A timed re-check is not a failure: reset the backoff, then come back at the given time.
    queue_.Forget(key);
    queue_.AddAfter(key, result.requeue_after);
    return;
  }
  if (result.requeue) {
    queue_.AddRateLimited(key);
    return;
  }
  queue_.Forget(key);
}

void Controller::Worker(std::stop_token stop) {
  while (std::optional<api::ObjectKey> key = queue_.Get()) {
    if (stop.stop_requested()) {
      // Shutting down: hand queued keys back without starting new work.
      queue_.Done(*key);
      continue;
    }
    ReconcileResult result = ReconcileGuarded(*key, stop);
    if (!stop.stop_requested()) HandleResult(*key, result);
    queue_.Done(*key);
  }
}

void Controller::Run(std::stop_token stop) {
  std::stop_callback shutdown(stop, [this] { queue_.ShutDown(); });
  for (const SharedInformer* informer : wait_for_sync_) {
    if (!informer->WaitForCacheSync(stop)) {
      if (!stop.stop_requested()) {
        spdlog::error("{}: cache of {} never synced; not starting", name_, informer->name());
      }
      return;
    }
  }
  std::jthread delay_loop([this](std::stop_token st) { queue_.Run(st); });
  std::vector<std::jthread> workers;
  workers.reserve(workers_);
  for (int i = 0; i < workers_; ++i) {
    workers.emplace_back([this, stop] {
      util::SetThreadName(name_);  // "replicaset", "deployment", ...
      Worker(stop);
    });
  }
  // Workers return once the queue has shut down (the stop callback above) and is drained.
  for (std::jthread& w : workers) w.join();
  delay_loop.request_stop();
  delay_loop.join();
}

}  // namespace converge::client
