#include "scheduler/taints.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "api/object.h"

namespace converge::scheduler {

namespace json = boost::json;

bool Toleration::ToleratesTaint(const Taint& taint) const {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (op.empty() || op == "Equal") return value == taint.value;
  return op == "Exists";
}

std::vector<Taint> ParseTaints(api::ArrayView taints) {
  std::vector<Taint> out;
  out.reserve(taints.size());
  for (api::View t : *taints) {
    if (!t.is_object()) continue;
    api::ObjectView o = t.as_object();
    out.push_back({std::string(api::FindString(o, {"key"})),
                   std::string(api::FindString(o, {"value"})),
                   std::string(api::FindString(o, {"effect"}))});
  }
  return out;
}

std::vector<Toleration> ParseTolerations(api::ArrayView tolerations) {
  std::vector<Toleration> out;
  out.reserve(tolerations.size());
  for (api::View t : *tolerations) {
    if (!t.is_object()) continue;
    api::ObjectView o = t.as_object();
    Toleration tol{std::string(api::FindString(o, {"key"})),
                   std::string(api::FindString(o, {"operator"})),
                   std::string(api::FindString(o, {"value"})),
                   std::string(api::FindString(o, {"effect"})), std::nullopt};
    tol.toleration_seconds = api::Find(o, {"tolerationSeconds"}).if_int64();
    out.push_back(std::move(tol));
  }
  return out;
}

TolerationsPtr SharedTolerations(api::ArrayView tolerations) {
  static const TolerationsPtr kNone = std::make_shared<const std::vector<Toleration>>();
  if (tolerations.empty()) return kNone;
  // Keyed by the array's JSON: equal text, equal list. Entries nobody holds any more are dropped
  // whenever the table has doubled since the last sweep.
  static std::mutex mu;
  static std::unordered_map<std::string, std::weak_ptr<const std::vector<Toleration>>> shared;
  static size_t sweep_at = 64;
  std::string key = api::Serialize(tolerations);
  std::lock_guard lock(mu);
  std::weak_ptr<const std::vector<Toleration>>& slot = shared[key];
  if (TolerationsPtr held = slot.lock()) return held;
  auto parsed = std::make_shared<const std::vector<Toleration>>(ParseTolerations(tolerations));
  slot = parsed;
  if (shared.size() >= sweep_at) {
    std::erase_if(shared, [](const auto& kv) { return kv.second.expired(); });
    sweep_at = std::max<size_t>(64, 2 * shared.size());
  }
  return parsed;
}

bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (t.ToleratesTaint(taint)) return true;
  }
  return false;
}

const Taint* FindUntoleratedScheduleTaint(const std::vector<Taint>& taints,
                                          const std::vector<Toleration>& tolerations) {
  for (const Taint& taint : taints) {
    if (taint.effect != kEffectNoSchedule && taint.effect != kEffectNoExecute) continue;
    if (!TolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

}  // namespace converge::scheduler
