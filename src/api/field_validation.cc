#include "api/field_validation.h"

#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <unordered_set>
#include <variant>

#include "api/yaml.h"

#include "api/special_types.h"

namespace converge::api {
namespace {

namespace json = boost::json;
using util::InvalidArgument;
using util::Status;
using util::StatusOr;

// "io.k8s.api.apps.v1.DeploymentSpec" -> "v1.DeploymentSpec", as Go prints reflect types.
std::string GoTypeName(const TypeSchema& t) {
  std::string_view n = t.name;
  size_t last = n.rfind('.');
  if (last == std::string_view::npos) return std::string(n);
  size_t prev = n.rfind('.', last - 1);
  return std::string(prev == std::string_view::npos ? n : n.substr(prev + 1));
}

std::string GoValueTypeName(const ValueType& vt) {
  switch (vt.kind) {
    case ValueKind::kString: return "string";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt32: return "int32";
    case ValueKind::kInt64: return "int64";
    case ValueKind::kFloat: return "float32";
    case ValueKind::kDouble: return "float64";
    case ValueKind::kBytes: return "[]uint8";
    case ValueKind::kAny: return "interface {}";
    case ValueKind::kMessage: return GoTypeName(*vt.message);
  }
  return "";
}

std::string GoFieldTypeName(const FieldSchema& f) {
  std::string elem = GoValueTypeName(f.value);
  if (f.repeated) return "[]" + elem;
  if (f.is_map) return "map[string]" + elem;
  return elem;
}

// How Go's decoder names a JSON value in UnmarshalTypeError.
std::string JsonKindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string: return "string";
    case json::kind::bool_: return "bool";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
    case json::kind::null: return "null";
    default: return "number";
  }
}

// The number as its JSON literal most likely read (Go quotes the literal itself).
std::string NumberText(const json::value& v) {
  if (!v.is_double()) return json::serialize(v);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v.get_double());
  return std::string(buf, res.ptr);
}

// Go's reflect Name(): "io.k8s.api.apps.v1.DeploymentSpec" -> "DeploymentSpec".
std::string GoStructName(const TypeSchema& t) {
  size_t dot = t.name.rfind('.');
  return dot == std::string::npos ? t.name : t.name.substr(dot + 1);
}

bool IsIntegral(const json::value& v, int64_t lo, int64_t hi) {
  if (v.is_int64()) return v.get_int64() >= lo && v.get_int64() <= hi;
  if (v.is_uint64()) return v.get_uint64() <= static_cast<uint64_t>(hi);
  if (v.is_double()) {
    double d = v.get_double();
    return std::trunc(d) == d && d >= static_cast<double>(lo) && d <= static_cast<double>(hi) &&
           std::abs(d) < 9.007199254740992e15;
  }
  return false;
}

