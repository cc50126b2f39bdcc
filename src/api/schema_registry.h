// The schema registry: every built-in type's TypeSchema, loaded from the data under api/.
//
// api/schema/*.json (derived from upstream's protobuf definitions by scripts/gen-schema.py) gives
// types, fields, protobuf numbers and patch/apply markers; api/overrides.json adds what protobuf
// does not tell (special JSON forms, Go pointers, inline embedding). Both are embedded in the
// binary (api/embedded_data.h). Loading resolves every type reference to a pointer
// (ValueType::message) and builds the per-type lookup indexes, so decoding and patching never look
// names up by string.
//
// Thread-safety: a SchemaRegistry is immutable after Parse(); share it freely. Its TypeSchemas live
// as long as the registry.
#pragma once

#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/schema.h"
#include "util/status.h"

namespace converge::api {

class SchemaRegistry final : public TypeResolver {
 public:
  // Builds a registry from schema documents (the api/schema/*.json format) and an overrides
  // document (api/overrides.json). Fails with InvalidArgument on malformed data, a reference to an
  // unknown type, or an override naming a type or field that does not exist.
  static util::StatusOr<std::unique_ptr<SchemaRegistry>> Parse(
      std::span<const std::string_view> schema_docs, std::string_view overrides_doc);

  // Looks a type up by its fully qualified name ("io.k8s.api.apps.v1.Deployment").
  const TypeSchema* FindType(std::string_view full_name) const override;

  // Every type, in load order.
  const std::deque<TypeSchema>& types() const { return types_; }

 private:
  SchemaRegistry() = default;

  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // Constant after Parse(). deque: stable addresses for the pointers handed out.
  std::deque<TypeSchema> types_;
  std::unordered_map<std::string, TypeSchema*, NameHash, std::equal_to<>> by_name_;
};

// The built-in types, parsed from the embedded api/ data on first use (a few milliseconds) and
// kept for the life of the process. Aborts if the embedded data is broken: that is a build defect,
// which the unit tests catch.
const SchemaRegistry& BuiltinSchemas();

}  // namespace converge::api
