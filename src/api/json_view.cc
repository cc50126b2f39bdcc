#include "api/json_view.h"

#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace converge::api {
namespace {

// Value tags (the low 3 bits of a value word).
enum Tag : uint32_t {
  kSpecial = 0,
  kSmallInt = 1,
  kString = 2,
  kObject = 3,
  kArray = 4,
  kInt64 = 5,
  kUint64 = 6,
  kDouble = 7,
};
// Payloads of kSpecial.
enum Special : uint32_t {
  kNull = 0,
  kFalse = 1,
  kTrue = 2,
  kEmptyString = 3,
  kEmptyObject = 4,
  kEmptyArray = 5,
};

constexpr uint32_t kInternedKey = 0x8000'0000u;
// A string value's payload with this bit set is an id in the value table; offsets in the block
// take the other 28 bits.
constexpr uint32_t kInternedValue = uint32_t{1} << 28;
constexpr size_t kMaxWords = kInternedValue;
constexpr int64_t kSmallIntLimit = int64_t{1} << 28;
// Equal strings up to this length are stored once per tree.
constexpr size_t kMaxSharedString = 64;

// An empty object or array: a count of 0 (what {} and [] view).
constexpr uint32_t kEmptyContainer[1] = {0};

constexpr uint32_t Word(uint32_t tag, uint32_t payload) {
  return (payload << 3) | tag;
}
constexpr uint32_t TagOf(uint32_t word) {
  return word & 7u;
}
constexpr uint32_t PayloadOf(uint32_t word) {
  return word >> 3;
}

std::string_view StringAt(const uint32_t* base, uint32_t at) {
  return {reinterpret_cast<const char*>(base + at + 1), base[at]};
}

int64_t Int64At(const uint32_t* base, uint32_t at) {
  int64_t v;
  std::memcpy(&v, base + at, sizeof v);
  return v;
}

uint64_t Uint64At(const uint32_t* base, uint32_t at) {
  uint64_t v;
  std::memcpy(&v, base + at, sizeof v);
  return v;
}

double DoubleAt(const uint32_t* base, uint32_t at) {
  double v;
  std::memcpy(&v, base + at, sizeof v);
  return v;
}

// A process-wide table of interned strings: ids are handed out in order and never reused (a tree
// names them without counting references, so an entry lives as long as the process). An id's text
// is written before the id is returned, and a tree naming it reaches other threads only through
// whatever synchronization hands them the tree, so reading a text by id takes no lock.
class InternTable {
 public:
  static constexpr uint32_t kNone = ~0u;

  // The id of `s`, or kNone. The caller holds a shared lock of mutex().
  uint32_t FindLocked(std::string_view s) const {
    auto it = ids_.find(s);
    return it == ids_.end() ? kNone : it->second;
  }
  // The id of `s`, interning it if the table has room (kNone when it has not); `stored` is set to
  // the table's copy of the text. Takes the lock.
  uint32_t Add(std::string_view s, std::string_view* stored) {
    std::unique_lock lock(mu_);
    if (auto it = ids_.find(s); it != ids_.end()) {
      *stored = it->first;
      return it->second;
    }
    if (count_ >= kCapacity) return kNone;
    const auto id = static_cast<uint32_t>(count_);
    *stored = texts_.emplace_back(s);
    std::string_view*& chunk = chunks_[id / kChunk];
    if (chunk == nullptr) {
      chunk = new std::string_view[kChunk];
      published_[id / kChunk].store(chunk, std::memory_order_release);
    }
    chunk[id % kChunk] = *stored;
    ids_.emplace(*stored, id);
    bytes_ += s.size();
    ++count_;
    return id;
  }

  std::string_view Text(uint32_t id) const {
    return published_[id / kChunk].load(std::memory_order_acquire)[id % kChunk];
  }

  InternTableStats Stats() const {
    std::shared_lock lock(mu_);
    return {count_, bytes_};
  }

  std::shared_mutex& mutex() const { return mu_; }

  static constexpr size_t kCapacity = size_t{1} << 16;

