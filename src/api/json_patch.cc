#include "api/json_patch.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/serialize.hpp>

#include "api/merge_patch.h"

namespace converge::api {
namespace {

namespace json = boost::json;

// Error texts below follow evanphx/json-patch v4, the library upstream applies JSON patches with;
// its errors end in the text of a sentinel error (": missing value" and friends).
constexpr std::string_view kMissingValue = ": missing value";
constexpr std::string_view kInvalidIndex = ": invalid index referenced";

util::Status DoesNotApply(std::string message) {
  return util::FailedPrecondition(std::move(message));
}

std::string Quote(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// The JSON type names Go's encoding/json uses in "cannot unmarshal X into ..." errors.
std::string_view GoJsonTypeName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object: return "object";
    case json::kind::array: return "array";
    case json::kind::string: return "string";
    case json::kind::bool_: return "bool";
    case json::kind::null: return "null";
    default: return "number";
  }
}

// Go's strconv.Atoi, which upstream uses for array indices: an optional sign, then decimal digits
// (leading zeros allowed), fitting in int64.
util::StatusOr<std::int64_t> ParseIndex(std::string_view token) {
  auto syntax_error = [&](std::string_view why) {
    return DoesNotApply("strconv.Atoi: parsing " + Quote(token) + ": " + std::string(why));
  };
  std::string_view digits = token;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return syntax_error("invalid syntax");
  // Accumulate as a negative number so that INT64_MIN is representable.
  std::int64_t value = 0;
  bool overflow = false;
  for (char c : digits) {
    if (c < '0' || c > '9') return syntax_error("invalid syntax");
    const int digit = c - '0';
    if (value < (std::numeric_limits<std::int64_t>::min() + digit) / 10) overflow = true;
    if (!overflow) value = value * 10 - digit;
  }
  if (overflow || (!negative && value == std::numeric_limits<std::int64_t>::min())) {
    return syntax_error("value out of range");
  }
  return negative ? value : -value;
}

util::Status InvalidIndex(std::int64_t index) {
  return DoesNotApply("Unable to access invalid index: " + std::to_string(index) +
                      std::string(kInvalidIndex));
}

// RFC 6901 unescaping of one reference token: "~1" is "/", "~0" is "~", left to right (so "~01"
// is "~1"). Other uses of "~" are kept as they are, as upstream does.
std::string DecodeToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out.push_back(token[i + 1] == '1' ? '/' : '~');
      ++i;
    } else {
      out.push_back(token[i]);
    }
  }
  return out;
}

// Resolves an array index the way upstream's get/set/remove do: negative counts from the end.
util::StatusOr<std::size_t> ExistingIndex(const json::array& array, std::string_view token) {
  CONVERGE_ASSIGN_OR_RETURN(std::int64_t index, ParseIndex(token));
  const auto size = static_cast<std::int64_t>(array.size());
  if (index < 0) {
    if (index < -size) return InvalidIndex(index);
    index += size;
  }
  if (index >= size) return InvalidIndex(index);
  return static_cast<std::size_t>(index);
}

// The parent container of a pointer's target, and the target's (unescaped) last token.
struct Location {
  json::value* container;  // an object or an array
  std::string key;
  int depth;  // containers from the root to `container`, inclusive
};