// resource.Quantity's parser: [+-] digits [. digits], then suffix letters from "eEinumkKMGTP",
// an optional sign and digits, nothing after; the suffix must be a known one.
std::optional<std::string> QuantityError(std::string_view s) {
  static constexpr std::string_view kFormat =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  auto digits = [&](size_t& i) {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t n = digits(i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    n += digits(i);
  }
  if (n == 0) return std::string(kFormat);
  size_t suffix_start = i;
  while (i < s.size() && std::string_view("eEinumkKMGTP").find(s[i]) != std::string_view::npos) ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  digits(i);
  if (i != s.size()) return std::string(kFormat);
  std::string_view suffix = s.substr(suffix_start);
  static const std::set<std::string_view> kSuffixes = {
      "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (kSuffixes.contains(suffix)) return std::nullopt;
  if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix.size() > 1) {
    size_t k = 1;
    if (suffix[k] == '+' || suffix[k] == '-') ++k;
    bool all_digits = k < suffix.size();
    for (; k < suffix.size(); ++k) all_digits = all_digits && suffix[k] >= '0' && suffix[k] <= '9';
    if (all_digits) return std::nullopt;
  }
  return std::string("unable to parse quantity's suffix");
}

// Walks a decoded object against its schema: unknown fields (strict paths, optionally pruned) and
// the first type mismatch (Go's wording).
class Walker {
 public:
  explicit Walker(bool prune) : prune_(prune) {}

  void Object(json::object& obj, const TypeSchema& t, bool root) {
    for (auto it = obj.begin(); it != obj.end();) it = Member(obj, it, t, root, nullptr);
  }

  // Object, for the members `guide` names only (its "$" directives aside), and below them only
  // where `guide` has an object for a struct: the rest of `obj` is not looked at.
  void ObjectWhere(json::object& obj, const TypeSchema& t, const json::object& guide, bool root) {
    for (const json::key_value_pair& g : guide) {
      if (g.key().starts_with('$')) continue;
      auto it = obj.find(g.key());
      if (it != obj.end()) Member(obj, it, t, root, &g.value());
    }
  }

  std::vector<std::string> TakeUnknown() { return std::move(unknown_); }
  const std::optional<std::string>& type_error() const { return type_error_; }

 private:
  void AppendKey(std::string_view key) {
    if (!path_.empty()) path_ += '.';
    path_.append(key);
  }
  std::string Join(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  std::string GoPath() const {
    std::string p;
    for (std::string_view f : go_fields_) {
      if (!p.empty()) p += '.';
      p.append(f);
    }
    return p;
  }

  void TypeError(const json::value& v, std::string_view go_struct, std::string field_path,
                 std::string_view go_type) {
    if (type_error_) return;  // Go reports the first one
    std::string what = JsonKindName(v);
    if (what == "number" && (go_type.starts_with("int") || go_type.starts_with("uint"))) {
      what += " " + NumberText(v);  // Go shows the literal when it does not fit an integer
    }
    type_error_ = "json: cannot unmarshal " + what + " into Go struct field " +
                  std::string(go_struct) + "." + field_path + " of type " + std::string(go_type);
  }
  void Mismatch(const json::value& v, const TypeSchema& parent, std::string_view go_type) {
    TypeError(v, GoStructName(parent), GoPath(), go_type);
  }
  void SetError(std::string message) {
    if (!type_error_) type_error_ = std::move(message);
  }

  // Checks one member of `obj` (of type `t`), removing it when it is unknown and pruning; with a
  // `guide`, a struct member is checked only where the guide reaches (ObjectWhere). Returns the
  // iterator past it.
  json::object::iterator Member(json::object& obj, json::object::iterator it, const TypeSchema& t,
                                bool root, const json::value* guide) {
    std::string_view key = it->key();
    const FieldSchema* f = t.Field(key);
    if (f == nullptr) {
      if (root && (key == "apiVersion" || key == "kind")) {
        if (!it->value().is_string() && !it->value().is_null()) {
          TypeError(it->value(), GoStructName(t), std::string(key), "string");
        }
        return std::next(it);
      }
      if (t.preserve_unknown_fields) return std::next(it);
      unknown_.push_back(Join(key));
      return prune_ ? obj.erase(it) : std::next(it);
    }
    size_t path_len = path_.size();
    AppendKey(key);
    go_fields_.push_back(f->name);
    json::value& v = it->value();
    if (guide != nullptr && guide->is_object() && v.is_object() && !f->repeated && !f->is_map &&
        f->value.kind == ValueKind::kMessage && f->value.message->special == SpecialType::kNone) {
      ObjectWhere(v.get_object(), *f->value.message, guide->get_object(), /*root=*/false);
    } else {
      Field(v, *f, t);
    }
    go_fields_.pop_back();
    path_.resize(path_len);
    return std::next(it);
  }

  void Field(json::value& v, const FieldSchema& f, const TypeSchema& parent) {
    if (v.is_null()) return;
    if (f.repeated) {
      if (!v.is_array()) return Mismatch(v, parent, GoFieldTypeName(f));
      json::array& arr = v.get_array();
      for (size_t i = 0; i < arr.size(); ++i) {
        size_t len = path_.size();
        path_ += "[" + std::to_string(i) + "]";
        Value(arr[i], f.value, parent);
        path_.resize(len);
      }
      return;
    }
    if (f.is_map) {
      if (!v.is_object()) return Mismatch(v, parent, GoFieldTypeName(f));
      for (auto& kv : v.get_object()) {
        size_t len = path_.size();
        AppendKey(kv.key());
        Value(kv.value(), f.value, parent);
        path_.resize(len);
      }
      return;
    }
    Value(v, f.value, parent);
  }

  void Value(json::value& v, const ValueType& vt, const TypeSchema& parent) {
    if (v.is_null()) return;
    switch (vt.kind) {
      case ValueKind::kString:
        if (!v.is_string()) Mismatch(v, parent, "string");
        return;
      case ValueKind::kBool:
        if (!v.is_bool()) Mismatch(v, parent, "bool");
        return;
      case ValueKind::kInt32:
        if (!IsIntegral(v, std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max())) {
          Mismatch(v, parent, "int32");
        }
        return;
      case ValueKind::kInt64:
        if (!IsIntegral(v, std::numeric_limits<int64_t>::min(),
                        std::numeric_limits<int64_t>::max())) {
          Mismatch(v, parent, "int64");
        }
        return;
      case ValueKind::kFloat:
      case ValueKind::kDouble:
        if (!v.is_number()) Mismatch(v, parent, GoValueTypeName(vt));
        return;
      case ValueKind::kBytes:
        if (!v.is_string()) {
          Mismatch(v, parent, "[]uint8");
        } else if (!Base64Decode(v.get_string())) {
          SetError("illegal base64 data at input byte " +
                   std::to_string(FirstBadBase64(v.get_string())));
        }
        return;
      case ValueKind::kAny: return;
      case ValueKind::kMessage: break;
    }
    const TypeSchema& t = *vt.message;
    switch (t.special) {
      case SpecialType::kNone:
        if (!v.is_object()) return Mismatch(v, parent, GoTypeName(t));
        return Object(v.get_object(), t, /*root=*/false);
      case SpecialType::kTime:
      case SpecialType::kMicroTime: {
        std::string_view layout = t.special == SpecialType::kTime
                                      ? "2006-01-02T15:04:05Z07:00"
                                      : "2006-01-02T15:04:05.000000Z07:00";
        if (!v.is_string()) {
          SetError("json: cannot unmarshal " + JsonKindName(v) + " into Go value of type string");
        } else if (!ParseTime(v.get_string())) {
          std::string s(v.get_string());
          SetError("parsing time \"" + s + "\" as \"" + std::string(layout) +
                   "\": cannot parse \"" + s + "\" as \"2006\"");
        }
        return;
      }
      case SpecialType::kDuration:
        if (!v.is_string()) {
          SetError("json: cannot unmarshal " + JsonKindName(v) + " into Go value of type string");
        } else if (!ParseDuration(v.get_string())) {
          SetError("time: invalid duration \"" + std::string(v.get_string()) + "\"");
        }
        return;
      case SpecialType::kQuantity:
        if (v.is_number()) return;
        if (!v.is_string()) {
          SetError(
              "quantities must match the regular expression "
              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        } else if (auto err = QuantityError(v.get_string())) {
          SetError(*err);
        }
        return;
      case SpecialType::kIntOrString:
        if (v.is_string()) return;
        if (!IsIntegral(v, std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max())) {
          std::string what = JsonKindName(v);
          if (what == "number") what += " " + NumberText(v);
          SetError("json: cannot unmarshal " + what + " into Go value of type int32");
        }
        return;
      case SpecialType::kRawExtension:
      case SpecialType::kFieldsV1: return;  // any JSON
      case SpecialType::kStringList:
        if (!v.is_array()) return Mismatch(v, parent, GoTypeName(t));
        for (const json::value& s : v.get_array()) {
          if (!s.is_string() && !s.is_null()) return Mismatch(s, parent, "string");
        }
        return;
    }
  }

  static size_t FirstBadBase64(std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                c == '+' || c == '/' || c == '=';
      if (!ok) return i;
    }
    return s.size() - s.size() % 4;
  }

  const bool prune_;
  std::string path_;                         // strict-error path: "spec.containers[0].name"
  std::vector<std::string_view> go_fields_;  // struct fields only, for Go's type errors
  std::vector<std::string> unknown_;
  std::optional<std::string> type_error_;
};

// SAX handler that records keys seen twice in one object. The keys of the open objects sit on
// one stack, an object's keys contiguous, compared linearly while the object is small and through
// a hash set once it is not; a key's path ("spec.containers[0].name") is built from the stack
// only when it repeats, or for every key with record_all (ScanJsonKeys). Every request body goes
// through here, so no allocation per key or per object in the common case.
class DuplicateHandler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::vector<std::string> duplicates;
  // With record_all: every key in document order (ScanJsonKeys).
  bool record_all = false;
  std::vector<JsonKey> keys;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    BeginValue();
    frames_.push_back(Frame{true, keys_.size(), 0, nullptr});
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    keys_.resize(frames_.back().keys_begin);
    frames_.pop_back();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) {
    BeginValue();
    frames_.push_back(Frame{false, keys_.size(), 0, nullptr});
    return true;
  }
  bool on_array_end(std::size_t, boost::system::error_code&) {
    frames_.pop_back();
    return true;
  }
  bool on_key_part(std::string_view s, std::size_t, boost::system::error_code&) {
    key_.append(s);
    return true;
  }
  bool on_key(std::string_view s, std::size_t, boost::system::error_code&) {
    key_.append(s);
    const bool duplicate = SeenBefore(frames_.back());
    if (duplicate || record_all) {
      std::string path = PathOf(key_);
      if (duplicate) duplicates.push_back(path);
      if (record_all) keys.push_back({std::move(path), duplicate});
    }
    keys_.push_back(std::move(key_));  // a repeat too: its value's keys name it in their paths
    key_.clear();
    return true;
  }
  bool on_string_part(std::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_string(std::string_view, std::size_t, boost::system::error_code&) { return Scalar(); }
  bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t, std::string_view, boost::system::error_code&) { return Scalar(); }
  bool on_uint64(std::uint64_t, std::string_view, boost::system::error_code&) { return Scalar(); }
  bool on_double(double, std::string_view, boost::system::error_code&) { return Scalar(); }
  bool on_bool(bool, boost::system::error_code&) { return Scalar(); }
  bool on_null(boost::system::error_code&) { return Scalar(); }
  bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_comment(std::string_view, boost::system::error_code&) { return true; }

 private:
  // Objects with more keys than this look keys up in a hash set.
  static constexpr size_t kLinearKeys = 16;

  struct Frame {
    bool object;
    size_t keys_begin;  // an object's keys are keys_[keys_begin, ...)
    size_t next_index;  // an array's next element
    std::unique_ptr<std::unordered_set<std::string>> many;  // a large object's keys
  };

  // Whether key_ was seen before in the object `f` (which is the innermost frame).
  bool SeenBefore(Frame& f) {
    if (f.many) return !f.many->insert(key_).second;
    for (size_t i = f.keys_begin; i < keys_.size(); ++i) {
      if (keys_[i] == key_) return true;
    }
    if (keys_.size() - f.keys_begin + 1 > kLinearKeys) {
      f.many = std::make_unique<std::unordered_set<std::string>>(keys_.begin() + f.keys_begin,
                                                                 keys_.end());
      f.many->insert(key_);
    }
    return false;
  }

  // The path of `key` in the innermost object: each container's place in its parent (the
  // parent object's current key, the last on the stack below the container's own keys; or the
  // parent array's current index), then the key.
  std::string PathOf(std::string_view key) const {
    std::string path;
    for (size_t d = 1; d < frames_.size(); ++d) {
      const Frame& parent = frames_[d - 1];
      if (parent.object) {
        if (!path.empty()) path += '.';
        path += keys_[frames_[d].keys_begin - 1];
      } else {
        path += '[';
        path += std::to_string(parent.next_index - 1);
        path += ']';
      }
    }
    if (!path.empty()) path += '.';
    path += key;
    return path;
  }

  // Before a value inside an array, the array moves to its next element.
  void BeginValue() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().next_index;
  }
  bool Scalar() {
    BeginValue();
    return true;
  }

  std::vector<Frame> frames_;
  std::vector<std::string> keys_;
  std::string key_;
};

