// events.k8s.io/v1 Event strategy: the strict validation upstream applies to requests in this
// group (core/v1 events get the legacy rules only, see strategy_core.cc).
//
// Upstream validates the internal core.Event, so its field paths use the internal names
// ("involvedObject" for regarding, "message" for note, "count" for deprecatedCount, ...); they
// are kept here so that messages match.
//
// Upstream: pkg/apis/core/validation/events.go (ValidateEventCreate, ValidateEventUpdate).
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsInt;
using sv::Causes;

namespace {

const json::value* TopLevelField(const api::Object& o, std::string_view key) {
  return o.doc().if_contains(key);
}

Causes ValidateV1EventSeries(const api::Object& ev) {
  Causes out;
  const json::object* series = sv::AsObject(TopLevelField(ev, "series"));
  if (!series) return out;
  if (AsInt(series->if_contains("count")).value_or(0) < 2) {
    out.push_back(FieldInvalidString("series.count", "", "should be at least 2"));
  }
  if (sv::AsString(series->if_contains("lastObservedTime")).empty()) {
    out.push_back(FieldRequired("series.lastObservedTime"));
  }
  return out;
}

Causes ValidateEvent(const api::Object& ev) {
  Causes out;
  std::string_view ns = ev.namespace_();
  std::string_view regarding_ns = api::FindString(ev.doc(), {"regarding", "namespace"});
  // legacyValidateEvent for an event with eventTime (events.k8s.io/v1 requires it).
  if (regarding_ns.empty() && ns != "default" && ns != "kube-system") {
    out.push_back(FieldInvalidString("involvedObject.namespace", regarding_ns,
                                     "does not match event.namespace"));
  }
  std::string_view controller = sv::AsString(TopLevelField(ev, "reportingController"));
  if (controller.empty()) out.push_back(FieldRequired("reportingController"));
  sv::Append(out, sv::ValidateQualifiedNameField("reportingController", controller));
  auto bounded = [&](std::string_view path, std::string_view key, size_t limit, bool required) {
    std::string_view v = sv::AsString(TopLevelField(ev, key));
    if (required && v.empty()) out.push_back(FieldRequired(std::string(path)));
    if (v.size() > limit) {
      out.push_back(FieldInvalidString(
          std::string(path), "", "can have at most " + std::to_string(limit) + " characters"));
    }
  };
  bounded("reportingInstance", "reportingInstance", 128, true);
  bounded("action", "action", 128, true);
  bounded("reason", "reason", 128, true);
  bounded("message", "note", 1024, false);
  for (auto& m : IsDnsSubdomain(ns)) out.push_back(FieldInvalidString("namespace", ns, m));
  return out;
}

class EventsStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  std::vector<StatusCause> Validate(const api::Object& ev) const override {
    Causes out = ValidateEvent(ev);
    sv::Append(out, ValidateV1EventSeries(ev));
    if (sv::AsString(TopLevelField(ev, "eventTime")).empty())
      out.push_back(FieldRequired("eventTime"));
    std::string_view type = sv::AsString(TopLevelField(ev, "type"));
    if (type != "Normal" && type != "Warning") {
      out.push_back(FieldInvalidString("type", "", "has invalid value: " + std::string(type)));
    }
    for (auto [key, path] : {std::pair{"deprecatedFirstTimestamp", "firstTimestamp"},
                             std::pair{"deprecatedLastTimestamp", "lastTimestamp"}}) {
      if (!sv::AsString(TopLevelField(ev, key)).empty()) {
        out.push_back(FieldInvalidString(path, "", "needs to be unset"));
      }
    }
    if (AsInt(TopLevelField(ev, "deprecatedCount")).value_or(0) != 0) {
      out.push_back(FieldInvalidString("count", "", "needs to be unset"));
    }
    const json::object* src = sv::AsObject(TopLevelField(ev, "deprecatedSource"));
    if (src && (!api::Object::GetString(*src, "component").empty() ||
                !api::Object::GetString(*src, "host").empty())) {
      out.push_back(FieldInvalidString("source", "", "needs to be unset"));
    }
    return out;
  }

  std::vector<StatusCause> ValidateUpdate(const api::Object& ev,
                                          const api::Object& old) const override {
    Causes out = ValidateEvent(ev);
    const json::value* series = TopLevelField(ev, "series");
    const json::value* old_series = TopLevelField(old, "series");
    if (sv::IsSet(series) != sv::IsSet(old_series) ||
        (series && old_series && *series != *old_series)) {
      sv::Append(out, ValidateV1EventSeries(ev));
    }
    static const std::pair<std::string_view, std::string_view> kImmutable[] = {
        {"regarding", "involvedObject"},
        {"reason", "reason"},
        {"note", "message"},
        {"deprecatedSource", "source"},
        {"deprecatedFirstTimestamp", "firstTimestamp"},
        {"deprecatedLastTimestamp", "lastTimestamp"},
        {"deprecatedCount", "count"},
        {"type", "type"},
        {"eventTime", "eventTime"},
        {"action", "action"},
        {"related", "related"},
        {"reportingController", "reportingController"},
        {"reportingInstance", "reportingInstance"},
    };
    for (const auto& [key, path] : kImmutable) {
      const json::value* now = TopLevelField(ev, key);
      sv::Immutable(out, std::string(path), now, TopLevelField(old, key),
                    now ? json::serialize(*now) : std::string("null"));
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<const Strategy> MakeEventsStrategy(ResourceInfoPtr info) {
  if (info->gvr.group != "events.k8s.io" || info->gvr.resource != "events") return nullptr;
  return std::make_shared<EventsStrategy>(std::move(info));
}

}  // namespace converge::apiserver
