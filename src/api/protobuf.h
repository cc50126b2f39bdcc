// Kubernetes protobuf bodies (Content-Type application/vnd.kubernetes.protobuf) to JSON, and back.
//
// A body is the 4 bytes "k8s\0" followed by a runtime.Unknown message:
//   1 typeMeta {1 apiVersion, 2 kind}, 2 raw (the object's message), 3 contentEncoding,
//   4 contentType.
// The object message is decoded against the kind's TypeSchema (field numbers from the schema
// registry) into the same JSON the object would have had on the JSON wire: Time as RFC 3339,
// IntOrString as a number or string, Quantity as a string, RawExtension inline, bytes as base64,
// inline-embedded Go structs flattened. Go's encoder writes every non-pointer field even when it
// is empty, so empty strings, zeros, false and empty messages/lists/maps are dropped unless the
// field is nullable (a Go pointer: an explicit `replicas: 0` survives). Unknown field numbers are
// skipped, as upstream's decoder does.
//
// Every failure is an InvalidArgument Status with a message fit for a 400 response (the caller
// maps it); malformed, truncated, hostile or oversized input never crashes, and nesting depth is
// bounded.
//
// Thread-safety: pure functions over immutable schemas.
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "api/schema.h"
#include "api/types.h"
#include "util/status.h"

namespace converge::api {

inline constexpr std::string_view kProtobufMagic{"k8s\0", 4};
inline constexpr std::string_view kProtobufContentType = "application/vnd.kubernetes.protobuf";

struct ProtobufLimits {
  // Maximum nesting of messages (a Deployment is about 12 deep). Deeper input is rejected.
  int max_depth = 100;
};

// runtime.Unknown, the envelope around every object.
struct ProtobufEnvelope {
  std::string api_version;
  std::string kind;
  std::string_view raw;  // the object's message; points into the parsed body
  std::string content_encoding;
  std::string content_type;
};

// Checks the magic prefix and parses the envelope.
util::StatusOr<ProtobufEnvelope> ParseProtobufEnvelope(std::string_view body);

// Decodes one message of type `type` into its JSON form.
util::StatusOr<boost::json::object> DecodeProtobufMessage(std::string_view bytes,
                                                          const TypeSchema& type,
                                                          const ProtobufLimits& limits = {});

// Maps a body's kind to its root type; null when the kind is not known.
using KindTypeResolver = std::function<const TypeSchema*(const GroupVersionKind&)>;

// Decodes a whole body: the envelope, then the object against the type `types` gives for its
// apiVersion/kind. The result starts with apiVersion and kind. An unknown kind is an error
// (`no kind "Foo" is registered for version "apps/v1"`).
util::StatusOr<boost::json::object> DecodeProtobufObject(std::string_view body,
                                                         const KindTypeResolver& types,
                                                         const ProtobufLimits& limits = {});
// The same with the built-in kinds (BuiltinTypeForKind): what kubectl's typed clients send.
util::StatusOr<boost::json::object> DecodeProtobufObject(std::string_view body);

struct ProtobufEncodeOptions {
  // Write every non-nullable singular field even when absent or empty, as Go's encoder does
  // (useful to test that decoding drops them).
  bool write_empty_fields = false;
};

// Encodes `obj` (the JSON form of a `type`) as a protobuf message. Fields the type lacks are
// ignored; a value of the wrong JSON type is InvalidArgument.
util::StatusOr<std::string> EncodeProtobufMessage(const boost::json::object& obj,
                                                  const TypeSchema& type,
                                                  const ProtobufEncodeOptions& options = {});
// Encodes a whole body: "k8s\0" + runtime.Unknown carrying obj's apiVersion and kind.
util::StatusOr<std::string> EncodeProtobufObject(const boost::json::object& obj,
                                                 const TypeSchema& type,
                                                 const ProtobufEncodeOptions& options = {});

}  // namespace converge::api
