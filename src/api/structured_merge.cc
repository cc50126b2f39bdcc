#include "api/structured_merge.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>

#include "api/go_json.h"
#include "api/merge_patch.h"

namespace converge::api {
namespace {

namespace json = boost::json;

// Deeper nodes are leaves: bounds the recursion of every walker here.
constexpr int kMaxMergeDepth = 500;

// A node's type, resolved from the schema (upstream's schema.Atom).
struct TypeRef {
  enum class Kind : uint8_t { kScalar, kStruct, kMap, kList, kDeduced };
  enum class ListKind : uint8_t { kAtomic, kSet, kMap };

  Kind kind = Kind::kDeduced;
  bool atomic = false;                 // kStruct, kMap, kList
  ListKind list = ListKind::kAtomic;   // kList
  const TypeSchema* type = nullptr;    // kStruct
  const FieldSchema* field = nullptr;  // kMap, kList: the field; its `value` is the element type
};

TypeRef Scalar() {
  return TypeRef{TypeRef::Kind::kScalar};
}
TypeRef Deduced() {
  return TypeRef{TypeRef::Kind::kDeduced};
}

TypeRef FromValueType(const ValueType& v) {
  if (v.kind == ValueKind::kAny) return Deduced();
  if (v.kind != ValueKind::kMessage) return Scalar();
  if (v.message == nullptr) return Deduced();
  switch (v.message->special) {
    case SpecialType::kNone: {
      TypeRef t{TypeRef::Kind::kStruct};
      t.type = v.message;
      t.atomic = v.message->atomic_struct;
      return t;
    }
    case SpecialType::kTime:
    case SpecialType::kMicroTime:
    case SpecialType::kDuration:
    case SpecialType::kQuantity:
    case SpecialType::kIntOrString: return Scalar();
    case SpecialType::kStringList: {
      TypeRef t{TypeRef::Kind::kList};
      t.atomic = true;
      return t;
    }
    case SpecialType::kRawExtension:
    case SpecialType::kFieldsV1: return Deduced();
  }
  return Deduced();
}

TypeRef FromField(const FieldSchema& f) {
  if (f.repeated) {
    TypeRef t{TypeRef::Kind::kList};
    t.field = &f;
    switch (f.list_type) {
      case ListType::kAtomic: t.list = TypeRef::ListKind::kAtomic; break;
      case ListType::kSet: t.list = TypeRef::ListKind::kSet; break;
      case ListType::kMap:
        t.list = f.list_map_keys.empty() ? TypeRef::ListKind::kAtomic : TypeRef::ListKind::kMap;
        break;
      case ListType::kUnspecified:
        // kube-openapi's schemaconv: lists without x-kubernetes-list-type follow their strategic
        // merge strategy.
        if (f.patch_strategy == "merge" || f.patch_strategy == "merge,retainKeys") {
          t.list = f.patch_merge_key.empty() ? TypeRef::ListKind::kSet : TypeRef::ListKind::kMap;
        }
        break;
    }
    t.atomic = t.list == TypeRef::ListKind::kAtomic;
    return t;
  }
  if (f.is_map) {
    TypeRef t{TypeRef::Kind::kMap};
    t.field = &f;
    t.atomic = f.map_type == MapType::kAtomic;
    return t;
  }
  return FromValueType(f.value);
}

TypeRef Root(const TypeSchema* schema) {
  if (schema == nullptr) return Deduced();
  TypeRef t{TypeRef::Kind::kStruct};
  t.type = schema;
  t.atomic = schema->atomic_struct;
  return t;
}

// The type of member `key` of an object of type `t`; sets *declared when `t` is a struct that
// declares `key` (such members are not tracked themselves, only their contents).
TypeRef MemberType(const TypeRef& t, std::string_view key, const FieldSchema** declared) {
  *declared = nullptr;
  switch (t.kind) {
    case TypeRef::Kind::kStruct:
      if (const FieldSchema* f = t.type->Field(key)) {
        *declared = f;
        return FromField(*f);
      }
      return Deduced();
    case TypeRef::Kind::kMap: return FromValueType(t.field->value);
    default: return Deduced();
  }
}

TypeRef ElementType(const TypeRef& t) {
  if (t.field == nullptr) return Scalar();  // StringList
  return FromValueType(t.field->value);
}

const json::value& EmptyObjectValue() {
  static const json::value* const kEmpty = new json::value(json::object());
  return *kEmpty;
}

const json::value& EmptyArrayValue() {
  static const json::value* const kEmpty = new json::value(json::array());
  return *kEmpty;
}

// Lists that upstream's Go types serialize even when nil (no omitempty), so that they exist
// (as null) wherever their parent does. Only the ones on commonly written kinds are listed; the
// difference they make is whether a create records the list itself ("f:containers":{".":{},...})
// or only its items.
bool AlwaysSerializedList(std::string_view type, std::string_view field) {
  static constexpr std::pair<std::string_view, std::string_view> kFields[] = {
      {"io.k8s.api.core.v1.PodSpec", "containers"},
      {"io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms"},
      {"io.k8s.api.rbac.v1.ClusterRole", "rules"},
      {"io.k8s.api.rbac.v1.Role", "rules"},
      {"io.k8s.api.rbac.v1.PolicyRule", "verbs"},
      {"io.k8s.api.discovery.v1.EndpointSlice", "endpoints"},
      {"io.k8s.api.discovery.v1.Endpoint", "addresses"},
      {"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec",
       "versions"},
      {"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus",
       "storedVersions"},
  };
  for (const auto& [t, f] : kFields) {
    if (t == type && f == field) return true;
  }
  return false;
}

// The value a declared field has in upstream's Go-typed object when it is absent from the JSON
// but its parent exists: {} for a non-pointer struct (a message field with a protobuf number, not
// marked nullable), an empty list for the always-serialized lists above, else nothing.
const json::value* ImplicitValue(const TypeRef& parent, const FieldSchema* f) {
  if (f == nullptr || parent.kind != TypeRef::Kind::kStruct || f->number <= 0) return nullptr;
  if (f->repeated) {
    return AlwaysSerializedList(parent.type->name, f->name) ? &EmptyArrayValue() : nullptr;
  }
  if (!f->is_map && !f->nullable_scalar && f->value.kind == ValueKind::kMessage &&
      f->value.message != nullptr && f->value.message->special == SpecialType::kNone) {
    return &EmptyObjectValue();
  }
  return nullptr;
}

// How a node is walked.
enum class Shape { kLeaf, kObject, kList };

// Decides how to walk a node given its type and the values present (either may be null).
Shape ShapeOf(const TypeRef& t, const json::value* a, const json::value* b, int depth) {
  if (depth > kMaxMergeDepth) return Shape::kLeaf;
  auto all = [&](bool (json::value::*is)() const noexcept) {
    return (a == nullptr || (a->*is)()) && (b == nullptr || (b->*is)());
  };
  switch (t.kind) {
    case TypeRef::Kind::kScalar: return Shape::kLeaf;
    case TypeRef::Kind::kStruct:
    case TypeRef::Kind::kMap:
      if (t.atomic || !all(&json::value::is_object)) return Shape::kLeaf;
      return Shape::kObject;
    case TypeRef::Kind::kList:
      if (t.atomic || !all(&json::value::is_array)) return Shape::kLeaf;
      return Shape::kList;
    case TypeRef::Kind::kDeduced:
      // Deduced objects are granular maps; deduced lists are atomic.
      return all(&json::value::is_object) ? Shape::kObject : Shape::kLeaf;
  }
  return Shape::kLeaf;
}

bool IsEmptyContainer(const json::value* v) {
  if (v == nullptr) return true;
  if (v->is_object()) return v->get_object().empty();
  if (v->is_array()) return v->get_array().empty();
  return false;
}

// Errors in upstream's ValidationErrors form.
class Errors {
 public:
  void Add(const Path& path, std::string message) {
    std::string p = PathString(path);
    errors_.push_back(p.empty() ? std::move(message) : p + ": " + message);
  }
  bool empty() const { return errors_.empty(); }
  util::Status ToStatus() const {
    if (errors_.empty()) return util::Status::Ok();
    if (errors_.size() == 1) return util::InvalidArgument(errors_[0]);
    std::string msg = "errors:";
    for (const std::string& e : errors_) msg += "\n  " + e;
    return util::InvalidArgument(msg);
  }

