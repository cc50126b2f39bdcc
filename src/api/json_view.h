// Read-only views of a JSON document that is either a Boost.JSON tree or a compact tree.
//
// Why two forms: the objects in-process informers share (one parsed copy of each current version,
// apiserver/cached_object.h) are most of the server's memory at scale. A
// Boost.JSON tree spends 32 bytes per member, a copy of every key in every object and a header
// per string: a Running pod is 7.8 KB as a tree against 2.7 KB of JSON text. The compact tree
// (CompactTree) holds the same document read-only in one block of 4-byte words: 8 bytes per
// member, keys named by a process-wide intern table, small integers inline, equal strings stored
// once, and string values every pod repeats (an image, a ReplicaSet's name) named by a second
// table — ~1.3 KB for that pod.
//
// Readers that go through these views read either form at the speed of a Boost.JSON read; readers
// that ask an Object for its Boost.JSON tree (Object::doc()) make a compact object build one, once,
// and keep it for the object's lifetime (counted: CompactMaterializations()). So a component reads
// shared objects through views, and everything else goes on using Boost.JSON.
//
// The views mirror Boost.JSON's const interface where they can (`if_object()`, `find()`,
// iteration, `size()`), so converting a reader is mostly changing a `const json::object*` to an
// ObjectView; they differ where Boost.JSON hands out pointers: `if_string()`/`if_int64()`/
// `if_bool()` return optionals, `if_object()`/`if_array()`/`at()`/`if_contains()` return views
// that are false when absent (each has `->` and `*` so code written for pointers reads the same).
//
// Lifetime: a view is valid while the document it was taken from is alive and unchanged.
// Thread-safety: views and compact trees are immutable; any number of threads may read them.
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace converge::api {

namespace json = boost::json;

class View;
class ObjectView;
class ArrayView;

// A JSON document held read-only in one block of 32-bit words. Word 0 holds the block's length
// in words, word 1 the root value. A value word carries a 3-bit tag and a 29-bit payload:
//   special   null, false, true, "", {}, [] inline
//   small int a signed 29-bit integer inline
//   string    word offset of {byte length, bytes padded to 4}; or, with the payload's top bit
//             set, an id in the process-wide table of values that recur across trees
//   object    word offset of {count, count × (key, value)[, count × member index sorted by key]}
//             (the sorted index only for objects of more than kIndexedObject members)
//   array     word offset of {count, count × value}
//   int64, uint64, double: word offset of the 8 bytes
// A key word with its top bit set is an id in the process-wide key table (KeyTable); otherwise it
// is the word offset of a string record in the block (keys too long or too many to intern).
class CompactTree {
 public:
  // Objects with more members than this carry a sorted index and are searched by bisection.
  static constexpr uint32_t kIndexedObject = 16;

  using Words = std::shared_ptr<const uint32_t[]>;

  CompactTree() = default;  // empty: holds no document

  // The compact form of `doc`; empty when it does not fit the encoding (a tree over 1 GiB).
  static CompactTree Build(const json::object& doc);

  explicit operator bool() const { return words_ != nullptr; }
  ObjectView root() const;
  // Bytes of the block (what the tree costs, beside its shared_ptr control block).
  size_t bytes() const { return words_ ? size_t{words_[0]} * 4 : 0; }

 private:
  explicit CompactTree(Words words) : words_(std::move(words)) {}
  Words words_;
};

// A JSON value of either form; false (`!view`) when absent.
class View {
 public:
  View() = default;
  View(const json::value& v) : json_(&v), rep_(Rep::kJson) {}  // NOLINT
  // Views what `v` points to; absent when it is null (as the pointer-returning reads have it).
  View(const json::value* v) : json_(v), rep_(v ? Rep::kJson : Rep::kNone) {}  // NOLINT
  View(const uint32_t* base, uint32_t word) : base_(base), word_(word), rep_(Rep::kCompact) {}

  explicit operator bool() const { return rep_ != Rep::kNone; }
  const View* operator->() const { return this; }
  View operator*() const { return *this; }

  // The kind, as Boost.JSON names it; json::kind::null when absent.
  json::kind kind() const;
  bool is_null() const { return kind() == json::kind::null; }
  bool is_bool() const { return kind() == json::kind::bool_; }
  bool is_int64() const { return kind() == json::kind::int64; }
  bool is_uint64() const { return kind() == json::kind::uint64; }
  bool is_double() const { return kind() == json::kind::double_; }
  bool is_number() const { return is_int64() || is_uint64() || is_double(); }
  bool is_string() const { return kind() == json::kind::string; }
  bool is_object() const { return kind() == json::kind::object; }
  bool is_array() const { return kind() == json::kind::array; }

  // Typed reads: empty (or a false view) when the value is of another kind.
  std::optional<std::string_view> if_string() const;
  std::optional<int64_t> if_int64() const;
  std::optional<uint64_t> if_uint64() const;
  std::optional<bool> if_bool() const;
  ObjectView if_object() const;
  ArrayView if_array() const;
  // The number as an int64 (uint64 and double converted, as FindInt does); empty when not a
  // number.
  std::optional<int64_t> to_int64() const;
  std::optional<double> to_double() const;

  // Reads of a value known to be of that kind (checked by the caller); of another kind they give
  // "", 0, false or an absent view.
  std::string_view as_string() const { return if_string().value_or(std::string_view()); }
  int64_t as_int64() const { return if_int64().value_or(0); }
  bool as_bool() const { return if_bool().value_or(false); }
  ObjectView as_object() const;
  ArrayView as_array() const;

  // Boost.JSON's names for the same reads (as_* above), so code written for a json::value reads
  // a view unchanged.
  std::string_view get_string() const { return as_string(); }
  int64_t get_int64() const { return as_int64(); }
  uint64_t get_uint64() const { return if_uint64().value_or(0); }
  double get_double() const { return to_double().value_or(0); }
  bool get_bool() const { return as_bool(); }
  ObjectView get_object() const;
  ArrayView get_array() const;
  // A number converted to T (as Boost.JSON's to_number, without its range checks); 0 when not a
  // number.
  template <typename T>
  T to_number() const {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(to_double().value_or(0));
    } else if constexpr (std::is_unsigned_v<T>) {
      if (std::optional<uint64_t> u = if_uint64()) return static_cast<T>(*u);
      return static_cast<T>(to_int64().value_or(0));
    } else {
      return static_cast<T>(to_int64().value_or(0));
    }
  }

  // The Boost.JSON value this views, or null when it views a compact tree.
  const json::value* json() const { return rep_ == Rep::kJson ? json_ : nullptr; }

 private:
  friend class ObjectView;
  friend class ArrayView;
  enum class Rep : uint8_t { kNone, kJson, kCompact };

  union {
    const json::value* json_ = nullptr;
    const uint32_t* base_;
  };
  uint32_t word_ = 0;
  Rep rep_ = Rep::kNone;
};

