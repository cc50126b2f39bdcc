#include "api/merge_patch.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>

#include "api/field_validation.h"

namespace converge::api {
namespace {

namespace json = boost::json;

util::Status CheckDepth(const json::value& v, std::string_view what) {
  if (JsonNestingDepth(v) > kMaxPatchNestingDepth) {
    return util::InvalidArgument(std::string(what) + " nests deeper than " +
                                 std::to_string(kMaxPatchNestingDepth) + " levels");
  }
  return util::Status::Ok();
}

// Merges `patch` into `doc` member by member, depth first. Iterative: pending merges of nested
// objects are queued once their parent has finished changing (adding or removing members may
// move an object's storage, so pointers are taken only after that).
void MergeObjectInto(json::object& doc, const json::object& patch) {
  std::vector<std::pair<json::object*, const json::object*>> pending{{&doc, &patch}};
  std::vector<std::pair<std::string_view, const json::object*>> nested;
  while (!pending.empty()) {
    auto [target, changes] = pending.back();
    pending.pop_back();
    nested.clear();
    for (const json::key_value_pair& member : *changes) {
      const json::value& patch_value = member.value();
      if (patch_value.is_null()) {
        target->stable_erase(member.key());
        continue;
      }
      json::value* current = target->if_contains(member.key());
      if (current != nullptr && current->is_object() && patch_value.is_object()) {
        nested.emplace_back(member.key(), &patch_value.get_object());
        continue;
      }
      json::value replacement(patch_value, target->storage());
      RemoveNullMembers(replacement);
      if (current != nullptr) {
        *current = std::move(replacement);
      } else {
        target->emplace(member.key(), std::move(replacement));
      }
    }
    for (auto it = nested.rbegin(); it != nested.rend(); ++it) {
      pending.emplace_back(&target->at(it->first).get_object(), it->second);
    }
  }
}

// The merge patch from `original` to `modified`, depth first. Iterative; a nested diff is added to
// its parent's patch when it is complete, and only if it is not empty.
json::object DiffObjects(const json::object& original, const json::object& modified) {
  struct Frame {
    const json::object* before;
    const json::object* after;
    json::object patch;
    std::size_t next = 0;    // the next member of `after` to compare
    std::size_t parent = 0;  // index of the parent frame (unused for the root)
    std::string_view key;    // this frame's member in the parent
  };
  std::vector<Frame> stack;
  stack.push_back(Frame{&original, &modified, json::object(), 0, 0, {}});
  json::object result;
  while (!stack.empty()) {
    const std::size_t top = stack.size() - 1;
    if (stack[top].next < stack[top].after->size()) {
      const json::key_value_pair& member = *(stack[top].after->begin() + stack[top].next++);
      const json::value* before = stack[top].before->if_contains(member.key());
      if (before != nullptr && before->is_object() && member.value().is_object()) {
        stack.push_back(Frame{&before->get_object(), &member.value().get_object(), json::object(),
                              0, top, member.key()});
      } else if (before == nullptr || !JsonEqual(*before, member.value())) {
        stack[top].patch.emplace(member.key(), member.value());
      }
      continue;
    }
    Frame done = std::move(stack[top]);
    stack.pop_back();
    for (const json::key_value_pair& member : *done.before) {
      if (!done.after->contains(member.key())) done.patch.emplace(member.key(), nullptr);
    }
    if (stack.empty()) {
      result = std::move(done.patch);
    } else if (!done.patch.empty()) {
      stack[done.parent].patch.emplace(done.key, std::move(done.patch));
    }
  }
  return result;
}

bool NumbersEqual(const json::value& a, const json::value& b) {
  if (!a.is_double() && !b.is_double()) return a == b;  // int64/uint64 compare by value
  if (a.is_double() && b.is_double()) return a.get_double() == b.get_double();
  const double d = a.is_double() ? a.get_double() : b.get_double();
  const json::value& integer = a.is_double() ? b : a;
  if (d != std::trunc(d)) return false;  // also false for NaN
  if (integer.is_int64()) {
    // [-2^63, 2^63): the doubles that convert to int64 without overflow.
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
    return static_cast<std::int64_t>(d) == integer.get_int64();
  }
  if (!(d >= 0 && d < 18446744073709551616.0)) return false;
  return static_cast<std::uint64_t>(d) == integer.get_uint64();
}

bool IsNumber(const json::value& v) {
  return v.is_int64() || v.is_uint64() || v.is_double();
}

// Boost.JSON 1.81 parses a number too large for a double (1e999) as infinity, and would later
// serialize it as `Infinity`, which is not JSON. Go's decoder rejects such numbers.
bool HasNonFiniteNumber(const json::value& v) {
  std::vector<const json::value*> stack{&v};
  while (!stack.empty()) {
    const json::value* node = stack.back();
    stack.pop_back();
    if (node->is_double() && !std::isfinite(node->get_double())) return true;
    if (const json::object* o = node->if_object()) {
      for (const json::key_value_pair& member : *o) stack.push_back(&member.value());
    } else if (const json::array* a = node->if_array()) {
      for (const json::value& element : *a) stack.push_back(&element);
    }
  }
  return false;
}

}  // namespace

util::StatusOr<json::value> ApplyMergePatch(const json::value& original, const json::value& patch) {
  if (!patch.is_object() && !patch.is_array()) {
    // Upstream's jsonpatch.MergePatch rejects null and scalar patches with this message.
    return util::InvalidArgument("Invalid JSON Patch");
  }
  CONVERGE_RETURN_IF_ERROR(CheckDepth(patch, "patch"));
  CONVERGE_RETURN_IF_ERROR(CheckDepth(original, "document"));
  if (patch.is_array() || !original.is_object()) {
    json::value result(patch, json::storage_ptr());
    RemoveNullMembers(result);
    return result;
  }
  json::value result(original, json::storage_ptr());
  MergeObjectInto(result.get_object(), patch.get_object());
  return result;
}

util::StatusOr<json::value> CreateMergePatch(const json::value& original,
                                             const json::value& modified) {
  if (!original.is_object() || !modified.is_object()) {
    return util::InvalidArgument("a merge patch can only be computed between two objects");
  }
  CONVERGE_RETURN_IF_ERROR(CheckDepth(original, "original document"));
  CONVERGE_RETURN_IF_ERROR(CheckDepth(modified, "modified document"));
  return json::value(DiffObjects(original.get_object(), modified.get_object()));
}

int JsonNestingDepth(const json::value& v, int cap) {
  int max_depth = 0;
  std::vector<std::pair<const json::value*, int>> stack;
  stack.emplace_back(&v, 0);
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      const int inner = depth + 1;
      if (inner > max_depth) max_depth = inner;
      if (max_depth > cap) return cap + 1;
      for (const json::key_value_pair& member : node->get_object()) {
        if (member.value().is_structured()) stack.emplace_back(&member.value(), inner);
      }
    } else if (node->is_array()) {
      const int inner = depth + 1;
      if (inner > max_depth) max_depth = inner;
      if (max_depth > cap) return cap + 1;
      for (const json::value& element : node->get_array()) {
        if (element.is_structured()) stack.emplace_back(&element, inner);
      }
    }
  }
  return max_depth;
}

