#include "api/strategic_merge_patch.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "api/merge_patch.h"
#include "api/strategic_merge_patch_order.h"

namespace converge::api {
namespace {

namespace json = boost::json;
using namespace strategic_patch_internal;  // NOLINT(build/namespaces): this file's own helpers

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

util::Status BadRequest(std::string_view message) {
  return util::InvalidArgument(std::string(message));
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

FieldMeta Lookup(const Cursor& cursor, std::string_view key) {
  FieldMeta meta;
  if (cursor.map_value != nullptr) {
    meta.child = CursorFor(*cursor.map_value);
    return meta;
  }
  if (cursor.type == nullptr) return meta;
  const FieldSchema* field = cursor.type->Field(key);
  if (field == nullptr) return meta;  // unknown field: merge-patch semantics below it
  if (field->PatchStrategyIs(kReplaceDirective)) {
    meta.strategy = Strategy::kReplace;
  } else if (field->PatchStrategyIs(kMergeDirective)) {
    meta.strategy = Strategy::kMerge;
  }
  meta.merge_key = field->patch_merge_key;
  meta.child = field->is_map ? Cursor{nullptr, &field->value} : CursorFor(field->value);
  return meta;
}

std::string TypeName(const Cursor& cursor) {
  return cursor.type != nullptr ? cursor.type->name : std::string("an unknown type");
}

// ---- The merge ----------------------------------------------------------------------------------
//
// The merge walks the patch and the original together. It keeps its own stack of pending work
// instead of recursing, so the C++ stack it uses does not grow with nesting (objects may nest
// kMaxPatchNestingDepth deep, e.g. inside RawExtension data). Two rules keep the pointers held
// by pending work valid: a node queues work on its children only once it has finished changing
// itself (adding or removing members may move an object's storage; appending elements may move
// an array's), and work that must follow the children (reordering a list) is queued before them,
// so that it runs after them.

util::Status ApplyMapDirective(json::value& target, const json::object& patch,
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

util::Status ApplyRetainKeys(json::object& original, const json::object& patch) {
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

util::Status PrepareOrderedList(json::object& original, const json::object& patch,
                                const json::key_value_pair& directive, const Cursor& cursor,
                                OrderedList& list) {
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

util::Status FinishOrderedList(json::object& original, OrderedList& list) {
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

util::Status ClassifyMember(json::object& original, std::string_view key,
                            const json::value& patch_value, MemberAction& action) {
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

void ReplaceWith(json::value& target, const json::value& patch_value) {
  target = PrunedCopy(patch_value, target.storage());
}

// A merging list of scalars: a set, or deletions from it.
util::Status MergeScalarList(json::array& original, const json::array& patch, bool is_delete_list) {
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
util::Status PrepareObjectList(json::array& original, const json::array& patch,
                               std::string_view merge_key, const Cursor& element,
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
util::Status LocateElement(json::array& original, const json::value& patch_element,
                           std::string_view merge_key, ObjectListMerge& state, std::size_t& index) {
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

util::Status FinishObjectList(json::value& target, std::string_view merge_key,
                              ObjectListMerge& state) {
  std::vector<Item> patch_items;
  std::vector<Item> server_only;
  CONVERGE_RETURN_IF_ERROR(Partition(std::move(target.get_array()), state.patch_keys, true,
                                     merge_key, patch_items, server_only));
  target = NormalizeElementOrder(std::move(patch_items), std::move(server_only), state.patch_index,
                                 state.server_index, true, target.storage());
  return util::Status::Ok();
}

bool IsPlainMember(std::string_view key, const std::vector<std::string>& ordered_lists) {
  if (key == kRetainKeysDirective || StartsWith(key, kSetElementOrderPrefix)) return false;
  // A list with a $setElementOrder directive was merged together with it.
  return std::find(ordered_lists.begin(), ordered_lists.end(), key) == ordered_lists.end();
}

class Merger {
 public:
  // Merges `patch` into `root`, an object.
  util::Status Run(json::value& root, const json::object& patch, const Cursor& cursor);

 private:
  // Upstream's mergeMap, first part: `$patch`, `$retainKeys`, then the lists ordered by
  // `$setElementOrder` (mergePatchIntoOriginal); queues MergeMembers to run after those lists.
  struct MergeObject {
    json::value* target;
    const json::object* patch;
    Cursor cursor;
  };
  // Upstream's mergeMap, the loop over the patch's members.
  struct MergeMembers {
    json::value* target;
    const json::object* patch;
    Cursor cursor;
    std::vector<std::string> ordered_lists;  // already merged
  };
  // Upstream's mergeSliceHandler and mergeSlice, up to the merges of the elements.
  struct MergeArray {
    json::value* target;
    const json::array* patch;
    FieldMeta meta;
    bool is_delete_list;
  };
  // The rest of mergeSlice once the elements are merged: the order.
  struct FinishArray {
    json::value* target;
    std::string_view merge_key;
    std::unique_ptr<ObjectListMerge> state;
  };
  // The rest of mergePatchIntoOriginal once the list is merged: the $setElementOrder order.
  struct FinishOrdered {
    json::object* object;
    std::unique_ptr<OrderedList> list;
  };
  using Task = std::variant<MergeObject, MergeMembers, MergeArray, FinishArray, FinishOrdered>;

  util::Status Do(MergeObject& task);
  util::Status Do(MergeMembers& task);
  util::Status Do(MergeArray& task);
  util::Status Do(FinishArray& task) {
    return FinishObjectList(*task.target, task.merge_key, *task.state);
  }
  util::Status Do(FinishOrdered& task) { return FinishOrderedList(*task.object, *task.list); }

  std::vector<Task> tasks_;  // LIFO
};

util::Status Merger::Run(json::value& root, const json::object& patch, const Cursor& cursor) {
  tasks_.emplace_back(MergeObject{&root, &patch, cursor});
  while (!tasks_.empty()) {
    Task task = std::move(tasks_.back());
    tasks_.pop_back();
    CONVERGE_RETURN_IF_ERROR(std::visit([this](auto& t) { return Do(t); }, task));
  }
  return util::Status::Ok();
}

util::Status Merger::Do(MergeObject& task) {
  const json::object& patch = *task.patch;
  if (const json::value* directive = patch.if_contains(kDirectiveMarker)) {
    return ApplyMapDirective(*task.target, patch, *directive);
  }
  if (task.target == nullptr || !task.target->is_object()) {
    return util::InvalidArgument("unable to merge a map into a value that is not a map");
  }
  json::object& original = task.target->get_object();
  if (patch.contains(kRetainKeysDirective)) {
    CONVERGE_RETURN_IF_ERROR(ApplyRetainKeys(original, patch));
  }
  // The members run after the ordered lists are complete, as upstream.
  tasks_.emplace_back(MergeMembers{task.target, task.patch, task.cursor, {}});
  const std::size_t members_task = tasks_.size() - 1;
  for (const json::key_value_pair& member : patch) {
    if (!StartsWith(member.key(), kSetElementOrderPrefix)) continue;
    auto list = std::make_unique<OrderedList>();
    CONVERGE_RETURN_IF_ERROR(PrepareOrderedList(original, patch, member, task.cursor, *list));
    if (list->skip) continue;
    std::get<MergeMembers>(tasks_[members_task]).ordered_lists.push_back(list->field);
    if (!list->needs_merge) {
      CONVERGE_RETURN_IF_ERROR(FinishOrderedList(original, *list));
      continue;
    }
    // `merged` lives in the OrderedList, on the heap: the pointer stays valid.
    OrderedList& merging = *list;
    tasks_.emplace_back(FinishOrdered{&original, std::move(list)});
    tasks_.emplace_back(MergeArray{&merging.merged, merging.patch_list, merging.meta, false});
  }
  return util::Status::Ok();
}

util::Status Merger::Do(MergeMembers& task) {
  json::object& original = task.target->get_object();
  struct Child {
    std::string_view field;
    const json::value* patch_value;
    MemberAction::Kind kind;
    FieldMeta meta;
    bool is_delete_list;
  };
  std::vector<Child> children;
  for (const json::key_value_pair& member : *task.patch) {
    if (!IsPlainMember(member.key(), task.ordered_lists)) continue;
    MemberAction action;
    CONVERGE_RETURN_IF_ERROR(ClassifyMember(original, member.key(), member.value(), action));
    if (action.kind == MemberAction::kDone) continue;
    const FieldMeta meta = Lookup(task.cursor, action.field);
    if (action.kind == MemberAction::kMergeMap && meta.strategy == Strategy::kReplace) {
      ReplaceWith(*action.current, member.value());
      continue;
    }
    children.push_back(
        Child{action.field, &member.value(), action.kind, meta, action.is_delete_list});
  }
  // `original` no longer changes: its members' addresses are stable from here on. Queued in
  // reverse so that they run in the patch's order.
  for (auto child = children.rbegin(); child != children.rend(); ++child) {
    json::value* target = original.if_contains(child->field);
    if (child->kind == MemberAction::kMergeMap) {
      tasks_.emplace_back(
          MergeObject{target, &child->patch_value->get_object(), child->meta.child});
    } else {
      tasks_.emplace_back(
          MergeArray{target, &child->patch_value->get_array(), child->meta, child->is_delete_list});
    }
  }
  return util::Status::Ok();
}

util::Status Merger::Do(MergeArray& task) {
  // Queued when the field held a list; a sibling member of the same patch (a map under the same
  // name as a $deleteFromPrimitiveList list) may have replaced it since.
  if (task.target == nullptr || !task.target->is_array()) {
    return util::InvalidArgument("unable to merge a list into a value that is not a list");
  }
  json::value& target = *task.target;
  const json::array& patch = *task.patch;
  std::string_view merge_key = task.meta.merge_key;
  if (task.meta.strategy != Strategy::kMerge) {
    if (!task.is_delete_list) {
      ReplaceWith(target, json::value(patch));
      return util::Status::Ok();
    }
    // Not a merging list, but the request says which elements to delete: delete them.
    merge_key = "";
  }
  CONVERGE_ASSIGN_OR_RETURN(ElementKind kind, KindOfElements(&target.get_array(), &patch));
  if (kind == ElementKind::kEmpty) return util::Status::Ok();
  if (kind == ElementKind::kScalar) {
    return MergeScalarList(target.get_array(), patch, task.is_delete_list);
  }
  auto state = std::make_unique<ObjectListMerge>();
  CONVERGE_RETURN_IF_ERROR(
      PrepareObjectList(target.get_array(), patch, merge_key, task.meta.child, *state));
  // Upstream's mergeSliceWithoutSpecialElements: each patch element merges into the first
  // original element with its key, or is appended. Appending first, merging after.
  std::vector<std::pair<std::size_t, const json::object*>> merges;
  for (const json::value* element : state->plain) {
    std::size_t index = std::string::npos;
    CONVERGE_RETURN_IF_ERROR(LocateElement(target.get_array(), *element, merge_key, *state, index));
    if (index != std::string::npos) merges.emplace_back(index, &element->get_object());
  }
  tasks_.emplace_back(FinishArray{&target, merge_key, std::move(state)});
  for (auto merge = merges.rbegin(); merge != merges.rend(); ++merge) {
    tasks_.emplace_back(
        MergeObject{&target.get_array()[merge->first], merge->second, task.meta.child});
  }
  return util::Status::Ok();
}

}  // namespace

util::StatusOr<json::value> ApplyStrategicMergePatch(const json::value& original,
                                                     const json::value& patch,
                                                     const TypeSchema* schema) {
  if (!original.is_object()) {
    return util::InvalidArgument("a strategic merge patch applies to an object");
  }
  return ApplyStrategicMergePatch(json::value(original, json::storage_ptr()), patch, schema);
}

util::StatusOr<json::value> ApplyStrategicMergePatch(json::value&& original,
                                                     const json::value& patch,
                                                     const TypeSchema* schema) {
  if (!original.is_object()) {
    return util::InvalidArgument("a strategic merge patch applies to an object");
  }
  if (patch.is_null()) return std::move(original);
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
  json::value result = std::move(original);
  Merger merger;
  CONVERGE_RETURN_IF_ERROR(merger.Run(result, patch.get_object(), Cursor{schema, nullptr}));
  return result;
}

}  // namespace converge::api
