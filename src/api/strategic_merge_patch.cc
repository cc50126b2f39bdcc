#include "api/strategic_merge_patch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/json/serialize.hpp>

#include "api/merge_patch.h"

namespace converge::api {
namespace {

namespace json = boost::json;

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kDeleteDirective = "delete";
constexpr std::string_view kReplaceDirective = "replace";
constexpr std::string_view kMergeDirective = "merge";
constexpr std::string_view kRetainKeysDirective = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrderPrefix = "$setElementOrder";

// Upstream's sentinel errors (k8s.io/apimachinery/pkg/util/mergepatch) that the apiserver maps to
// 400 or 422; the texts are the Status messages clients see.
constexpr std::string_view kErrBadPatchFormatForPrimitiveList =
    "invalid patch format of primitive list";
constexpr std::string_view kErrBadPatchFormatForRetainKeys = "invalid patch format of retainKeys";
constexpr std::string_view kErrBadPatchFormatForSetElementOrderList =
    "invalid patch format of setElementOrder list";
constexpr std::string_view kErrNoListOfLists = "lists of lists are not supported";

util::Status BadRequest(std::string_view message) {
  return util::InvalidArgument(std::string(message));
}

// A JSON rendering for error messages, bounded so that a huge patch cannot make a huge error.
std::string Show(const json::value& v) {
  constexpr std::size_t kMaxShown = 256;
  std::string s = json::serialize(v);
  if (s.size() > kMaxShown) {
    s.resize(kMaxShown);
    s += "...";
  }
  return s;
}

util::Status NoMergeKey(const json::value& element, std::string_view merge_key) {
  return util::InvalidArgument("map: " + Show(element) +
                               " does not contain declared merge key: " + std::string(merge_key));
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "<prefix>/<key>" -> key. Upstream requires exactly the prefix before the first slash.
std::optional<std::string_view> ExtractKey(std::string_view s, std::string_view prefix) {
  const std::size_t slash = s.find('/');
  if (slash == std::string_view::npos || s.substr(0, slash) != prefix) return std::nullopt;
  return s.substr(slash + 1);
}

json::value PrunedCopy(const json::value& v, const json::storage_ptr& sp) {
  json::value copy(v, sp);
  RemoveNullMembers(copy);
  return copy;
}

bool IsDirective(const json::value& element, std::string_view directive) {
  const json::object* o = element.if_object();
  if (o == nullptr) return false;
  const json::value* d = o->if_contains(kDirectiveMarker);
  return d != nullptr && d->is_string() && d->get_string() == directive;
}

bool HasDirectiveMarker(const json::value& element) {
  const json::object* o = element.if_object();
  return o != nullptr && o->contains(kDirectiveMarker);
}

// ---- Canonical keys: hashable identities consistent with JsonEqual ------------------------------

void AppendKey(const json::value& v, std::string& out);

void AppendNumberKey(const json::value& v, std::string& out) {
  // Equal numbers (JsonEqual) must get equal keys: integral values print as integers.
  if (v.is_int64()) {
    out += 'i' + std::to_string(v.get_int64());
  } else if (v.is_uint64()) {
    const std::uint64_t u = v.get_uint64();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      out += 'i' + std::to_string(static_cast<std::int64_t>(u));
    } else {
      out += 'u' + std::to_string(u);
    }
  } else {
    const double d = v.get_double();
    if (d == std::trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
      out += 'i' + std::to_string(static_cast<std::int64_t>(d));
    } else if (d == std::trunc(d) && d >= 0 && d < 18446744073709551616.0) {
      out += 'u' + std::to_string(static_cast<std::uint64_t>(d));
    } else {
      char buf[40];
      std::snprintf(buf, sizeof(buf), "d%.17g", d);
      out += buf;
    }
  }
  out += ';';
}

void AppendStringKey(std::string_view s, std::string& out) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

// Recursion is bounded by the nesting limit the entry point checked.
void AppendKey(const json::value& v, std::string& out) {
  switch (v.kind()) {
    case json::kind::null: out += 'n'; break;
    case json::kind::bool_: out += v.get_bool() ? 't' : 'f'; break;
    case json::kind::string:
      out += 's';
      AppendStringKey(v.get_string(), out);
      break;
    case json::kind::array:
      out += '[';
      for (const json::value& e : v.get_array()) AppendKey(e, out);
      out += ']';
      break;
    case json::kind::object: {
      std::vector<const json::key_value_pair*> members;
      for (const json::key_value_pair& m : v.get_object()) members.push_back(&m);
      std::sort(members.begin(), members.end(),
                [](auto* a, auto* b) { return a->key() < b->key(); });
      out += '{';
      for (const json::key_value_pair* m : members) {
        AppendStringKey(m->key(), out);
        AppendKey(m->value(), out);
      }
      out += '}';
      break;
    }
    default: AppendNumberKey(v, out);
  }
}

std::string KeyOf(const json::value& v) {
  std::string key;
  AppendKey(v, key);
  return key;
}

// ---- Schema lookup ------------------------------------------------------------------------------

enum class Strategy { kNone, kMerge, kReplace };

// Where the merge is in the schema.
struct Cursor {
  const TypeSchema* type = nullptr;      // the struct whose members are being merged
  const ValueType* map_value = nullptr;  // or: the value type of a map<string, V> being merged
};

struct FieldMeta {
  Strategy strategy = Strategy::kNone;
  std::string_view merge_key;
  Cursor child;  // the field's value; for lists, each element
};

Cursor CursorFor(const ValueType& v) {
  if (v.kind == ValueKind::kMessage && v.message != nullptr &&
      v.message->special == SpecialType::kNone) {
    return Cursor{v.message, nullptr};
  }
  return Cursor{};
}

bool HasStrategy(std::string_view strategies, std::string_view wanted) {
  while (!strategies.empty()) {
    const std::size_t comma = strategies.find(',');
    std::string_view part = strategies.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (part == wanted) return true;
    if (comma == std::string_view::npos) break;
    strategies.remove_prefix(comma + 1);
  }
  return false;
}

FieldMeta Lookup(const Cursor& cursor, std::string_view key) {
  FieldMeta meta;
  if (cursor.map_value != nullptr) {
    meta.child = CursorFor(*cursor.map_value);
    return meta;
  }
  if (cursor.type == nullptr) return meta;
  const FieldSchema* field = nullptr;
  for (const FieldSchema& f : cursor.type->fields) {
    if (f.name == key) {
      field = &f;
      break;
    }
  }
  if (field == nullptr) return meta;  // unknown field: merge-patch semantics below it
  if (HasStrategy(field->patch_strategy, kReplaceDirective)) {
    meta.strategy = Strategy::kReplace;
  } else if (HasStrategy(field->patch_strategy, kMergeDirective)) {
    meta.strategy = Strategy::kMerge;
  }
  meta.merge_key = field->patch_merge_key;
  meta.child = field->is_map ? Cursor{nullptr, &field->value} : CursorFor(field->value);
  return meta;
}

std::string TypeName(const Cursor& cursor) {
  return cursor.type != nullptr ? cursor.type->name : std::string("an unknown type");
}

// ---- List helpers -------------------------------------------------------------------------------

enum class ElementKind { kEmpty, kObject, kScalar };

// Upstream's sliceElementType over both lists: no nested lists, one JSON type throughout
// (numbers are one type here; upstream would also reject mixing integers and floats).
util::StatusOr<ElementKind> KindOfElements(const json::array* a, const json::array* b) {
  const json::value* first = nullptr;
  for (const json::array* list : {a, b}) {
    if (list == nullptr) continue;
    for (const json::value& e : *list) {
      if (e.is_array()) return util::FailedPrecondition(std::string(kErrNoListOfLists));
      if (first == nullptr) {
        first = &e;
        continue;
      }
      const bool same = (first->is_number() && e.is_number()) || first->kind() == e.kind();
      if (!same) {
        return util::InvalidArgument("list element types are not identical: " + Show(*first) +
                                     " and " + Show(e));
      }
    }
  }
  if (first == nullptr) return ElementKind::kEmpty;
  return first->is_object() ? ElementKind::kObject : ElementKind::kScalar;
}

// The identity of a list element: its merge-key value for lists of objects, else itself.
util::StatusOr<std::string> ElementKey(const json::value& element, bool objects,
                                       std::string_view merge_key) {
  if (!objects) return KeyOf(element);
  const json::object* o = element.if_object();
  if (o == nullptr) {
    return util::InvalidArgument("expected a map in a list merged by key, but received " +
                                 Show(element));
  }
  const json::value* key = o->if_contains(merge_key);
  if (key == nullptr) return NoMergeKey(element, merge_key);
  return KeyOf(*key);
}

// First position of each identity in an order list.
class OrderIndex {
 public:
  static util::StatusOr<OrderIndex> Build(const std::vector<const json::value*>& order,
                                          bool objects, std::string_view merge_key) {
    OrderIndex index;
    for (std::size_t i = 0; i < order.size(); ++i) {
      CONVERGE_ASSIGN_OR_RETURN(std::string key, ElementKey(*order[i], objects, merge_key));
      index.first_.emplace(std::move(key), i);
    }
    return index;
  }

