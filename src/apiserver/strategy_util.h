// Building blocks shared by the per-kind strategies: field paths, upstream's rendering of bad
// values, resource quantities, int-or-string values and the common field validators
// (k8s.io/apimachinery/pkg/util/validation and pkg/apis/meta/v1/validation).
//
// Everything here is a pure function of its arguments and safe to call from any thread.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/quantity.h"
#include "apiserver/errors.h"

namespace converge::apiserver::sv {

namespace json = boost::json;

using Causes = std::vector<StatusCause>;

inline void Append(Causes& to, Causes from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

// Field paths as upstream's field.Path renders them: "spec.containers[0].name", "data[key]".
std::string Child(std::string_view path, std::string_view name);
std::string Index(std::string_view path, size_t i);
std::string Key(std::string_view path, std::string_view key);

// A FieldValueInvalid cause whose value is already rendered (Go's %#v of a struct or map).
StatusCause InvalidRendered(std::string field, std::string rendered_value, std::string detail);
// Upstream renders int-typed bad values with %v; FieldInvalid on an int64 JSON value does that.
StatusCause InvalidInt(std::string field, int64_t value, std::string detail);

// Go's %#v rendering of common API values, so that messages match upstream byte for byte.
// map[string]string{"a":"b"} (keys sorted; `map[string]string(nil)` when absent or null).
std::string GoStringMap(const json::value* map);
// []string{"a", "b"} (`[]string(nil)` when absent).
std::string GoStringSlice(const json::value* list);
// v1.LabelSelector{MatchLabels:..., MatchExpressions:...} (a null pointer renders "null").
std::string GoLabelSelector(const json::value* selector);
// intstr.IntOrString{Type:1, IntVal:0, StrVal:"25%"}.
std::string GoIntOrString(const json::value* v);

// Field access on documents: the value at `key` (null when absent), an object's spec and status
// (an empty object when absent).
const json::value* Get(const json::object& o, std::string_view key);
const json::value* Get(const api::Object& o, std::string_view key);
const json::object& Spec(const api::Object& o);
const json::object& Status(const api::Object& o);
// metadata, or an empty object.
const json::object& Metadata(const api::Object& o);
// Copies `key` of `from` into `to`, or erases it from `to` when `from` lacks it.
void CopyField(json::object& to, const json::object& from, std::string_view key);
bool Truthy(const json::value* v);  // a JSON true
// What an update may never change in metadata (uid, creationTimestamp, deletionTimestamp,
// deletionGracePeriodSeconds, generation): taken from `old`. For status strategies that keep the
// client's metadata (rest.BeforeUpdate does this for every update upstream).
void KeepServerManagedMetadata(api::Object& obj, const api::Object& old);

// Typed reads that tolerate absent or mistyped fields.
const json::object* AsObject(const json::value* v);
const json::array* AsArray(const json::value* v);
std::optional<int64_t> AsInt(const json::value* v);
std::string_view AsString(const json::value* v);
bool IsSet(const json::value* v);  // present and not null

// ---- Name and format checks (each returns upstream's messages; empty = valid). ----
std::vector<std::string> IsDns1035Label(std::string_view v);
std::vector<std::string> IsValidPortNum(int64_t port);
std::vector<std::string> IsValidPortName(std::string_view name);
std::vector<std::string> IsConfigMapKey(std::string_view key);
std::vector<std::string> IsEnvVarName(std::string_view name);  // relaxed rules (1.32 default)
std::vector<std::string> IsValidPercent(std::string_view v);
std::vector<std::string> IsValidPathSegmentName(std::string_view v);
std::vector<std::string> IsValidIp(std::string_view v);
bool IsIpv6(std::string_view v);

// ---- Field validators (upstream names in comments). ----
// ValidateNonnegativeField: "must be greater than or equal to 0".
Causes NonNegative(const std::string& field, const json::value* v);
// Rejects non-integers of a field that must be an integer.
Causes ValidateDns1123Label(const std::string& field, std::string_view v);
Causes ValidateDns1123Subdomain(const std::string& field, std::string_view v);
Causes ValidateQualifiedNameField(const std::string& field, std::string_view v);
// unversionedvalidation.ValidateLabels: keys are qualified names, values label values; errors
// name `field` itself (the map), as upstream does.
Causes ValidateLabelsField(const std::string& field, const json::value* labels);
// ValidateAnnotations: keys qualified (lower-cased), total size <= 256 KiB.
Causes ValidateAnnotationsField(const std::string& field, const json::value* annotations);
// unversionedvalidation.ValidateLabelSelector (strict label values).
Causes ValidateLabelSelectorField(const std::string& field, const json::value* selector);
// ValidateImmutableField with the value already rendered the way upstream prints it.
void Immutable(Causes& out, const std::string& field, const json::value* now,
               const json::value* before, const std::string& rendered_now);

// ---- Int-or-string (intstr.IntOrString) ----
struct IntOrPercent {
  bool is_string = false;
  int64_t int_val = 0;
  std::string str_val;
};
std::optional<IntOrPercent> ParseIntOrString(const json::value* v);
// getIntOrPercentValue: the percent number for a valid percent string, else the int (0 for bad
// strings).
int64_t IntOrPercentValue(const IntOrPercent& v);

// ---- Resource quantities (k8s.io/apimachinery/pkg/api/resource) ----
// Moved to api/quantity.h (the scheduler and kubelet need it too).
using Quantity = api::Quantity;

inline constexpr std::string_view kQuantityRegexError =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

}  // namespace converge::apiserver::sv
