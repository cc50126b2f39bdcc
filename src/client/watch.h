// Watch events and their decoding from a streamed response (k8s.io/apimachinery/pkg/watch).
//
// A watch body is a sequence of JSON documents {"type": "...", "object": {...}}; the server puts a
// newline after each, but nothing here depends on that or on chunk boundaries: the decoder finds
// document boundaries itself, so an event may span chunks and a chunk may hold many events.
//
// Thread-safety: a Watcher and a WatchDecoder are used by one thread at a time.
#pragma once

#include <boost/json.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <string_view>

#include "api/object.h"
#include "client/transport.h"
#include "util/status.h"

namespace converge::client {

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };

std::string_view EventTypeName(EventType t);  // "ADDED", "MODIFIED", ...

struct WatchEvent {
  EventType type = EventType::kAdded;
  // The object (for kBookmark: only metadata.resourceVersion is meaningful). Null for kError.
  api::ObjectPtr object;
  // For kError: the meta/v1 Status the server sent, as a util::Status (see api_errors.h), e.g.
  // kOutOfRange with reason "Expired" when the watched resourceVersion was compacted.
  util::Status error;
};

// The consumer side of one watch.
class Watcher {
 public:
  virtual ~Watcher() = default;
  // Blocks for the next event. nullopt: the watch ended cleanly (server timeout, server
  // closing); the caller re-watches from the last resourceVersion it saw. Errors: what the
  // transport reports (kCancelled after stop, kUnavailable for a lost connection, ...) or
  // kDataLoss for an undecodable stream.
  virtual util::StatusOr<std::optional<WatchEvent>> Next() = 0;
};

// Turns bytes into WatchEvents.
class WatchDecoder {
 public:
  WatchDecoder();
  // Decodes `data`, appending every completed event to `out`. kDataLoss on malformed input
  // (the decoder is then unusable).
  util::Status Feed(std::string_view data, std::deque<WatchEvent>* out);
  // True when the bytes of an unfinished event are buffered.
  bool partial() const { return in_value_; }

  // Converts one decoded watch document.
  static util::StatusOr<WatchEvent> ToEvent(boost::json::value doc);

 private:
  boost::json::stream_parser parser_;
  bool in_value_ = false;
};

// Implemented, besides ResponseStream, by the bodies of transports that hold watch events as
// objects already (the all-in-one server's in-process transport: the API server's watch cache
// shares its parsed objects with every in-process reader). A StreamWatcher then reads events
// instead of decoding bytes.
class EventStream {
 public:
  virtual ~EventStream() = default;
  // As ResponseStream::Read, appending whole events.
  virtual util::StatusOr<bool> ReadEvents(std::deque<WatchEvent>* out) = 0;
};

// A Watcher over a streamed HTTP (or in-process) response body.
class StreamWatcher final : public Watcher {
 public:
  explicit StreamWatcher(std::unique_ptr<ResponseStream> body)
      : body_(std::move(body)), events_(dynamic_cast<EventStream*>(body_.get())) {}
  util::StatusOr<std::optional<WatchEvent>> Next() override;

 private:
  std::unique_ptr<ResponseStream> body_;
  EventStream* const events_;  // body_ as an EventStream, or null
  WatchDecoder decoder_;
  std::deque<WatchEvent> pending_;
  bool ended_ = false;
};

// JSON parse options for API objects: deep enough for CustomResourceDefinition schemas.
boost::json::parse_options ObjectParseOptions();

}  // namespace converge::client
