// RecordingEventSink: an EventSink for controller tests that keeps every event written, so a
// test can assert "SuccessfulCreate: Created pod: web-0" without a server.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "client/event_recorder.h"

namespace converge::controllers {

class RecordingEventSink final : public client::EventSink {
 public:
  struct Recorded {
    std::string type;     // Normal / Warning
    std::string reason;   // SuccessfulCreate
    std::string message;  // Created pod: web-0
    std::string object;   // involvedObject "Kind ns/name"
    int64_t count = 1;
  };

  util::StatusOr<api::Object> Create(const api::Object& event) override;
  util::StatusOr<api::Object> Patch(const api::Object& event, std::string_view patch) override;

  std::vector<Recorded> events() const;
  // "reason: message" of every event, in order (repeats aggregated into one entry).
  std::vector<std::string> Summaries() const;

 private:
  mutable std::mutex mu_;
  std::vector<Recorded> events_;    // guarded by mu_
  std::vector<std::string> names_;  // guarded by mu_; parallel to events_
};

}  // namespace converge::controllers
