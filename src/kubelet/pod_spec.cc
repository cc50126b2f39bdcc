#include "kubelet/pod_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/time_format.h"

namespace converge::kubelet {

namespace {

namespace json = boost::json;

std::optional<double> ParseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<Duration> ParseSeconds(std::string_view s) {
  std::optional<double> v = ParseNumber(s);
  if (!v || *v < 0 || *v > 1e9) return std::nullopt;
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(*v));
}

// The annotation for `field` of `container`: the container-specific key wins.
std::optional<std::string_view> Annotation(const api::Object& pod, std::string_view container,
                                           std::string_view field) {
  api::ObjectView ann = pod.annotations();
  if (!ann) return std::nullopt;
  std::string specific =
      std::string(container) + "." + std::string(kAnnotationDomain) + "/" + std::string(field);
  if (std::optional<std::string_view> v = ann.if_contains(specific).if_string()) return v;
  std::string general = std::string(kAnnotationDomain) + "/" + std::string(field);
  return ann.if_contains(general).if_string();
}

bool OwnedByJob(const api::Object& pod) {
  for (api::View r : pod.owner_references()) {
    api::ObjectView o = r.if_object();
    if (!o) continue;
    std::string_view api_version = api::Object::GetString(o, "apiVersion");
    if (api::Object::GetString(o, "kind") == "Job" && api_version.starts_with("batch/")) {
      return true;
    }
  }
  return false;
}

ContainerBehavior BehaviorFor(const api::Object& pod, api::ObjectView c, bool init,
                              bool job_owned) {
  std::string_view name = api::Object::GetString(c, "name");
  ContainerBehavior b;
  std::optional<int> exit_code;
  if (auto v = Annotation(pod, name, "exit-code")) {
    if (auto n = ParseNumber(*v); n && *n >= 0 && *n <= 255 && *n == std::floor(*n)) {
      exit_code = static_cast<int>(*n);
    }
  }
  if (auto v = Annotation(pod, name, "crash-after-seconds")) {
    if (auto d = ParseSeconds(*v)) {
      b.run_for = *d;
      b.exit_code = exit_code.value_or(1);
    }
  }
  if (auto v = Annotation(pod, name, "run-seconds")) {
    if (auto d = ParseSeconds(*v)) {
      b.run_for = *d;
      b.exit_code = exit_code.value_or(0);
    }
  }
  const bool sidecar = init && api::Object::GetString(c, "restartPolicy") == "Always";
  if (!b.run_for && ((init && !sidecar) || job_owned)) {
    b.run_for = std::chrono::seconds(1);
    b.exit_code = exit_code.value_or(0);
  } else if (!b.run_for && exit_code) {
    b.exit_code = *exit_code;
  }
  if (auto v = Annotation(pod, name, "readiness-delay-seconds")) {
    if (auto d = ParseSeconds(*v)) b.readiness_delay = *d;
  } else if (api::ObjectView probe = api::FindObject(c, {"readinessProbe"})) {
    b.readiness_delay =
        std::chrono::seconds(std::max<int64_t>(0, api::FindInt(probe, {"initialDelaySeconds"}, 0)));
  }
  if (auto v = Annotation(pod, name, "ignore-sigterm")) b.ignore_sigterm = *v == "true";
  if (auto v = Annotation(pod, name, "shutdown-seconds")) {
    if (auto d = ParseSeconds(*v)) b.shutdown_delay = *d;
  }
  if (auto v = Annotation(pod, name, "pull-seconds")) {
    if (auto d = ParseSeconds(*v)) b.pull_duration = *d;
  }
  if (auto v = Annotation(pod, name, "log-interval-seconds")) {
    if (auto d = ParseSeconds(*v); d && *d >= std::chrono::milliseconds(100)) b.log_interval = *d;
  }
  return b;
}

PullPolicy ParsePullPolicy(std::string_view s, std::string_view image) {
  if (s == "Always") return PullPolicy::kAlways;
  if (s == "Never") return PullPolicy::kNever;
  if (s == "IfNotPresent") return PullPolicy::kIfNotPresent;
  // Defaulting normally sets it; mirror it for objects that skipped defaulting.
  std::string_view last =
      image.substr(image.rfind('/') == std::string_view::npos ? 0 : image.rfind('/') + 1);
  if (last.find('@') != std::string_view::npos) return PullPolicy::kIfNotPresent;
  size_t colon = last.find(':');
  if (colon == std::string_view::npos || last.substr(colon + 1) == "latest") {
    return PullPolicy::kAlways;
  }
  return PullPolicy::kIfNotPresent;
}

struct Requests {
  int64_t cpu_milli = 0;
  int64_t memory_milli = 0;
};

Requests ContainerRequests(api::ObjectView c) {
  Requests r;
  api::ObjectView req = api::FindObject(c, {"resources", "requests"});
  if (!req) req = api::FindObject(c, {"resources", "limits"});  // limits default requests
  if (!req) return r;
  if (std::optional<std::string_view> v = req.if_contains("cpu").if_string()) {
    r.cpu_milli = ParseQuantityMilli(*v).value_or(0);
  }
  if (std::optional<std::string_view> v = req.if_contains("memory").if_string()) {
    r.memory_milli = ParseQuantityMilli(*v).value_or(0);
  }
  return r;
}

}  // namespace