 private:
  static constexpr size_t kChunk = 1024;
  mutable std::shared_mutex mu_;
  boost::unordered_flat_map<std::string_view, uint32_t> ids_;
  std::deque<std::string> texts_;  // stable: views into it stay valid
  std::array<std::string_view*, kCapacity / kChunk> chunks_{};
  std::array<std::atomic<const std::string_view*>, kCapacity / kChunk> published_{};
  size_t count_ = 0;
  size_t bytes_ = 0;
};
static_assert(InternTable::kCapacity == kMaxInternedKeys);

// The keys of every tree: a key of at most kMaxInternedKey bytes is interned when first seen (an
// API's keys are few), so a member's key costs a word. Each thread remembers the ids it has used.
InternTable& Keys() {
  static InternTable* table = new InternTable();  // never destroyed: trees may outlive statics
  return *table;
}

uint32_t FindKey(std::string_view key) {
  thread_local boost::unordered_flat_map<std::string_view, uint32_t> seen;
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  if (key.size() > kMaxInternedKey) return InternTable::kNone;
  uint32_t id;
  std::string_view stored;
  {
    std::shared_lock lock(Keys().mutex());
    id = Keys().FindLocked(key);
  }
  if (id == InternTable::kNone) {
    id = Keys().Add(key, &stored);
    if (id == InternTable::kNone) return id;
  } else {
    stored = Keys().Text(id);
  }
  seen.emplace(stored, id);
  return id;
}

// String values every object repeats ("IfNotPresent", "registry.k8s.io/pause:3.9", a ReplicaSet's
// name and uid in each of its pods' ownerReferences, condition types): ~800 of a Running pod's
// ~2,150 compact bytes. A value is interned once a thread has built it into kAdmitAfter trees;
// until then each tree stores its own copy. Values that name one object (its name, uid, IP,
// container ID) appear only in that object's few versions, so they stay in the tree. Since entries
// are never freed, values that only ever grow in number are kept out whatever their frequency:
// timestamps (every second of a busy cluster's life would add one) — the table fills with what
// recurs instead, and once full, new values are stored in trees as before.
InternTable& Values() {
  static InternTable* table = new InternTable();  // never destroyed: trees may outlive statics
  return *table;
}

constexpr uint32_t kAdmitAfter = 16;
// Distinct values a thread counts before it starts counting afresh: enough that a value in every
// tree reaches kAdmitAfter long before, few enough that the counts stay small.
constexpr size_t kCountedValues = 4096;

// Whether `s` reads as an RFC 3339 time ("2026-12-07T11:47:07Z" and longer forms).
bool LooksLikeTime(std::string_view s) {
  return s.size() >= 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
         s[16] == ':';
}

// Counts that `s` was built into one more tree on this thread; true when it has now been built
// into kAdmitAfter of them (the caller interns it).
bool CountValue(std::string_view s) {
  thread_local boost::unordered_flat_map<uint64_t, uint32_t> counts;
  if (counts.size() >= kCountedValues) counts.clear();
  return ++counts[std::hash<std::string_view>()(s)] == kAdmitAfter && !LooksLikeTime(s);
}

std::string_view KeyOf(const uint32_t* base, uint32_t key_word) {
  if (key_word & kInternedKey) return Keys().Text(key_word & ~kInternedKey);
  return StringAt(base, key_word);
}

// The text of a string value's payload: a record in the block, or an interned value.
std::string_view ValueString(const uint32_t* base, uint32_t payload) {
  if (payload & kInternedValue) return Values().Text(payload & ~kInternedValue);
  return StringAt(base, payload);
}

// The strings a tree being built holds (views into the source document), by content.
using StringOffsets = boost::unordered_flat_map<std::string_view, uint32_t>;

// Writes a tree into a thread's scratch words, then copies them into a block of the exact size.
// The caller holds a shared lock of the value table while it builds, and interns the values
// collected in `admit` after (CountValue).
class Builder {
 public:
  Builder(std::vector<uint32_t>* out, StringOffsets* strings, std::vector<std::string_view>* admit)
      : out_(*out), strings_(*strings), admit_(*admit) {
    out_.clear();
    strings_.clear();
    admit_.clear();
    out_.push_back(0);  // length
    out_.push_back(0);  // root
  }

  CompactTree::Words Finish(const json::object& doc) {
    out_[1] = Object(doc);
    if (out_.size() >= kMaxWords) return nullptr;
    out_[0] = static_cast<uint32_t>(out_.size());
    auto block = std::make_shared_for_overwrite<uint32_t[]>(out_.size());
    std::memcpy(block.get(), out_.data(), out_.size() * sizeof(uint32_t));
    return block;
  }