 private:
  std::vector<std::string> errors_;
};

// The path element of one list item (upstream's listItemToPathElement); error text as upstream's.
util::StatusOr<PathElement> ItemElement(const TypeRef& list, const json::value& item) {
  if (list.list == TypeRef::ListKind::kSet) {
    if (item.is_object()) {
      return util::InvalidArgument(
          "associative list without keys has an element that's a map type");
    }
    if (item.is_array()) {
      return util::InvalidArgument("not supported: associative list with lists as elements");
    }
    if (item.is_null()) {
      return util::InvalidArgument(
          "associative list without keys has an element that's an explicit null");
    }
    return PathElement::Value(item);
  }
  if (item.is_null()) {
    return util::InvalidArgument("associative list with keys may not have a null element");
  }
  if (!item.is_object()) {
    return util::InvalidArgument("associative list with keys may not have non-map elements");
  }
  const json::object& o = item.get_object();
  const FieldSchema& f = *list.field;
  std::vector<std::string> single;
  const std::vector<std::string>* names = &f.list_map_keys;
  if (f.list_type != ListType::kMap) {
    single.push_back(f.patch_merge_key);
    names = &single;
  }
  const TypeRef element = ElementType(list);
  std::vector<PathElement::KeyField> fields;
  for (const std::string& name : *names) {
    if (const json::value* v = o.if_contains(name)) {
      fields.emplace_back(name, *v);
      continue;
    }
    const FieldSchema* kf =
        element.kind == TypeRef::Kind::kStruct ? element.type->Field(name) : nullptr;
    if (kf != nullptr && !kf->default_json.empty()) {
      boost::system::error_code ec;
      json::value def = json::parse(kf->default_json, ec);
      if (!ec) {
        fields.emplace_back(name, std::move(def));
        continue;
      }
    }
    return util::InvalidArgument("associative list with keys has an element that omits key field " +
                                 GoQuote(name) + " (and doesn't have default value)");
  }
  return PathElement::Key(std::move(fields));
}

// The items of a list with their elements, in order, without repeats. Lists are short (a pod's
// conditions, containers, ports): up to kLinearItems items are found by comparing elements in
// turn, which costs less than building a map of copies of them; longer lists get the map.
struct IndexedList {
  static constexpr size_t kLinearItems = 16;