// Upstream's findObject: walks every token but the last; each must name an existing, non-null
// object or array. Returns nullopt when the path does not resolve.
std::optional<Location> FindContainer(json::value& document, std::string_view path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  json::value* node = &document;
  int depth = 1;
  std::string_view rest = path.substr(1);
  for (std::size_t slash = rest.find('/'); slash != std::string_view::npos;
       slash = rest.find('/')) {
    const std::string token = DecodeToken(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
    json::value* child = nullptr;
    if (node->is_object()) {
      child = node->get_object().if_contains(token);
    } else if (node->is_array()) {
      util::StatusOr<std::size_t> index = ExistingIndex(node->get_array(), token);
      if (index.ok()) child = &node->get_array()[*index];
    }
    if (child == nullptr || !child->is_structured()) return std::nullopt;
    node = child;
    ++depth;
  }
  if (!node->is_structured()) return std::nullopt;
  return Location{node, DecodeToken(rest), depth};
}

// Upstream's container.get: a missing object member is not an error (nullptr); a bad array index
// is.
util::StatusOr<json::value*> Get(const Location& at) {
  if (at.container->is_object()) return at.container->get_object().if_contains(at.key);
  json::array& array = at.container->get_array();
  CONVERGE_ASSIGN_OR_RETURN(std::size_t index, ExistingIndex(array, at.key));
  return &array[index];
}

util::Status Add(const Location& at, json::value value) {
  if (at.container->is_object()) {
    at.container->get_object().insert_or_assign(at.key, std::move(value));
    return util::Status::Ok();
  }
  json::array& array = at.container->get_array();
  if (at.key == "-") {
    array.push_back(std::move(value));
    return util::Status::Ok();
  }
  util::StatusOr<std::int64_t> parsed = ParseIndex(at.key);
  if (!parsed.ok()) {
    return DoesNotApply("value was not a proper array index: '" + at.key +
                        "': " + parsed.status().message());
  }
  std::int64_t index = *parsed;
  const auto new_size = static_cast<std::int64_t>(array.size()) + 1;
  if (index >= new_size) return InvalidIndex(index);
  if (index < 0) {
    if (index < -new_size) return InvalidIndex(index);
    index += new_size;
  }
  array.insert(array.begin() + index, std::move(value));
  return util::Status::Ok();
}

util::Status Remove(const Location& at) {
  if (at.container->is_object()) {
    if (!at.container->get_object().stable_erase(at.key)) {
      return DoesNotApply("Unable to remove nonexistent key: " + at.key +
                          std::string(kMissingValue));
    }
    return util::Status::Ok();
  }
  json::array& array = at.container->get_array();
  CONVERGE_ASSIGN_OR_RETURN(std::size_t index, ExistingIndex(array, at.key));
  array.erase(array.begin() + static_cast<std::ptrdiff_t>(index));
  return util::Status::Ok();
}

util::Status Wrap(std::string_view context, const util::Status& inner) {
  return DoesNotApply(std::string(context) + ": " + inner.message());
}

// A value may only be placed where the document stays within kMaxPatchNestingDepth.
util::Status CheckPlacement(const Location& at, const json::value& value, std::string_view path) {
  if (at.depth + JsonNestingDepth(value) > kMaxPatchNestingDepth) {
    return DoesNotApply("placing a value at " + std::string(path) + " would nest deeper than " +
                        std::to_string(kMaxPatchNestingDepth) + " levels");
  }
  return util::Status::Ok();
}

// One operation object and the accessors upstream's Operation type offers.
class Operation {
 public:
  explicit Operation(const json::object* op) : op_(op) {}

  // The "op" member, or "unknown" when it is absent or not a string.
  std::string Kind() const {
    const json::value* v = Member("op");
    if (v == nullptr || !v->is_string()) return "unknown";
    return std::string(v->get_string());
  }

  // The "path" or "from" member. The error text is upstream's (the callers wrap it).
  util::StatusOr<std::string> Pointer(std::string_view field) const {
    const json::value* v = Member(field);
    if (v == nullptr || v->is_null()) {
      return DoesNotApply(field == "path" ? "operation missing path field: missing value"
                                          : "operation, missing from field: missing value");
    }
    if (!v->is_string()) {
      return DoesNotApply("json: cannot unmarshal " + std::string(GoJsonTypeName(*v)) +
                          " into Go value of type string");
    }
    return std::string(v->get_string());
  }

  // The "value" member; null when absent (as upstream).
  const json::value& Value() const {
    static const json::value kNull;
    const json::value* v = Member("value");
    return v != nullptr ? *v : kNull;
  }

 private:
  const json::value* Member(std::string_view name) const {
    return op_ == nullptr ? nullptr : op_->if_contains(name);
  }

  const json::object* op_;  // null for a `null` array element, which upstream reads as {}
};

class Applier {
 public:
  explicit Applier(json::value& document) : doc_(document) {}

  util::Status Apply(const Operation& op) {
    const std::string kind = op.Kind();
    if (kind == "add") return AddOp(op);
    if (kind == "remove") return RemoveOp(op);
    if (kind == "replace") return ReplaceOp(op);
    if (kind == "move") return MoveOp(op);
    if (kind == "test") return TestOp(op);
    if (kind == "copy") return CopyOp(op);
    return DoesNotApply("Unexpected kind: " + kind);
  }

 private:
  util::Status AddOp(const Operation& op) {
    util::StatusOr<std::string> path = op.Pointer("path");
    if (!path.ok()) return DoesNotApply("add operation failed to decode path: missing value");
    std::optional<Location> at = FindContainer(doc_, *path);
    if (!at) {
      return DoesNotApply("add operation does not apply: doc is missing path: " + Quote(*path) +
                          std::string(kMissingValue));
    }
    CONVERGE_RETURN_IF_ERROR(CheckPlacement(*at, op.Value(), *path));
    util::Status s = Add(*at, json::value(op.Value(), doc_.storage()));
    if (!s.ok()) return Wrap("error in add for path: '" + *path + "'", s);
    return s;
  }

  util::Status RemoveOp(const Operation& op) {
    util::StatusOr<std::string> path = op.Pointer("path");
    if (!path.ok()) return DoesNotApply("remove operation failed to decode path: missing value");
    std::optional<Location> at = FindContainer(doc_, *path);
    if (!at) {
      return DoesNotApply("remove operation does not apply: doc is missing path: " + Quote(*path) +
                          std::string(kMissingValue));
    }
    util::Status s = Remove(*at);
    if (!s.ok()) return Wrap("error in remove for path: '" + *path + "'", s);
    return s;
  }

  util::Status ReplaceOp(const Operation& op) {
    util::StatusOr<std::string> path = op.Pointer("path");
    if (!path.ok()) return Wrap("replace operation failed to decode path", path.status());
    if (path->empty()) {
      if (!op.Value().is_structured()) {
        return DoesNotApply("replace operation value must be object or array");
      }
      doc_ = json::value(op.Value(), doc_.storage());
      return util::Status::Ok();
    }
    std::optional<Location> at = FindContainer(doc_, *path);
    if (!at) {
      return DoesNotApply("replace operation does not apply: doc is missing path: " + *path +
                          std::string(kMissingValue));
    }
    if (!Get(*at).ok()) {
      return DoesNotApply("replace operation does not apply: doc is missing key: " + *path +
                          std::string(kMissingValue));
    }
    CONVERGE_RETURN_IF_ERROR(CheckPlacement(*at, op.Value(), *path));
    // An existing array element is replaced in place; an object member is set, which also adds
    // a missing one (upstream's behaviour, see the header).
    json::value value(op.Value(), doc_.storage());
    if (at->container->is_object()) {
      at->container->get_object().insert_or_assign(at->key, std::move(value));
    } else {
      *Get(*at).value() = std::move(value);
    }
    return util::Status::Ok();
  }

  util::Status MoveOp(const Operation& op) {
    util::StatusOr<std::string> from = op.Pointer("from");
    if (!from.ok()) return Wrap("move operation failed to decode from", from.status());
    std::optional<Location> source = FindContainer(doc_, *from);
    if (!source) {
      return DoesNotApply("move operation does not apply: doc is missing from path: " + *from +
                          std::string(kMissingValue));
    }
    util::StatusOr<json::value*> found = Get(*source);
    if (!found.ok()) return Wrap("error in move for path: '" + source->key + "'", found.status());
    // A missing member moves as null, then fails to be removed, as upstream.
    json::value value = *found != nullptr ? std::move(**found) : json::value(nullptr);
    util::Status removed = Remove(*source);
    if (!removed.ok()) return Wrap("error in move for path: '" + source->key + "'", removed);

    util::StatusOr<std::string> path = op.Pointer("path");
    if (!path.ok()) return Wrap("move operation failed to decode path", path.status());
    std::optional<Location> target = FindContainer(doc_, *path);
    if (!target) {
      return DoesNotApply("move operation does not apply: doc is missing destination path: " +
                          *path + std::string(kMissingValue));
    }
    // Moving no deeper than the source cannot deepen the document; only then is the (possibly
    // large) value's depth worth measuring.
    if (target->depth > source->depth) {
      CONVERGE_RETURN_IF_ERROR(CheckPlacement(*target, value, *path));
    }
    util::Status s = Add(*target, std::move(value));
    if (!s.ok()) return Wrap("error in move for path: '" + *path + "'", s);
    return s;
  }

  util::Status TestOp(const Operation& op) {
    util::StatusOr<std::string> path = op.Pointer("path");
    if (!path.ok()) return Wrap("test operation failed to decode path", path.status());
    const std::string failed = "testing value " + *path + " failed: test failed";
    if (path->empty()) {
      if (JsonEqual(doc_, op.Value())) return util::Status::Ok();
      return DoesNotApply(failed);
    }
    std::optional<Location> at = FindContainer(doc_, *path);
    if (!at) {
      return DoesNotApply("test operation does not apply: is missing path: " + *path +
                          std::string(kMissingValue));
    }
    util::StatusOr<json::value*> found = Get(*at);
    if (!found.ok()) return Wrap("error in test for path: '" + *path + "'", found.status());
    // Absent and null are the same to upstream.
    static const json::value kNull;
    const json::value& actual = *found != nullptr ? **found : kNull;
    if (JsonEqual(actual, op.Value())) return util::Status::Ok();
    return DoesNotApply(failed);
  }

  util::Status CopyOp(const Operation& op) {
    util::StatusOr<std::string> from = op.Pointer("from");
    if (!from.ok()) return Wrap("copy operation failed to decode from", from.status());
    std::optional<Location> source = FindContainer(doc_, *from);
    const std::string missing_from =
        "copy operation does not apply: doc is missing from path: " + *from +
        std::string(kMissingValue);
    if (!source) return DoesNotApply(missing_from);
    util::StatusOr<json::value*> found = Get(*source);
    if (!found.ok()) return Wrap("error in copy for from: '" + *from + "'", found.status());
    if (*found == nullptr) return DoesNotApply(missing_from);  // RFC 6902 4.5; see the header

    util::StatusOr<std::string> path = op.Pointer("path");
    if (!path.ok()) return DoesNotApply("copy operation failed to decode path: missing value");
    std::optional<Location> target = FindContainer(doc_, *path);
    if (!target) {
      return DoesNotApply("copy operation does not apply: doc is missing destination path: " +
                          *path + std::string(kMissingValue));
    }
    CONVERGE_RETURN_IF_ERROR(CheckPlacement(*target, **found, *path));
    copied_bytes_ += static_cast<std::int64_t>(json::serialize(**found).size());
    if (copied_bytes_ > kMaxJsonPatchCopyBytes) {
      return DoesNotApply("Unable to complete the copy, the accumulated size increase of copy is " +
                          std::to_string(copied_bytes_) + ", exceeding the limit " +
                          std::to_string(kMaxJsonPatchCopyBytes));
    }
    // Copy before adding: the target may be inside the source (or move it, for arrays).
    json::value copy(**found, doc_.storage());
    util::Status s = Add(*target, std::move(copy));
    if (!s.ok()) return Wrap("error while adding value during copy", s);
    return s;
  }

  json::value& doc_;
  std::int64_t copied_bytes_ = 0;
};

}  // namespace