 private:
  uint32_t Offset() const { return static_cast<uint32_t>(out_.size()); }

  // The offset of a record of `s` in the block; `added` (if given) says whether this call wrote it.
  uint32_t String(std::string_view s, bool* added = nullptr) {
    const bool shared = s.size() <= kMaxSharedString;
    if (added != nullptr) *added = false;
    if (shared) {
      if (auto it = strings_.find(s); it != strings_.end()) return it->second;
    }
    if (added != nullptr) *added = true;
    const uint32_t at = Offset();
    out_.push_back(static_cast<uint32_t>(s.size()));
    const size_t words = (s.size() + 3) / 4;
    out_.resize(out_.size() + words);
    if (words > 0) {
      out_.back() = 0;  // the padding
      std::memcpy(out_.data() + at + 1, s.data(), s.size());
    }
    if (shared) strings_.emplace(s, at);
    return at;
  }

  uint32_t Key(std::string_view key) {
    const uint32_t id = FindKey(key);
    if (id != InternTable::kNone) return id | kInternedKey;
    return String(key);
  }

  // A string value's payload: its id in the value table, or its record in the block.
  uint32_t StringValue(std::string_view s) {
    if (s.size() > kMaxSharedString) return String(s);
    if (const uint32_t id = Values().FindLocked(s); id != InternTable::kNone) {
      return id | kInternedValue;
    }
    bool added;
    const uint32_t at = String(s, &added);
    if (added && CountValue(s)) admit_.push_back(s);
    return at;
  }

  uint32_t Eight(const void* bytes) {
    const uint32_t at = Offset();
    out_.resize(out_.size() + 2);
    std::memcpy(out_.data() + at, bytes, 8);
    return at;
  }

  uint32_t Object(const json::object& o) {
    if (o.empty()) return Word(kSpecial, kEmptyObject);
    const uint32_t n = static_cast<uint32_t>(o.size());
    const bool indexed = n > CompactTree::kIndexedObject;
    const uint32_t at = Offset();
    out_.resize(out_.size() + 1 + 2 * size_t{n} + (indexed ? n : 0));
    out_[at] = n;
    uint32_t i = 0;
    for (const json::key_value_pair& kv : o) {
      const uint32_t key = Key(kv.key());
      out_[at + 1 + 2 * i] = key;
      const uint32_t value = Value(kv.value());
      out_[at + 2 + 2 * i] = value;
      ++i;
    }
    if (indexed) {
      std::vector<uint32_t> order(n);
      for (uint32_t j = 0; j < n; ++j) order[j] = j;
      const json::key_value_pair* members = o.begin();
      std::sort(order.begin(), order.end(),
                [&](uint32_t a, uint32_t b) { return members[a].key() < members[b].key(); });
      std::copy(order.begin(), order.end(), out_.begin() + at + 1 + 2 * n);
    }
    return Word(kObject, at);
  }

  uint32_t Array(const json::array& a) {
    if (a.empty()) return Word(kSpecial, kEmptyArray);
    const uint32_t n = static_cast<uint32_t>(a.size());
    const uint32_t at = Offset();
    out_.resize(out_.size() + 1 + n);
    out_[at] = n;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t value = Value(a[i]);
      out_[at + 1 + i] = value;
    }
    return Word(kArray, at);
  }

  uint32_t Value(const json::value& v) {
    switch (v.kind()) {
      case json::kind::null: return Word(kSpecial, kNull);
      case json::kind::bool_: return Word(kSpecial, v.get_bool() ? kTrue : kFalse);
      case json::kind::int64: {
        const int64_t i = v.get_int64();
        if (i >= -kSmallIntLimit && i < kSmallIntLimit) {
          return Word(kSmallInt, static_cast<uint32_t>(i) & 0x1fff'ffffu);
        }
        return Word(kInt64, Eight(&i));
      }
      case json::kind::uint64: {
        const uint64_t u = v.get_uint64();
        return Word(kUint64, Eight(&u));
      }
      case json::kind::double_: {
        const double d = v.get_double();
        return Word(kDouble, Eight(&d));
      }
      case json::kind::string:
        if (v.get_string().empty()) return Word(kSpecial, kEmptyString);
        return Word(kString, StringValue(v.get_string()));
      case json::kind::array: return Array(v.get_array());
      case json::kind::object: return Object(v.get_object());
    }
    return Word(kSpecial, kNull);
  }

  std::vector<uint32_t>& out_;
  StringOffsets& strings_;
  std::vector<std::string_view>& admit_;
};

}  // namespace