  std::vector<PathElement> order;
  std::vector<const json::value*> values;  // the item of each element of `order`
  std::map<PathElement, size_t> index;     // position by element, past kLinearItems items only
  bool duplicates = false;

  const json::value* Find(const PathElement& pe) const {
    if (order.size() <= kLinearItems) {
      for (size_t i = 0; i < order.size(); ++i) {
        if (order[i] == pe) return values[i];
      }
      return nullptr;
    }
    auto it = index.find(pe);
    return it == index.end() ? nullptr : values[it->second];
  }
  bool Contains(const PathElement& pe) const { return Find(pe) != nullptr; }
  void Add(PathElement pe, const json::value* item) {
    order.push_back(std::move(pe));
    values.push_back(item);
    if (order.size() == kLinearItems + 1) {
      for (size_t i = 0; i < order.size(); ++i) index.emplace(order[i], i);
    } else if (order.size() > kLinearItems + 1) {
      index.emplace(order.back(), order.size() - 1);
    }
  }
};

// Indexes `list`. Unkeyable items are reported (with the list's path) and the index is left
// partial; a repeated key sets `duplicates` (and is reported when `report_duplicates`).
IndexedList IndexList(const TypeRef& t, const json::array& list, const Path& path, Errors& errors,
                      bool report_duplicates) {
  IndexedList out;
  for (size_t i = 0; i < list.size(); ++i) {
    util::StatusOr<PathElement> pe = ItemElement(t, list[i]);
    if (!pe.ok()) {
      errors.Add(path, "element " + std::to_string(i) + ": " + pe.status().message());
      continue;
    }
    if (out.Contains(*pe)) {
      out.duplicates = true;
      if (report_duplicates) errors.Add(path, "duplicate entries for key " + pe->ToString());
      continue;
    }
    out.Add(*std::move(pe), &list[i]);
  }
  return out;
}

// ---- ToFieldSet -------------------------------------------------------------------------------

void ToSet(const json::value& v, const TypeRef& t, Path& path, FieldSet& out, int depth) {
  if (v.is_null()) {
    // Upstream inserts typed null scalars and atomic values; other null maps and lists hold
    // nothing, and a deduced null is read as an empty map.
    if (t.kind == TypeRef::Kind::kScalar || (t.kind != TypeRef::Kind::kDeduced && t.atomic)) {
      out.Insert(path);
    }
    return;
  }
  switch (ShapeOf(t, &v, nullptr, depth)) {
    case Shape::kLeaf: out.Insert(path); return;
    case Shape::kObject:
      for (const json::key_value_pair& kv : v.get_object()) {
        const FieldSchema* declared = nullptr;
        const TypeRef ct = MemberType(t, kv.key(), &declared);
        path.push_back(PathElement::Field(std::string(kv.key())));
        ToSet(kv.value(), ct, path, out, depth + 1);
        if (declared == nullptr) out.Insert(path);
        path.pop_back();
      }
      return;
    case Shape::kList: {
      const TypeRef et = ElementType(t);
      for (const json::value& item : v.get_array()) {
        util::StatusOr<PathElement> pe = ItemElement(t, item);
        if (!pe.ok()) continue;  // ValidateApplied reports these
        path.push_back(*std::move(pe));
        ToSet(item, et, path, out, depth + 1);
        out.Insert(path);
        path.pop_back();
      }
      return;
    }
  }
}

// ---- ValidateApplied --------------------------------------------------------------------------

void Validate(const json::value& v, const TypeRef& t, Path& path, Errors& errors, int depth) {
  switch (ShapeOf(t, &v, nullptr, depth)) {
    case Shape::kLeaf: return;
    case Shape::kObject:
      for (const json::key_value_pair& kv : v.get_object()) {
        const FieldSchema* declared = nullptr;
        const TypeRef ct = MemberType(t, kv.key(), &declared);
        path.push_back(PathElement::Field(std::string(kv.key())));
        Validate(kv.value(), ct, path, errors, depth + 1);
        path.pop_back();
      }
      return;
    case Shape::kList: {
      const json::array& list = v.get_array();
      const TypeRef et = ElementType(t);
      std::map<PathElement, bool> seen;
      for (size_t i = 0; i < list.size(); ++i) {
        util::StatusOr<PathElement> pe = ItemElement(t, list[i]);
        if (!pe.ok()) {
          // Upstream bails on the whole list at the first unkeyable item.
          errors.Add(path, "element " + std::to_string(i) + ": " + pe.status().message());
          return;
        }
        if (!seen.emplace(*pe, true).second) {
          errors.Add(path, "duplicate entries for key " + pe->ToString());
        }
        path.push_back(*std::move(pe));
        Validate(list[i], et, path, errors, depth + 1);
        path.pop_back();
      }
      return;
    }
  }
}

// ---- Compare ----------------------------------------------------------------------------------

class Comparer {
 public:
  // `skip`: members whose subtrees are not walked (null: none).
  explicit Comparer(Comparison& out, const FieldSet* skip = nullptr) : out_(out), skip_(skip) {}

