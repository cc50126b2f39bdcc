// EventRecorder: records core/v1 Events about objects, aggregating repeats (client-go's
// tools/record EventRecorder + EventCorrelator's de-duplication).
//
// Recording never blocks and never fails the caller: events are queued (up to max_queued; more
// are dropped, as client-go does) and written by Run's thread, which first correlates each event
// as client-go's EventCorrelator does:
// - Aggregation: events about one object with the same type and reason but different messages
//   are written as they are until aggregate_max_events distinct messages were seen within
//   aggregate_interval; from then on they go to one Event "(combined from similar events):
//   <latest message>" whose count grows.
// - De-duplication: an event identical to an earlier one (same involved object, type, reason
//   and message) is not created again: the existing Event is patched with count+1, a new
//   lastTimestamp and the message, so a controller retrying the same failure every second
//   produces one Event with a growing count, not thousands.
// - Spam filter: each involved object has a token bucket (spam_burst tokens, refilled at
//   spam_qps); an event that finds it empty is not written. Its occurrence still counts: the
//   next write of an Event it would have patched carries the count including it.
// A ReplicaSet scaled to 10,000 replicas thus gets 25 writes of Events, not 10,000.
//
// Events are written as upstream's recorder writes them: name "<object name>.<unix nanos hex>",
// the involved object's namespace (or "default" for cluster-scoped objects), involvedObject,
// reason, message, type, source {component, host}, reportingComponent/reportingInstance,
// firstTimestamp, lastTimestamp and count.
//
// Thread-safety: Event/Eventf may be called from any thread; Run occupies one. Flush may be
// called while Run runs: the two take turns writing (one Write at a time).
#pragma once

#include <boost/container/small_vector.hpp>
#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/object.h"
#include "client/rest_client.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::client {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

struct ObjectReference {
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
  std::string api_version;
  std::string resource_version;
  std::string field_path;

  static ObjectReference For(const api::Object& obj);
  boost::json::object ToJson() const;
};

struct EventSource {
  std::string component;  // "replicaset-controller"
  std::string host;       // the instance (node or pod name); may be empty
};

// Where events are written: the API (RestEventSink) or a test double.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual util::StatusOr<api::Object> Create(const api::Object& event) = 0;
  // Applies a strategic-merge patch to the Event named by `event`'s metadata.
  virtual util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view patch) = 0;
};

class RestEventSink final : public EventSink {
 public:
  explicit RestEventSink(RestClient* client) : client_(client) {}
  util::StatusOr<api::Object> Create(const api::Object& event) override;
  util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view patch) override;

 private:
  RestClient* const client_;
};

struct EventRecorderOptions {
  EventSource source;
  EventSink* sink = nullptr;     // not owned
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  // client-go: 1000 queued events, LRUs of 4096 entries (written Events, aggregation records,
  // spam buckets: each its own), 12 tries per event 10 s apart (an apiserver restart is ridden
  // out; a lasting outage drops the event).
  size_t max_queued = 1000;
  size_t cache_size = 4096;
  int max_tries = 12;
  util::Clock::Duration retry_interval = std::chrono::seconds(10);
  // client-go's EventCorrelator defaults: 10 distinct messages within 10 minutes aggregate; 25
  // events per object, then one every 5 minutes.
  size_t aggregate_max_events = 10;
  util::Clock::Duration aggregate_interval = std::chrono::minutes(10);
  double spam_burst = 25;
  double spam_qps = 1.0 / 300;
};