CompactTree CompactTree::Build(const json::object& doc) {
  thread_local std::vector<uint32_t> scratch;
  thread_local StringOffsets strings;
  thread_local std::vector<std::string_view> admit;
  Words words;
  {
    std::shared_lock lock(Values().mutex());
    Builder builder(&scratch, &strings, &admit);
    words = builder.Finish(doc);
  }
  std::string_view stored;
  for (std::string_view s : admit) Values().Add(s, &stored);
  // A huge document's scratch is not kept for the thread's life.
  if (scratch.capacity() > (size_t{1} << 20)) std::vector<uint32_t>().swap(scratch);
  if (strings.size() > 4096) StringOffsets().swap(strings);
  return CompactTree(std::move(words));
}

ObjectView CompactTree::root() const {
  if (!words_) return {};
  const uint32_t root = words_[1];
  if (TagOf(root) == kObject) return {words_.get(), PayloadOf(root)};
  return {kEmptyContainer, 0};
}

InternTableStats KeyTableSize() {
  return Keys().Stats();
}

InternTableStats ValueTableSize() {
  return Values().Stats();
}

// ---- View ----

json::kind View::kind() const {
  switch (rep_) {
    case Rep::kNone: return json::kind::null;
    case Rep::kJson: return json_->kind();
    case Rep::kCompact: break;
  }
  switch (TagOf(word_)) {
    case kSpecial:
      switch (PayloadOf(word_)) {
        case kFalse:
        case kTrue: return json::kind::bool_;
        case kEmptyString: return json::kind::string;
        case kEmptyObject: return json::kind::object;
        case kEmptyArray: return json::kind::array;
        default: return json::kind::null;
      }
    case kSmallInt:
    case kInt64: return json::kind::int64;
    case kString: return json::kind::string;
    case kObject: return json::kind::object;
    case kArray: return json::kind::array;
    case kUint64: return json::kind::uint64;
    default: return json::kind::double_;
  }
}

std::optional<std::string_view> View::if_string() const {
  if (rep_ == Rep::kJson) {
    if (const json::string* s = json_->if_string()) return std::string_view(*s);
    return std::nullopt;
  }
  if (rep_ == Rep::kCompact) {
    if (TagOf(word_) == kString) return ValueString(base_, PayloadOf(word_));
    if (word_ == Word(kSpecial, kEmptyString)) return std::string_view();
  }
  return std::nullopt;
}

std::optional<int64_t> View::if_int64() const {
  if (rep_ == Rep::kJson) {
    if (const int64_t* i = json_->if_int64()) return *i;
    return std::nullopt;
  }
  if (rep_ == Rep::kCompact) {
    if (TagOf(word_) == kSmallInt) return static_cast<int32_t>(word_) >> 3;
    if (TagOf(word_) == kInt64) return Int64At(base_, PayloadOf(word_));
  }
  return std::nullopt;
}

std::optional<uint64_t> View::if_uint64() const {
  if (rep_ == Rep::kJson) {
    if (const uint64_t* u = json_->if_uint64()) return *u;
    return std::nullopt;
  }
  if (rep_ == Rep::kCompact && TagOf(word_) == kUint64) return Uint64At(base_, PayloadOf(word_));
  return std::nullopt;
}

std::optional<bool> View::if_bool() const {
  if (rep_ == Rep::kJson) {
    if (const bool* b = json_->if_bool()) return *b;
    return std::nullopt;
  }
  if (rep_ == Rep::kCompact) {
    if (word_ == Word(kSpecial, kTrue)) return true;
    if (word_ == Word(kSpecial, kFalse)) return false;
  }
  return std::nullopt;
}

std::optional<int64_t> View::to_int64() const {
  if (std::optional<int64_t> i = if_int64()) return i;
  if (rep_ == Rep::kJson) {
    if (json_->is_uint64()) return static_cast<int64_t>(json_->get_uint64());
    if (json_->is_double()) return static_cast<int64_t>(json_->get_double());
    return std::nullopt;
  }
  if (rep_ == Rep::kCompact) {
    if (TagOf(word_) == kUint64) return static_cast<int64_t>(Uint64At(base_, PayloadOf(word_)));
    if (TagOf(word_) == kDouble) return static_cast<int64_t>(DoubleAt(base_, PayloadOf(word_)));
  }
  return std::nullopt;
}