  // Node(&l, &r, t, 0) for two objects at the root, without wrapping them in json::values.
  void RootObjects(const json::object& l, const json::object& r, const TypeRef& t) {
    // As Node: an atomic root, or two empty objects, is one leaf at the empty path, which no set
    // records.
    if (t.atomic || (l.empty() && r.empty())) return;
    ObjectMembers(&l, &r, t, 0);
  }

  void Node(const json::value* l, const json::value* r, const TypeRef& t, int depth) {
    if (t.kind != TypeRef::Kind::kDeduced) {
      if (l != nullptr && l->is_null()) l = nullptr;
      if (r != nullptr && r->is_null()) r = nullptr;
    }
    if (l == nullptr && r == nullptr) return;
    // Equal containers hold no change: every leaf below would compare equal, so the walk (a path
    // element, a schema lookup and a comparison per member) is skipped. Most of an update is
    // such subtrees: a status write leaves spec and metadata as they were.
    if (l != nullptr && r != nullptr && l->is_structured() && (l == r || JsonEqual(*l, *r))) return;
    Shape shape = ShapeOf(t, l, r, depth);
    if (shape != Shape::kLeaf && IsEmptyContainer(l) && IsEmptyContainer(r)) {
      shape = Shape::kLeaf;  // upstream's emptyPromoteToLeaf: keeps {} vs absent visible
    }
    IndexedList li, ri;
    if (shape == Shape::kList) {
      static const json::array kEmpty;
      li = IndexList(t, l ? l->get_array() : kEmpty, path_, errors_, false);
      ri = IndexList(t, r ? r->get_array() : kEmpty, path_, errors_, false);
      // Duplicated keys cannot be compared item by item: compare the list whole.
      if (li.duplicates || ri.duplicates) shape = Shape::kLeaf;
    }
    switch (shape) {
      case Shape::kLeaf:
        if (l == nullptr) {
          Record(kAdded);
        } else if (r == nullptr) {
          Record(kRemoved);
        } else if (!JsonEqual(*l, *r)) {
          Record(kModified);
        }
        return;  // leaves get no post-item hook
      case Shape::kObject: Objects(l, r, t, depth); break;
      case Shape::kList: Lists(li, ri, t, depth); break;
    }
    if (l == nullptr) {
      Record(kAdded);
    } else if (r == nullptr) {
      Record(kRemoved);
    }
  }