// json::parse's handler (every value pushed on a value_stack) that also hands each event to a
// DuplicateHandler when it has one.
class ValueAndDuplicatesHandler {
 public:
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  ValueAndDuplicatesHandler(bool find_duplicates, unsigned char* buffer, std::size_t size)
      : st(json::storage_ptr(), buffer, size) {
    st.reset();
    if (find_duplicates) dup.emplace();
  }

  json::value_stack st;
  std::optional<DuplicateHandler> dup;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code& ec) { return !dup || dup->on_object_begin(ec); }
  bool on_object_end(std::size_t n, boost::system::error_code& ec) {
    st.push_object(n);
    return !dup || dup->on_object_end(n, ec);
  }
  bool on_array_begin(boost::system::error_code& ec) { return !dup || dup->on_array_begin(ec); }
  bool on_array_end(std::size_t n, boost::system::error_code& ec) {
    st.push_array(n);
    return !dup || dup->on_array_end(n, ec);
  }
  bool on_key_part(std::string_view s, std::size_t n, boost::system::error_code& ec) {
    st.push_chars(s);
    return !dup || dup->on_key_part(s, n, ec);
  }
  bool on_key(std::string_view s, std::size_t n, boost::system::error_code& ec) {
    st.push_key(s);
    return !dup || dup->on_key(s, n, ec);
  }
  bool on_string_part(std::string_view s, std::size_t, boost::system::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(std::string_view s, std::size_t n, boost::system::error_code& ec) {
    st.push_string(s);
    return !dup || dup->on_string(s, n, ec);
  }
  bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t i, std::string_view s, boost::system::error_code& ec) {
    st.push_int64(i);
    return !dup || dup->on_int64(i, s, ec);
  }
  bool on_uint64(std::uint64_t u, std::string_view s, boost::system::error_code& ec) {
    st.push_uint64(u);
    return !dup || dup->on_uint64(u, s, ec);
  }
  bool on_double(double d, std::string_view s, boost::system::error_code& ec) {
    st.push_double(d);
    return !dup || dup->on_double(d, s, ec);
  }
  bool on_bool(bool b, boost::system::error_code& ec) {
    st.push_bool(b);
    return !dup || dup->on_bool(b, ec);
  }
  bool on_null(boost::system::error_code& ec) {
    st.push_null();
    return !dup || dup->on_null(ec);
  }
  bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
  bool on_comment(std::string_view, boost::system::error_code&) { return true; }
};

}  // namespace

