#include "mirror.h"

#include "client/api_errors.h"

namespace mirror {
namespace json = boost::json;

namespace {

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};

bool Owned(const api::Object& copy, const std::string& source_ns) {
  std::optional<std::string_view> v = copy.label(kSourceLabel);
  return v && *v == source_ns;
}

const json::value* Field(const api::Object& o, std::string_view key) {
  return o.doc().if_contains(key);
}

bool SameContent(const api::Object& a, const api::Object& b) {
  for (std::string_view key : {"data", "binaryData"}) {
    const json::value* x = Field(a, key);
    const json::value* y = Field(b, key);
    if ((x == nullptr) != (y == nullptr)) return false;
    if (x != nullptr && *x != *y) return false;
  }
  return true;
}

}  // namespace

Plan Decide(const api::ObjectPtr& source, const api::ObjectPtr& copy, const std::string& source_ns,
            const std::string& target_ns) {
  if (source == nullptr) {
    if (copy != nullptr && Owned(*copy, source_ns)) {
      return {Plan::Action::kDelete, *copy, "source deleted"};
    }
    return {};
  }
  api::Object desired;
  desired.SetGvk({"", "v1", "ConfigMap"});
  desired.set_namespace(target_ns);
  desired.set_name(source->name());
  desired.SetLabel(kSourceLabel, source_ns);
  for (std::string_view key : {"data", "binaryData"}) {
    if (const json::value* v = Field(*source, key)) desired.mutable_doc()[key] = *v;
  }
  if (copy == nullptr) return {Plan::Action::kCreate, std::move(desired), "copy missing"};
  if (!Owned(*copy, source_ns)) return {};  // someone else's ConfigMap: leave it alone
  if (SameContent(*copy, desired)) return {};
  // Conditional on the version we decided from: a concurrent change makes the update fail with
  // a conflict, and the retry decides again from fresher state.
  desired.set_resource_version(copy->resource_version());
  return {Plan::Action::kUpdate, std::move(desired), "content differs"};
}

std::optional<api::ObjectKey> MirrorReconciler::KeyFor(const api::Object& cm) const {
  if (cm.namespace_() == options_.source_ns) return cm.key();
  if (cm.namespace_() == options_.target_ns && Owned(cm, options_.source_ns)) {
    return api::ObjectKey{options_.source_ns, std::string(cm.name())};
  }
  return std::nullopt;
}

client::ReconcileResult MirrorReconciler::Reconcile(const api::ObjectKey& key,
                                                    std::stop_token stop) {
  // Read the current state from the cache (level-based: not from the event that woke us).
  api::ObjectPtr source = options_.cache->Get(key);
  api::ObjectPtr copy = options_.cache->Get({options_.target_ns, key.name});
  Plan plan = Decide(source, copy, options_.source_ns, options_.target_ns);

  converge::util::Status s;
  switch (plan.action) {
    case Plan::Action::kNothing: return client::ReconcileResult::Done();
    case Plan::Action::kCreate:
      s = options_.client->Create(kConfigMaps, options_.target_ns, plan.desired, {.stop = stop})
              .status();
      // The cache may lag behind our own earlier create: the copy is there, all is well.
      if (client::IsAlreadyExists(s)) return client::ReconcileResult::Done();
      break;
    case Plan::Action::kUpdate:
      s = options_.client->Update(kConfigMaps, plan.desired, {.stop = stop}).status();
      break;
    case Plan::Action::kDelete:
      s = options_.client->Delete(
          kConfigMaps, plan.desired.key(),
          {.precondition_uid = std::string(plan.desired.uid()), .stop = stop});
      if (client::IsNotFound(s)) return client::ReconcileResult::Done();
      break;
  }
  if (!s.ok()) return client::ReconcileResult::Error(s);  // retried with backoff
  if (options_.recorder != nullptr && source != nullptr) {
    options_.recorder->Event(*source, client::kEventTypeNormal, "Mirrored",
                             "copied to namespace " + options_.target_ns + " (" + plan.why + ")");
  }
  return client::ReconcileResult::Done();
}

}  // namespace mirror