namespace {

using ValuePairs = std::vector<std::pair<const json::value*, const json::value*>>;

// Pairs up the members of `x` and `y` onto `stack`; false when their keys differ. Pairwise while
// both list their members in the same order (the usual case: one was copied from the other), a
// lookup only where the order differs: looking up every key, as boost::json's operator== does,
// is ~10x slower on a pod.
bool PairMembers(const json::object& x, const json::object& y, ValuePairs* stack) {
  if (x.size() != y.size()) return false;
  auto in_y = y.begin();
  for (const json::key_value_pair& member : x) {
    const json::value* other =
        in_y->key() == member.key() ? &in_y->value() : y.if_contains(member.key());
    if (other == nullptr) return false;
    stack->emplace_back(&member.value(), other);
    ++in_y;
  }
  return true;
}

bool PairsEqual(ValuePairs stack) {
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (IsNumber(*x) && IsNumber(*y)) {
      if (!NumbersEqual(*x, *y)) return false;
      continue;
    }
    if (x->kind() != y->kind()) return false;
    switch (x->kind()) {
      case json::kind::object:
        if (!PairMembers(x->get_object(), y->get_object(), &stack)) return false;
        break;
      case json::kind::array: {
        const json::array& xa = x->get_array();
        const json::array& ya = y->get_array();
        if (xa.size() != ya.size()) return false;
        for (std::size_t i = 0; i < xa.size(); ++i) stack.emplace_back(&xa[i], &ya[i]);
        break;
      }
      default:
        if (*x != *y) return false;
    }
  }
  return true;
}

}  // namespace

bool JsonEqual(const json::value& a, const json::value& b) {
  return PairsEqual({{&a, &b}});
}

bool JsonEqual(const json::object& a, const json::object& b) {
  ValuePairs stack;
  return PairMembers(a, b, &stack) && PairsEqual(std::move(stack));
}

void RemoveNullMembers(json::value& v) {
  std::vector<json::value*> stack{&v};
  while (!stack.empty()) {
    json::value* node = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      json::object& object = node->get_object();
      bool has_null = false;
      for (const json::key_value_pair& member : object) has_null |= member.value().is_null();
      if (has_null) {
        json::object pruned(object.storage());
        pruned.reserve(object.size());
        for (json::key_value_pair& member : object) {
          if (!member.value().is_null()) pruned.emplace(member.key(), std::move(member.value()));
        }
        object = std::move(pruned);
      }
      for (json::key_value_pair& member : object) {
        if (member.value().is_structured()) stack.push_back(&member.value());
      }
    } else if (node->is_array()) {
      for (json::value& element : node->get_array()) {
        if (element.is_structured()) stack.push_back(&element);
      }
    }
  }
}

util::StatusOr<json::value> ParsePatchBody(std::string_view body,
                                           std::vector<std::string>* duplicates) {
  json::parse_options options;
  options.max_depth = kMaxPatchNestingDepth;
  boost::system::error_code ec;
  json::value parsed = ParseJsonFindingDuplicates(body, options, ec, duplicates);
  if (ec) {
    if (ec == json::error::too_deep) {
      return util::InvalidArgument("error decoding patch: exceeded max depth of " +
                                   std::to_string(kMaxPatchNestingDepth));
    }
    return util::InvalidArgument("error decoding patch: " + ec.message());
  }
  if (HasNonFiniteNumber(parsed)) {
    return util::InvalidArgument("error decoding patch: a number is out of range");
  }
  return parsed;
}

}  // namespace converge::api