util::StatusOr<json::value> ApplyJsonPatch(const json::value& document, const json::value& patch) {
  if (patch.is_null()) return json::value(document, json::storage_ptr());  // no operations
  if (!patch.is_array()) {
    return util::InvalidArgument("json: cannot unmarshal " + std::string(GoJsonTypeName(patch)) +
                                 " into Go value of type jsonpatch.Patch");
  }
  const json::array& operations = patch.get_array();
  for (const json::value& op : operations) {
    if (!op.is_object() && !op.is_null()) {
      return util::InvalidArgument("json: cannot unmarshal " + std::string(GoJsonTypeName(op)) +
                                   " into Go value of type jsonpatch.Operation");
    }
  }
  if (operations.size() > kMaxJsonPatchOperations) {
    return util::ResourceExhausted(
        "Request entity too large: The allowed maximum operations in a JSON patch is " +
        std::to_string(kMaxJsonPatchOperations) + ", got " + std::to_string(operations.size()));
  }
  if (JsonNestingDepth(patch) > kMaxPatchNestingDepth ||
      JsonNestingDepth(document) > kMaxPatchNestingDepth) {
    return util::InvalidArgument("patch or document nests deeper than " +
                                 std::to_string(kMaxPatchNestingDepth) + " levels");
  }

  json::value result(document, json::storage_ptr());
  Applier applier(result);
  for (const json::value& op : operations) {
    CONVERGE_RETURN_IF_ERROR(applier.Apply(Operation(op.if_object())));
  }
  return result;
}

}  // namespace converge::api