  const Errors& errors() const { return errors_; }

 private:
  void Member(std::string_view key, const json::value* lv, const json::value* rv,
              const json::object* lo, const json::object* ro, const TypeRef& t, int depth) {
    const FieldSchema* declared = nullptr;
    const TypeRef ct = MemberType(t, key, &declared);
    if (const json::value* implicit = ImplicitValue(t, declared)) {
      if ((lv == nullptr || lv->is_null()) && lo != nullptr) lv = implicit;
      if ((rv == nullptr || rv->is_null()) && ro != nullptr) rv = implicit;
    }
    PathElement pe = PathElement::Field(std::string(key));
    const FieldSet* const skip = skip_;
    if (skip != nullptr) {
      if (std::binary_search(skip->members().begin(), skip->members().end(), pe)) return;
      const FieldSet& below = skip->WithPrefix(pe);
      skip_ = below.Empty() ? nullptr : &below;
    }
    Enter(std::move(pe));
    Node(lv, rv, ct, depth + 1);
    Leave();
    skip_ = skip;
  }

  void Objects(const json::value* l, const json::value* r, const TypeRef& t, int depth) {
    ObjectMembers(l ? &l->get_object() : nullptr, r ? &r->get_object() : nullptr, t, depth);
  }

  void ObjectMembers(const json::object* lo, const json::object* ro, const TypeRef& t, int depth) {
    if (lo != nullptr) {
      for (const json::key_value_pair& kv : *lo) {
        Member(kv.key(), &kv.value(), ro ? ro->if_contains(kv.key()) : nullptr, lo, ro, t, depth);
      }
    }
    if (ro != nullptr) {
      for (const json::key_value_pair& kv : *ro) {
        if (lo != nullptr && lo->contains(kv.key())) continue;
        Member(kv.key(), nullptr, &kv.value(), lo, ro, t, depth);
      }
    }
  }

