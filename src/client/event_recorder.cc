#include "client/event_recorder.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>

#include "client/api_errors.h"
#include "client/wait.h"
#include "util/packed_strings.h"
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
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      written_(options_.cache_size),
      similar_(options_.cache_size),
      spam_(options_.cache_size) {}

void EventRecorder::Event(const ObjectReference& involved, std::string_view type,
                          std::string_view reason, std::string_view message) {
  Queued q = Queued::Pack(involved, type, reason, message, clock_->WallNow());
  std::lock_guard lock(mu_);
  if (queue_.size() >= options_.max_queued) {
    ++dropped_;
    return;
  }
  queue_.push_back(std::move(q));
  cv_.notify_one();
}

EventRecorder::Queued EventRecorder::Queued::Pack(const ObjectReference& involved,
                                                  std::string_view type, std::string_view reason,
                                                  std::string_view message,
                                                  util::Clock::WallTime time) {
  const ObjectReference& o = involved;
  return {util::PackStrings({o.kind, o.ns, o.name, o.uid, o.api_version, o.resource_version,
                             o.field_path, type, reason, message}),
          time};
}

EventRecorder::Pending EventRecorder::Queued::Unpack() const {
  Pending p;
  p.time = time;
  ObjectReference& o = p.involved;
  size_t at = 0;
  for (std::string* field : {&o.kind, &o.ns, &o.name, &o.uid, &o.api_version, &o.resource_version,
                             &o.field_path, &p.type, &p.reason, &p.message}) {
    std::string_view item;
    util::NextPacked(packed, &at, &item);  // Pack wrote all ten
    field->assign(item);
  }
  return p;
}

int64_t EventRecorder::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

int64_t EventRecorder::filtered() const {
  std::lock_guard lock(mu_);
  return filtered_;
}

namespace {

// A hash of the parts, each followed by a separator no field contains. The source is the same
// for every event of one recorder, so the keys leave it out (client-go's keys begin with it).
uint64_t HashKey(std::initializer_list<std::string_view> parts) {
  size_t size = 0;
  for (std::string_view part : parts) size += part.size() + 1;
  std::string k;
  k.reserve(size);
  for (std::string_view part : parts) {
    k += part;
    k += '\x1f';
  }
  return std::hash<std::string_view>{}(k);
}

// client-go's getSpamKey: the involved object.
uint64_t ObjectKeyOf(const ObjectReference& o) {
  return HashKey({o.kind, o.ns, o.name, o.uid, o.api_version});
}

// The three kinds of keys hash different texts; a distinct first part keeps them apart.
constexpr std::string_view kSimilarTag = "similar";
constexpr std::string_view kCombinedTag = "combined";

// An Event's name: the involved object's, then the time of the event that created it in
// nanoseconds, in hex (client-go's: fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())).
std::string EventName(const ObjectReference& involved, uint64_t created_nanos) {
  char suffix[24];
  std::snprintf(suffix, sizeof(suffix), ".%llx", static_cast<unsigned long long>(created_nanos));
  return involved.name + suffix;
}

// Events about cluster-scoped objects go to the default namespace, as client-go's do.
const std::string& EventNamespace(const ObjectReference& involved) {
  static const std::string kDefault = "default";
  return involved.ns.empty() ? kDefault : involved.ns;
}

uint64_t UnixNanos(util::Clock::WallTime time) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
}

}  // namespace

EventRecorder::Correlated EventRecorder::Correlate(const Pending& p) {
  const util::Clock::TimePoint now = clock_->Now();
  const ObjectReference& o = p.involved;
  // client-go's EventAggregatorByReasonFunc: the object, type and reason; the message tells
  // the events of one group apart.
  const uint64_t similar_key =
      HashKey({kSimilarTag, o.kind, o.ns, o.name, o.uid, o.api_version, p.type, p.reason});
  Similar* similar = similar_.Find(similar_key);
  if (similar == nullptr || now - similar->last > options_.aggregate_interval) {
    similar = &similar_.Put(similar_key, Similar{});
  }
  const uint64_t message = std::hash<std::string_view>{}(p.message);
  if (std::find(similar->messages.begin(), similar->messages.end(), message) ==
      similar->messages.end()) {
    similar->messages.push_back(message);
  }
  similar->last = now;
  if (similar->messages.size() < options_.aggregate_max_events) {
    return {HashKey({o.kind, o.ns, o.name, o.uid, o.api_version, o.field_path, p.type, p.reason,
                     p.message}),
            p.message};
  }
  // Too many different messages: they go to one combined Event, keyed by the group. The set
  // stays below the threshold, so the next new message is combined too.
  similar->messages.erase(similar->messages.begin());
  return {HashKey({kCombinedTag, o.kind, o.ns, o.name, o.uid, o.api_version, p.type, p.reason}),
          "(combined from similar events): " + p.message};
}