json::value ParseJsonFindingDuplicates(std::string_view text, const json::parse_options& options,
                                       boost::system::error_code& ec,
                                       std::vector<std::string>* duplicates) {
  // As json::parse: a stack buffer for the value_stack's first values.
  unsigned char buffer[BOOST_JSON_STACK_BUFFER_SIZE];
  json::basic_parser<ValueAndDuplicatesHandler> p(options, duplicates != nullptr, buffer,
                                                  sizeof(buffer));
  const std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  if (!ec && n < text.size()) ec = json::error::extra_data;
  if (ec) return nullptr;
  if (duplicates != nullptr) {
    std::vector<std::string>& found = p.handler().dup->duplicates;
    duplicates->insert(duplicates->end(), std::make_move_iterator(found.begin()),
                       std::make_move_iterator(found.end()));
  }
  return p.handler().st.release();
}

StatusOr<FieldValidation> ParseFieldValidation(std::string_view param) {
  if (param.empty() || param == "Warn") return FieldValidation::kWarn;
  if (param == "Strict") return FieldValidation::kStrict;
  if (param == "Ignore") return FieldValidation::kIgnore;
  return InvalidArgument("Unsupported value: \"" + std::string(param) +
                         "\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"");
}

std::vector<std::string> FindUnknownFields(json::object& obj, const TypeSchema& type, bool prune) {
  Walker w(prune);
  w.Object(obj, type, /*root=*/true);
  return w.TakeUnknown();
}

std::vector<std::string> PruneUnknownFieldsWhere(json::object& obj, const TypeSchema& type,
                                                 const json::object& changed) {
  Walker w(/*prune=*/true);
  w.ObjectWhere(obj, type, changed, /*root=*/true);
  return w.TakeUnknown();
}

// Upstream's JSON decoder refuses documents nested deeper than 10000 levels; Boost.JSON's default
// (32) would refuse legitimate deep objects (CRD schemas), so the limit is set explicitly.
constexpr size_t kMaxNestingDepth = 10000;

json::parse_options DepthLimited() {
  json::parse_options options;
  options.max_depth = kMaxNestingDepth;
  return options;
}

StatusOr<std::vector<std::string>> FindDuplicateFields(std::string_view text) {
  json::basic_parser<DuplicateHandler> p(DepthLimited());
  boost::system::error_code ec;
  p.write_some(false, text.data(), text.size(), ec);
  if (ec) return InvalidArgument(ec.message());
  return std::move(p.handler().duplicates);
}

StatusOr<std::vector<JsonKey>> ScanJsonKeys(std::string_view text) {
  json::basic_parser<DuplicateHandler> p(DepthLimited());
  p.handler().record_all = true;
  boost::system::error_code ec;
  p.write_some(false, text.data(), text.size(), ec);
  if (ec) return InvalidArgument(ec.message());
  return std::move(p.handler().keys);
}

namespace {

// Whether `path` is `prefix` or lies below it ("a.b" and "a.b[0]" are below "a").
bool AtOrBelow(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

bool AtOrBelowAny(std::string_view path, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes) {
    if (AtOrBelow(path, p)) return true;
  }
  return false;
}

// A strict path split into its steps: field names, and list indices as numbers.
std::vector<std::variant<std::string_view, int64_t>> PathSteps(std::string_view path) {
  std::vector<std::variant<std::string_view, int64_t>> steps;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      continue;
    }
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      int64_t n = 0;
      std::from_chars(path.data() + i + 1, path.data() + (close == path.npos ? path.size() : close),
                      n);
      steps.emplace_back(n);
      i = close == path.npos ? path.size() : close + 1;
      continue;
    }
    const size_t end = path.find_first_of(".[", i);
    steps.emplace_back(path.substr(i, end == path.npos ? path.npos : end - i));
    i = end == path.npos ? path.size() : end;
  }
  return steps;
}

}  // namespace

