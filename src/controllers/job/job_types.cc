#include "controllers/job/job_types.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "util/time_format.h"

namespace converge::controllers::job {

namespace json = boost::json;

namespace {

std::optional<int64_t> OptInt(const json::object& o, std::initializer_list<std::string_view> path) {
  api::View v = api::Find(o, path);
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  return std::nullopt;
}

std::optional<int> ParseIndex(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  // Upstream rejects leading zeros ("01").
  if (s.size() > 1 && s[0] == '0') return std::nullopt;
  return v;
}

int PhaseRank(std::string_view phase) {
  if (phase == "Pending") return 0;
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 3;
}

}  // namespace

JobSpec ParseJobSpec(const api::Object& job) {
  JobSpec s;
  const json::object& d = job.doc();
  s.parallelism = static_cast<int32_t>(OptInt(d, {"spec", "parallelism"}).value_or(1));
  if (auto c = OptInt(d, {"spec", "completions"})) s.completions = static_cast<int32_t>(*c);
  s.backoff_limit = static_cast<int32_t>(OptInt(d, {"spec", "backoffLimit"}).value_or(6));
  s.active_deadline_seconds = OptInt(d, {"spec", "activeDeadlineSeconds"});
  s.ttl_seconds_after_finished = OptInt(d, {"spec", "ttlSecondsAfterFinished"});
  s.indexed = api::FindString(d, {"spec", "completionMode"}) == "Indexed";
  s.suspend = api::FindBool(d, {"spec", "suspend"});
  s.only_replace_failed = api::FindString(d, {"spec", "podReplacementPolicy"}) == "Failed" ||
                          api::Find(d, {"spec", "podFailurePolicy"}) != nullptr;
  s.restart_policy = std::string(api::FindString(d, {"spec", "template", "spec", "restartPolicy"}));
  return s;
}

PodInfo ParsePod(const api::ObjectPtr& pod) {
  PodInfo p;
  p.pod = pod;
  const json::object& d = pod->doc();
  p.name = std::string(pod->name());
  p.uid = std::string(pod->uid());
  p.phase = std::string(api::FindString(d, {"status", "phase"}));
  p.deleting = pod->being_deleted();
  p.has_finalizer = pod->HasFinalizer(kTrackingFinalizer);
  p.assigned = !api::FindString(d, {"spec", "nodeName"}).empty();
  p.creation_timestamp = std::string(pod->creation_timestamp());
  if (auto ix = pod->annotation(kCompletionIndexAnnotation)) {
    p.index = ParseIndex(*ix).value_or(-1);
  }
  std::optional<util::Clock::WallTime> finished;
  std::optional<util::Clock::WallTime> ready_false;
  if (api::ArrayView conds = api::FindArray(d, {"status", "conditions"})) {
    for (const api::View c : *conds) {
      if (!c.is_object()) continue;
      const api::ObjectView co = c.get_object();
      if (api::Object::GetString(co, "type") != "Ready") continue;
      std::string_view st = api::Object::GetString(co, "status");
      p.ready = st == "True";
      if (st == "False") {
        ready_false = util::ParseRfc3339(api::Object::GetString(co, "lastTransitionTime"));
      }
    }
  }
  for (std::string_view list : {"initContainerStatuses", "containerStatuses"}) {
    api::ArrayView statuses = api::FindArray(d, {"status", list});
    if (statuses == nullptr) continue;
    for (const api::View cs : *statuses) {
      if (!cs.is_object()) continue;
      p.restarts += static_cast<int32_t>(api::FindInt(cs.get_object(), {"restartCount"}));
      std::string_view at = api::FindString(cs.get_object(), {"state", "terminated", "finishedAt"});
      if (auto t = util::ParseRfc3339(at); t && (!finished || *t > *finished)) finished = *t;
    }
  }
  if (!finished) finished = ready_false;
  if (!finished && p.deleting) finished = util::ParseRfc3339(pod->deletion_timestamp());
  if (!finished) finished = util::ParseRfc3339(p.creation_timestamp);
  p.finished_at = finished.value_or(util::Clock::WallTime{});
  return p;
}

bool IsActive(const PodInfo& p) {
  return p.phase != "Succeeded" && p.phase != "Failed" && !p.deleting;
}

bool IsTerminating(const PodInfo& p) {
  return p.deleting && p.phase != "Succeeded" && p.phase != "Failed";
}

bool IsFailed(const PodInfo& p, const JobSpec& spec) {
  if (p.phase == "Failed") return true;
  if (spec.only_replace_failed) return false;
  return p.deleting && p.phase != "Succeeded";
}

bool DeleteFirst(const PodInfo& a, const PodInfo& b) {
  // Newer first: a later creation timestamp sorts earlier (RFC 3339 strings order by time).
  return std::make_tuple(a.assigned, PhaseRank(a.phase), a.ready, -a.restarts,
                         b.creation_timestamp) < std::make_tuple(b.assigned, PhaseRank(b.phase),
                                                                 b.ready, -b.restarts,
                                                                 a.creation_timestamp);
}

OrderedIntervals OrderedIntervals::Parse(std::string_view s, int completions) {
  OrderedIntervals out;
  size_t start = 0;
  while (start < s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    std::string_view part = s.substr(start, comma - start);
    start = comma + 1;
    size_t dash = part.find('-');
    std::optional<int> first = ParseIndex(part.substr(0, dash));
    std::optional<int> last =
        dash == std::string_view::npos ? first : ParseIndex(part.substr(dash + 1));
    if (!first || !last || *last < *first || *first >= completions) continue;
    Interval iv{*first, std::min(*last, completions - 1)};
    if (!out.intervals_.empty() && out.intervals_.back().last + 1 >= iv.first) {
      out.intervals_.back().last = std::max(out.intervals_.back().last, iv.last);
    } else {
      out.intervals_.push_back(iv);
    }
  }
  return out;
}

OrderedIntervals OrderedIntervals::WithOrderedIndexes(const std::vector<int>& indexes) const {
  std::vector<Interval> all = intervals_;
  for (int ix : indexes) all.push_back({ix, ix});
  std::sort(all.begin(), all.end(),
            [](const Interval& a, const Interval& b) { return a.first < b.first; });
  OrderedIntervals out;
  for (const Interval& iv : all) {
    if (!out.intervals_.empty() && out.intervals_.back().last + 1 >= iv.first) {
      out.intervals_.back().last = std::max(out.intervals_.back().last, iv.last);
    } else {
      out.intervals_.push_back(iv);
    }
  }
  return out;
}

bool OrderedIntervals::Has(int ix) const {
  for (const Interval& iv : intervals_) {
    if (ix >= iv.first && ix <= iv.last) return true;
  }
  return false;
}

int OrderedIntervals::Total() const {
  int n = 0;
  for (const Interval& iv : intervals_) n += iv.last - iv.first + 1;
  return n;
}

std::string OrderedIntervals::ToString() const {
  std::string out;
  for (const Interval& iv : intervals_) {
    if (!out.empty()) out += ",";
    out += std::to_string(iv.first);
    if (iv.last > iv.first) out += (iv.last == iv.first + 1 ? "," : "-") + std::to_string(iv.last);
  }
  return out;
}

}  // namespace converge::controllers::job
