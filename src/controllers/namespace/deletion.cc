#include "controllers/namespace/deletion.h"

#include <algorithm>
#include <set>

#include "util/time_format.h"

namespace converge::controllers::namespace_ {

namespace json = boost::json;

namespace {

struct Fine {
  std::string_view type;
  std::string_view reason;
  std::string_view message;
};

// upstream's okReasons / okMessages, in conditionTypes order.
constexpr Fine kFine[] = {
    {kDiscoveryFailure, "ResourcesDiscovered", "All resources successfully discovered"},
    {kGroupVersionParsingFailure, "ParsedGroupVersions",
     "All legacy kube types successfully parsed"},
    {kContentFailure, "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"},
    {kContentRemaining, "ContentRemoved", "All content successfully removed"},
    {kFinalizersRemaining, "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
};

std::string Join(std::vector<std::string> parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// Go's %v of a GroupVersionResource: "{group version resource}".
std::string GoGvr(const api::GroupVersionResource& gvr) {
  return "{" + gvr.group + " " + gvr.version + " " + gvr.resource + "}";
}

}  // namespace

NamespaceStep DecideStep(const api::Object& ns) {
  if (!ns.being_deleted()) return NamespaceStep::kIgnore;
  if (api::FindString(ns.view(), {"status", "phase"}) != "Terminating") {
    return NamespaceStep::kSetTerminating;
  }
  api::ArrayView fin = api::FindArray(ns.view(), {"spec", "finalizers"});
  if (fin == nullptr || fin->empty()) return NamespaceStep::kFinalized;
  return NamespaceStep::kDeleteContent;
}

void PodTerminationEstimate::Add(const api::Object& pod) {
  std::string_view phase = api::FindString(pod.view(), {"status", "phase"});
  if (phase == "Succeeded" || phase == "Failed") return;
  api::View grace = api::Find(pod.view(), {"spec", "terminationGracePeriodSeconds"});
  if (grace != nullptr && grace->is_int64()) {
    longest_grace_seconds = std::max(longest_grace_seconds, grace->as_int64());
  }
}

int64_t PodTerminationEstimate::Seconds(util::Clock::WallTime namespace_deleted_at,
                                        util::Clock::WallTime now) const {
  if (now - namespace_deleted_at >= std::chrono::seconds(longest_grace_seconds)) return 0;
  return longest_grace_seconds;
}

void RemainingContent::Add(const api::Object& item) {
  ++count;
  for (api::View f : item.finalizers()) {
    if (std::optional<std::string_view> s = f.if_string()) ++finalizers[std::string(*s)];
  }
}

ResourceResult SummarizeRemaining(const api::GroupVersionResource& gvr, std::string_view ns,
                                  const RemainingContent& remaining, int64_t estimate) {
  ResourceResult r;
  r.gvr = gvr;
  if (remaining.count == 0) return r;
  r.num_remaining = remaining.count;
  r.finalizers_remaining = remaining.finalizers;
  if (estimate != 0) {
    r.estimate_seconds = estimate;
    return r;
  }
  if (!r.finalizers_remaining.empty()) {
    // Finalizers are a normal reason to wait: give them (and the garbage collector) time.
    r.estimate_seconds = kFinalizerEstimateSeconds;
    return r;
  }
  r.finalizers_remaining.clear();
  r.error =
      "unexpected items still remain in namespace: " + std::string(ns) + " for gvr: " + GoGvr(gvr);
  return r;
}

ContentOutcome Summarize(const ContentReport& report) {
  ContentOutcome out;
  if (!report.discovery_error.empty()) {
    out.errors.push_back(report.discovery_error);
    out.failing.push_back(
        {std::string(kDiscoveryFailure), "True", "DiscoveryFailed", report.discovery_error});
  }
  if (!report.group_version_error.empty()) {
    out.errors.push_back(report.group_version_error);
    out.failing.push_back({std::string(kGroupVersionParsingFailure), "True",
                           "GroupVersionParsingFailed", report.group_version_error});
  }
  std::vector<std::string> content_errors;
  std::vector<std::string> remaining_resources;
  std::map<std::string, int> finalizers;
  for (const ResourceResult& r : report.resources) {
    if (!r.error.empty()) {
      content_errors.push_back(r.error);
      out.errors.push_back(r.error);
    }
    out.estimate_seconds = std::max(out.estimate_seconds, r.estimate_seconds);
    if (r.num_remaining > 0) {
      remaining_resources.push_back(r.gvr.resource + "." + r.gvr.group + " has " +
                                    std::to_string(r.num_remaining) + " resource instances");
      for (const auto& [f, n] : r.finalizers_remaining) {
        if (n > 0) finalizers[f] += n;
      }
    }
  }
  if (!remaining_resources.empty()) {
    std::sort(remaining_resources.begin(), remaining_resources.end());
    out.failing.push_back({std::string(kContentRemaining), "True", "SomeResourcesRemain",
                           "Some resources are remaining: " + Join(remaining_resources, ", ")});
  }
  if (!finalizers.empty()) {
    std::vector<std::string> parts;
    for (const auto& [f, n] : finalizers) {
      parts.push_back(f + " in " + std::to_string(n) + " resource instances");
    }
    std::sort(parts.begin(), parts.end());
    out.failing.push_back(
        {std::string(kFinalizersRemaining), "True", "SomeFinalizersRemain",
         "Some content in the namespace has finalizers remaining: " + Join(parts, ", ")});
  }
  if (!content_errors.empty()) {
    std::sort(content_errors.begin(), content_errors.end());
    out.failing.push_back({std::string(kContentFailure), "True", "ContentDeletionFailed",
                           "Failed to delete all resource types, " +
                               std::to_string(content_errors.size()) +
                               " remaining: " + Join(content_errors, ", ")});
  }
  return out;
}

bool UpdateConditions(json::object& status, const std::vector<NamespaceCondition>& failing,
                      std::string_view now) {
  json::value& cv = status["conditions"];
  if (!cv.is_array()) cv = json::array();
  json::array& conditions = cv.as_array();
  bool changed = false;
  for (const Fine& fine : kFine) {
    NamespaceCondition want{std::string(fine.type), "False", std::string(fine.reason),
                            std::string(fine.message)};
    for (const NamespaceCondition& f : failing) {
      if (f.type == fine.type) want = f;
    }
    json::object* old = nullptr;
    for (json::value& c : conditions) {
      if (c.is_object() && api::Object::GetString(c.as_object(), "type") == fine.type) {
        old = &c.as_object();
      }
    }
    if (old == nullptr) {
      conditions.push_back(json::object{{"type", want.type},
                                        {"status", want.status},
                                        {"lastTransitionTime", now},
                                        {"reason", want.reason},
                                        {"message", want.message}});
      changed = true;
      continue;
    }
    if (api::Object::GetString(*old, "status") == want.status &&
        api::Object::GetString(*old, "reason") == want.reason &&
        api::Object::GetString(*old, "message") == want.message) {
      continue;
    }
    if (api::Object::GetString(*old, "status") != want.status) (*old)["lastTransitionTime"] = now;
    (*old)["status"] = want.status;
    (*old)["reason"] = want.reason;
    (*old)["message"] = want.message;
    changed = true;
  }
  return changed;
}

api::Object FinalizeRequest(const api::Object& ns, std::string_view token) {
  api::Object out = ns;
  std::set<std::string> rest;
  if (api::ArrayView fin = api::FindArray(ns.view(), {"spec", "finalizers"})) {
    for (api::View f : *fin) {
      if (f.is_string() && f.as_string() != token) rest.insert(std::string(f.as_string()));
    }
  }
  json::array list;
  for (const std::string& f : rest) list.push_back(json::value(f));
  api::EnsureObject(out.mutable_doc(), "spec")["finalizers"] = std::move(list);
  return out;
}

}  // namespace converge::controllers::namespace_