StatusOr<std::vector<std::string>> TypedStrictProblems(std::string_view text,
                                                       const std::vector<std::string>& unknown,
                                                       const std::vector<std::string>& duplicates) {
  std::vector<std::string> out;
  std::set<std::string> reported;
  if (unknown.empty() || duplicates.empty()) {
    for (const std::string& p : unknown) out.push_back("unknown field \"" + p + "\"");
    for (const std::string& p : duplicates) {
      if (reported.insert(p).second) out.push_back("duplicate field \"" + p + "\"");
    }
    return out;
  }
  CONVERGE_ASSIGN_OR_RETURN(std::vector<JsonKey> keys, ScanJsonKeys(text));
  const std::set<std::string_view> unknown_set(unknown.begin(), unknown.end());
  for (const JsonKey& k : keys) {
    if (unknown_set.contains(k.path)) {
      if (reported.insert("u" + k.path).second) out.push_back("unknown field \"" + k.path + "\"");
      continue;
    }
    // The decoder skips an unknown field's value whole.
    if (AtOrBelowAny(k.path, unknown)) continue;
    if (k.duplicate && reported.insert("d" + k.path).second) {
      out.push_back("duplicate field \"" + k.path + "\"");
    }
  }
  return out;
}

void SortFieldPaths(std::vector<std::string>& paths) {
  std::stable_sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
    return PathSteps(a) < PathSteps(b);
  });
}