  void Lists(const IndexedList& li, const IndexedList& ri, const TypeRef& t, int depth) {
    // Only struct and map members are skipped: list items are compared whole.
    const FieldSet* const skip = skip_;
    skip_ = nullptr;
    ListItems(li, ri, t, depth);
    skip_ = skip;
  }

  void ListItems(const IndexedList& li, const IndexedList& ri, const TypeRef& t, int depth) {
    const TypeRef et = ElementType(t);
    for (size_t i = 0; i < li.order.size(); ++i) {
      const PathElement& pe = li.order[i];
      const json::value* r = ri.Find(pe);
      Enter(pe);
      Node(li.values[i], r, et, depth + 1);
      Leave();
    }
    for (size_t i = 0; i < ri.order.size(); ++i) {
      const PathElement& pe = ri.order[i];
      if (li.Contains(pe)) continue;
      Enter(pe);
      Node(nullptr, ri.values[i], et, depth + 1);
      Leave();
    }
  }

  enum Which { kAdded, kRemoved, kModified };

  void Enter(PathElement pe) {
    path_.push_back(std::move(pe));
    nodes_.emplace_back();
  }

  void Leave() {
    path_.pop_back();
    nodes_.pop_back();
  }

  // Inserts path_ into one of the three sets. A walk inserts many paths that share a prefix;
  // searching each from the root would cost a search per level, so the node of every prefix
  // that holds something is remembered while the prefix is on path_. Such a pointer stays valid:
  // only creating a sibling moves a node, and a sibling differs in an element on path_, so it is
  // created after this prefix has left path_ (Leave drops its pointers).
  void Record(Which which) {
    if (path_.empty()) return;  // nobody owns the whole object
    FieldSet* roots[] = {&out_.added, &out_.removed, &out_.modified};
    const size_t parent = path_.size() - 1;  // the member goes into the node of path_[0, parent)
    size_t known = parent;
    while (known > 0 && nodes_[known - 1][which] == nullptr) --known;
    FieldSet* node = known > 0 ? nodes_[known - 1][which] : roots[which];
    for (size_t i = known; i < parent; ++i) {
      node = node->Descend(path_[i]);
      nodes_[i][which] = node;
    }
    node->InsertMember(path_.back());
  }

  Comparison& out_;
  const FieldSet* skip_;  // the skipped members below path_; null: none
  Path path_;
  // nodes_[i][w]: the node of set w for path_[0, i] (null: none yet); as long as path_.
  std::vector<std::array<FieldSet*, 3>> nodes_;
  Errors errors_;
};

// ---- Merge ------------------------------------------------------------------------------------

class StructuredMerger {
 public:
  // The merged value, or nullopt when the result holds nothing (absent, or cleared by a null).
  std::optional<json::value> Node(const json::value* l, const json::value* r, const TypeRef& t,
                                  int depth) {
    const bool typed = t.kind != TypeRef::Kind::kDeduced;
    if (typed && r != nullptr && r->is_null()) return std::nullopt;  // the config clears it
    if (typed && l != nullptr && l->is_null()) l = nullptr;
    if (l == nullptr && r == nullptr) return std::nullopt;
    Shape shape = ShapeOf(t, l, r, depth);
    if (shape != Shape::kLeaf && IsEmptyContainer(l) && IsEmptyContainer(r)) shape = Shape::kLeaf;
    if (shape == Shape::kList) {
      static const json::array kEmpty;
      IndexedList ri = IndexList(t, r ? r->get_array() : kEmpty, path_, errors_, true);
      IndexedList li = IndexList(t, l ? l->get_array() : kEmpty, path_, errors_, false);
      if (!li.duplicates) return Lists(li, ri, t, depth);
      shape = Shape::kLeaf;  // a live list with duplicate keys is replaced whole
    }
    if (shape == Shape::kLeaf) return r != nullptr ? *r : *l;
    return Objects(l, r, t, depth);
  }

  const Errors& errors() const { return errors_; }

