// Field paths and field sets: who owns what in an object (upstream's
// sigs.k8s.io/structured-merge-diff fieldpath package), and their `fieldsV1` form in
// metadata.managedFields.
//
// A path names one field of an object step by step. Each step is a PathElement:
//   f:<name>      a struct field or a key of a granular map          String(): ".name"
//   k:{...}       a list-map entry by its keys, keys sorted by name   String(): `[name="nginx"]`
//   v:<json>      a set entry by its value                            String(): `[="x"]`
//   i:<n>         a positional list entry (never produced here)       String(): "[3]"
// e.g. .spec.template.spec.containers[name="nginx"].image.
//
// A FieldSet is a tree of such steps where each node may itself be a member (owned) and may have
// children. In fieldsV1 a node is a JSON object: its children by serialized element, and "." : {}
// when the node is a member *and* has children; a node without children is simply `{}`:
//
//   {"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{}}}
//
//   holds .metadata.labels (member with children), .metadata.labels.app and .spec.replicas, but
//   not .metadata or .spec (parents with children only).
//
// Elements are ordered as upstream orders them (fields < keys < values < indexes; fields by name,
// keys by their sorted name/value lists, values with structured-merge-diff's total order on
// values), and fieldsV1 is written in that order, so our output is byte-identical to upstream's.
//
// Thread-safety: values; const methods are safe to call concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "util/status.h"

namespace converge::api {

// structured-merge-diff's total order on values: numbers (ints and floats compared numerically) <
// strings < booleans < lists < maps < null. Returns <0, 0 or >0.
int CompareJsonValues(const boost::json::value& a, const boost::json::value& b);

class PathElement {
 public:
  enum class Kind : uint8_t { kField, kKey, kValue, kIndex };
  // One key of a list-map entry: {name, value}.
  using KeyField = std::pair<std::string, boost::json::value>;

  PathElement() = default;  // an empty field name
  static PathElement Field(std::string name);
  // Sorts the fields by name (stable), as upstream's FieldList.Sort does.
  static PathElement Key(std::vector<KeyField> fields);
  static PathElement Value(boost::json::value v);
  static PathElement Index(int64_t i);

  Kind kind() const { return kind_; }
  const std::string& field_name() const { return name_; }     // kField
  const std::vector<KeyField>& key() const { return key_; }   // kKey
  const boost::json::value& value() const { return value_; }  // kValue
  int64_t index() const { return index_; }                    // kIndex

  int Compare(const PathElement& o) const;
  friend bool operator==(const PathElement& a, const PathElement& b) { return a.Compare(b) == 0; }
  friend bool operator<(const PathElement& a, const PathElement& b) { return a.Compare(b) < 0; }

  // ".name", `[name="nginx",port=80]`, `[="x"]`, "[3]" (upstream's PathElement.String).
  std::string ToString() const;
  // The fieldsV1 key: "f:name", `k:{"name":"nginx"}`, `v:"x"`, "i:3".
  std::string Serialize() const;
  // Appends Serialize() to `out`.
  void AppendSerialized(std::string& out) const;
  // Parses a fieldsV1 key. InvalidArgument for malformed keys; Unimplemented for a well-formed
  // key of a type this version does not know (upstream skips those).
  static util::StatusOr<PathElement> Parse(std::string_view s);

 private:
  Kind kind_ = Kind::kField;
  std::string name_;
  std::vector<KeyField> key_;
  boost::json::value value_;
  int64_t index_ = 0;
};

using Path = std::vector<PathElement>;

// The concatenation of the elements' ToString(): ".spec.containers[name=\"x\"].image".
std::string PathString(const Path& path);

class FieldSet {
 public:
  struct Child;

  FieldSet();
  FieldSet(const FieldSet&);
  FieldSet(FieldSet&&) noexcept;
  FieldSet& operator=(const FieldSet&);
  FieldSet& operator=(FieldSet&&) noexcept;
  ~FieldSet();

  // Makes a set holding exactly these paths.
  static FieldSet FromPaths(const std::vector<Path>& paths);

  // Adds `path` as a member. Its parents are not added. The empty path is ignored (nobody owns the
  // whole object).
  void Insert(const Path& path);
  bool Has(const Path& path) const;
  // No member anywhere in the tree.
  bool Empty() const;
  // Number of members in the tree.
  size_t Size() const;

  // Set algebra on members, upstream's semantics:
  //  - Union and Intersection are on members at every level.
  //  - Difference removes members of `o` only, not their descendants ("parent - child = parent",
  //    "child - parent = child").
  //  - RecursiveDifference also removes every descendant of a member of `o`.
  FieldSet Union(const FieldSet& o) const;
  FieldSet Intersection(const FieldSet& o) const;
  FieldSet Difference(const FieldSet& o) const;
  FieldSet RecursiveDifference(const FieldSet& o) const;
  // *this = Difference(o), in place: what `o` does not reach is neither copied nor moved.
  void Subtract(const FieldSet& o);
  friend bool operator==(const FieldSet& a, const FieldSet& b);

  // The subtree below `pe` (its paths without the `pe` prefix); empty when there is none.
  const FieldSet& WithPrefix(const PathElement& pe) const;

  // Calls `fn` for every member in upstream's order (pre-order: a node's members, then its
  // children's subtrees in element order).
  void Iterate(const std::function<void(const Path&)>& fn) const;
  // All members as strings, one per line, in Iterate order (for tests and messages).
  std::string ToString() const;

  // fieldsV1: see the file comment.
  boost::json::object ToFieldsV1() const;
  // Parses fieldsV1 (a JSON object; null is the empty set). Keys of unknown element types are
  // skipped; malformed keys and non-object children are InvalidArgument, as is nesting deeper
  // than 1000 levels.
  static util::StatusOr<FieldSet> FromFieldsV1(const boost::json::value& v);
  // Whether a member of this set is a member of the set `v1` encodes, read without decoding
  // `v1`: the walk looks up only this set's elements, serialized, among `v1`'s keys. `v1` must be
  // fieldsV1 as FromFieldsV1 accepts it and as ToFieldsV1 writes it (element keys in their
  // serialized form; keys written otherwise are not found).
  bool IntersectsFieldsV1(const boost::json::object& v1) const;

  // Tree access for the walkers in this module.
  const std::vector<PathElement>& members() const { return members_; }
  const std::vector<Child>& children() const { return children_; }

  // For walkers that insert many paths sharing a prefix (structured_merge.cc's Comparer), so that
  // each insert need not search from the root. Descend: the subtree below `pe`, created when
  // absent; the pointer stays valid until a sibling of it is created (children are held by value,
  // in order). Call InsertMember on it, or Descend further, before returning from the operation:
  // an empty child must not outlive it (see children_).
  FieldSet* Descend(const PathElement& pe);
  void InsertMember(const PathElement& pe);

 private:
  const FieldSet* FindChild(const PathElement& pe) const;
  bool HasMember(const PathElement& pe) const;
  void IteratePrefix(Path& prefix, const std::function<void(const Path&)>& fn) const;
  void EmitV1(bool include_self, boost::json::object& out) const;
  static util::Status ReadV1(const boost::json::object& o, int depth, FieldSet* children,
                             bool* is_member);

  // Both sorted by element and free of duplicates. Children are never empty sets once an
  // operation returns (Union, Insert and parsing never create empty children; Difference and
  // Intersection drop them).
  std::vector<PathElement> members_;
  std::vector<Child> children_;
};

struct FieldSet::Child {
  PathElement element;
  FieldSet set;
};

}  // namespace converge::api