StatusOr<std::vector<std::string>> JsonPatchStrictProblems(std::string_view text) {
  CONVERGE_ASSIGN_OR_RETURN(std::vector<JsonKey> keys, ScanJsonKeys(text));
  static const std::set<std::string_view> kOpFields = {"op", "path", "from", "value"};
  std::vector<std::string> out;
  std::vector<std::string> unknown;
  std::set<std::string> reported;
  for (const JsonKey& k : keys) {
    // Keys of an operation ("[1].path") are struct fields; below "value" is any JSON.
    std::vector<std::variant<std::string_view, int64_t>> steps = PathSteps(k.path);
    const bool op_field = k.path.starts_with('[') && steps.size() == 2;
    if (op_field && !kOpFields.contains(std::get<std::string_view>(steps[1]))) {
      if (reported.insert("u" + k.path).second) {
        out.push_back("json patch unknown field \"" + k.path + "\"");
        unknown.push_back(k.path);
      }
      continue;
    }
    if (AtOrBelowAny(k.path, unknown)) continue;
    if (k.duplicate && reported.insert("d" + k.path).second) {
      out.push_back("json patch duplicate field \"" + k.path + "\"");
    }
  }
  return out;
}

std::string StrictReport::Message() const {
  std::string msg = "strict decoding error: ";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) msg += ", ";
    msg += errors[i];
  }
  return msg;
}