std::optional<double> View::to_double() const {
  if (rep_ == Rep::kJson) {
    if (!json_->is_number()) return std::nullopt;
    return json_->to_number<double>();
  }
  if (rep_ == Rep::kCompact) {
    if (std::optional<int64_t> i = if_int64()) return static_cast<double>(*i);
    if (TagOf(word_) == kUint64) return static_cast<double>(Uint64At(base_, PayloadOf(word_)));
    if (TagOf(word_) == kDouble) return DoubleAt(base_, PayloadOf(word_));
  }
  return std::nullopt;
}

ObjectView View::if_object() const {
  if (rep_ == Rep::kJson) {
    if (const json::object* o = json_->if_object()) return ObjectView(*o);
    return {};
  }
  if (rep_ == Rep::kCompact) {
    if (TagOf(word_) == kObject) return {base_, PayloadOf(word_)};
    if (word_ == Word(kSpecial, kEmptyObject)) return {kEmptyContainer, 0};
  }
  return {};
}

ArrayView View::if_array() const {
  if (rep_ == Rep::kJson) {
    if (const json::array* a = json_->if_array()) return ArrayView(*a);
    return {};
  }
  if (rep_ == Rep::kCompact) {
    if (TagOf(word_) == kArray) return {base_, PayloadOf(word_)};
    if (word_ == Word(kSpecial, kEmptyArray)) return {kEmptyContainer, 0};
  }
  return {};
}

ObjectView View::as_object() const {
  return if_object();
}
ArrayView View::as_array() const {
  return if_array();
}
ObjectView View::get_object() const {
  return if_object();
}
ArrayView View::get_array() const {
  return if_array();
}

// ---- ObjectView ----

size_t ObjectView::size() const {
  switch (rep_) {
    case Rep::kJson: return json_->size();
    case Rep::kCompact: return base_[at_];
    default: return 0;
  }
}

Member ObjectView::member(size_t i) const {
  if (rep_ == Rep::kJson) {
    const json::key_value_pair& kv = json_->begin()[i];
    return {kv.key(), View(kv.value())};
  }
  const uint32_t* m = base_ + at_ + 1 + 2 * i;
  return {KeyOf(base_, m[0]), View(base_, m[1])};
}

size_t ObjectView::CompactFind(std::string_view key) const {
  const uint32_t n = base_[at_];
  const uint32_t* members = base_ + at_ + 1;
  if (n <= CompactTree::kIndexedObject) {
    for (uint32_t i = 0; i < n; ++i) {
      if (KeyOf(base_, members[2 * i]) == key) return i;
    }
    return n;
  }
  const uint32_t* order = members + 2 * size_t{n};
  const uint32_t* found = std::lower_bound(
      order, order + n, key,
      [&](uint32_t i, std::string_view k) { return KeyOf(base_, members[2 * i]) < k; });
  if (found != order + n && KeyOf(base_, members[2 * *found]) == key) return *found;
  return n;
}

View ObjectView::if_contains(std::string_view key) const {
  if (rep_ == Rep::kJson) {
    if (const json::value* v = json_->if_contains(key)) return View(*v);
    return {};
  }
  if (rep_ == Rep::kCompact) {
    const size_t i = CompactFind(key);
    if (i < base_[at_]) return View(base_, base_[at_ + 2 + 2 * i]);
  }
  return {};
}

ObjectView::iterator ObjectView::find(std::string_view key) const {
  if (rep_ == Rep::kJson) {
    auto it = json_->find(key);
    return {*this, static_cast<size_t>(it - json_->begin())};
  }
  if (rep_ == Rep::kCompact) return {*this, CompactFind(key)};
  return end();
}

// ---- ArrayView ----

size_t ArrayView::size() const {
  switch (rep_) {
    case Rep::kJson: return json_->size();
    case Rep::kCompact: return base_[at_];
    default: return 0;
  }
}

View ArrayView::operator[](size_t i) const {
  if (rep_ == Rep::kJson) return View((*json_)[i]);
  return View(base_, base_[at_ + 1 + i]);
}

// ---- Equality, copies, text ----

