// metadata.managedFields, decoded: which manager owns which fields (upstream's
// k8s.io/apimachinery/pkg/util/managedfields/internal managedfields.go).
//
// On the wire each entry is
//   {"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1",
//    "time":"2025-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{...},"subresource":"status"}
// Inside, entries are keyed by a manager identifier: the entry's JSON without time, fieldsType
// and fieldsV1, and without apiVersion for Apply entries (an applier keeps one entry whatever
// version it applies in), e.g. {"manager":"kubectl","operation":"Apply"} or
// {"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1"}. Two writes with the
// same identifier share an entry; anything else gets its own.
//
// Thread-safety: values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "api/fieldpath.h"
#include "util/status.h"

namespace converge::apiserver {

inline constexpr std::string_view kOperationApply = "Apply";
inline constexpr std::string_view kOperationUpdate = "Update";

// One manager's fields (upstream's fieldpath.VersionedSet).
struct ManagerFields {
  api::FieldSet set;
  std::string api_version;
  bool applied = false;  // operation Apply
  // Set when the entry was decoded with SetReading::kWhenNeeded and `set` has not been read yet:
  // the entry's fieldsV1 as stored, in the document it was decoded from (which must outlive
  // this). `set` is empty until ReadManagerSet; EncodeManagedFields writes this as it is.
  const boost::json::value* unread = nullptr;  // an object
};

struct ManagedFields {
  std::map<std::string, ManagerFields> fields;  // by manager identifier
  std::map<std::string, std::string> times;     // by identifier; RFC 3339, seconds, UTC
};

// The parts of an identifier.
struct ManagerInfo {
  std::string manager;
  std::string operation;
  std::string api_version;  // empty for Apply
  std::string subresource;
};

// Builds an identifier (upstream's BuildManagerIdentifier): Go's JSON of the entry, members
// omitted when empty, api_version dropped for Apply.
std::string ManagerIdentifier(std::string_view manager, std::string_view operation,
                              std::string_view api_version, std::string_view subresource);
// Parses an identifier back; nullopt when it is not one. The identifiers ManagerIdentifier
// writes for plain ASCII names are read without a JSON parser; anything else goes through
// ParseManagerIdentifierAsJson, and both ways give the same answer.
std::optional<ManagerInfo> ParseManagerIdentifier(std::string_view identifier);
// The general reader: any JSON object with string (or null) members.
std::optional<ManagerInfo> ParseManagerIdentifierAsJson(std::string_view identifier);

// Decodes metadata.managedFields (an array; null or absent is empty). Each entry needs operation
// Apply or Update, a non-empty apiVersion and fieldsType FieldsV1, and valid fieldsV1; a later
// entry with the same identifier replaces an earlier one. InvalidArgument otherwise, with
// upstream's wording ("operation must be `Apply` or `Update`", "apiVersion must not be empty",
// "missing fieldsType in managed fields entry 0", ...).
//
// kWhenNeeded leaves each entry's fieldsV1 unread (ManagerFields::unread) for a write that may not
// need it: an entry the write does not touch is carried over as stored instead of being decoded
// and encoded again. Only for managedFields this server (or kube-apiserver) encoded, i.e. read from
// a stored object: their fieldsV1 were checked when written, and are not checked again.
enum class SetReading { kNow, kWhenNeeded };
util::StatusOr<ManagedFields> DecodeManagedFields(const boost::json::value* managed_fields,
                                                  SetReading reading = SetReading::kNow);
// Reads an unread entry's set (no-op when it was read).
util::Status ReadManagerSet(ManagerFields& fields);

// Encodes entries in upstream's order: Apply before Update, then by time (entries without one
// first), manager, apiVersion, subresource. Empty when there are no managers (the caller then
// removes metadata.managedFields, as upstream does).
boost::json::array EncodeManagedFields(const ManagedFields& managed);

}  // namespace converge::apiserver
