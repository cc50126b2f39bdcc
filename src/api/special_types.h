// The JSON forms of upstream's types with custom marshalers (SpecialType in api/schema.h) and of
// protobuf `bytes`: RFC 3339 times, Go durations, base64. Shared by the protobuf codec and field
// validation.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace converge::api {

// meta/v1 Time: "2006-01-02T15:04:05Z" (UTC, whole seconds), from Unix seconds.
std::string FormatTime(int64_t unix_seconds);
// meta/v1 MicroTime: "2006-01-02T15:04:05.000000Z" (UTC, microseconds).
std::string FormatMicroTime(int64_t unix_seconds, int32_t nanos);

struct UnixTime {
  int64_t seconds = 0;
  int32_t nanos = 0;  // [0, 1e9)
};
// Parses an RFC 3339 timestamp ("2006-01-02T15:04:05Z", "...05.123+02:00", lower-case t/z
// accepted as Go does). nullopt when malformed.
std::optional<UnixTime> ParseTime(std::string_view s);

// Go's time.Duration.String(): "0s", "1.5s", "1h2m3s", "300ms", "1µs", "-2m0s".
std::string FormatDuration(int64_t nanoseconds);
// Go's time.ParseDuration: "300ms", "-1.5h", "2h45m", units ns us µs ms s m h; "0" alone.
std::optional<int64_t> ParseDuration(std::string_view s);

// Standard base64 with padding (Go's base64.StdEncoding, which is how []byte marshals to JSON).
std::string Base64Encode(std::string_view bytes);
std::optional<std::string> Base64Decode(std::string_view text);

// Returns `s` with every invalid UTF-8 sequence replaced by U+FFFD, as Go's encoding/json writes
// strings. Valid input is returned unchanged.
std::string SanitizeUtf8(std::string_view s);
bool IsValidUtf8(std::string_view s);

}  // namespace converge::api
