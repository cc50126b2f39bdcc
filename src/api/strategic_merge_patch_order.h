// Internal to the strategic merge patch (strategic_merge_patch.cc): how list elements are
// identified and how merged lists are ordered, after upstream's strategicpatch
// (normalizeElementOrder, mergeSortedSlice). Not an interface for other code.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/json/value.hpp>

#include "util/status.h"

namespace converge::api::strategic_patch_internal {

// A JSON rendering for error messages, cut at a few hundred bytes.
std::string Show(const boost::json::value& v);
// Upstream's ErrNoMergeKey, as InvalidArgument.
util::Status NoMergeKey(const boost::json::value& element, std::string_view merge_key);

// A canonical serialization of `v`: equal (JsonEqual) values get equal keys, so keys can be
// hashed. Objects have their members sorted; integral numbers print as integers.
std::string KeyOf(const boost::json::value& v);

enum class ElementKind { kEmpty, kObject, kScalar };

// Upstream's sliceElementType over both lists (either may be null): no nested lists
// (FailedPrecondition "lists of lists are not supported", upstream's 422), one JSON type
// throughout (numbers are one type here), else InvalidArgument.
util::StatusOr<ElementKind> KindOfElements(const boost::json::array* a,
                                           const boost::json::array* b);

// The identity of a list element: KeyOf its merge-key value for lists of objects (an element
// without the key is an error), else KeyOf the element.
util::StatusOr<std::string> ElementKey(const boost::json::value& element, bool objects,
                                       std::string_view merge_key);

// The first position of each identity in an order list.
class OrderIndex {
 public:
  static util::StatusOr<OrderIndex> Build(const std::vector<const boost::json::value*>& order,
                                          bool objects, std::string_view merge_key);

  // Position of `key`, or nullopt when it is not in the list.
  std::optional<std::size_t> Find(const std::string& key) const;

 private:
  std::unordered_map<std::string, std::size_t> first_;
};

// A list element and its identity.
struct Item {
  boost::json::value value;
  std::string key;
};

std::vector<const boost::json::value*> Pointers(const boost::json::array* list);

// Splits `merged` into the items whose identity is in `keys` and the rest, keeping their order.
util::Status Partition(boost::json::array merged, const std::unordered_set<std::string>& keys,
                       bool objects, std::string_view merge_key, std::vector<Item>& in_keys,
                       std::vector<Item>& others);

// Upstream's normalizeElementOrder + mergeSortedSlice. Patch items are sorted by `patch_order`,
// server-only items by `server_order` (stably; `$patch: delete` elements last), then interleaved:
// a server-only item goes before a patch item only when both are in `server_order` and it comes
// first there. So a patch item the server did not have goes before the remaining server-only
// items (the prepending documented in strategic_merge_patch.h).
boost::json::array NormalizeElementOrder(std::vector<Item> patch_items,
                                         std::vector<Item> server_only,
                                         const OrderIndex& patch_order,
                                         const OrderIndex& server_order, bool objects,
                                         const boost::json::storage_ptr& sp);

}  // namespace converge::api::strategic_patch_internal
