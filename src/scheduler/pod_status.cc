#include "scheduler/pod_status.h"

#include "util/time_format.h"

namespace converge::scheduler {

namespace json = boost::json;

std::optional<std::string> PodScheduledFalsePatch(const api::Object& pod, std::string_view reason,
                                                  std::string_view message,
                                                  const std::optional<std::string>& nominated_node,
                                                  util::Clock::WallTime now) {
  const json::object* old = nullptr;
  if (const json::array* conds = api::FindArray(pod.doc(), {"status", "conditions"})) {
    for (const json::value& c : *conds) {
      if (c.is_object() && api::FindString(c.get_object(), {"type"}) == "PodScheduled") {
        old = &c.get_object();
      }
    }
  }
  std::string transition = util::FormatRfc3339(now);
  bool nominated_same =
      !nominated_node ||
      *nominated_node == api::FindString(pod.doc(), {"status", "nominatedNodeName"});
  if (old) {
    bool same_status = api::FindString(*old, {"status"}) == "False";
    if (same_status) {
      transition = std::string(api::FindString(*old, {"lastTransitionTime"}));
      const json::value* probe = api::Find(*old, {"lastProbeTime"});
      bool probe_unset = !probe || probe->is_null();
      if (api::FindString(*old, {"reason"}) == reason &&
          api::FindString(*old, {"message"}) == message && probe_unset && nominated_same) {
        return std::nullopt;
      }
    }
  }
  json::object cond;
  cond["type"] = "PodScheduled";
  cond["status"] = "False";
  cond["lastProbeTime"] = nullptr;
  if (transition.empty()) {
    cond["lastTransitionTime"] = nullptr;
  } else {
    cond["lastTransitionTime"] = transition;
  }
  cond["reason"] = reason;
  cond["message"] = message;
  json::object status;
  status["conditions"] = json::array{std::move(cond)};
  if (nominated_node) {
    if (nominated_node->empty()) {
      status["nominatedNodeName"] = nullptr;
    } else {
      status["nominatedNodeName"] = *nominated_node;
    }
  }
  json::object patch;
  patch["metadata"] = json::object{{"uid", pod.uid()}};
  patch["status"] = std::move(status);
  return json::serialize(patch);
}

std::string TruncateMessage(std::string message) {
  constexpr size_t kMax = 1024;
  if (message.size() <= kMax) return message;
  message.resize(kMax - 3);
  message += "...";
  return message;
}

}  // namespace converge::scheduler
