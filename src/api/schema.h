// The type schema: what the schema registry knows about every field of every kind.
//
// One description serves protobuf decoding (field numbers and wire types), strategic merge patch
// (patch strategies and merge keys), server-side apply (list/map/struct types), strict field
// validation and pruning (which fields exist), and OpenAPI (types). Built-in kinds are loaded from
// the data under api/ (derived from upstream's published protobuf definitions); custom resources
// convert their OpenAPI v3 schemas into the same structures.
//
// TypeSchemas are immutable once published and live as long as the registry that made them, so
// consumers hold plain `const TypeSchema*`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace converge::api {

struct TypeSchema;

enum class ValueKind {
  kString,
  kBool,
  kInt32,
  kInt64,
  kFloat,    // protobuf float, JSON number
  kDouble,   // protobuf double, JSON number
  kBytes,    // base64 string in JSON
  kMessage,  // a TypeSchema (possibly a special one, see SpecialType)
  kAny,      // arbitrary JSON (CRD x-kubernetes-preserve-unknown-fields, RawExtension contents)
};

// Types whose JSON form is not an object of their protobuf fields (upstream's custom marshalers).
enum class SpecialType {
  kNone,
  kTime,         // meta/v1 Time: RFC 3339 string, second precision; protobuf {1 seconds, 2 nanos}
  kMicroTime,    // meta/v1 MicroTime: RFC 3339 string with microseconds
  kDuration,     // meta/v1 Duration: Go duration string ("1h2m3s"); protobuf {1 duration ns}
  kQuantity,     // resource.Quantity: string ("100m", "1Gi"); protobuf {1 string}
  kIntOrString,  // intstr.IntOrString: JSON number or string; protobuf {1 type, 2 intVal, 3 strVal}
  kRawExtension,  // runtime.RawExtension: inline JSON; protobuf {1 raw bytes}
  kFieldsV1,      // meta/v1 FieldsV1: inline JSON object; protobuf {1 raw bytes}
  kStringList,    // a protobuf wrapper {repeated string items = 1} whose JSON form is a plain array
                  // of strings (Go `type ExtraValue []string`; meta/v1 Verbs)
};

struct ValueType {
  ValueKind kind = ValueKind::kString;
  const TypeSchema* message = nullptr;  // for kMessage
};

enum class ListType { kUnspecified, kAtomic, kSet, kMap };
enum class MapType { kUnspecified, kGranular, kAtomic };

struct FieldSchema {
  std::string name;  // the JSON name (identical to the protobuf name upstream)
  int number = 0;    // protobuf field number; 0 for fields that exist only in JSON (CRDs)
  bool repeated = false;
  bool is_map = false;  // map<string, value>; `value` is the map's value type
  ValueType value;      // element type for lists, value type for maps, else the field's type
  // A field whose zero value is meaningful (a Go pointer upstream, e.g. spec.replicas, or
  // volumes[].emptyDir): protobuf decoding keeps an explicit zero, false, "" or {} instead of
  // treating it as unset. Despite the name it applies to message fields too.
  bool nullable_scalar = false;
  bool required = false;
  // The field's default as serialized JSON ("\"TCP\"", "0"), or empty when none is declared.
  std::string default_json;

  // Strategic merge patch: "merge", "replace", "retainKeys", "merge,retainKeys" or empty.
  std::string patch_strategy;
  std::string patch_merge_key;

  // Server-side apply.
  ListType list_type = ListType::kUnspecified;
  std::vector<std::string> list_map_keys;
  MapType map_type = MapType::kUnspecified;

  bool PatchStrategyIs(
      std::string_view s) const;  // true if `s` is one of the comma-separated parts
};

struct TypeSchema {
  // A protobuf field that Go embeds with `json:",inline"` (core/v1 Volume's VolumeSource, Probe's
  // ProbeHandler, ...). On the wire it is one nested message under `number`; in JSON the embedded
  // type's fields sit directly in this object, so `fields` holds copies of them (with number 0).
  struct InlineEmbed {
    int number = 0;
    const TypeSchema* type = nullptr;
  };

  std::string name;  // fully qualified, e.g. "io.k8s.api.apps.v1.Deployment"; generated for CRDs
  SpecialType special = SpecialType::kNone;
  // The JSON fields, in declaration order (inline embeds already flattened).
  std::vector<FieldSchema> fields;
  std::vector<InlineEmbed> inline_embeds;
  bool atomic_struct = false;            // +structType=atomic
  bool preserve_unknown_fields = false;  // accept any field (CRDs)

  // Lookups. O(1) by name (a hash table) and by number once BuildIndex() ran; a linear scan
  // before.
  const FieldSchema* Field(std::string_view json_name) const;
  // The field with this protobuf number, or null (inline embeds are not fields: see
  // `inline_embeds`).
  const FieldSchema* FieldByNumber(int number) const;
  const InlineEmbed* InlineEmbedByNumber(int number) const;

  // Builds the indexes behind Field() and FieldByNumber(). Call once `fields` is final (the schema
  // registry does; whoever builds TypeSchemas by hand, e.g. for CRDs, should too). Not thread-safe;
  // TypeSchemas are immutable once published.
  void BuildIndex();

  // Index data, owned by BuildIndex(): an open-addressing table of position + 1 (0: empty) by a
  // hash of the name, at most half full; number -> position + 1; and how many fields there were
  // (a TypeSchema whose fields changed since is looked up by scanning).
  std::vector<uint16_t> by_name_;
  std::vector<uint16_t> by_number_;
  size_t indexed_fields_ = static_cast<size_t>(-1);
};

// Looks types up by fully qualified name. Implemented by the schema registry.
class TypeResolver {
 public:
  virtual ~TypeResolver() = default;
  virtual const TypeSchema* FindType(std::string_view full_name) const = 0;
};

}  // namespace converge::api
