#include "controllers/common/pod_util.h"

#include <algorithm>

#include "util/time_format.h"

namespace converge::controllers {

namespace json = boost::json;

std::string_view PodPhase(const api::Object& pod) {
  return api::FindString(pod.view(), {"status", "phase"});
}

api::ObjectView GetPodReadyCondition(const api::Object& pod) {
  for (const api::View c : api::FindArray(pod.view(), {"status", "conditions"})) {
    if (api::GetString(c.if_object(), "type") == "Ready") return c.if_object();
  }
  return {};
}

bool IsPodReady(const api::Object& pod) {
  return api::GetString(GetPodReadyCondition(pod), "status") == "True";
}

std::optional<util::Clock::WallTime> PodReadyTime(const api::Object& pod) {
  if (!IsPodReady(pod)) return std::nullopt;
  return util::ParseRfc3339(api::GetString(GetPodReadyCondition(pod), "lastTransitionTime"));
}

bool IsPodAvailable(const api::Object& pod, int64_t min_ready_seconds, util::Clock::WallTime now) {
  if (!IsPodReady(pod)) return false;
  if (min_ready_seconds <= 0) return true;
  std::optional<util::Clock::WallTime> since = PodReadyTime(pod);
  return since.has_value() && *since + std::chrono::seconds(min_ready_seconds) < now;
}

std::optional<util::Clock::WallTime> PodAvailableAt(const api::Object& pod,
                                                    int64_t min_ready_seconds) {
  std::optional<util::Clock::WallTime> since = PodReadyTime(pod);
  if (!since) return std::nullopt;
  return *since + std::chrono::seconds(std::max<int64_t>(0, min_ready_seconds));
}

bool IsPodActive(const api::Object& pod) {
  std::string_view phase = PodPhase(pod);
  return phase != "Succeeded" && phase != "Failed" && !pod.being_deleted();
}

std::vector<api::ObjectPtr> FilterActivePods(const std::vector<api::ObjectPtr>& pods) {
  std::vector<api::ObjectPtr> out;
  out.reserve(pods.size());
  for (const api::ObjectPtr& p : pods) {
    if (p != nullptr && IsPodActive(*p)) out.push_back(p);
  }
  return out;
}

int64_t MaxContainerRestarts(const api::Object& pod) {
  int64_t max = 0;
  api::ArrayView statuses = api::FindArray(pod.view(), {"status", "containerStatuses"});
  if (statuses == nullptr) return 0;
  for (const api::View s : *statuses) {
    if (s.is_object()) max = std::max(max, api::FindInt(s.as_object(), {"restartCount"}));
  }
  return max;
}

std::optional<util::Clock::WallTime> CreationTime(const api::Object& obj) {
  return util::ParseRfc3339(obj.creation_timestamp());
}

}  // namespace converge::controllers