 private:
  std::optional<json::value> Member(std::string_view key, const json::value* lv,
                                    const json::value* rv, const TypeRef& t, int depth) {
    const FieldSchema* declared = nullptr;
    const TypeRef ct = MemberType(t, key, &declared);
    path_.push_back(PathElement::Field(std::string(key)));
    std::optional<json::value> out = Node(lv, rv, ct, depth + 1);
    path_.pop_back();
    return out;
  }

  std::optional<json::value> Objects(const json::value* l, const json::value* r, const TypeRef& t,
                                     int depth) {
    const json::object* lo = l ? &l->get_object() : nullptr;
    const json::object* ro = r ? &r->get_object() : nullptr;
    json::object out;
    if (lo != nullptr) {
      for (const json::key_value_pair& kv : *lo) {
        std::optional<json::value> v =
            Member(kv.key(), &kv.value(), ro ? ro->if_contains(kv.key()) : nullptr, t, depth);
        if (v) out.emplace(kv.key(), *std::move(v));
      }
    }
    if (ro != nullptr) {
      for (const json::key_value_pair& kv : *ro) {
        if (lo != nullptr && lo->contains(kv.key())) continue;
        std::optional<json::value> v = Member(kv.key(), nullptr, &kv.value(), t, depth);
        if (v) out.emplace(kv.key(), *std::move(v));
      }
    }
    if (out.empty()) return std::nullopt;
    return json::value(std::move(out));
  }

  std::optional<json::value> Item(const PathElement& pe, const IndexedList& li,
                                  const IndexedList& ri, const TypeRef& et, int depth) {
    path_.push_back(pe);
    std::optional<json::value> out = Node(li.Find(pe), ri.Find(pe), et, depth + 1);
    path_.pop_back();
    return out;
  }

  // Upstream's list order: items walk in live's order until the config mentions one; items both
  // sides hold appear in the config's order; live-only items stay where they were relative to
  // their neighbours; config-only items appear where the config puts them.
  std::optional<json::value> Lists(const IndexedList& li, const IndexedList& ri, const TypeRef& t,
                                   int depth) {
    const TypeRef et = ElementType(t);
    std::vector<const PathElement*> shared;
    for (const PathElement& pe : ri.order) {
      if (li.Contains(pe)) shared.push_back(&pe);
    }
    size_t next_shared = 0;
    auto is_next_shared = [&](const PathElement& pe) {
      return next_shared < shared.size() && *shared[next_shared] == pe;
    };
    json::array out;
    auto emit = [&](const PathElement& pe) {
      if (std::optional<json::value> v = Item(pe, li, ri, et, depth)) out.push_back(*std::move(v));
    };
    size_t l = 0, r = 0;
    const size_t ln = li.order.size(), rn = ri.order.size();
    while (l < ln || r < rn) {
      if (l < ln && r < rn) {
        const PathElement& pe = li.order[l];
        if (pe == ri.order[r]) {
          emit(pe);
          ++l;
          ++r;
          ++next_shared;
          continue;
        }
        if (ri.Contains(pe) && next_shared < shared.size() && !is_next_shared(pe)) {
          ++l;  // shared, but its turn comes later in the config's order
          continue;
        }
      }
      if (l < ln && !ri.Contains(li.order[l])) {
        emit(li.order[l]);  // live only
        ++l;
        continue;
      }
      if (r < rn) {
        const PathElement& pe = ri.order[r];
        emit(pe);
        ++r;
        if (is_next_shared(pe)) ++next_shared;
        continue;
      }
      ++l;  // a shared live item whose config twin was already emitted
    }
    if (out.empty()) return std::nullopt;
    return json::value(std::move(out));
  }

