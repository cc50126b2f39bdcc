// EventRecorder: records core/v1 Events about objects, aggregating repeats (client-go's
// tools/record EventRecorder + EventCorrelator's de-duplication).
//
// Recording never blocks and never fails the caller: events are queued (up to max_queued; more
// are dropped, as client-go does) and written by Run's thread. An event identical to an earlier
// one — same source, involved object, type, reason and message — is not created again: the
// existing Event is patched with count+1 and a new lastTimestamp, so a controller retrying the
// same failure every second produces one Event with a growing count, not thousands.
//
// Events are written as upstream's recorder writes them: name "<object name>.<unix nanos hex>",
// the involved object's namespace (or "default" for cluster-scoped objects), involvedObject,
// reason, message, type, source {component, host}, reportingComponent/reportingInstance,
// firstTimestamp, lastTimestamp and count.
//
// Not implemented from client-go: the per-object spam filter (a token bucket of 25 events per
// object, refilled every 5 minutes) and the merging of similar events with different messages
// into "(combined from similar events)".
//
// Thread-safety: Event/Eventf may be called from any thread; Run occupies one.
#pragma once

#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>

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
  // client-go: 1000 queued events, an LRU of 4096 aggregation entries, 12 tries per event 10 s
  // apart (an apiserver restart is ridden out; a lasting outage drops the event).
  size_t max_queued = 1000;
  size_t cache_size = 4096;
  int max_tries = 12;
  util::Clock::Duration retry_interval = std::chrono::seconds(10);
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

  // Writes every queued event now, on the calling thread (tests; and a last flush at shutdown).
  void Flush(std::stop_token stop = {});

  // Events dropped because the queue was full, or because every try failed.
  int64_t dropped() const;

 private:
  struct Pending {
    ObjectReference involved;
    std::string type;
    std::string reason;
    std::string message;
    util::Clock::WallTime time;
  };
  // What the aggregation remembers of an Event it wrote.
  struct Written {
    std::string name;
    std::string ns;
    int64_t count = 0;
    std::string first_timestamp;
  };

  void Write(const Pending& p, std::stop_token stop);
  std::string AggregationKey(const Pending& p) const;
  api::Object NewEvent(const Pending& p, const std::string& timestamp) const;
  void Remember(const std::string& key, Written w);
  void Forget(const std::string& key);

  const EventRecorderOptions options_;
  util::Clock* const clock_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Pending> queue_;  // guarded by mu_
  int64_t dropped_ = 0;        // guarded by mu_

  struct Remembered {
    Written written;
    std::list<const std::string*>::iterator lru;  // this entry's place in lru_
  };

  // Used by the writing thread only (Run or Flush, never both at once). Each aggregation key is
  // held once, by written_ (whose keys do not move); lru_ points at them, most recent first.
  std::list<const std::string*> lru_;
  std::unordered_map<std::string, Remembered> written_;
};

}  // namespace converge::client
