// Object: one Kubernetes API object as a JSON document, with fast accessors for the parts every
// component reads (apiVersion, kind, metadata).
//
// Objects are plain values while being built; once shared (caches, watch events, informers) they
// are handed out as ObjectPtr = shared_ptr<const Object> and never modified again: changing one
// means copying it first, which makes client-go's "do not mutate the cache" a compile error.
//
// Compact objects: an Object may instead hold its document as a CompactTree (api/json_view.h),
// as the versions in-process informers share do (a third of a Boost.JSON tree's size). Readers
// that go through view() and the accessors below read either form directly; doc() on a compact
// object builds its Boost.JSON tree once and keeps it (CompactMaterializations() counts those), and
// mutable_doc() turns it back into a plain object. Copies of a compact object share its tree.
//
// Thread-safety: a const Object may be read from any number of threads (doc()'s one-time build of
// a compact object's tree included); mutation needs exclusive access.
#pragma once

#include <boost/json.hpp>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_view.h"
#include "api/types.h"
#include "util/status.h"

namespace converge::api {

namespace json = boost::json;

class Object {
 public:
  Object() = default;
  explicit Object(json::object doc) : doc_(std::move(doc)) {}
  // A compact object over `tree` (which must hold a document).
  explicit Object(CompactTree tree) : compact_(std::move(tree)) {}
  Object(const Object& other);
  Object(Object&& other) noexcept;
  Object& operator=(const Object& other);
  Object& operator=(Object&& other) noexcept;
  ~Object();

  // Parses a JSON document that must be an object. Errors are InvalidArgument.
  static util::StatusOr<Object> Parse(std::string_view text);
  // A compact copy of `doc` (a plain copy when the document does not fit the compact encoding).
  static Object Compact(const json::object& doc);

  bool is_compact() const { return static_cast<bool>(compact_); }
  // The document, read-only, in whichever form the object holds it.
  ObjectView view() const { return compact_ ? compact_.root() : ObjectView(doc_); }
  // The document as a Boost.JSON tree (built once for a compact object: prefer view()).
  const json::object& doc() const {
    if (compact_) [[unlikely]]
      return Materialized();
    return doc_;
  }
  json::object& mutable_doc();

  std::string_view api_version() const { return GetString(view(), "apiVersion"); }
  std::string_view kind() const { return GetString(view(), "kind"); }
  GroupVersionKind Gvk() const;
  void SetGvk(const GroupVersionKind& gvk);

  // Metadata. Accessors return empty values (absent views) when a field is absent.
  ObjectView metadata() const { return view().if_contains("metadata").if_object(); }
  json::object& mutable_metadata();  // creates metadata when absent
  std::string_view name() const { return MetaString("name"); }
  std::string_view generate_name() const { return MetaString("generateName"); }
  std::string_view namespace_() const { return MetaString("namespace"); }
  std::string_view uid() const { return MetaString("uid"); }
  std::string_view resource_version() const { return MetaString("resourceVersion"); }
  std::string_view creation_timestamp() const { return MetaString("creationTimestamp"); }
  std::string_view deletion_timestamp() const { return MetaString("deletionTimestamp"); }
  bool being_deleted() const { return !deletion_timestamp().empty(); }
  int64_t generation() const;
  ObjectKey key() const { return {std::string(namespace_()), std::string(name())}; }

  ObjectView labels() const { return metadata().if_contains("labels").if_object(); }
  ObjectView annotations() const { return metadata().if_contains("annotations").if_object(); }
  // The value of one label / annotation, or nullopt.
  std::optional<std::string_view> label(std::string_view key) const;
  std::optional<std::string_view> annotation(std::string_view key) const;
  ArrayView owner_references() const {
    return metadata().if_contains("ownerReferences").if_array();
  }
  ArrayView finalizers() const { return metadata().if_contains("finalizers").if_array(); }
  bool HasFinalizer(std::string_view finalizer) const;

  void set_name(std::string_view v) { SetMetaString("name", v); }
  void set_namespace(std::string_view v) { SetMetaString("namespace", v); }
  void set_uid(std::string_view v) { SetMetaString("uid", v); }
  void set_resource_version(std::string_view v) { SetMetaString("resourceVersion", v); }
  void set_generation(int64_t g) { mutable_metadata()["generation"] = g; }
  void SetLabel(std::string_view key, std::string_view value);
  void SetAnnotation(std::string_view key, std::string_view value);
  // Adds (if missing) / removes (if present) a finalizer; returns whether anything changed.
  bool AddFinalizer(std::string_view finalizer);
  bool RemoveFinalizer(std::string_view finalizer);

  // Compact JSON.
  std::string Serialize() const {
    return compact_ ? api::Serialize(view()) : json::serialize(doc_);
  }

  // Returns the string at `key` of `obj`, or "" when absent or not a string.
  static std::string_view GetString(const json::object& obj, std::string_view key);
  static std::string_view GetString(ObjectView obj, std::string_view key) {
    return api::GetString(obj, key);
  }

 private:
  const json::object& Materialized() const;
  std::string_view MetaString(std::string_view key) const;
  void SetMetaString(std::string_view key, std::string_view value);

  json::object doc_;     // the document, unless compact
  CompactTree compact_;  // the document, when compact
  // A compact object's Boost.JSON tree, once doc() has built it (owned).
  mutable std::atomic<json::object*> materialized_{nullptr};
};

// How many times doc() has built a compact object's Boost.JSON tree, process-wide.
uint64_t CompactMaterializations();

using ObjectPtr = std::shared_ptr<const Object>;

// JSON helpers for reading nested fields without a chain of null checks.
// Find(v, {"spec", "template", "spec"}) returns the value at that path or null.
const json::value* Find(const json::value& v, std::initializer_list<std::string_view> path);
const json::value* Find(const json::object& o, std::initializer_list<std::string_view> path);
// Typed reads; the fallback is returned when the path is absent or of another type.
std::string_view FindString(const json::object& o, std::initializer_list<std::string_view> path,
                            std::string_view fallback = {});
int64_t FindInt(const json::object& o, std::initializer_list<std::string_view> path,
                int64_t fallback = 0);
bool FindBool(const json::object& o, std::initializer_list<std::string_view> path,
              bool fallback = false);
const json::object* FindObject(const json::object& o, std::initializer_list<std::string_view> path);
const json::array* FindArray(const json::object& o, std::initializer_list<std::string_view> path);
// Reads a dotted path ("spec.nodeName") and renders scalars as a field selector compares them:
// strings as-is, booleans "true"/"false", numbers in decimal; absent or non-scalar gives "".
std::string FieldValue(ObjectView o, std::string_view dotted_path);

// Returns `obj[key]` as an object, creating (or replacing a non-object) when needed.
json::object& EnsureObject(json::object& obj, std::string_view key);

}  // namespace converge::api