// One member of an object: its key and value.
class Member {
 public:
  Member(std::string_view key, View value) : key_(key), value_(value) {}
  std::string_view key() const { return key_; }
  View value() const { return value_; }
  const Member* operator->() const { return this; }

 private:
  std::string_view key_;
  View value_;
};

// Structured bindings: `for (auto [key, value] : object_view)`.
template <size_t I>
auto get(const Member& m) {
  if constexpr (I == 0) {
    return m.key();
  } else {
    return m.value();
  }
}

// Walks a view by position. It holds the view (not a pointer to it), so an iterator taken from a
// temporary (`FindObject(...).find("x")`) stays valid.
template <typename Container, typename Item, Item (Container::*At)(size_t) const>
class PositionIterator {
 public:
  using value_type = Item;
  using difference_type = std::ptrdiff_t;
  PositionIterator() = default;
  PositionIterator(Container c, size_t i) : c_(c), i_(i) {}
  Item operator*() const { return (c_.*At)(i_); }
  Item operator->() const { return (c_.*At)(i_); }  // Member and View have `->` of their own
  PositionIterator& operator++() {
    ++i_;
    return *this;
  }
  PositionIterator operator++(int) {
    PositionIterator was = *this;
    ++i_;
    return was;
  }
  bool operator==(const PositionIterator& other) const { return i_ == other.i_; }

 private:
  Container c_;
  size_t i_ = 0;
};

// A JSON object of either form; false when absent.
class ObjectView {
 public:
  ObjectView() = default;
  // Views a Boost.JSON object (implicitly: a tree can be passed wherever a view is read).
  ObjectView(const json::object& o) : json_(&o), rep_(Rep::kJson) {}                  // NOLINT
  ObjectView(const json::object* o) : json_(o), rep_(o ? Rep::kJson : Rep::kNone) {}  // NOLINT
  ObjectView(const uint32_t* base, uint32_t at) : base_(base), at_(at), rep_(Rep::kCompact) {}

  explicit operator bool() const { return rep_ != Rep::kNone; }
  const ObjectView* operator->() const { return this; }
  ObjectView operator*() const { return *this; }

  size_t size() const;
  bool empty() const { return size() == 0; }
  // The member at position `i` (in document order); i < size().
  Member member(size_t i) const;
  using iterator = PositionIterator<ObjectView, Member, &ObjectView::member>;
  iterator begin() const;
  iterator end() const;

