#include "controllers/common/recording_event_sink.h"

namespace converge::controllers {

util::StatusOr<api::Object> RecordingEventSink::Create(const api::Object& event) {
  std::lock_guard lock(mu_);
  const boost::json::object& d = event.doc();
  Recorded r;
  r.type = api::Object::GetString(d, "type");
  r.reason = api::Object::GetString(d, "reason");
  r.message = api::Object::GetString(d, "message");
  r.object = std::string(api::FindString(d, {"involvedObject", "kind"})) + " " +
             std::string(api::FindString(d, {"involvedObject", "namespace"})) + "/" +
             std::string(api::FindString(d, {"involvedObject", "name"}));
  events_.push_back(std::move(r));
  names_.push_back(std::string(event.name()));
  return event;
}

util::StatusOr<api::Object> RecordingEventSink::Patch(const api::Object& event, std::string_view) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == event.name()) ++events_[i].count;
  }
  return event;
}

std::vector<RecordingEventSink::Recorded> RecordingEventSink::events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::vector<std::string> RecordingEventSink::Summaries() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const Recorded& r : events_) out.push_back(r.reason + ": " + r.message);
  return out;
}

}  // namespace converge::controllers