void StrictReport::Add(std::string problem) {
  warnings.push_back(problem);
  errors.push_back(std::move(problem));
}

void StrictReport::AddYamlDuplicates(const std::vector<std::string>& reports) {
  if (reports.empty()) return;
  errors.push_back(YamlUnmarshalErrors(reports));
  warnings.insert(warnings.end(), reports.begin(), reports.end());
}

Status CheckFieldTypes(const json::object& obj, const TypeSchema& type) {
  Walker w(/*prune=*/false);
  // The walker mutates only when pruning; a copy-free const_cast is safe here.
  w.Object(const_cast<json::object&>(obj), type, /*root=*/true);
  if (w.type_error()) return InvalidArgument(*w.type_error());
  return Status::Ok();
}

StatusOr<DecodedBody> DecodeJsonBody(std::string_view text, const TypeSchema& type,
                                     FieldValidation mode,
                                     const std::vector<std::string>* yaml_duplicates) {
  // Strict and Warn report repeated keys: found while parsing (yaml_duplicates: the YAML reader
  // found them, and `text` is JSON it wrote, without any).
  const bool find_duplicates = mode != FieldValidation::kIgnore && yaml_duplicates == nullptr;
  std::vector<std::string> duplicates;
  boost::system::error_code ec;
  json::value v =
      ParseJsonFindingDuplicates(text, DepthLimited(), ec, find_duplicates ? &duplicates : nullptr);
  if (ec == json::error::too_deep) {
    return InvalidArgument("the request body is nested too deeply (more than " +
                           std::to_string(kMaxNestingDepth) + " levels)");
  }
  if (ec) return InvalidArgument(ec.message());
  if (!v.is_object()) {
    return InvalidArgument("json: cannot unmarshal " + JsonKindName(v) + " into Go value of type " +
                           GoTypeName(type));
  }
  DecodedBody out;
  out.object = std::move(v.get_object());
  Walker w(/*prune=*/true);
  w.Object(out.object, type, /*root=*/true);
  if (w.type_error()) return InvalidArgument(*w.type_error());
  if (mode == FieldValidation::kIgnore) return out;

  StrictReport report;
  std::vector<std::string> unknown = w.TakeUnknown();
  if (yaml_duplicates != nullptr) {
    // Upstream decodes the JSON its YAML converter wrote: no repeated keys left, keys sorted.
    report.AddYamlDuplicates(*yaml_duplicates);
    SortFieldPaths(unknown);
    for (const std::string& p : unknown) report.Add("unknown field \"" + p + "\"");
  } else {
    CONVERGE_ASSIGN_OR_RETURN(std::vector<std::string> problems,
                              TypedStrictProblems(text, unknown, duplicates));
    for (std::string& p : problems) report.Add(std::move(p));
  }
  if (report.empty()) return out;
  if (mode == FieldValidation::kWarn) {
    out.warnings = std::move(report.warnings);
    return out;
  }
  return InvalidArgument(report.Message());
}

}  // namespace converge::api