  // The value of `key`; absent when there is none.
  View at(std::string_view key) const { return if_contains(key); }
  View if_contains(std::string_view key) const;
  bool contains(std::string_view key) const { return static_cast<bool>(if_contains(key)); }
  // Boost.JSON's find: end() when absent.
  iterator find(std::string_view key) const;

  // The Boost.JSON object this views, or null when it views a compact tree.
  const json::object* json() const { return rep_ == Rep::kJson ? json_ : nullptr; }

 private:
  friend class View;
  enum class Rep : uint8_t { kNone, kJson, kCompact };
  // The compact member index of `key`, or size() when absent.
  size_t CompactFind(std::string_view key) const;

  union {
    const json::object* json_ = nullptr;
    const uint32_t* base_;
  };
  uint32_t at_ = 0;
  Rep rep_ = Rep::kNone;
};

// A JSON array of either form; false when absent.
class ArrayView {
 public:
  ArrayView() = default;
  ArrayView(const json::array& a) : json_(&a), rep_(Rep::kJson) {}                  // NOLINT
  ArrayView(const json::array* a) : json_(a), rep_(a ? Rep::kJson : Rep::kNone) {}  // NOLINT
  ArrayView(const uint32_t* base, uint32_t at) : base_(base), at_(at), rep_(Rep::kCompact) {}

  explicit operator bool() const { return rep_ != Rep::kNone; }
  const ArrayView* operator->() const { return this; }
  ArrayView operator*() const { return *this; }

  size_t size() const;
  bool empty() const { return size() == 0; }
  View operator[](size_t i) const;
  using iterator = PositionIterator < ArrayView, View, &ArrayView::operator[]>;
  View at(size_t i) const { return i < size() ? (*this)[i] : View(); }
  iterator begin() const;
  iterator end() const;

  const json::array* json() const { return rep_ == Rep::kJson ? json_ : nullptr; }

 private:
  friend class View;
  enum class Rep : uint8_t { kNone, kJson, kCompact };
  union {
    const json::array* json_ = nullptr;
    const uint32_t* base_;
  };
  uint32_t at_ = 0;
  Rep rep_ = Rep::kNone;
};

inline ObjectView::iterator ObjectView::begin() const {
  return {*this, 0};
}
inline ObjectView::iterator ObjectView::end() const {
  return {*this, size()};
}
inline ArrayView::iterator ArrayView::begin() const {
  return {*this, 0};
}
inline ArrayView::iterator ArrayView::end() const {
  return {*this, size()};
}

// Deep equality, as Boost.JSON compares (numbers by kind and value, objects by members in any
// order); an absent view equals only an absent view.
bool operator==(View a, View b);
bool operator==(ObjectView a, ObjectView b);
bool operator==(ArrayView a, ArrayView b);

// A Boost.JSON copy (for a reader that goes on to modify it).
json::value ToJson(View v);
json::object ToJson(ObjectView o);
json::array ToJson(ArrayView a);
// Compact JSON text, members in document order (as json::serialize writes the same document).
std::string Serialize(View v);
std::string Serialize(ObjectView o);
std::string Serialize(ArrayView a);

// Path reads over views, as the Boost.JSON ones in api/object.h.
View Find(ObjectView o, std::initializer_list<std::string_view> path);
std::string_view FindString(ObjectView o, std::initializer_list<std::string_view> path,
                            std::string_view fallback = {});
int64_t FindInt(ObjectView o, std::initializer_list<std::string_view> path, int64_t fallback = 0);
bool FindBool(ObjectView o, std::initializer_list<std::string_view> path, bool fallback = false);
ObjectView FindObject(ObjectView o, std::initializer_list<std::string_view> path);
ArrayView FindArray(ObjectView o, std::initializer_list<std::string_view> path);
// The string at `key` of `o`, or "" when absent or not a string.
std::string_view GetString(ObjectView o, std::string_view key);

// The keys the process-wide table holds (a key of at most kMaxInternedKey bytes is interned when
// first seen, until the table holds kMaxInternedKeys; later keys are stored in each tree).
struct InternTableStats {
  size_t entries = 0;
  size_t bytes = 0;
};
inline constexpr size_t kMaxInternedKey = 64;
inline constexpr size_t kMaxInternedKeys = 1 << 16;
InternTableStats KeyTableSize();
// The string values the process-wide table holds (values that recur across trees: see
// json_view.cc).
InternTableStats ValueTableSize();

}  // namespace converge::api

template <>
struct std::tuple_size<converge::api::Member> : std::integral_constant<size_t, 2> {};
template <>
struct std::tuple_element<0, converge::api::Member> {
  using type = std::string_view;
};
template <>
struct std::tuple_element<1, converge::api::Member> {
  using type = converge::api::View;
};
