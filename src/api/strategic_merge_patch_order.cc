#include "api/strategic_merge_patch_order.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

#include <boost/json/serialize.hpp>

namespace converge::api::strategic_patch_internal {
namespace json = boost::json;

namespace {

// Upstream's mergepatch.ErrNoListOfLists.
constexpr std::string_view kErrNoListOfLists = "lists of lists are not supported";

bool IsDeleteDirective(const json::value& element) {
  const json::object* o = element.if_object();
  if (o == nullptr) return false;
  const json::value* d = o->if_contains("$patch");
  return d != nullptr && d->is_string() && d->get_string() == "delete";
}

}  // namespace

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

namespace {

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

}  // namespace

// Iterative, so any nesting is fine.
std::string KeyOf(const json::value& v) {
  struct Frame {
    const json::value* value;
    std::vector<const json::key_value_pair*> members;  // sorted, for objects
    std::size_t next = 0;
  };
  std::string out;
  std::vector<Frame> stack;
  auto emit = [&](const json::value& x) {
    switch (x.kind()) {
      case json::kind::null: out += 'n'; break;
      case json::kind::bool_: out += x.get_bool() ? 't' : 'f'; break;
      case json::kind::string:
        out += 's';
        AppendStringKey(x.get_string(), out);
        break;
      case json::kind::array:
        out += '[';
        stack.push_back(Frame{&x, {}, 0});
        break;
      case json::kind::object: {
        out += '{';
        Frame frame{&x, {}, 0};
        for (const json::key_value_pair& m : x.get_object()) frame.members.push_back(&m);
        std::sort(frame.members.begin(), frame.members.end(),
                  [](auto* l, auto* r) { return l->key() < r->key(); });
        stack.push_back(std::move(frame));
        break;
      }
      default: AppendNumberKey(x, out);
    }
  };
  emit(v);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.value->is_array()) {
      const json::array& array = top.value->get_array();
      if (top.next == array.size()) {
        out += ']';
        stack.pop_back();
      } else {
        emit(array[top.next++]);  // may grow `stack`: `top` is not used after this
      }
    } else if (top.next == top.members.size()) {
      out += '}';
      stack.pop_back();
    } else {
      const json::key_value_pair* member = top.members[top.next++];
      AppendStringKey(member->key(), out);
      emit(member->value());
    }
  }
  return out;
}

// Upstream would also reject mixing integers and floats.
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

util::StatusOr<OrderIndex> OrderIndex::Build(const std::vector<const json::value*>& order,
                                             bool objects, std::string_view merge_key) {
  OrderIndex index;
  for (std::size_t i = 0; i < order.size(); ++i) {
    CONVERGE_ASSIGN_OR_RETURN(std::string key, ElementKey(*order[i], objects, merge_key));
    index.first_.emplace(std::move(key), i);
  }
  return index;
}

std::optional<std::size_t> OrderIndex::Find(const std::string& key) const {
  auto it = first_.find(key);
  if (it == first_.end()) return std::nullopt;
  return it->second;
}

std::vector<const json::value*> Pointers(const json::array* list) {
  std::vector<const json::value*> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (const json::value& e : *list) out.push_back(&e);
  return out;
}

namespace {

// Upstream's normalizeSliceOrder: sorts `items` by their position in `order`, stably; elements
// carrying `$patch: delete` go last. (Items absent from `order`, for which upstream's comparator
// is inconsistent, keep their relative order after the others; the algorithm never produces
// them for well-formed input.)
void SortByOrder(std::vector<Item>& items, const OrderIndex& order, bool objects) {
  std::vector<std::pair<std::size_t, Item>> keyed;
  std::vector<Item> to_delete;
  keyed.reserve(items.size());
  for (Item& item : items) {
    if (objects && IsDeleteDirective(item.value)) {
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

}  // namespace

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

}  // namespace converge::api::strategic_patch_internal