std::string PodSpecView::FormatPod() const {
  return key.name + "_" + key.ns + "(" + uid + ")";
}

const ContainerSpecView* PodSpecView::FindContainer(std::string_view name) const {
  for (const auto* list : {&containers, &init_containers}) {
    for (const ContainerSpecView& c : *list) {
      if (c.name == name) return &c;
    }
  }
  return nullptr;
}

PodSpecView MakePodSpecView(const api::Object& pod) {
  PodSpecView v;
  v.key = pod.key();
  v.uid = std::string(pod.uid());
  const api::ObjectView spec = api::FindObject(pod.view(), {"spec"});
  v.node_name = api::Object::GetString(spec, "nodeName");
  std::string_view restart = api::Object::GetString(spec, "restartPolicy");
  v.restart_policy = restart == "Never"       ? RestartPolicy::kNever
                     : restart == "OnFailure" ? RestartPolicy::kOnFailure
                                              : RestartPolicy::kAlways;
  v.host_network = api::FindBool(spec, {"hostNetwork"});
  v.termination_grace_seconds = api::FindInt(spec, {"terminationGracePeriodSeconds"}, 30);
  if (auto ts = util::ParseRfc3339(pod.deletion_timestamp())) v.deletion_timestamp = *ts;
  if (std::optional<int64_t> g =
          api::Find(pod.view(), {"metadata", "deletionGracePeriodSeconds"}).if_int64()) {
    v.deletion_grace_seconds = *g;
  }
  const bool job_owned = OwnedByJob(pod);
  Requests app;
  Requests init_max;
  for (bool init : {true, false}) {
    for (api::View cv : api::FindArray(spec, {init ? "initContainers" : "containers"})) {
      const api::ObjectView c = cv.if_object();
      if (!c) continue;
      ContainerSpecView cs;
      cs.name = api::Object::GetString(c, "name");
      cs.image = api::Object::GetString(c, "image");
      cs.pull_policy =
          ParsePullPolicy(api::Object::GetString(c, "imagePullPolicy"), cs.image.str());
      cs.sidecar = init && api::Object::GetString(c, "restartPolicy") == "Always";
      cs.behavior = BehaviorFor(pod, c, init, job_owned);
      Requests r = ContainerRequests(c);
      if (!init || cs.sidecar) {
        app.cpu_milli += r.cpu_milli;
        app.memory_milli += r.memory_milli;
      } else {
        init_max.cpu_milli = std::max(init_max.cpu_milli, r.cpu_milli);
        init_max.memory_milli = std::max(init_max.memory_milli, r.memory_milli);
      }
      (init ? v.init_containers : v.containers).push_back(std::move(cs));
    }
  }
  v.cpu_request_milli = std::max(app.cpu_milli, init_max.cpu_milli);
  v.memory_request_bytes = (std::max(app.memory_milli, init_max.memory_milli) + 999) / 1000;
  return v;
}

std::optional<int64_t> ParseQuantityMilli(std::string_view text) {
  if (text.empty()) return std::nullopt;
  size_t i = 0;
  if (text[0] == '+' || text[0] == '-') ++i;
  size_t num_start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  if (i == num_start) return std::nullopt;
  std::optional<double> number = ParseNumber(text.substr(0, i));
  if (!number) return std::nullopt;
  std::string_view suffix = text.substr(i);
  double scale = 1;
  if (suffix.empty()) {
  } else if (suffix == "m") {
    scale = 1e-3;
  } else if (suffix == "k") {
    scale = 1e3;
  } else if (suffix == "M") {
    scale = 1e6;
  } else if (suffix == "G") {
    scale = 1e9;
  } else if (suffix == "T") {
    scale = 1e12;
  } else if (suffix == "P") {
    scale = 1e15;
  } else if (suffix == "E") {
    scale = 1e18;
  } else if (suffix == "Ki") {
    scale = 1024.0;
  } else if (suffix == "Mi") {
    scale = 1024.0 * 1024;
  } else if (suffix == "Gi") {
    scale = 1024.0 * 1024 * 1024;
  } else if (suffix == "Ti") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (suffix == "Pi") {
    scale = 1024.0 * 1024 * 1024 * 1024 * 1024;
  } else if (suffix == "Ei") {
    scale = 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024;
  } else if (suffix == "n") {
    scale = 1e-9;
  } else if (suffix == "u") {
    scale = 1e-6;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::optional<double> exp = ParseNumber(suffix.substr(1));
    if (!exp) return std::nullopt;
    scale = std::pow(10.0, *exp);
  } else {
    return std::nullopt;
  }
  double milli = std::ceil(*number * scale * 1000 - 1e-6);
  if (!std::isfinite(milli) || milli > 9e18 || milli < -9e18) return std::nullopt;
  return static_cast<int64_t>(milli);
}

}  // namespace converge::kubelet
