#include "decide.h"

namespace lboperator {

namespace {

using Action = Plan::Action;

constexpr const char* kReady = "Ready";

// `status` with its Ready condition set. lastTransitionTime moves only when the condition's
// status flips (upstream's meta.SetStatusCondition), so re-deciding never rewrites it.
LoadBalancerStatus WithReady(LoadBalancerStatus status, std::string_view ready,
                             std::string_view reason, std::string message, int64_t generation,
                             const std::string& now) {
  Condition c{.type = kReady,
              .status = std::string(ready),
              .reason = std::string(reason),
              .message = std::move(message),
              .last_transition_time = now,
              .observed_generation = generation};
  for (Condition& existing : status.conditions) {
    if (existing.type != kReady) continue;
    if (existing.status == c.status) c.last_transition_time = existing.last_transition_time;
    existing = std::move(c);
    return status;
  }
  status.conditions.push_back(std::move(c));
  return status;
}

// The status while the cloud cannot be reached: the last known id and address stay (they are
// still the best knowledge), Ready turns False with a stable message per kind of failure (a
// message that changed with every error would rewrite the status on every retry).
Plan CloudUnavailable(const api::Object& obj, const LoadBalancerStatus& current,
                      const Snapshot& s) {
  const int64_t gen = obj.generation();
  std::string message = s.cloud.error.code() == util::Code::kDeadlineExceeded
                            ? "the cloud API did not answer in time; retrying with backoff"
                            : "the cloud API is unavailable; retrying with backoff";
  LoadBalancerStatus desired = current;
  desired.observed_generation = gen;
  desired = WithReady(std::move(desired), "False", kReasonCloudUnavailable, std::move(message), gen,
                      s.now);
  Plan p;
  p.error = util::Unavailable(s.cloud.error.message());
  if (desired != current) {
    p.action = Action::kUpdateStatus;
    p.status = std::move(desired);
    p.why = "cloud unavailable";
  }
  return p;
}

Plan Delete(const ExternalLoadBalancer& lb, std::string why) {
  Plan p;
  p.action = Action::kDelete;
  p.target_id = lb.id;
  p.why = std::move(why);
  return p;
}

}  // namespace

CreateRequest DesiredCreate(const api::Object& obj, const LoadBalancerSpec& spec) {
  CreateRequest r;
  r.name = std::string(obj.namespace_()) + "-" + std::string(obj.name());
  r.ports = spec.ports;
  r.tags = spec.tags;
  r.tags[kTagUid] = std::string(obj.uid());
  r.tags[kTagObject] = std::string(obj.namespace_()) + "/" + std::string(obj.name());
  r.tags[kTagManagedBy] = kManagedByValue;
  r.idempotency_key = "lb-" + std::string(obj.uid());
  return r;
}

Plan Decide(const Snapshot& s, const DecideOptions& options) {
  if (s.object == nullptr) return {};
  const api::Object& obj = *s.object;
  const LoadBalancerStatus current = ParseStatus(obj);
  const int64_t gen = obj.generation();
  const std::vector<ExternalLoadBalancer>& found = s.cloud.found;

  if (obj.being_deleted()) {
    if (!obj.HasFinalizer(kFinalizer)) return {};
    if (!s.cloud.error.ok()) return CloudUnavailable(obj, current, s);
    if (!found.empty()) return Delete(found.front(), "object deleted");
    return {.action = Action::kRemoveFinalizer, .why = "cloud load balancer deleted"};
  }
  if (!obj.HasFinalizer(kFinalizer)) {
    return {.action = Action::kAddFinalizer, .why = "before anything exists in the cloud"};
  }
  if (!s.cloud.error.ok()) return CloudUnavailable(obj, current, s);

  util::StatusOr<LoadBalancerSpec> spec = ParseSpec(obj);
  if (!spec.ok()) {
    LoadBalancerStatus desired = current;
    desired.observed_generation = gen;
    desired = WithReady(std::move(desired), "False", kReasonInvalidSpec, spec.status().message(),
                        gen, s.now);
    Plan p;
    p.error = spec.status();
    if (desired != current) {
      p.action = Action::kUpdateStatus;
      p.status = std::move(desired);
      p.why = "invalid spec";
    }
    return p;
  }

  if (found.size() > 1) {
    // Keep the one the status names (users may already point at its address), else the oldest.
    size_t keep = 0;
    for (size_t i = 0; i < found.size(); ++i) {
      if (found[i].id == current.external_id) keep = i;
    }
    return Delete(found[keep == 0 ? 1 : 0], "duplicate load balancer for one object");
  }
  if (found.empty()) {
    Plan p;
    p.action = Action::kCreate;
    p.create = DesiredCreate(obj, *spec);
    p.why = current.external_id.empty() ? "no load balancer yet"
                                        : "load balancer " + current.external_id + " is gone";
    return p;
  }

  const ExternalLoadBalancer& lb = found.front();
  if (lb.ports != spec->ports) {
    return {.action = Action::kUpdatePorts,
            .target_id = lb.id,
            .ports = spec->ports,
            .why = "ports changed"};
  }

  const bool active = lb.state == "active";
  LoadBalancerStatus desired = current;
  desired.external_id = lb.id;
  desired.address = lb.address;
  desired.observed_generation = gen;
  desired = active ? WithReady(std::move(desired), "True", kReasonAvailable,
                               "load balancer " + lb.id + " serves " + lb.address, gen, s.now)
                   : WithReady(std::move(desired), "False", kReasonProvisioning,
                               "load balancer " + lb.id + " is " + lb.state, gen, s.now);
  if (desired != current) {
    return {.action = Action::kUpdateStatus, .status = std::move(desired), .why = "status"};
  }
  return {.requeue_after = active ? options.resync : options.provisioning_poll};
}

bool NeedsReconcile(const api::Object& old_obj, const api::Object& new_obj) {
  if (old_obj.uid() != new_obj.uid() || old_obj.generation() != new_obj.generation() ||
      old_obj.deletion_timestamp() != new_obj.deletion_timestamp()) {
    return true;
  }
  const boost::json::array* a = api::FindArray(old_obj.doc(), {"metadata", "finalizers"});
  const boost::json::array* b = api::FindArray(new_obj.doc(), {"metadata", "finalizers"});
  if ((a == nullptr) != (b == nullptr)) return true;
  return a != nullptr && *a != *b;
}

}  // namespace lboperator
