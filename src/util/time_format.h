// Time in the API's text forms: RFC 3339 timestamps (meta/v1 Time and MicroTime) and the
// human durations kubectl and Table rows print ("7s", "5m2s", "3h", "12d").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace converge::util {

using WallTime = std::chrono::system_clock::time_point;

// "2025-01-01T00:00:00Z" (second precision, as meta/v1 Time).
std::string FormatRfc3339(WallTime t);
// "2025-01-01T00:00:00.000000Z" (microseconds, as meta/v1 MicroTime).
std::string FormatRfc3339Micro(WallTime t);
// Accepts "Z" or "+hh:mm" offsets and optional fractional seconds.
std::optional<WallTime> ParseRfc3339(std::string_view s);

// Upstream's duration.HumanDuration: "0s", "59s", "2m30s"→"2m30s" under 10 minutes, "3h",
// "2d3h", "25d", "2y"...
std::string HumanDuration(std::chrono::nanoseconds d);
// Upstream's ShortHumanDuration: "5s", "5m", "5h", "5d", "5y".
std::string ShortHumanDuration(std::chrono::nanoseconds d);

}  // namespace converge::util
