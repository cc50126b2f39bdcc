#include "pod_driver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>

#include "util/clock.h"
#include "util/time_format.h"

namespace converge::workloads_test {

namespace json = boost::json;

namespace {

std::string Str(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = nullptr;
  const json::object* cur = &o;
  for (std::string_view k : path) {
    if (cur == nullptr) return "";
    v = cur->if_contains(k);
    if (v == nullptr) return "";
    cur = v->if_object();
  }
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : "";
}

PodView ViewOf(const json::object& pod) {
  PodView v;
  v.name = Str(pod, {"metadata", "name"});
  if (const json::value* refs = pod.at("metadata").as_object().if_contains("ownerReferences")) {
    for (const json::value& r : refs->as_array()) {
      const json::object& ref = r.as_object();
      if (const json::value* c = ref.if_contains("controller"); c && c->is_bool() && c->as_bool()) {
        v.rs = std::string(ref.at("name").as_string());
      }
    }
  }
  if (const json::value* spec = pod.if_contains("spec")) {
    if (const json::value* cs = spec->as_object().if_contains("containers");
        cs && cs->is_array() && !cs->as_array().empty()) {
      v.image = Str(cs->as_array()[0].as_object(), {"image"});
    }
  }
  if (const json::value* st = pod.if_contains("status"); st && st->is_object()) {
    if (const json::value* conds = st->as_object().if_contains("conditions");
        conds && conds->is_array()) {
      for (const json::value& c : conds->as_array()) {
        if (Str(c.as_object(), {"type"}) == "Ready" && Str(c.as_object(), {"status"}) == "True") {
          v.ready = true;
        }
      }
    }
  }
  return v;
}

}  // namespace

PodDriver::PodDriver(PodDriverOptions options)
    : options_(std::move(options)), make_ready_(options_.make_ready) {}

PodDriver::~PodDriver() {
  Stop();
}

void PodDriver::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
  std::unique_lock lock(mu_);
  listed_cv_.wait(lock, [&] { return listed_; });
}

void PodDriver::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

LivePods PodDriver::Live() const {
  std::lock_guard lock(mu_);
  return live_;
}

size_t PodDriver::MaxLive() const {
  std::lock_guard lock(mu_);
  return max_live_;
}

void PodDriver::ResetMax() {
  std::lock_guard lock(mu_);
  max_live_ = live_.size();
}

std::string PodDriver::Apply(const std::string& type, const json::object& pod) {
  const json::object& meta = pod.at("metadata").as_object();
  std::string name(meta.at("name").as_string());
  bool deleting = meta.contains("deletionTimestamp");
  std::string to_ready;
  LivePods snapshot;
  {
    std::lock_guard lock(mu_);
    rv_ = Str(pod, {"metadata", "resourceVersion"});
    if (type == "DELETED" || deleting) {
      live_.erase(name);
    } else {
      PodView v = ViewOf(pod);
      if (!v.ready && Str(pod, {"status", "phase"}) != "Failed") to_ready = name;
      live_[name] = std::move(v);
    }
    max_live_ = std::max(max_live_, live_.size());
    snapshot = live_;
  }
  ++events_;
  if (options_.on_event) options_.on_event(snapshot);
  return to_ready;
}

void PodDriver::MarkReady(testing::TestClient& client, const std::string& name) {
  std::string now = util::FormatRfc3339(util::RealClock().WallNow());
  json::object ready{{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", now}};
  json::object patch{
      {"status", json::object{{"phase", "Running"},
                              {"conditions", json::array{ready}},
                              {"containerStatuses", json::array{json::object{{"name", "c"},
                                                                             {"ready", true},
                                                                             {"restartCount", 0},
                                                                             {"image", "x"},
                                                                             {"imageID", ""}}}}}}};
  testing::HttpResponse r =
      client.Patch("/api/v1/namespaces/" + options_.ns + "/pods/" + name + "/status",
                   json::serialize(patch), "application/merge-patch+json");
  // 404: deleted meanwhile. Anything else would leave the pod unready forever: say so.
  if (r.status != 200 && r.status != 404) {
    ADD_FAILURE() << "marking " << name << " ready: " << r.status << " " << r.body << r.error;
  }
}

void PodDriver::Loop(std::stop_token stop) {
  testing::TestClient reader(options_.kubeconfig);
  testing::TestClient writer(options_.kubeconfig);
  const std::string base = "/api/v1/namespaces/" + options_.ns + "/pods";
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      testing::HttpResponse r = reader.Get(base);
      if (r.status != 200) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      json::value list = r.Json();
      std::vector<std::string> to_ready;
      {
        std::lock_guard lock(mu_);
        live_.clear();
      }
      for (const json::value& item : list.at("items").as_array()) {
        std::string n = Apply("ADDED", item.as_object());
        if (!n.empty()) to_ready.push_back(n);
      }
      {
        std::lock_guard lock(mu_);
        rv_ = Str(list.as_object(), {"metadata", "resourceVersion"});
        listed_ = true;
      }
      listed_cv_.notify_all();
      if (make_ready_) {
        for (const std::string& n : to_ready) MarkReady(writer, n);
      }
      need_list = false;
    }
    std::string rv;
    {
      std::lock_guard lock(mu_);
      rv = rv_;
    }
    auto watch = reader.Watch(base + "?watch=true&resourceVersion=" + rv);
    while (!stop.stop_requested()) {
      std::optional<json::value> ev = watch->Next(std::chrono::milliseconds(100));
      if (!ev) {
        if (watch->ended()) break;
        continue;
      }
      std::string type(ev->at("type").as_string());
      if (type == "ERROR") {
        need_list = true;  // 410 Gone: start over
        break;
      }
      if (type == "BOOKMARK") continue;
      std::string n = Apply(type, ev->at("object").as_object());
      if (!n.empty() && make_ready_) MarkReady(writer, n);
    }
  }
}

}  // namespace converge::workloads_test
