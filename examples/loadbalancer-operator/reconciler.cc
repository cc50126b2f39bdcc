#include "reconciler.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"
#include "util/time_format.h"

namespace lboperator {

using Action = Plan::Action;

Reconciler::Reconciler(ReconcilerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()) {}

void Reconciler::Event(const api::Object& obj, std::string_view type, std::string_view reason,
                       std::string message) {
  if (options_.recorder != nullptr) options_.recorder->Event(obj, type, reason, message);
}

CloudObservation Reconciler::Observe(const api::Object& obj, std::stop_token stop) {
  CloudObservation o;
  util::StatusOr<std::vector<ExternalLoadBalancer>> found =
      options_.cloud->ListByTag(kTagUid, std::string(obj.uid()), stop);
  if (found.ok()) {
    o.found = std::move(*found);
  } else {
    o.error = found.status();
  }
  return o;
}

client::ReconcileResult Reconciler::Reconcile(const api::ObjectKey& key, std::stop_token stop) {
  Snapshot s;
  s.object = options_.cache->Get(key);
  if (s.object == nullptr) return client::ReconcileResult::Done();
  s.now = util::FormatRfc3339(clock_->WallNow());
  // Nothing to look up for an object that is going and holds no finalizer of ours.
  if (s.object->HasFinalizer(kFinalizer) || !s.object->being_deleted()) {
    s.cloud = Observe(*s.object, stop);
  }
  const std::string name = key.ToString();

  for (int step = 0; step < kMaxSteps; ++step) {
    if (stop.stop_requested()) return client::ReconcileResult::Error(util::Cancelled("stopping"));
    Plan plan = Decide(s, options_.decide);
    const api::Object& obj = *s.object;
    switch (plan.action) {
      case Action::kNothing:
        if (plan.error.code() == util::Code::kInvalidArgument) {
          return client::ReconcileResult::Terminal(plan.error);
        }
        if (!plan.error.ok()) return client::ReconcileResult::Error(plan.error);
        if (plan.requeue_after.count() > 0) {
          return client::ReconcileResult::RequeueAfter(plan.requeue_after);
        }
        return client::ReconcileResult::Done();

      case Action::kAddFinalizer:
      case Action::kRemoveFinalizer: {
        api::Object updated = obj;
        if (plan.action == Action::kAddFinalizer) {
          updated.AddFinalizer(kFinalizer);
        } else {
          updated.RemoveFinalizer(kFinalizer);
        }
        util::StatusOr<api::Object> r =
            options_.client->Update(kLoadBalancers, updated, {.stop = stop});
        if (plan.action == Action::kRemoveFinalizer && client::IsNotFound(r.status())) {
          return client::ReconcileResult::Done();
        }
        if (!r.ok()) return client::ReconcileResult::Error(r.status());
        spdlog::info("{}: {} finalizer ({})", name,
                     plan.action == Action::kAddFinalizer ? "added" : "removed", plan.why);
        if (plan.action == Action::kRemoveFinalizer) return client::ReconcileResult::Done();
        s.object = std::make_shared<const api::Object>(std::move(*r));
        break;
      }

      case Action::kCreate: {
        util::StatusOr<ExternalLoadBalancer> lb = options_.cloud->Create(plan.create, stop);
        if (!lb.ok()) {
          if (lb.status().code() == util::Code::kDeadlineExceeded) {
            // Performed or not, we cannot tell: the next attempt looks it up by tag first.
            spdlog::warn("{}: create of {} timed out: outcome unknown, will look it up", name,
                         plan.create.name);
          } else {
            spdlog::warn("{}: create failed: {}", name, lb.status().ToString());
          }
          s.cloud = {.error = lb.status()};
          break;  // decide again: the status says why, then the error brings backoff
        }
        spdlog::info("{}: created load balancer {} ({})", name, lb->id, plan.why);
        Event(obj, client::kEventTypeNormal, "CreatedLoadBalancer",
              "created cloud load balancer " + lb->id);
        s.cloud = {.found = {std::move(*lb)}};
        break;
      }

      case Action::kUpdatePorts: {
        util::StatusOr<ExternalLoadBalancer> lb =
            options_.cloud->UpdatePorts(plan.target_id, plan.ports, stop);
        if (client::IsNotFound(lb.status())) {
          s.cloud = Observe(obj, stop);  // gone meanwhile: look again
          break;
        }
        if (!lb.ok()) {
          s.cloud = {.error = lb.status()};
          break;
        }
        spdlog::info("{}: updated ports of {}", name, lb->id);
        for (ExternalLoadBalancer& f : s.cloud.found) {
          if (f.id == lb->id) f = *lb;
        }
        break;
      }

      case Action::kDelete: {
        util::Status d = options_.cloud->Delete(plan.target_id, stop);
        if (!d.ok() && !client::IsNotFound(d)) {
          spdlog::warn("{}: delete of {} failed: {}", name, plan.target_id, d.ToString());
          s.cloud = {.error = d};
          break;
        }
        spdlog::info("{}: deleted load balancer {} ({})", name, plan.target_id, plan.why);
        Event(obj, client::kEventTypeNormal, "DeletedLoadBalancer",
              "deleted cloud load balancer " + plan.target_id + " (" + plan.why + ")");
        std::erase_if(s.cloud.found,
                      [&](const ExternalLoadBalancer& f) { return f.id == plan.target_id; });
        break;
      }

      case Action::kUpdateStatus: {
        api::Object updated = obj;
        updated.mutable_doc()["status"] = StatusToJson(plan.status);
        util::StatusOr<api::Object> r =
            options_.client->UpdateStatus(kLoadBalancers, updated, {.stop = stop});
        if (!r.ok()) {
          // A conflict means the cache was stale: retry from fresher state. Whatever the
          // cloud error was, it is retried too.
          return client::ReconcileResult::Error(r.status());
        }
        const Condition* ready = FindCondition(plan.status, "Ready");
        spdlog::info("{}: status Ready={} ({})", name, ready != nullptr ? ready->status : "",
                     ready != nullptr ? ready->reason : "");
        s.object = std::make_shared<const api::Object>(std::move(*r));
        break;
      }
    }
  }
  // More steps remain (e.g. several duplicates to delete): come back soon, rate limited.
  return client::ReconcileResult::Requeue();
}

}  // namespace lboperator