  Path path_;
  Errors errors_;
};

// ---- RemoveItems ------------------------------------------------------------------------------

// Returns false when `v` was emptied by the removal and should leave its parent.
bool RemoveItems(json::value& v, const FieldSet& items, const TypeRef& t, int depth) {
  if (items.Empty()) return true;
  switch (ShapeOf(t, &v, nullptr, depth)) {
    case Shape::kLeaf: return true;
    case Shape::kObject: {
      json::object& o = v.get_object();
      if (o.empty()) return true;
      std::vector<std::string> drop;
      for (json::key_value_pair& kv : o) {
        const PathElement pe = PathElement::Field(std::string(kv.key()));
        if (items.Has({pe})) {
          drop.emplace_back(kv.key());
          continue;
        }
        const FieldSet& sub = items.WithPrefix(pe);
        if (sub.Empty()) continue;
        const FieldSchema* declared = nullptr;
        if (!RemoveItems(kv.value(), sub, MemberType(t, kv.key(), &declared), depth + 1)) {
          drop.emplace_back(kv.key());
        }
      }
      for (const std::string& k : drop) o.stable_erase(k);
      return !o.empty();
    }
    case Shape::kList: {
      json::array& a = v.get_array();
      if (a.empty()) return true;
      const TypeRef et = ElementType(t);
      json::array kept;
      for (json::value& item : a) {
        util::StatusOr<PathElement> pe = ItemElement(t, item);
        if (pe.ok()) {
          if (items.Has({*pe})) continue;
          const FieldSet& sub = items.WithPrefix(*pe);
          if (!sub.Empty() && !RemoveItems(item, sub, et, depth + 1)) continue;
        }
        kept.push_back(std::move(item));
      }
      a = std::move(kept);
      return !a.empty();
    }
  }
  return true;
}

// Whether every element of `set` (members and the path to each) is a struct or map field.
bool OnlyFieldElements(const FieldSet& set) {
  for (const PathElement& m : set.members()) {
    if (m.kind() != PathElement::Kind::kField) return false;
  }
  for (const FieldSet::Child& c : set.children()) {
    if (c.element.kind() != PathElement::Kind::kField || !OnlyFieldElements(c.set)) return false;
  }
  return true;
}

}  // namespace

void Comparison::ExcludeFields(const FieldSet& fields) {
  if (fields.Empty()) return;
  added = added.RecursiveDifference(fields);
  modified = modified.RecursiveDifference(fields);
  removed = removed.RecursiveDifference(fields);
}

FieldSet ToFieldSet(const json::value& v, const TypeSchema* schema) {
  FieldSet out;
  Path path;
  ToSet(v, Root(schema), path, out, 0);
  return out;
}

util::Status ValidateApplied(const json::value& config, const TypeSchema* schema) {
  Errors errors;
  Path path;
  Validate(config, Root(schema), path, errors, 0);
  return errors.ToStatus();
}

util::StatusOr<Comparison> Compare(const json::value& before, const json::value& after,
                                   const TypeSchema* schema) {
  Comparison out;
  Comparer c(out);
  c.Node(&before, &after, Root(schema), 0);
  if (!c.errors().empty()) return c.errors().ToStatus();
  return out;
}

util::StatusOr<Comparison> Compare(const json::object& before, const json::object& after,
                                   const TypeSchema* schema, const FieldSet& skip) {
  Comparison out;
  Comparer c(out, skip.Empty() ? nullptr : &skip);
  c.RootObjects(before, after, Root(schema));
  if (!c.errors().empty()) return c.errors().ToStatus();
  // The walk skipped every struct or map member `skip` names, so nothing at or below one was
  // recorded: excluding them again would only copy the three sets. A skipped path that runs
  // through list items is not tracked by the walk (lists reset it), so such a skip still needs the
  // exclusion.
  if (!OnlyFieldElements(skip)) out.ExcludeFields(skip);
  return out;
}

util::StatusOr<json::value> Merge(const json::value& live, const json::value& config,
                                  const TypeSchema* schema) {
  StructuredMerger m;
  std::optional<json::value> out = m.Node(&live, &config, Root(schema), 0);
  if (!m.errors().empty()) return m.errors().ToStatus();
  if (!out) return json::value(json::object());
  return *std::move(out);
}

void RemoveItems(json::value& v, const FieldSet& items, const TypeSchema* schema) {
  if (!RemoveItems(v, items, Root(schema), 0) && v.is_object()) v.get_object().clear();
}

}  // namespace converge::api