  // Position of `key`, or nullopt when it is not in the list.
  std::optional<std::size_t> Find(const std::string& key) const {
    auto it = first_.find(key);
    if (it == first_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::unordered_map<std::string, std::size_t> first_;
};

struct Item {
  json::value value;
  std::string key;
};

std::vector<const json::value*> Pointers(const json::array* list) {
  std::vector<const json::value*> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (const json::value& e : *list) out.push_back(&e);
  return out;
}

// Upstream's normalizeSliceOrder: sorts `items` by their position in `order`, stably; elements
// carrying `$patch: delete` go last. (Items absent from `order`, for which upstream's comparator
// is inconsistent, keep their relative order after the others; the algorithm never produces
// them for well-formed input.)
void SortByOrder(std::vector<Item>& items, const OrderIndex& order, bool objects) {
  std::vector<std::pair<std::size_t, Item>> keyed;
  std::vector<Item> to_delete;
  keyed.reserve(items.size());
  for (Item& item : items) {
    if (objects && IsDirective(item.value, kDeleteDirective)) {
      to_delete.push_back(std::move(item));
      continue;
    }
    const std::size_t position =
        order.Find(item.key).value_or(std::numeric_limits<std::size_t>::max());
    keyed.emplace_back(position, std::move(item));
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  items.clear();
  for (auto& [position, item] : keyed) items.push_back(std::move(item));
  for (Item& item : to_delete) items.push_back(std::move(item));
}

// Upstream's normalizeElementOrder + mergeSortedSlice: patch items in `patch_order`, server-only
// items in `server_order`, then interleaved: a server-only item goes before a patch item only when
// both are in `server_order` and it comes first there.
json::array NormalizeElementOrder(std::vector<Item> patch_items, std::vector<Item> server_only,
                                  const OrderIndex& patch_order, const OrderIndex& server_order,
                                  bool objects, const json::storage_ptr& sp) {
  SortByOrder(patch_items, patch_order, objects);
  SortByOrder(server_only, server_order, objects);
  json::array out(sp);
  out.reserve(patch_items.size() + server_only.size());
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < server_only.size() && j < patch_items.size()) {
    const std::optional<std::size_t> left = server_order.Find(server_only[i].key);
    const std::optional<std::size_t> right = server_order.Find(patch_items[j].key);
    if (left && right && *left < *right) {
      out.push_back(std::move(server_only[i++].value));
    } else {
      out.push_back(std::move(patch_items[j++].value));
    }
  }
  for (; i < server_only.size(); ++i) out.push_back(std::move(server_only[i].value));
  for (; j < patch_items.size(); ++j) out.push_back(std::move(patch_items[j].value));
  return out;
}

// Splits `merged` into the items whose identity is in `keys` and the rest.
util::Status Partition(json::array merged, const std::unordered_set<std::string>& keys,
                       bool objects, std::string_view merge_key, std::vector<Item>& in_keys,
                       std::vector<Item>& others) {
  for (json::value& element : merged) {
    CONVERGE_ASSIGN_OR_RETURN(std::string key, ElementKey(element, objects, merge_key));
    std::vector<Item>& bucket = keys.count(key) != 0 ? in_keys : others;
    bucket.push_back(Item{std::move(element), std::move(key)});
  }
  return util::Status::Ok();
}

// ---- The merge ----------------------------------------------------------------------------------
//
// The recursion MergeMap -> MergeMember -> MergeSliceHandler -> MergeSlice -> MergeListOfObjects
// -> MergeMap (or MergeMap -> ApplySetElementOrder -> MergeSliceHandler) runs once per nesting
// level, up to kMaxPatchNestingDepth / 2 times. Its frames are therefore kept small: everything
// that does not recurse lives in out-of-line helpers below, and per-list state is on the heap.
// StrategicMergePatchTest.MergesAtTheNestingLimit exercises the deepest case.

#define CONVERGE_SMP_NOINLINE [[gnu::noinline]]

CONVERGE_SMP_NOINLINE util::Status ApplyMapDirective(json::value& target, const json::object& patch,
                                                     const json::value& directive) {
  if (directive.is_string() && directive.get_string() == kReplaceDirective) {
    json::object replacement(target.storage());
    for (const json::key_value_pair& m : patch) {
      if (m.key() != kDirectiveMarker) replacement.emplace(m.key(), m.value());
    }
    target = std::move(replacement);
    RemoveNullMembers(target);
    return util::Status::Ok();
  }
  if (directive.is_string() && directive.get_string() == kDeleteDirective) {
    target = json::object(target.storage());
    return util::Status::Ok();
  }
  return util::InvalidArgument("unknown patch type: " + Show(directive) +
                               " in map: " + Show(json::value(patch)));
}

CONVERGE_SMP_NOINLINE util::Status ApplyRetainKeys(json::object& original,
                                                   const json::object& patch) {
  const json::value& list = patch.at(kRetainKeysDirective);
  if (!list.is_array()) return BadRequest(kErrBadPatchFormatForRetainKeys);
  std::unordered_set<std::string_view> retained;
  for (const json::value& key : list.get_array()) {
    if (!key.is_string()) return BadRequest(kErrBadPatchFormatForRetainKeys);
    retained.insert(key.get_string());
  }
  // Every member the patch sets must be retained.
  for (const json::key_value_pair& member : patch) {
    const std::string_view key = member.key();
    if (key == kRetainKeysDirective || member.value().is_null() ||
        StartsWith(key, kDeleteFromPrimitiveListPrefix) ||
        StartsWith(key, kSetElementOrderPrefix)) {
      continue;
    }
    if (retained.count(key) == 0) return BadRequest(kErrBadPatchFormatForRetainKeys);
  }
  bool clears = false;
  for (const json::key_value_pair& member : original) clears |= retained.count(member.key()) == 0;
  if (clears) {
    json::object kept(original.storage());
    for (json::key_value_pair& member : original) {
      if (retained.count(member.key()) != 0) kept.emplace(member.key(), std::move(member.value()));
    }
    original = std::move(kept);
  }
  return util::Status::Ok();
}

// Upstream's validatePatchWithSetOrderList: the patch's elements (ignoring deletions and other
// directive elements) must appear in the order list, in the same relative order.
util::Status ValidatePatchAgainstOrder(const json::array* patch_list, const json::array& order,
                                       std::string_view merge_key) {
  if (patch_list == nullptr || patch_list->empty() || order.empty()) return util::Status::Ok();
  std::vector<const json::value*> items;
  for (const json::value& e : *patch_list) {
    if (!merge_key.empty()) {
      if (!e.is_object()) {
        return util::InvalidArgument("expected a map in a list merged by key, but received " +
                                     Show(e));
      }
      if (IsDirective(e, kDeleteDirective)) continue;
    }
    items.push_back(&e);
  }
  std::size_t p = 0;
  std::size_t o = 0;
  while (p < items.size() && o < order.size()) {
    if (HasDirectiveMarker(*items[p])) {
      ++p;
      continue;
    }
    bool equal = false;
    if (merge_key.empty()) {
      equal = JsonEqual(*items[p], order[o]);
    } else {
      const json::value* key = items[p]->get_object().if_contains(merge_key);
      if (key == nullptr) return NoMergeKey(*items[p], merge_key);
      const json::object* order_element = order[o].if_object();
      if (order_element == nullptr) {
        return util::InvalidArgument("expected a map in " + std::string(kSetElementOrderPrefix) +
                                     ", but received " + Show(order[o]));
      }
      const json::value* order_key = order_element->if_contains(merge_key);
      if (order_key == nullptr) return NoMergeKey(order[o], merge_key);
      equal = JsonEqual(*key, *order_key);
    }
    if (equal) ++p;
    ++o;
  }
  if (p < items.size() && o >= order.size()) {
    return util::InvalidArgument("The order in patch list:\n" + Show(json::value(*patch_list)) +
                                 "\n doesn't match " + std::string(kSetElementOrderPrefix) +
                                 " list:\n" + Show(json::value(order)) + "\n");
  }
  return util::Status::Ok();
}

// One list with a $setElementOrder directive, between preparation and normalization.
struct OrderedList {
  std::string field;
  const json::array* order = nullptr;
  const json::array* patch_list = nullptr;  // the patch's value for the field, if any
  FieldMeta meta;
  bool objects = false;
  bool skip = false;         // neither the original nor the patch has the list
  bool needs_merge = false;  // both have it
  json::value merged;        // the original list (moved out of the object), or the patch's
  OrderIndex server_index;   // the original list's order, before merging
};

CONVERGE_SMP_NOINLINE util::Status PrepareOrderedList(json::object& original,
                                                      const json::object& patch,
                                                      const json::key_value_pair& directive,
                                                      const Cursor& cursor, OrderedList& list) {
  std::optional<std::string_view> field = ExtractKey(directive.key(), kSetElementOrderPrefix);
  if (!field || !directive.value().is_array()) {
    return BadRequest(kErrBadPatchFormatForSetElementOrderList);
  }
  list.field = std::string(*field);
  list.order = &directive.value().get_array();
  json::value* original_list = original.if_contains(*field);
  const json::value* patch_list = patch.if_contains(*field);
  if (original_list != nullptr && !original_list->is_array()) {
    return util::InvalidArgument(std::string(kSetElementOrderPrefix) + "/" + list.field +
                                 " names a field that is not a list");
  }
  if (patch_list != nullptr && !patch_list->is_array()) {
    return util::InvalidArgument("the patch value of " + list.field + ", which " +
                                 std::string(kSetElementOrderPrefix) + " orders, is not a list");
  }
  if (original_list == nullptr && patch_list == nullptr) {
    list.skip = true;
    return util::Status::Ok();
  }
  list.patch_list = patch_list != nullptr ? &patch_list->get_array() : nullptr;
  list.meta = Lookup(cursor, *field);
  CONVERGE_RETURN_IF_ERROR(
      ValidatePatchAgainstOrder(list.patch_list, *list.order, list.meta.merge_key));
  const json::array* original_array =
      original_list != nullptr ? &original_list->get_array() : nullptr;
  CONVERGE_ASSIGN_OR_RETURN(ElementKind kind, KindOfElements(original_array, list.patch_list));
  if (kind == ElementKind::kEmpty) {
    return util::InvalidArgument("no elements in any of the given slices");
  }
  list.objects = kind == ElementKind::kObject;
  CONVERGE_ASSIGN_OR_RETURN(
      list.server_index,
      OrderIndex::Build(Pointers(original_array), list.objects, list.meta.merge_key));
  if (original_list == nullptr) {
    list.merged = PrunedCopy(*patch_list, original.storage());
  } else {
    list.merged = std::move(*original_list);
    list.needs_merge = list.patch_list != nullptr;
  }
  return util::Status::Ok();
}

CONVERGE_SMP_NOINLINE util::Status FinishOrderedList(json::object& original, OrderedList& list) {
  if (!list.merged.is_array()) {
    return util::InvalidArgument("the merged value of " + list.field + " is not a list");
  }
  std::unordered_set<std::string> ordered_keys;
  for (const json::value& e : *list.order) {
    // Partitioning only needs the elements that can match; malformed ones are rejected below.
    util::StatusOr<std::string> key = ElementKey(e, list.objects, list.meta.merge_key);
    if (key.ok()) ordered_keys.insert(std::move(*key));
  }
  std::vector<Item> patch_items;
  std::vector<Item> server_only;
  CONVERGE_RETURN_IF_ERROR(Partition(std::move(list.merged.get_array()), ordered_keys, list.objects,
                                     list.meta.merge_key, patch_items, server_only));
  CONVERGE_ASSIGN_OR_RETURN(
      OrderIndex order_index,
      OrderIndex::Build(Pointers(list.order), list.objects, list.meta.merge_key));
  original.insert_or_assign(
      list.field, NormalizeElementOrder(std::move(patch_items), std::move(server_only), order_index,
                                        list.server_index, list.objects, original.storage()));
  return util::Status::Ok();
}

// What MergeMember has to do with one patch member, decided without recursing.
struct MemberAction {
  enum Kind { kDone, kMergeMap, kMergeList } kind = kDone;
  std::string_view field;
  json::value* current = nullptr;
  bool is_delete_list = false;
};

CONVERGE_SMP_NOINLINE util::Status ClassifyMember(json::object& original, std::string_view key,
                                                  const json::value& patch_value,
                                                  MemberAction& action) {
  bool is_delete_list = false;
  if (StartsWith(key, kDeleteFromPrimitiveListPrefix)) {
    std::optional<std::string_view> field = ExtractKey(key, kDeleteFromPrimitiveListPrefix);
    if (!field) return BadRequest(kErrBadPatchFormatForPrimitiveList);
    key = *field;
    is_delete_list = true;
  }
  if (patch_value.is_null()) {
    original.stable_erase(key);  // also for a null deletion list, as upstream
    return util::Status::Ok();
  }
  if (is_delete_list && !patch_value.is_array()) {
    return BadRequest(kErrBadPatchFormatForPrimitiveList);
  }
  json::value* current = original.if_contains(key);
  if (current == nullptr) {
    if (!is_delete_list) original.emplace(key, PrunedCopy(patch_value, original.storage()));
    return util::Status::Ok();
  }
  if (current->is_object() && patch_value.is_object()) {
    action = MemberAction{MemberAction::kMergeMap, key, current, false};
  } else if (current->is_array() && patch_value.is_array()) {
    action = MemberAction{MemberAction::kMergeList, key, current, is_delete_list};
  } else if (!is_delete_list) {
    // Different JSON types, or scalars: the patch value wins.
    *current = PrunedCopy(patch_value, original.storage());
  }
  return util::Status::Ok();
}

CONVERGE_SMP_NOINLINE void ReplaceWith(json::value& target, const json::value& patch_value) {
  target = PrunedCopy(patch_value, target.storage());
}

CONVERGE_SMP_NOINLINE util::Status ClassifyElements(const json::array& original,
                                                    const json::array& patch, ElementKind& kind) {
  CONVERGE_ASSIGN_OR_RETURN(kind, KindOfElements(&original, &patch));
  return util::Status::Ok();
}

// A merging list of scalars: a set, or deletions from it.
CONVERGE_SMP_NOINLINE util::Status MergeScalarList(json::array& original, const json::array& patch,
                                                   bool is_delete_list) {
  std::unordered_set<std::string> patch_keys;
  for (const json::value& e : patch) patch_keys.insert(KeyOf(e));
  if (is_delete_list) {
    json::array kept(original.storage());
    for (json::value& e : original) {
      if (patch_keys.count(KeyOf(e)) == 0) kept.push_back(std::move(e));
    }
    original = std::move(kept);
    return util::Status::Ok();
  }
  CONVERGE_ASSIGN_OR_RETURN(OrderIndex server_index,
                            OrderIndex::Build(Pointers(&original), false, ""));
  CONVERGE_ASSIGN_OR_RETURN(OrderIndex patch_index, OrderIndex::Build(Pointers(&patch), false, ""));
  // original ++ patch without duplicates; which copy survives does not matter (see the sort).
  std::unordered_set<std::string> seen;
  std::vector<Item> patch_items;
  std::vector<Item> server_only;
  auto add = [&](json::value value) {
    std::string key = KeyOf(value);
    if (!seen.insert(key).second) return;
    std::vector<Item>& bucket = patch_keys.count(key) != 0 ? patch_items : server_only;
    bucket.push_back(Item{std::move(value), std::move(key)});
  };
  for (json::value& e : original) add(std::move(e));
  for (const json::value& e : patch) add(json::value(e, original.storage()));
  original = NormalizeElementOrder(std::move(patch_items), std::move(server_only), patch_index,
                                   server_index, false, original.storage());
  return util::Status::Ok();
}

// One merging list of objects, between its phases.
struct ObjectListMerge {
  std::vector<const json::value*> plain;  // patch elements without a $patch directive
  OrderIndex server_index;                // the original's order after deletions
  OrderIndex patch_index;
  std::unordered_map<std::string, std::size_t> position;  // first element with each key
  std::unordered_set<std::string> patch_keys;
};

// Upstream's mergeSliceWithSpecialElements (deletions and `$patch: replace`), then the indexes.
CONVERGE_SMP_NOINLINE util::Status PrepareObjectList(json::array& original,
                                                     const json::array& patch,
                                                     std::string_view merge_key,
                                                     const Cursor& element,
                                                     ObjectListMerge& state) {
  if (merge_key.empty()) {
    return util::InvalidArgument("cannot merge lists without merge key for " + TypeName(element));
  }
  bool replace = false;
  for (const json::value& e : patch) {
    const json::value* directive = e.get_object().if_contains(kDirectiveMarker);
    if (directive == nullptr) {
      state.plain.push_back(&e);
      continue;
    }
    if (directive->is_string() && directive->get_string() == kDeleteDirective) {
      const json::value* key = e.get_object().if_contains(merge_key);
      if (key == nullptr) return NoMergeKey(e, merge_key);
      const std::string doomed = KeyOf(*key);
      json::array kept(original.storage());
      for (json::value& o : original) {
        const json::value* k = o.get_object().if_contains(merge_key);
        if (k == nullptr || KeyOf(*k) != doomed) kept.push_back(std::move(o));
      }
      original = std::move(kept);
    } else if (directive->is_string() && directive->get_string() == kReplaceDirective) {
      replace = true;  // keep scanning: later elements may still be malformed
    } else if (directive->is_string() && directive->get_string() == kMergeDirective) {
      return util::InvalidArgument("merging lists cannot yet be specified in the patch");
    } else {
      return util::InvalidArgument("unknown patch type: " + Show(*directive) +
                                   " in map: " + Show(e));
    }
  }
  if (replace) {
    json::array replacement(original.storage());
    for (const json::value* e : state.plain) {
      replacement.push_back(PrunedCopy(*e, original.storage()));
    }
    original = std::move(replacement);
    state.plain.clear();
  }
  CONVERGE_ASSIGN_OR_RETURN(state.server_index,
                            OrderIndex::Build(Pointers(&original), true, merge_key));
  CONVERGE_ASSIGN_OR_RETURN(state.patch_index, OrderIndex::Build(state.plain, true, merge_key));
  for (std::size_t i = 0; i < original.size(); ++i) {
    const json::value* k = original[i].get_object().if_contains(merge_key);
    if (k != nullptr) state.position.emplace(KeyOf(*k), i);
  }
  return util::Status::Ok();
}

// Upstream's mergeSliceWithoutSpecialElements, minus the recursion: finds the original element
// a patch element merges into (`index`), or appends the patch element (`index` = npos).
CONVERGE_SMP_NOINLINE util::Status LocateElement(json::array& original,
                                                 const json::value& patch_element,
                                                 std::string_view merge_key, ObjectListMerge& state,
                                                 std::size_t& index) {
  const json::value* k = patch_element.get_object().if_contains(merge_key);
  if (k == nullptr) return NoMergeKey(patch_element, merge_key);
  std::string key = KeyOf(*k);
  state.patch_keys.insert(key);
  auto found = state.position.find(key);
  if (found != state.position.end()) {
    index = found->second;
    return util::Status::Ok();
  }
  index = std::string::npos;
  state.position.emplace(std::move(key), original.size());
  original.push_back(PrunedCopy(patch_element, original.storage()));
  return util::Status::Ok();
}

CONVERGE_SMP_NOINLINE util::Status FinishObjectList(json::value& target, std::string_view merge_key,
                                                    ObjectListMerge& state) {
  std::vector<Item> patch_items;
  std::vector<Item> server_only;
  CONVERGE_RETURN_IF_ERROR(Partition(std::move(target.get_array()), state.patch_keys, true,
                                     merge_key, patch_items, server_only));
  target = NormalizeElementOrder(std::move(patch_items), std::move(server_only), state.patch_index,
                                 state.server_index, true, target.storage());
  return util::Status::Ok();
}

// The members of a patch object that MergeMap hands to MergeMember, in patch order; directives
// handled up front are skipped. Out of line so that MergeMap's frame stays small.
CONVERGE_SMP_NOINLINE bool IsPlainMember(std::string_view key,
                                         const std::vector<std::string>& ordered_lists) {
  if (key == kRetainKeysDirective || StartsWith(key, kSetElementOrderPrefix)) return false;
  // A list with a $setElementOrder directive was merged together with it.
  return std::find(ordered_lists.begin(), ordered_lists.end(), key) == ordered_lists.end();
}

class Merger {
 public:
  // `target` is an object; `patch` is merged into it.
  util::Status MergeMap(json::value& target, const json::object& patch, const Cursor& cursor);

 private:
  CONVERGE_SMP_NOINLINE util::Status ApplySetElementOrder(json::object& original,
                                                          const json::object& patch,
                                                          const Cursor& cursor,
                                                          std::vector<std::string>& merged_lists);
  CONVERGE_SMP_NOINLINE util::Status MergeMember(json::object& original, std::string_view key,
                                                 const json::value& patch_value,
                                                 const Cursor& cursor);
  // Upstream's mergeSliceHandler, mergeSlice and mergeSliceWithoutSpecialElements in one frame.
  util::Status MergeList(json::value& target, const json::array& patch, const FieldMeta& meta,
                         bool is_delete_list);
};

util::Status Merger::MergeMap(json::value& target, const json::object& patch,
                              const Cursor& cursor) {
  if (const json::value* directive = patch.if_contains(kDirectiveMarker)) {
    return ApplyMapDirective(target, patch, *directive);
  }
  json::object& original = target.get_object();
  if (patch.contains(kRetainKeysDirective)) {
    CONVERGE_RETURN_IF_ERROR(ApplyRetainKeys(original, patch));
  }
  std::vector<std::string> ordered_lists;
  CONVERGE_RETURN_IF_ERROR(ApplySetElementOrder(original, patch, cursor, ordered_lists));
  for (const json::key_value_pair& member : patch) {
    if (!IsPlainMember(member.key(), ordered_lists)) continue;
    CONVERGE_RETURN_IF_ERROR(MergeMember(original, member.key(), member.value(), cursor));
  }
  return util::Status::Ok();
}

// Upstream's mergePatchIntoOriginal: merges each list that has a $setElementOrder directive and
// orders it by the directive; records the names of the lists it merged.
util::Status Merger::ApplySetElementOrder(json::object& original, const json::object& patch,
                                          const Cursor& cursor,
                                          std::vector<std::string>& merged_lists) {
  for (const json::key_value_pair& member : patch) {
    if (!StartsWith(member.key(), kSetElementOrderPrefix)) continue;
    auto list = std::make_unique<OrderedList>();
    CONVERGE_RETURN_IF_ERROR(PrepareOrderedList(original, patch, member, cursor, *list));
    if (list->skip) continue;
    if (list->needs_merge) {
      CONVERGE_RETURN_IF_ERROR(MergeList(list->merged, *list->patch_list, list->meta, false));
    }
    CONVERGE_RETURN_IF_ERROR(FinishOrderedList(original, *list));
    merged_lists.push_back(std::move(list->field));
  }
  return util::Status::Ok();
}

util::Status Merger::MergeMember(json::object& original, std::string_view key,
                                 const json::value& patch_value, const Cursor& cursor) {
  MemberAction action;
  CONVERGE_RETURN_IF_ERROR(ClassifyMember(original, key, patch_value, action));
  if (action.kind == MemberAction::kDone) return util::Status::Ok();
  const FieldMeta meta = Lookup(cursor, action.field);
  if (action.kind == MemberAction::kMergeList) {
    return MergeList(*action.current, patch_value.get_array(), meta, action.is_delete_list);
  }
  if (meta.strategy == Strategy::kReplace) {
    ReplaceWith(*action.current, patch_value);
    return util::Status::Ok();
  }
  return MergeMap(*action.current, patch_value.get_object(), meta.child);
}

util::Status Merger::MergeList(json::value& target, const json::array& patch, const FieldMeta& meta,
                               bool is_delete_list) {
  std::string_view merge_key = meta.merge_key;
  if (meta.strategy != Strategy::kMerge) {
    if (!is_delete_list) {
      ReplaceWith(target, json::value(patch));
      return util::Status::Ok();
    }
    // Not a merging list, but the request says which elements to delete: delete them.
    merge_key = "";
  }
  ElementKind kind = ElementKind::kEmpty;
  CONVERGE_RETURN_IF_ERROR(ClassifyElements(target.get_array(), patch, kind));
  if (kind == ElementKind::kEmpty) return util::Status::Ok();
  if (kind == ElementKind::kScalar) {
    return MergeScalarList(target.get_array(), patch, is_delete_list);
  }
  auto state = std::make_unique<ObjectListMerge>();
  CONVERGE_RETURN_IF_ERROR(
      PrepareObjectList(target.get_array(), patch, merge_key, meta.child, *state));
  for (const json::value* e : state->plain) {
    std::size_t index = std::string::npos;
    CONVERGE_RETURN_IF_ERROR(LocateElement(target.get_array(), *e, merge_key, *state, index));
    if (index != std::string::npos) {
      CONVERGE_RETURN_IF_ERROR(MergeMap(target.get_array()[index], e->get_object(), meta.child));
    }
  }
  return FinishObjectList(target, merge_key, *state);
}

}  // namespace

util::StatusOr<json::value> ApplyStrategicMergePatch(const json::value& original,
                                                     const json::value& patch,
                                                     const TypeSchema* schema) {
  if (!original.is_object()) {
    return util::InvalidArgument("a strategic merge patch applies to an object");
  }
  if (patch.is_null()) return json::value(original, json::storage_ptr());
  if (!patch.is_object()) {
    return util::InvalidArgument("json: cannot unmarshal " +
                                 std::string(patch.is_array() ? "array" : "a non-object value") +
                                 " into Go value of type map[string]interface {}");
  }
  if (JsonNestingDepth(patch) > kMaxPatchNestingDepth ||
      JsonNestingDepth(original) > kMaxPatchNestingDepth) {
    return util::InvalidArgument("patch or document nests deeper than " +
                                 std::to_string(kMaxPatchNestingDepth) + " levels");
  }
  json::value result(original, json::storage_ptr());
  Merger merger;
  CONVERGE_RETURN_IF_ERROR(merger.MergeMap(result, patch.get_object(), Cursor{schema, nullptr}));
  return result;
}

}  // namespace converge::api
