#include "client/event_recorder.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "client/api_errors.h"
#include "client/wait.h"
#include "util/thread_name.h"
#include "util/time_format.h"

namespace converge::client {
namespace json = boost::json;

namespace {

const api::GroupVersionResource kEvents{"", "v1", "events"};

}  // namespace

ObjectReference ObjectReference::For(const api::Object& obj) {
  return {std::string(obj.kind()),
          std::string(obj.namespace_()),
          std::string(obj.name()),
          std::string(obj.uid()),
          std::string(obj.api_version()),
          std::string(obj.resource_version()),
          {}};
}

json::object ObjectReference::ToJson() const {
  json::object o;
  if (!kind.empty()) o["kind"] = kind;
  if (!ns.empty()) o["namespace"] = ns;
  if (!name.empty()) o["name"] = name;
  if (!uid.empty()) o["uid"] = uid;
  if (!api_version.empty()) o["apiVersion"] = api_version;
  if (!resource_version.empty()) o["resourceVersion"] = resource_version;
  if (!field_path.empty()) o["fieldPath"] = field_path;
  return o;
}

util::StatusOr<api::Object> RestEventSink::Create(const api::Object& event) {
  return client_->Create(kEvents, event.namespace_(), event);
}

util::StatusOr<api::Object> RestEventSink::Patch(const api::Object& event, std::string_view patch) {
  return client_->Patch(kEvents, event.key(), PatchType::kStrategicMerge, patch);
}

EventRecorder::EventRecorder(EventRecorderOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()) {}

void EventRecorder::Event(const ObjectReference& involved, std::string_view type,
                          std::string_view reason, std::string_view message) {
  Pending p{involved, std::string(type), std::string(reason), std::string(message),
            clock_->WallNow()};
  std::lock_guard lock(mu_);
  if (queue_.size() >= options_.max_queued) {
    ++dropped_;
    return;
  }
  queue_.push_back(std::move(p));
  cv_.notify_one();
}

int64_t EventRecorder::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::string EventRecorder::AggregationKey(const Pending& p) const {
  // client-go's getEventKey: source, involved object, type, reason, message. The source is the
  // same for every event of one recorder, so the key leaves it out (the cache holds up to
  // cache_size keys per recorder; the simulated kubelet has a recorder per node).
  std::string k;
  size_t size = 0;
  const std::string* parts[] = {&p.involved.kind,
                                &p.involved.ns,
                                &p.involved.name,
                                &p.involved.uid,
                                &p.involved.api_version,
                                &p.involved.field_path,
                                &p.type,
                                &p.reason,
                                &p.message};
  for (const std::string* part : parts) size += part->size() + 1;
  k.reserve(size);
  for (const std::string* part : parts) {
    k += *part;
    k += '\x1f';  // a separator no field contains
  }
  return k;
}

api::Object EventRecorder::NewEvent(const Pending& p, const std::string& timestamp) const {
  json::object doc;
  doc["apiVersion"] = "v1";
  doc["kind"] = "Event";
  char suffix[32];
  std::snprintf(
      suffix, sizeof(suffix), ".%llx",
      static_cast<unsigned long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(p.time.time_since_epoch()).count()));
  doc["metadata"] =
      json::object{{"name", p.involved.name + suffix},
                   {"namespace", p.involved.ns.empty() ? std::string("default") : p.involved.ns}};
  doc["involvedObject"] = p.involved.ToJson();
  doc["reason"] = p.reason;
  doc["message"] = p.message;
  doc["type"] = p.type;
  json::object source{{"component", options_.source.component}};
  if (!options_.source.host.empty()) source["host"] = options_.source.host;
  doc["source"] = std::move(source);
  doc["firstTimestamp"] = timestamp;
  doc["lastTimestamp"] = timestamp;
  doc["count"] = 1;
  doc["reportingComponent"] = options_.source.component;
  doc["reportingInstance"] = options_.source.host;
  return api::Object(std::move(doc));
}

void EventRecorder::Remember(const std::string& key, Written w) {
  auto it = written_.find(key);
  if (it != written_.end()) {
    it->second.written = std::move(w);
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return;
  }
  it = written_.emplace(key, Remembered{std::move(w), {}}).first;
  lru_.push_front(&it->first);
  it->second.lru = lru_.begin();
  while (written_.size() > options_.cache_size) {
    auto oldest = written_.find(*lru_.back());
    lru_.pop_back();
    written_.erase(oldest);
  }
}

void EventRecorder::Forget(const std::string& key) {
  auto it = written_.find(key);
  if (it == written_.end()) return;
  lru_.erase(it->second.lru);
  written_.erase(it);
}

void EventRecorder::Write(const Pending& p, std::stop_token stop) {
  const std::string key = AggregationKey(p);
  const std::string timestamp = util::FormatRfc3339(p.time);
  for (int attempt = 0; attempt < options_.max_tries; ++attempt) {
    if (attempt > 0 && !SleepFor(*clock_, options_.retry_interval, stop)) return;
    util::StatusOr<api::Object> written = util::Internal("unset");
    Written w;
    auto it = written_.find(key);
    if (it != written_.end()) {
      // Seen before: count it on the existing Event.
      w = it->second.written;
      w.count += 1;
      api::Object target;
      target.SetGvk({"", "v1", "Event"});
      target.set_namespace(w.ns);
      target.set_name(w.name);
      json::object patch{{"count", w.count}, {"lastTimestamp", timestamp}, {"message", p.message}};
      written = options_.sink->Patch(target, json::serialize(patch));
      if (!written.ok() && IsNotFound(written.status())) {
        // The Event expired (events have a TTL) or was deleted: start a new one.
        Forget(key);
        --attempt;  // not a failed try
        continue;
      }
    } else {
      api::Object ev = NewEvent(p, timestamp);
      w = Written{std::string(ev.name()), std::string(ev.namespace_()), 1, timestamp};
      written = options_.sink->Create(ev);
      if (!written.ok() && IsAlreadyExists(written.status())) return;  // written before
    }
    if (written.ok()) {
      Remember(key, std::move(w));
      return;
    }
    if (!IsRetriable(written.status()) && written.status().code() != util::Code::kUnknown &&
        written.status().code() != util::Code::kInternal) {
      spdlog::warn("event {}/{} ({}) rejected: {}", p.involved.ns, p.involved.name, p.reason,
                   written.status().ToString());
      break;
    }
  }
  std::lock_guard lock(mu_);
  ++dropped_;
}

void EventRecorder::Run(std::stop_token stop) {
  util::SetThreadName("event-recorder");  // Run is the thread's body
  for (;;) {
    Pending p;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait(lock, stop, [this] { return !queue_.empty(); })) return;
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    Write(p, stop);
  }
}

void EventRecorder::Flush(std::stop_token stop) {
  for (;;) {
    Pending p;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    Write(p, stop);
  }
}

}  // namespace converge::client
