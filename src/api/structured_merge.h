// Structured merge: the schema-aware operations behind managedFields and server-side apply
// (upstream's sigs.k8s.io/structured-merge-diff typed package), over Boost.JSON objects.
//
// How the schema registry's types read here (upstream's OpenAPI-to-SMD conversion):
//  - a message type is a struct: each field is tracked on its own, unless `atomic_struct`
//    (+structType=atomic, e.g. LabelSelector), which makes the whole value one leaf;
//  - a map field (map<string, V>) is granular: each key is tracked on its own (`f:<key>`), unless
//    map_type is atomic (e.g. nodeSelector);
//  - a list field follows list_type: atomic (one leaf, replaced whole: command, args), set
//    (`v:<value>` per item: finalizers) or map (`k:{...}` per item, by list_map_keys: containers by
//    name, ports by containerPort+protocol, with key defaults from the element's schema, e.g.
//    protocol "TCP"); a list without list_type is a map by its strategic-merge key when its patch
//    strategy is "merge" (a set without a key), else atomic;
//  - Time, MicroTime, Duration, Quantity and IntOrString are scalars; RawExtension, FieldsV1 and
//    arbitrary JSON (CRD x-kubernetes-preserve-unknown-fields) are "deduced": objects are granular
//    maps of deduced values, arrays are atomic, everything else is a scalar;
//  - a null schema, and any field a struct does not declare, are deduced the same way, so custom
//    resources without a schema and partial schemas work.
// A value whose JSON type does not fit its schema (a string where a struct is expected) is
// treated as a leaf. Nodes nested deeper than 500 levels are leaves too (bounds recursion).
//
// Presence follows upstream, which compares Go-typed objects: for built-in types a JSON null is
// the same as an absent field, and a non-pointer struct field (a message field with a protobuf
// number that is not marked nullable: spec, spec.template, spec.strategy, metadata, status...) is
// present as {} whenever its parent is. That is why upstream's managedFields say
// "f:strategy":{"f:rollingUpdate":{".":{},...}}: strategy always existed, rollingUpdate (a
// pointer) was added. Compare applies this rule; the other operations take values as they are.
//
// Thread-safety: pure functions; inputs are never modified except by RemoveItems.
#pragma once

#include <boost/json/value.hpp>

#include "api/fieldpath.h"
#include "api/schema.h"
#include "util/status.h"

namespace converge::api {

// What changed between two versions of an object, as sets of fields.
struct Comparison {
  FieldSet added;     // present only in the newer version (leaves, and new items and structs)
  FieldSet modified;  // leaves present in both with different values
  FieldSet removed;   // present only in the older version

  bool IsSame() const { return added.Empty() && modified.Empty() && removed.Empty(); }
  // Drops `fields` and everything below them from all three sets (upstream's ExcludeFields).
  void ExcludeFields(const FieldSet& fields);
};

// Every leaf and every list or map item present in `v` (upstream's ToFieldSet): scalars, atomic
// lists/maps/structs, each item of a set or list-map (plus its fields), each key of a granular
// map. Struct fields that are not leaves are not members themselves, and empty granular maps and
// lists contribute nothing.
//
//   {"spec":{"replicas":3,"template":{"metadata":{"labels":{"app":"web"}}}}}
//     -> .spec.replicas, .spec.template.metadata.labels.app
FieldSet ToFieldSet(const boost::json::value& v, const TypeSchema* schema);

// Checks an applied configuration as upstream types a patch object: each list-map item carries
// its keys (or they have defaults), set items are scalars, no list holds two items with the same
// key. InvalidArgument with upstream's ValidationErrors text, e.g.
//   .spec.template.spec.containers: duplicate entries for key [name="nginx"]
util::Status ValidateApplied(const boost::json::value& config, const TypeSchema* schema);

// Compares two versions of an object (upstream's TypedValue.Compare with the presence rules in
// the file comment). Leaves go to added/modified/removed; a struct, map or item that exists on
// one side only is also added or removed itself (which is where fieldsV1's "." comes from).
// Fails (InvalidArgument) when a list item's key cannot be computed.
util::StatusOr<Comparison> Compare(const boost::json::value& before,
                                   const boost::json::value& after, const TypeSchema* schema);
// Compare(before, after) followed by ExcludeFields(skip), for two objects, without walking the
// skipped struct and map members (a key error inside them is not reported). What a write may not
// change (a status update's spec) costs nothing to compare this way.
util::StatusOr<Comparison> Compare(const boost::json::object& before,
                                   const boost::json::object& after, const TypeSchema* schema,
                                   const FieldSet& skip);

// Merges an applied configuration into the live object (upstream's TypedValue.Merge): the
// config's leaves win; structs and granular maps merge member by member; list-maps and sets merge
// item by item (the result keeps live's order for items the config does not mention and the
// config's order for the ones it does); atomic lists and maps are replaced. A null in the config
// clears the field. Nothing is removed otherwise (pruning is the caller's job). Fails
// (InvalidArgument) when the config has duplicate or unkeyable items; live lists with duplicate
// keys are replaced whole.
util::StatusOr<boost::json::value> Merge(const boost::json::value& live,
                                         const boost::json::value& config,
                                         const TypeSchema* schema);

// Removes from `v` every map member and list item that is a member of `items`, descending into
// the ones that only have members below them (upstream's RemoveItems). A container left empty by
// the removal is removed from its parent.
void RemoveItems(boost::json::value& v, const FieldSet& items, const TypeSchema* schema);

}  // namespace converge::api