bool operator==(View a, View b) {
  if (!a || !b) return !a && !b;
  if (a.json() && b.json()) return *a.json() == *b.json();
  const json::kind ka = a.kind();
  const json::kind kb = b.kind();
  const bool a_int = ka == json::kind::int64 || ka == json::kind::uint64;
  const bool b_int = kb == json::kind::int64 || kb == json::kind::uint64;
  if (a_int && b_int) {
    // As Boost.JSON compares an int64 with a uint64: equal when the values are.
    if (ka == kb && ka == json::kind::int64) return a.as_int64() == b.as_int64();
    const json::value va = ToJson(a);
    const json::value vb = ToJson(b);
    return va == vb;
  }
  if (ka != kb) return false;
  switch (ka) {
    case json::kind::null: return true;
    case json::kind::bool_: return a.as_bool() == b.as_bool();
    case json::kind::double_: return a.to_double() == b.to_double();
    case json::kind::string: return a.as_string() == b.as_string();
    case json::kind::object: return a.as_object() == b.as_object();
    case json::kind::array: return a.as_array() == b.as_array();
    default: return false;
  }
}

bool operator==(ObjectView a, ObjectView b) {
  if (!a || !b) return !a && !b;
  if (a.json() && b.json()) return *a.json() == *b.json();
  const size_t n = a.size();
  if (n != b.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    const Member m = a.member(i);
    // Members are usually in the same order: the one at the same place first.
    const Member same_place = b.member(i);
    const View other = same_place.key() == m.key() ? same_place.value() : b.if_contains(m.key());
    if (!(m.value() == other)) return false;
  }
  return true;
}

bool operator==(ArrayView a, ArrayView b) {
  if (!a || !b) return !a && !b;
  if (a.json() && b.json()) return *a.json() == *b.json();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

json::value ToJson(View v) {
  if (const json::value* j = v.json()) return *j;
  switch (v.kind()) {
    case json::kind::null: return nullptr;
    case json::kind::bool_: return v.as_bool();
    case json::kind::int64: return v.as_int64();
    case json::kind::uint64: return *v.if_uint64();
    case json::kind::double_: return *v.to_double();
    case json::kind::string: return json::string(v.as_string());
    case json::kind::object: return ToJson(v.as_object());
    case json::kind::array: return ToJson(v.as_array());
  }
  return nullptr;
}

json::object ToJson(ObjectView o) {
  if (const json::object* j = o.json()) return *j;
  json::object out;
  out.reserve(o.size());
  for (Member m : o) out.emplace(m.key(), ToJson(m.value()));
  return out;
}

json::array ToJson(ArrayView a) {
  if (const json::array* j = a.json()) return *j;
  json::array out;
  out.reserve(a.size());
  for (View v : a) out.push_back(ToJson(v));
  return out;
}

std::string Serialize(View v) {
  if (const json::value* j = v.json()) return json::serialize(*j);
  return json::serialize(ToJson(v));
}

std::string Serialize(ObjectView o) {
  if (const json::object* j = o.json()) return json::serialize(*j);
  return json::serialize(ToJson(o));
}

std::string Serialize(ArrayView a) {
  if (const json::array* j = a.json()) return json::serialize(*j);
  return json::serialize(ToJson(a));
}

// ---- Paths ----

View Find(ObjectView o, std::initializer_list<std::string_view> path) {
  if (path.size() == 0 || !o) return {};
  auto p = path.begin();
  View cur = o.if_contains(*p);
  for (++p; cur && p != path.end(); ++p) cur = cur.if_object().if_contains(*p);
  return cur;
}

std::string_view FindString(ObjectView o, std::initializer_list<std::string_view> path,
                            std::string_view fallback) {
  return Find(o, path).if_string().value_or(fallback);
}

int64_t FindInt(ObjectView o, std::initializer_list<std::string_view> path, int64_t fallback) {
  return Find(o, path).to_int64().value_or(fallback);
}

bool FindBool(ObjectView o, std::initializer_list<std::string_view> path, bool fallback) {
  return Find(o, path).if_bool().value_or(fallback);
}

ObjectView FindObject(ObjectView o, std::initializer_list<std::string_view> path) {
  return Find(o, path).if_object();
}

ArrayView FindArray(ObjectView o, std::initializer_list<std::string_view> path) {
  return Find(o, path).if_array();
}

std::string_view GetString(ObjectView o, std::string_view key) {
  return o.if_contains(key).if_string().value_or(std::string_view());
}

}  // namespace converge::api
