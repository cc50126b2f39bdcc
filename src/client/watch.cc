#include "client/watch.h"

#include "client/api_errors.h"

namespace converge::client {
namespace json = boost::json;

std::string_view EventTypeName(EventType t) {
  switch (t) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
    case EventType::kBookmark: return "BOOKMARK";
    case EventType::kError: return "ERROR";
  }
  return "UNKNOWN";
}

json::parse_options ObjectParseOptions() {
  json::parse_options opts;
  // Boost.JSON's parser keeps its own stack (no recursion), so a generous depth is safe;
  // the default of 32 rejects legitimate CRD schemas.
  opts.max_depth = 512;
  return opts;
}

WatchDecoder::WatchDecoder() : parser_(json::storage_ptr(), ObjectParseOptions()) {}

util::StatusOr<WatchEvent> WatchDecoder::ToEvent(json::value doc) {
  if (!doc.is_object()) return util::DataLoss("watch event is not a JSON object");
  json::object& o = doc.as_object();
  const json::value* type = o.if_contains("type");
  if (type == nullptr || !type->is_string()) return util::DataLoss("watch event has no type");
  std::string_view t = type->get_string();
  WatchEvent ev;
  if (t == "ADDED") {
    ev.type = EventType::kAdded;
  } else if (t == "MODIFIED") {
    ev.type = EventType::kModified;
  } else if (t == "DELETED") {
    ev.type = EventType::kDeleted;
  } else if (t == "BOOKMARK") {
    ev.type = EventType::kBookmark;
  } else if (t == "ERROR") {
    ev.type = EventType::kError;
  } else {
    return util::DataLoss("unknown watch event type \"" + std::string(t) + "\"");
  }
  json::value* object = o.if_contains("object");
  if (object == nullptr || !object->is_object()) {
    return util::DataLoss("watch event " + std::string(t) + " has no object");
  }
  if (ev.type == EventType::kError) {
    ev.error = StatusFromApiStatus(object->as_object(), 500);
    return ev;
  }
  ev.object = std::make_shared<const api::Object>(std::move(object->as_object()));
  return ev;
}

util::Status WatchDecoder::Feed(std::string_view data, std::deque<WatchEvent>* out) {
  while (!data.empty()) {
    if (!in_value_) {
      size_t start = data.find_first_not_of(" \t\r\n");
      if (start == std::string_view::npos) return util::Status();
      data.remove_prefix(start);
      in_value_ = true;
    }
    json::error_code ec;
    size_t n = parser_.write_some(data.data(), data.size(), ec);
    if (ec) return util::DataLoss("malformed watch stream: " + ec.message());
    data.remove_prefix(n);
    if (parser_.done()) {
      json::value doc = parser_.release();
      parser_.reset();
      in_value_ = false;
      CONVERGE_ASSIGN_OR_RETURN(WatchEvent ev, ToEvent(std::move(doc)));
      out->push_back(std::move(ev));
    }
  }
  return util::Status();
}

util::StatusOr<std::optional<WatchEvent>> StreamWatcher::Next() {
  std::vector<std::shared_ptr<const std::string>> chunks;
  while (pending_.empty()) {
    if (ended_) return std::optional<WatchEvent>();
    if (events_ != nullptr) {
      CONVERGE_ASSIGN_OR_RETURN(bool more, events_->ReadEvents(&pending_));
      if (!more) ended_ = true;
      continue;
    }
    chunks.clear();
    CONVERGE_ASSIGN_OR_RETURN(bool more, body_->Read(&chunks));
    for (const auto& chunk : chunks) {
      CONVERGE_RETURN_IF_ERROR(decoder_.Feed(*chunk, &pending_));
    }
    if (!more) {
      ended_ = true;
      if (decoder_.partial()) {
        return util::Unavailable("watch stream ended in the middle of an event");
      }
    }
  }
  WatchEvent ev = std::move(pending_.front());
  pending_.pop_front();
  return std::optional<WatchEvent>(std::move(ev));
}

}  // namespace converge::client