// A map from 64-bit keys (hashes of the correlation keys, so that the caches do not hold the
// keys' text) that keeps its `capacity` most recently used entries (Find and Put use an entry).
// Every simulated node's recorder holds a few entries per pod in three of these, so an entry is
// kept small: entries live in one array, linked in order of use by index, and a flat hash map
// finds them (~40 bytes per entry besides the value, against ~100 for a node-based map beside a
// std::list of the keys). A pointer or reference into the map is valid until the next Put or
// Erase.
template <class V>
class LruMap {
 public:
  explicit LruMap(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

  V* Find(uint64_t key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    MoveToFront(it->second);
    return &slots_[it->second].value;
  }
  V& Put(uint64_t key, V value) {
    if (auto it = index_.find(key); it != index_.end()) {
      slots_[it->second].value = std::move(value);
      MoveToFront(it->second);
      return slots_[it->second].value;
    }
    uint32_t i;
    if (slots_.size() >= capacity_) {
      i = back_;  // the least recently used entry's slot takes the new one
      index_.erase(slots_[i].key);
      Unlink(i);
      slots_[i].key = key;
      slots_[i].value = std::move(value);
    } else {
      i = static_cast<uint32_t>(slots_.size());
      slots_.push_back(Slot{key, std::move(value), kNone, kNone});
    }
    LinkFront(i);
    index_.emplace(key, i);
    return slots_[i].value;
  }
  void Erase(uint64_t key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    const uint32_t i = it->second;
    index_.erase(it);
    Unlink(i);
    const auto last = static_cast<uint32_t>(slots_.size() - 1);
    if (i != last) {  // the last slot fills the hole
      slots_[i] = std::move(slots_[last]);
      Slot& s = slots_[i];
      (s.prev != kNone ? slots_[s.prev].next : front_) = i;
      (s.next != kNone ? slots_[s.next].prev : back_) = i;
      index_[s.key] = i;
    }
    slots_.pop_back();
  }
  size_t size() const { return slots_.size(); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Slot {
    uint64_t key;
    V value;
    uint32_t prev;  // more recently used
    uint32_t next;  // less recently used
  };

  void Unlink(uint32_t i) {
    Slot& s = slots_[i];
    (s.prev != kNone ? slots_[s.prev].next : front_) = s.next;
    (s.next != kNone ? slots_[s.next].prev : back_) = s.prev;
  }
  void LinkFront(uint32_t i) {
    slots_[i].prev = kNone;
    slots_[i].next = front_;
    (front_ != kNone ? slots_[front_].prev : back_) = i;
    front_ = i;
  }
  void MoveToFront(uint32_t i) {
    if (i == front_) return;
    Unlink(i);
    LinkFront(i);
  }

  size_t capacity_;
  std::vector<Slot> slots_;
  boost::unordered_flat_map<uint64_t, uint32_t> index_;
  uint32_t front_ = kNone;  // most recently used
  uint32_t back_ = kNone;   // least recently used
};

class EventRecorder {
 public:
  explicit EventRecorder(EventRecorderOptions options);

  // Queues an event about `involved`. `type` is kEventTypeNormal or kEventTypeWarning; reason is
  // UpperCamelCase ("FailedCreate").
  void Event(const ObjectReference& involved, std::string_view type, std::string_view reason,
             std::string_view message);
  void Event(const api::Object& involved, std::string_view type, std::string_view reason,
             std::string_view message) {
    Event(ObjectReference::For(involved), type, reason, message);
  }

  // Writes queued events until stop. Events still queued then are dropped.
  void Run(std::stop_token stop);

  // Writes every queued event now, on the calling thread (tests; and a last flush at shutdown,
  // best after Run has returned, so that nothing it is writing waits for the flush).
  void Flush(std::stop_token stop = {});

  // Events dropped because the queue was full, or because every try failed.
  int64_t dropped() const;
  // Events the spam filter kept from being written.
  int64_t filtered() const;

 private:
  struct Pending {
    ObjectReference involved;
    std::string type;
    std::string reason;
    std::string message;
    util::Clock::WallTime time;
  };
  // A Pending as the queue holds it: its ten strings packed into one (util/packed_strings.h).
  // A storm queues events by the hundred thousand (up to max_queued per recorder, one
  // recorder per simulated node): packed, one is ~200 bytes in one allocation instead of
  // ~550 in five.
  struct Queued {
    std::string packed;
    util::Clock::WallTime time;

    static Queued Pack(const ObjectReference& involved, std::string_view type,
                       std::string_view reason, std::string_view message,
                       util::Clock::WallTime time);
    Pending Unpack() const;
  };
  // What the aggregation remembers of an Event it wrote: when it was created (its name is the
  // involved object's and that time, EventName in event_recorder.cc) and its count. One per
  // Event a recorder wrote recently (up to cache_size), so no strings: a simulated node's
  // recorder remembers ~3 per pod.
  struct Written {
    uint64_t created_nanos = 0;
    int64_t count = 0;
  };

  // What the correlation makes of an event: the key of the Event it is written to (or counted
  // on), and the message it carries.
  struct Correlated {
    uint64_t key = 0;
    std::string message;
  };
  // What the aggregation remembers of one involved object, type and reason: the hashes of the
  // different messages seen (fewer than aggregate_max_events).
  struct Similar {
    boost::container::small_vector<uint64_t, 1> messages;  // usually one
    util::Clock::TimePoint last;
  };
  struct SpamBucket {
    double tokens = 0;
    util::Clock::TimePoint last;
  };

  void Write(const Pending& p, std::stop_token stop);
  Correlated Correlate(const Pending& p);
  bool SpamFilterAccepts(const Pending& p, util::Clock::TimePoint now);
  api::Object NewEvent(const Pending& p, std::string_view message,
                       const std::string& timestamp) const;

  const EventRecorderOptions options_;
  util::Clock* const clock_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Queued> queue_;  // guarded by mu_
  int64_t dropped_ = 0;       // guarded by mu_
  int64_t filtered_ = 0;      // guarded by mu_

  // Held for each Write: Run and Flush on two threads would otherwise share the caches below.
  std::mutex write_mu_;
  LruMap<Written> written_;  // guarded by write_mu_
  LruMap<Similar> similar_;  // guarded by write_mu_
  LruMap<SpamBucket> spam_;  // guarded by write_mu_
};

}  // namespace converge::client
