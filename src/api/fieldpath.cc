#include "api/fieldpath.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <utility>

#include <boost/json/parse.hpp>

#include "api/go_json.h"

namespace converge::api {
namespace {

namespace json = boost::json;

// fieldsV1 documents nested deeper than this are refused (they come from stored objects and, via
// explicit metadata.managedFields in updates, from clients; real ones nest below 30).
constexpr int kMaxFieldsV1Depth = 1000;

const FieldSet& EmptySet() {
  static const FieldSet* const kEmpty = new FieldSet();
  return *kEmpty;
}

int Sign(int c) {
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

int CompareNumbers(const json::value& a, const json::value& b) {
  if (a.is_double() || b.is_double()) {
    const double x = a.is_double() ? a.get_double()
                                   : (a.is_int64() ? static_cast<double>(a.get_int64())
                                                   : static_cast<double>(a.get_uint64()));
    const double y = b.is_double() ? b.get_double()
                                   : (b.is_int64() ? static_cast<double>(b.get_int64())
                                                   : static_cast<double>(b.get_uint64()));
    if (x < y) return -1;
    if (x > y) return 1;
    // Upstream's FloatCompare puts NaN first; parsed JSON has none.
    return 0;
  }
  if (a.is_int64() && b.is_int64()) {
    return a.get_int64() < b.get_int64() ? -1 : (a.get_int64() > b.get_int64() ? 1 : 0);
  }
  if (a.is_uint64() && b.is_uint64()) {
    return a.get_uint64() < b.get_uint64() ? -1 : (a.get_uint64() > b.get_uint64() ? 1 : 0);
  }
  // One int64 and one uint64.
  if (a.is_uint64()) return -CompareNumbers(b, a);
  if (a.get_int64() < 0) return -1;
  const auto x = static_cast<uint64_t>(a.get_int64());
  return x < b.get_uint64() ? -1 : (x > b.get_uint64() ? 1 : 0);
}

// Rank of a value's type in structured-merge-diff's order.
int TypeRank(const json::value& v) {
  switch (v.kind()) {
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return 0;
    case json::kind::string: return 1;
    case json::kind::bool_: return 2;
    case json::kind::array: return 3;
    case json::kind::object: return 4;
    case json::kind::null: return 5;
  }
  return 6;
}

}  // namespace

int CompareJsonValues(const json::value& a, const json::value& b) {
  const int ra = TypeRank(a), rb = TypeRank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (a.kind()) {
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return CompareNumbers(a, b);
    case json::kind::string: return Sign(std::string_view(a.get_string()).compare(b.get_string()));
    case json::kind::bool_: return a.get_bool() == b.get_bool() ? 0 : (a.get_bool() ? 1 : -1);
    case json::kind::array: {
      const json::array& x = a.get_array();
      const json::array& y = b.get_array();
      for (size_t i = 0;; ++i) {
        if (i >= x.size() && i >= y.size()) return 0;
        if (i >= x.size()) return -1;
        if (i >= y.size()) return 1;
        if (int c = CompareJsonValues(x[i], y[i]); c != 0) return c;
      }
    }
    case json::kind::object: {
      // value.MapCompare: walk the union of keys in lexical order.
      const json::object& x = a.get_object();
      const json::object& y = b.get_object();
      if (x.empty() && y.empty()) return 0;
      std::vector<std::string_view> keys;
      for (const auto& kv : x) keys.push_back(kv.key());
      for (const auto& kv : y) {
        if (!x.contains(kv.key())) keys.push_back(kv.key());
      }
      std::sort(keys.begin(), keys.end());
      size_t i = 0;
      for (std::string_view k : keys) {
        const json::value* l = x.if_contains(k);
        const json::value* r = y.if_contains(k);
        int c = 0;
        if (i == x.size()) {
          c = -1;
        } else if (i == y.size()) {
          c = 1;
        } else if (l == nullptr) {
          c = 1;
        } else if (r == nullptr) {
          c = -1;
        } else {
          c = CompareJsonValues(*l, *r);
        }
        ++i;
        if (c != 0) return c;
      }
      return 0;
    }
    case json::kind::null: return 0;
  }
  return 0;
}

// ---- PathElement ------------------------------------------------------------------------------

PathElement PathElement::Field(std::string name) {
  PathElement pe;
  pe.kind_ = Kind::kField;
  pe.name_ = std::move(name);
  return pe;
}

PathElement PathElement::Key(std::vector<KeyField> fields) {
  std::stable_sort(fields.begin(), fields.end(),
                   [](const KeyField& a, const KeyField& b) { return a.first < b.first; });
  PathElement pe;
  pe.kind_ = Kind::kKey;
  pe.key_ = std::move(fields);
  return pe;
}

PathElement PathElement::Value(json::value v) {
  PathElement pe;
  pe.kind_ = Kind::kValue;
  pe.value_ = std::move(v);
  return pe;
}

PathElement PathElement::Index(int64_t i) {
  PathElement pe;
  pe.kind_ = Kind::kIndex;
  pe.index_ = i;
  return pe;
}

int PathElement::Compare(const PathElement& o) const {
  if (kind_ != o.kind_) return kind_ < o.kind_ ? -1 : 1;
  switch (kind_) {
    case Kind::kField: return Sign(name_.compare(o.name_));
    case Kind::kKey:
      // FieldList.Compare: lexical over (name, value) pairs, shorter first.
      for (size_t i = 0;; ++i) {
        if (i >= key_.size() && i >= o.key_.size()) return 0;
        if (i >= key_.size()) return -1;
        if (i >= o.key_.size()) return 1;
        if (int c = Sign(key_[i].first.compare(o.key_[i].first)); c != 0) return c;
        if (int c = CompareJsonValues(key_[i].second, o.key_[i].second); c != 0) return c;
      }
    case Kind::kValue: return CompareJsonValues(value_, o.value_);
    case Kind::kIndex: return index_ < o.index_ ? -1 : (index_ > o.index_ ? 1 : 0);
  }
  return 0;
}

std::string PathElement::ToString() const {
  switch (kind_) {
    case Kind::kField: return "." + name_;
    case Kind::kKey: {
      std::string out = "[";
      for (size_t i = 0; i < key_.size(); ++i) {
        if (i) out += ',';
        out += key_[i].first + "=" + GoValueString(key_[i].second);
      }
      return out + "]";
    }
    case Kind::kValue: return "[=" + GoValueString(value_) + "]";
    case Kind::kIndex: return "[" + std::to_string(index_) + "]";
  }
  return "{{invalid path element}}";
}

std::string PathElement::Serialize() const {
  std::string out;
  AppendSerialized(out);
  return out;
}

void PathElement::AppendSerialized(std::string& out) const {
  switch (kind_) {
    case Kind::kField:
      out += "f:";
      out += name_;
      return;
    case Kind::kKey:
      out += "k:{";
      for (size_t i = 0; i < key_.size(); ++i) {
        if (i) out += ',';
        AppendGoJsonString(out, key_[i].first);
        out += ':';
        out += GoJsonMarshal(key_[i].second, /*sort_keys=*/true);
      }
      out += '}';
      return;
    case Kind::kValue:
      out += "v:";
      out += GoJsonMarshal(value_, /*sort_keys=*/true);
      return;
    case Kind::kIndex:
      out += "i:";
      out += std::to_string(index_);
      return;
  }
}

util::StatusOr<PathElement> PathElement::Parse(std::string_view s) {
  if (s.size() < 2)
    return util::InvalidArgument("key must be 2 characters long: " + std::string(s));
  if (s[1] != ':') return util::InvalidArgument("missing colon: " + std::string(s));
  const std::string_view rest = s.substr(2);
  switch (s[0]) {
    case 'f': return Field(std::string(rest));
    case 'v': {
      boost::system::error_code ec;
      json::value v = json::parse(rest, ec);
      if (ec)
        return util::InvalidArgument("invalid value in " + std::string(s) + ": " + ec.message());
      return Value(std::move(v));
    }
    case 'k': {
      boost::system::error_code ec;
      json::value v = json::parse(rest, ec);
      if (ec || !v.is_object()) {
        return util::InvalidArgument("invalid key in " + std::string(s) + ": expected an object");
      }
      std::vector<KeyField> fields;
      for (const json::key_value_pair& kv : v.get_object()) {
        fields.emplace_back(std::string(kv.key()), kv.value());
      }
      return Key(std::move(fields));
    }
    case 'i': {
      int64_t i = 0;
      const char* end = rest.data() + rest.size();
      const char* begin = rest.data();
      if (begin != end && *begin == '+') ++begin;  // strconv.Atoi accepts a sign
      auto [ptr, ec] = std::from_chars(begin, end, i);
      if (ec != std::errc() || ptr != end || begin == end) {
        return util::InvalidArgument("invalid index in " + std::string(s));
      }
      return Index(i);
    }
    default: return util::Unimplemented("unknown path element type: " + std::string(s));
  }
}

std::string PathString(const Path& path) {
  std::string out;
  for (const PathElement& pe : path) out += pe.ToString();
  return out;
}

// ---- FieldSet ---------------------------------------------------------------------------------

FieldSet::FieldSet() = default;
FieldSet::FieldSet(const FieldSet&) = default;
FieldSet::FieldSet(FieldSet&&) noexcept = default;
FieldSet& FieldSet::operator=(const FieldSet&) = default;
FieldSet& FieldSet::operator=(FieldSet&&) noexcept = default;
FieldSet::~FieldSet() = default;

FieldSet FieldSet::FromPaths(const std::vector<Path>& paths) {
  FieldSet s;
  for (const Path& p : paths) s.Insert(p);
  return s;
}

bool FieldSet::HasMember(const PathElement& pe) const {
  return std::binary_search(members_.begin(), members_.end(), pe);
}

void FieldSet::InsertMember(const PathElement& pe) {
  auto it = std::lower_bound(members_.begin(), members_.end(), pe);
  if (it != members_.end() && *it == pe) return;
  members_.insert(it, pe);
}

FieldSet* FieldSet::Descend(const PathElement& pe) {
  auto it = std::lower_bound(children_.begin(), children_.end(), pe,
                             [](const Child& c, const PathElement& e) { return c.element < e; });
  if (it != children_.end() && it->element == pe) return &it->set;
  it = children_.insert(it, Child{pe, FieldSet()});
  return &it->set;
}

const FieldSet* FieldSet::FindChild(const PathElement& pe) const {
  auto it = std::lower_bound(children_.begin(), children_.end(), pe,
                             [](const Child& c, const PathElement& e) { return c.element < e; });
  if (it != children_.end() && it->element == pe) return &it->set;
  return nullptr;
}

void FieldSet::Insert(const Path& path) {
  if (path.empty()) return;
  FieldSet* s = this;
  for (size_t i = 0; i + 1 < path.size(); ++i) s = s->Descend(path[i]);
  s->InsertMember(path.back());
}

bool FieldSet::Has(const Path& path) const {
  if (path.empty()) return false;
  const FieldSet* s = this;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    s = s->FindChild(path[i]);
    if (s == nullptr) return false;
  }
  return s->HasMember(path.back());
}

bool FieldSet::Empty() const {
  if (!members_.empty()) return false;
  for (const Child& c : children_) {
    if (!c.set.Empty()) return false;
  }
  return true;
}

size_t FieldSet::Size() const {
  size_t n = members_.size();
  for (const Child& c : children_) n += c.set.Size();
  return n;
}

FieldSet FieldSet::Union(const FieldSet& o) const {
  FieldSet out;
  std::set_union(members_.begin(), members_.end(), o.members_.begin(), o.members_.end(),
                 std::back_inserter(out.members_));
  size_t i = 0, j = 0;
  while (i < children_.size() && j < o.children_.size()) {
    const int c = children_[i].element.Compare(o.children_[j].element);
    if (c < 0) {
      out.children_.push_back(children_[i++]);
    } else if (c > 0) {
      out.children_.push_back(o.children_[j++]);
    } else {
      out.children_.push_back(
          Child{children_[i].element, children_[i].set.Union(o.children_[j].set)});
      ++i;
      ++j;
    }
  }
  for (; i < children_.size(); ++i) out.children_.push_back(children_[i]);
  for (; j < o.children_.size(); ++j) out.children_.push_back(o.children_[j]);
  return out;
}

FieldSet FieldSet::Intersection(const FieldSet& o) const {
  FieldSet out;
  std::set_intersection(members_.begin(), members_.end(), o.members_.begin(), o.members_.end(),
                        std::back_inserter(out.members_));
  size_t i = 0, j = 0;
  while (i < children_.size() && j < o.children_.size()) {
    const int c = children_[i].element.Compare(o.children_[j].element);
    if (c < 0) {
      ++i;
    } else if (c > 0) {
      ++j;
    } else {
      FieldSet sub = children_[i].set.Intersection(o.children_[j].set);
      if (!sub.Empty()) out.children_.push_back(Child{children_[i].element, std::move(sub)});
      ++i;
      ++j;
    }
  }
  return out;
}

FieldSet FieldSet::Difference(const FieldSet& o) const {
  FieldSet out;
  std::set_difference(members_.begin(), members_.end(), o.members_.begin(), o.members_.end(),
                      std::back_inserter(out.members_));
  size_t i = 0, j = 0;
  while (i < children_.size()) {
    if (j >= o.children_.size()) {
      out.children_.push_back(children_[i++]);
      continue;
    }
    const int c = children_[i].element.Compare(o.children_[j].element);
    if (c < 0) {
      out.children_.push_back(children_[i++]);
    } else if (c > 0) {
      ++j;
    } else {
      FieldSet sub = children_[i].set.Difference(o.children_[j].set);
      if (!sub.Empty()) out.children_.push_back(Child{children_[i].element, std::move(sub)});
      ++i;
      ++j;
    }
  }
  return out;
}

void FieldSet::Subtract(const FieldSet& o) {
  if (!o.members_.empty()) {
    // Both sorted: one pass that keeps what `o` lacks, in order.
    size_t kept = 0, j = 0;
    for (size_t i = 0; i < members_.size(); ++i) {
      while (j < o.members_.size() && o.members_[j] < members_[i]) ++j;
      if (j < o.members_.size() && o.members_[j] == members_[i]) continue;
      if (kept != i) members_[kept] = std::move(members_[i]);
      ++kept;
    }
    members_.resize(kept);
  }
  size_t j = 0;
  for (auto it = children_.begin(); it != children_.end() && j < o.children_.size();) {
    while (j < o.children_.size() && o.children_[j].element < it->element) ++j;
    if (j < o.children_.size() && o.children_[j].element == it->element) {
      it->set.Subtract(o.children_[j].set);
      if (it->set.Empty()) {
        it = children_.erase(it);
        continue;
      }
    }
    ++it;
  }
}

FieldSet FieldSet::RecursiveDifference(const FieldSet& o) const {
  FieldSet out;
  std::set_difference(members_.begin(), members_.end(), o.members_.begin(), o.members_.end(),
                      std::back_inserter(out.members_));
  size_t j = 0;
  for (const Child& child : children_) {
    if (o.HasMember(child.element)) continue;  // the whole subtree goes
    while (j < o.children_.size() && o.children_[j].element < child.element) ++j;
    if (j < o.children_.size() && o.children_[j].element == child.element) {
      FieldSet sub = child.set.RecursiveDifference(o.children_[j].set);
      if (!sub.Empty()) out.children_.push_back(Child{child.element, std::move(sub)});
    } else {
      out.children_.push_back(child);
    }
  }
  return out;
}

bool operator==(const FieldSet& a, const FieldSet& b) {
  if (a.members_ != b.members_ || a.children_.size() != b.children_.size()) return false;
  for (size_t i = 0; i < a.children_.size(); ++i) {
    if (!(a.children_[i].element == b.children_[i].element)) return false;
    if (!(a.children_[i].set == b.children_[i].set)) return false;
  }
  return true;
}

const FieldSet& FieldSet::WithPrefix(const PathElement& pe) const {
  const FieldSet* s = FindChild(pe);
  return s ? *s : EmptySet();
}

void FieldSet::IteratePrefix(Path& prefix, const std::function<void(const Path&)>& fn) const {
  for (const PathElement& m : members_) {
    prefix.push_back(m);
    fn(prefix);
    prefix.pop_back();
  }
  for (const Child& c : children_) {
    prefix.push_back(c.element);
    c.set.IteratePrefix(prefix, fn);
    prefix.pop_back();
  }
}

void FieldSet::Iterate(const std::function<void(const Path&)>& fn) const {
  Path prefix;
  IteratePrefix(prefix, fn);
}

std::string FieldSet::ToString() const {
  std::string out;
  Iterate([&](const Path& p) {
    if (!out.empty()) out += '\n';
    out += PathString(p);
  });
  return out;
}

// Upstream's emitContents_v1: a node that is both a member and has children starts with
// ".": {}; then members and children merged in element order, a member without children as `{}`.
void FieldSet::EmitV1(bool include_self, json::object& out) const {
  // At most one key per member and child, and ".": no rehash while filling.
  out.reserve(out.size() + members_.size() + children_.size() + 1);
  if (include_self && (!members_.empty() || !children_.empty())) {
    out.emplace(".", json::object());
  }
  std::string key;  // each element's key, serialized into one buffer
  size_t mi = 0, ci = 0;
  while (mi < members_.size() || ci < children_.size()) {
    int c;
    if (mi >= members_.size()) {
      c = 1;
    } else if (ci >= children_.size()) {
      c = -1;
    } else {
      c = members_[mi].Compare(children_[ci].element);
    }
    key.clear();
    if (c < 0) {
      members_[mi].AppendSerialized(key);
      out.emplace(key, json::object());
      ++mi;
      continue;
    }
    json::object sub;
    children_[ci].set.EmitV1(/*include_self=*/c == 0, sub);
    children_[ci].element.AppendSerialized(key);
    out.emplace(key, std::move(sub));
    if (c == 0) ++mi;
    ++ci;
  }
}

json::object FieldSet::ToFieldsV1() const {
  json::object out;
  EmitV1(/*include_self=*/false, out);
  return out;
}

// Upstream's readIterV1: fills `children` with the node's children and tells whether the node is
// a member. A node with no readable children is a member.
util::Status FieldSet::ReadV1(const json::object& o, int depth, FieldSet* children,
                              bool* is_member) {
  if (depth > kMaxFieldsV1Depth) {
    return util::InvalidArgument("fieldsV1 nests deeper than " + std::to_string(kMaxFieldsV1Depth) +
                                 " levels");
  }
  static const json::object kEmpty;
  *is_member = false;
  bool any_child = false;
  for (const json::key_value_pair& kv : o) {
    if (kv.key() == ".") {
      *is_member = true;
      continue;
    }
    util::StatusOr<PathElement> pe = PathElement::Parse(kv.key());
    if (!pe.ok()) {
      if (pe.status().code() == util::Code::kUnimplemented) continue;  // a future element type
      return util::InvalidArgument("parsing key as path element: " + pe.status().message());
    }
    const json::object* sub = &kEmpty;
    if (kv.value().is_object()) {
      sub = &kv.value().get_object();
    } else if (!kv.value().is_null()) {
      return util::InvalidArgument("fieldsV1: the value of " + std::string(kv.key()) +
                                   " is not an object");
    }
    FieldSet grand;
    bool child_member = false;
    CONVERGE_RETURN_IF_ERROR(ReadV1(*sub, depth + 1, &grand, &child_member));
    if (child_member) {
      children->InsertMember(*pe);
      any_child = true;
    }
    if (!grand.members_.empty() || !grand.children_.empty()) {
      *children->Descend(*pe) = std::move(grand);  // a repeated key replaces, as upstream does
      any_child = true;
    }
  }
  if (!any_child) *is_member = true;
  return util::Status::Ok();
}

util::StatusOr<FieldSet> FieldSet::FromFieldsV1(const json::value& v) {
  if (v.is_null()) return FieldSet();
  if (!v.is_object()) return util::InvalidArgument("fieldsV1 is not an object");
  FieldSet out;
  bool is_member = false;
  CONVERGE_RETURN_IF_ERROR(ReadV1(v.get_object(), 0, &out, &is_member));
  return out;
}

namespace {

// Whether a fieldsV1 node is a member of its set: it says so ("."), or it has no children of a
// type this version reads (ReadV1's rule; null reads as the empty object).
bool EncodedNodeIsMember(const json::value& node) {
  if (!node.is_object()) return true;
  const json::object& o = node.get_object();
  if (o.empty() || o.contains(".")) return true;
  for (const json::key_value_pair& kv : o) {
    const std::string_view k = kv.key();
    if (k.size() >= 2 && k[1] == ':' &&
        (k[0] == 'f' || k[0] == 'k' || k[0] == 'v' || k[0] == 'i')) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool FieldSet::IntersectsFieldsV1(const json::object& v1) const {
  if (v1.empty()) return false;
  std::string key;
  for (const PathElement& m : members_) {
    key.clear();
    m.AppendSerialized(key);
    const json::value* node = v1.if_contains(key);
    if (node != nullptr && EncodedNodeIsMember(*node)) return true;
  }
  for (const Child& c : children_) {
    key.clear();
    c.element.AppendSerialized(key);
    const json::value* node = v1.if_contains(key);
    if (node != nullptr && node->is_object() && c.set.IntersectsFieldsV1(node->get_object())) {
      return true;
    }
  }
  return false;
}

}  // namespace converge::api