bool EventRecorder::SpamFilterAccepts(const Pending& p, util::Clock::TimePoint now) {
  const uint64_t key = ObjectKeyOf(p.involved);
  SpamBucket* bucket = spam_.Find(key);
  if (bucket == nullptr) {
    bucket = &spam_.Put(key, SpamBucket{options_.spam_burst, now});
  } else {
    const double elapsed = std::chrono::duration<double>(now - bucket->last).count();
    bucket->tokens = std::min(options_.spam_burst, bucket->tokens + elapsed * options_.spam_qps);
    bucket->last = now;
  }
  if (bucket->tokens < 1) return false;
  bucket->tokens -= 1;
  return true;
}

api::Object EventRecorder::NewEvent(const Pending& p, std::string_view message,
                                    const std::string& timestamp) const {
  json::object doc;
  doc["apiVersion"] = "v1";
  doc["kind"] = "Event";
  doc["metadata"] = json::object{{"name", EventName(p.involved, UnixNanos(p.time))},
                                 {"namespace", EventNamespace(p.involved)}};
  doc["involvedObject"] = p.involved.ToJson();
  doc["reason"] = p.reason;
  doc["message"] = message;
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

void EventRecorder::Write(const Pending& p, std::stop_token stop) {
  std::lock_guard write_lock(write_mu_);
  const Correlated c = Correlate(p);
  if (!SpamFilterAccepts(p, clock_->Now())) {
    // Not written, but it happened: the next patch of the Event it belongs to counts it.
    if (Written* w = written_.Find(c.key)) ++w->count;
    std::lock_guard lock(mu_);
    ++filtered_;
    return;
  }
  const std::string timestamp = util::FormatRfc3339(p.time);
  for (int attempt = 0; attempt < options_.max_tries; ++attempt) {
    if (attempt > 0 && !SleepFor(*clock_, options_.retry_interval, stop)) return;
    util::StatusOr<api::Object> written = util::Internal("unset");
    Written w;
    if (const Written* seen = written_.Find(c.key)) {
      // Seen before: count it on the existing Event.
      w = *seen;
      w.count += 1;
      // Its key covers the involved object's namespace and name, so they name it still.
      api::Object target;
      target.SetGvk({"", "v1", "Event"});
      target.set_namespace(EventNamespace(p.involved));
      target.set_name(EventName(p.involved, w.created_nanos));
      json::object patch{{"count", w.count}, {"lastTimestamp", timestamp}, {"message", c.message}};
      written = options_.sink->Patch(target, json::serialize(patch));
      if (!written.ok() && IsNotFound(written.status())) {
        // The Event expired (events have a TTL) or was deleted: start a new one.
        written_.Erase(c.key);
        --attempt;  // not a failed try
        continue;
      }
    } else {
      api::Object ev = NewEvent(p, c.message, timestamp);
      w = Written{UnixNanos(p.time), 1};
      written = options_.sink->Create(ev);
      if (!written.ok() && IsAlreadyExists(written.status())) return;  // written before
    }
    if (written.ok()) {
      written_.Put(c.key, std::move(w));
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
    Queued q;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait(lock, stop, [this] { return !queue_.empty(); })) return;
      q = std::move(queue_.front());
      queue_.pop_front();
    }
    Write(q.Unpack(), stop);  // unpacked outside the lock producers take
  }
}

void EventRecorder::Flush(std::stop_token stop) {
  for (;;) {
    Queued q;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      q = std::move(queue_.front());
      queue_.pop_front();
    }
    Write(q.Unpack(), stop);  // unpacked outside the lock producers take
  }
}

}  // namespace converge::client
