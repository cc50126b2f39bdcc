// Structural schemas: the OpenAPI v3 schema of a CustomResourceDefinition version
// (apiextensions.k8s.io/v1 JSONSchemaProps) and the four things the API server does with it to a
// custom resource, as pure functions:
//
//   PruneNulls + Default   defaulting (upstream's structuraldefaulting.Default after
//                          PruneNonNullableNullsWithoutDefaults): `default` fills absent fields
//                          and non-nullable nulls, recursively inside defaulted values too;
//   Prune                  drops fields the schema does not declare (upstream's pruning
//                          algorithm), returning their paths for fieldValidation=Strict|Warn;
//   Validate               the kube-openapi schema validator plus the x-kubernetes-list-type
//                          checks, worded exactly as upstream so kubectl prints the same lines:
//     spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:
//     "string" spec.size: Unsupported value: "huge": supported values: "small", "large" spec.name:
//     Too long: may not be more than 5 bytes spec.ports[1]: Duplicate value: map[string]interface
//     {}{"name":"http"}
//   BuildTypeSchemas       the same schema as the TypeSchemas every built-in kind has, so
//                          server-side apply, managedFields and strict decoding treat custom
//                          resources as data like any other kind.
//
// Paths: the schema validator names array items "items.0.name" (kube-openapi's own notation,
// kept because kubectl shows it); pruning and list-type checks use "items[0].name" (field.Path),
// again as upstream.
//
// Not enforced (accepted in schemas, see docs/COMPATIBILITY.md): anyOf, oneOf, not, formats,
// x-kubernetes-validations (CEL).
//
// Thread-safety: a parsed JsonSchema is immutable and may be shared; the functions are pure.
#pragma once

#include <boost/json.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "api/schema.h"
#include "util/status.h"

namespace converge::api {

struct JsonSchema {
  std::string type;  // object, array, string, integer, number, boolean, or "" (any)
  std::string format;
  std::string description;
  bool nullable = false;

  std::map<std::string, std::shared_ptr<const JsonSchema>, std::less<>> properties;
  std::shared_ptr<const JsonSchema> items;
  std::shared_ptr<const JsonSchema> additional_properties;  // a schema (maps)
  std::vector<std::string> required;
  std::vector<std::shared_ptr<const JsonSchema>> all_of;

  std::optional<std::vector<boost::json::value>> enum_values;
  std::string pattern;  // ECMA syntax as written; compiled below
  std::shared_ptr<const std::regex> pattern_regex;
  std::optional<double> maximum;
  bool exclusive_maximum = false;
  std::optional<double> minimum;
  bool exclusive_minimum = false;
  std::optional<double> multiple_of;
  std::optional<int64_t> max_length, min_length;
  std::optional<int64_t> max_items, min_items;
  std::optional<int64_t> max_properties, min_properties;
  std::optional<boost::json::value> default_value;

  bool preserve_unknown_fields = false;  // x-kubernetes-preserve-unknown-fields
  bool int_or_string = false;            // x-kubernetes-int-or-string
  bool embedded_resource = false;        // x-kubernetes-embedded-resource
  std::string list_type;                 // x-kubernetes-list-type: atomic, set, map
  std::vector<std::string> list_map_keys;
  std::string map_type;  // x-kubernetes-map-type: granular, atomic

  const JsonSchema* Property(std::string_view name) const;
};

// Parses a JSONSchemaProps document. InvalidArgument on shapes that cannot be a schema (a
// property that is not an object, an unparseable pattern, a negative length bound).
util::StatusOr<std::shared_ptr<const JsonSchema>> ParseJsonSchema(const boost::json::value& doc);

// One validation failure, as a meta/v1 StatusCause: reason (FieldValueInvalid,
// FieldValueTypeInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueTooLong,
// FieldValueTooMany, FieldValueDuplicate), the field path and the full message without the field
// ("Invalid value: 3: spec.replicas in body should be less than or equal to 2").
struct SchemaError {
  std::string reason;
  std::string field;
  std::string message;
  bool operator==(const SchemaError&) const = default;
};

// Validates a whole custom resource (`obj` includes apiVersion, kind and metadata) against the
// schema of its version, then the x-kubernetes-list-type invariants. Empty = valid.
std::vector<SchemaError> ValidateCustomResource(const JsonSchema& schema,
                                                const boost::json::object& obj);

// Removes non-nullable nulls that have no default (upstream: PruneNonNullableNullsWithoutDefaults)
// and then applies defaults. `obj` is the whole resource.
void DefaultCustomResource(const JsonSchema& schema, boost::json::object& obj);

// Removes fields the schema does not declare and returns their paths ("spec.foo",
// "spec.items[0].bar"), in document order. At the root apiVersion, kind and metadata are kept
// (metadata is checked against ObjectMeta separately, see PruneObjectMeta).
std::vector<std::string> PruneCustomResource(const JsonSchema& schema, boost::json::object& obj);

// Removes the fields of obj["metadata"] that ObjectMeta lacks; returns "metadata.<path>" paths.
std::vector<std::string> PruneObjectMeta(boost::json::object& obj);

// TypeSchemas for a custom resource kind: the root type (apiVersion, kind, metadata as
// io.k8s.apimachinery...ObjectMeta, then the schema's own properties), nested types for nested
// objects, and the list type (apiVersion, kind, metadata as ListMeta, items). Types live in
// `types`; the returned pointers stay valid as long as it does.
struct CustomResourceTypes {
  std::deque<TypeSchema> types;
  const TypeSchema* root = nullptr;
  const TypeSchema* list = nullptr;
};
// `type_name` names the root ("io.converge.lb.v1.LoadBalancer"); `list_type_name` the list.
// A null schema gives a root that preserves unknown fields.
std::unique_ptr<CustomResourceTypes> BuildTypeSchemas(const JsonSchema* schema,
                                                      const std::string& type_name,
                                                      const std::string& list_type_name);

// How Go's %v prints a float64 ("1", "1.5", "1e+06", "1e-05"), as upstream's messages show
// numbers.
std::string GoFloat(double d);

}  // namespace converge::api
