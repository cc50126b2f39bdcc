#include "api/structural_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "api/field_validation.h"
#include "api/schema_registry.h"

namespace converge::api {

namespace json = boost::json;
using util::InvalidArgument;
using util::StatusOr;

namespace {

constexpr std::string_view kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.";

// ---- Parsing ----------------------------------------------------------------------------------

std::optional<double> Number(const json::value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return static_cast<double>(v->get_int64());
  if (v->is_uint64()) return static_cast<double>(v->get_uint64());
  if (v->is_double()) return v->get_double();
  return std::nullopt;
}

std::optional<int64_t> Integer(const json::value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->get_double());
  return std::nullopt;
}

bool SchemaBool(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

std::string String(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

StatusOr<std::shared_ptr<const JsonSchema>> Parse(const json::value& doc, const std::string& at) {
  const json::object* o = doc.if_object();
  if (o == nullptr) return InvalidArgument(at + ": a schema must be an object");
  auto s = std::make_shared<JsonSchema>();
  s->type = String(*o, "type");
  s->format = String(*o, "format");
  s->description = String(*o, "description");
  s->nullable = SchemaBool(*o, "nullable");
  if (const json::value* p = o->if_contains("properties")) {
    const json::object* props = p->if_object();
    if (props == nullptr) return InvalidArgument(at + ".properties: must be an object");
    for (const auto& [name, sub] : *props) {
      CONVERGE_ASSIGN_OR_RETURN(auto parsed,
                                Parse(sub, at + ".properties[" + std::string(name) + "]"));
      s->properties.emplace(std::string(name), std::move(parsed));
    }
  }
  if (const json::value* items = o->if_contains("items"); items && items->is_object()) {
    CONVERGE_ASSIGN_OR_RETURN(s->items, Parse(*items, at + ".items"));
  }
  if (const json::value* ap = o->if_contains("additionalProperties"); ap && ap->is_object()) {
    CONVERGE_ASSIGN_OR_RETURN(s->additional_properties, Parse(*ap, at + ".additionalProperties"));
  }
  if (const json::value* req = o->if_contains("required"); req && req->is_array()) {
    for (const json::value& r : req->get_array()) {
      if (r.is_string()) s->required.emplace_back(r.get_string());
    }
  }
  if (const json::value* all = o->if_contains("allOf"); all && all->is_array()) {
    for (size_t i = 0; i < all->get_array().size(); ++i) {
      CONVERGE_ASSIGN_OR_RETURN(
          auto parsed, Parse(all->get_array()[i], at + ".allOf[" + std::to_string(i) + "]"));
      s->all_of.push_back(std::move(parsed));
    }
  }
  if (const json::value* e = o->if_contains("enum"); e && e->is_array()) {
    s->enum_values.emplace(e->get_array().begin(), e->get_array().end());
  }
  s->pattern = String(*o, "pattern");
  if (!s->pattern.empty()) {
    try {
      s->pattern_regex = std::make_shared<const std::regex>(s->pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument(at + ".pattern: " + e.what());
    }
  }
  s->maximum = Number(o->if_contains("maximum"));
  s->minimum = Number(o->if_contains("minimum"));
  s->exclusive_maximum = SchemaBool(*o, "exclusiveMaximum");
  s->exclusive_minimum = SchemaBool(*o, "exclusiveMinimum");
  s->multiple_of = Number(o->if_contains("multipleOf"));
  s->max_length = Integer(o->if_contains("maxLength"));
  s->min_length = Integer(o->if_contains("minLength"));
  s->max_items = Integer(o->if_contains("maxItems"));
  s->min_items = Integer(o->if_contains("minItems"));
  s->max_properties = Integer(o->if_contains("maxProperties"));
  s->min_properties = Integer(o->if_contains("minProperties"));
  for (const auto& bound : {s->max_length, s->min_length, s->max_items, s->min_items,
                            s->max_properties, s->min_properties}) {
    if (bound && *bound < 0) return InvalidArgument(at + ": a length bound is negative");
  }
  if (const json::value* d = o->if_contains("default")) s->default_value = *d;
  s->preserve_unknown_fields = SchemaBool(*o, "x-kubernetes-preserve-unknown-fields");
  s->int_or_string = SchemaBool(*o, "x-kubernetes-int-or-string");
  s->embedded_resource = SchemaBool(*o, "x-kubernetes-embedded-resource");
  s->list_type = String(*o, "x-kubernetes-list-type");
  if (const json::value* keys = o->if_contains("x-kubernetes-list-map-keys");
      keys && keys->is_array()) {
    for (const json::value& k : keys->get_array()) {
      if (k.is_string()) s->list_map_keys.emplace_back(k.get_string());
    }
  }
  s->map_type = String(*o, "x-kubernetes-map-type");
  return std::shared_ptr<const JsonSchema>(std::move(s));
}

// ---- Go's renderings of values ----------------------------------------------------------------

// strconv.Quote: printable ASCII and UTF-8 as is, the rest escaped.
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

// %#v of a decoded JSON value (map[string]interface {} / []interface {} / scalars).
std::string GoSharpV(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "interface {}(nil)";
    case json::kind::bool_: return v.get_bool() ? "true" : "false";
    case json::kind::int64: return std::to_string(v.get_int64());
    case json::kind::uint64: return std::to_string(v.get_uint64());
    case json::kind::double_: return GoFloat(v.get_double());
    case json::kind::string: return GoQuote(v.get_string());
    case json::kind::array: {
      std::string out = "[]interface {}{";
      const json::array& a = v.get_array();
      for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + GoSharpV(a[i]);
      return out + "}";
    }
    case json::kind::object: {
      std::vector<std::pair<std::string_view, const json::value*>> kv;
      for (const auto& [k, val] : v.get_object()) kv.emplace_back(k, &val);
      std::sort(kv.begin(), kv.end());
      std::string out = "map[string]interface {}{";
      for (size_t i = 0; i < kv.size(); ++i) {
        out += (i ? ", " : "") + GoQuote(kv[i].first) + ":" + GoSharpV(*kv[i].second);
      }
      return out + "}";
    }
  }
  return "";
}

// How field.Error renders a bad value: strings %q, simple scalars %v, the rest %#v.
std::string GoValue(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::string: return GoQuote(v.get_string());
    case json::kind::array:
    case json::kind::object: return GoSharpV(v);
    default: return GoSharpV(v);
  }
}

// encoding/json's rendering with sorted keys: the identity of compound list items.
void Canonical(const json::value& v, std::string& out) {
  if (const json::object* o = v.if_object()) {
    std::vector<std::pair<std::string_view, const json::value*>> kv;
    for (const auto& [k, val] : *o) kv.emplace_back(k, &val);
    std::sort(kv.begin(), kv.end());
    out += '{';
    for (size_t i = 0; i < kv.size(); ++i) {
      if (i) out += ',';
      out += json::serialize(json::string(kv[i].first));
      out += ':';
      Canonical(*kv[i].second, out);
    }
    out += '}';
  } else if (const json::array* a = v.if_array()) {
    out += '[';
    for (size_t i = 0; i < a->size(); ++i) {
      if (i) out += ',';
      Canonical((*a)[i], out);
    }
    out += ']';
  } else {
    out += json::serialize(v);
  }
}

std::string CanonicalJson(const json::value& v) {
  std::string out;
  Canonical(v, out);
  return out;
}

// ---- Schema validation (kube-openapi) --------------------------------------------------------

// The JSON type name kube-openapi infers for a decoded value.
std::string_view SchemaType(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "boolean";
    case json::kind::int64:
    case json::kind::uint64: return "integer";
    case json::kind::double_: return "number";
    case json::kind::string: return "string";
    case json::kind::array: return "array";
    case json::kind::object: return "object";
  }
  return "";
}

bool IsIntegralDouble(const json::value& v) {
  return v.is_double() && std::trunc(v.get_double()) == v.get_double() &&
         std::isfinite(v.get_double());
}

bool TypeAccepts(std::string_view type, const json::value& v) {
  std::string_view have = SchemaType(v);
  if (type == have) return true;
  if (type == "integer" && IsIntegralDouble(v)) return true;  // 1.0 is an integer
  if (type == "number" && have == "integer") return true;
  return false;
}

double AsDouble(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  return v.get_double();
}

// The bound as upstream prints it: an int64 conversion for integer data, %v for floats.
std::string Bound(double bound, const json::value& data) {
  if (data.is_int64() || data.is_uint64()) return std::to_string(static_cast<int64_t>(bound));
  return GoFloat(bound);
}

size_t RuneCount(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

class Validator {
 public:
  std::vector<SchemaError> Take() { return std::move(errors_); }

  // kube-openapi's SchemaValidator for one value; `name` is its path ("spec.items.0.port").
  void Value(const JsonSchema& s, const json::value& v, const std::string& name) {
    // Type first. nil passes only when the schema is nullable or untyped.
    if (v.is_null()) {
      if (!s.type.empty() && !s.nullable) TypeInvalid(name, s.type, "null");
      return;
    }
    if (!s.type.empty() && !TypeAccepts(s.type, v)) {
      TypeInvalid(name, s.type, SchemaType(v));
    } else if (s.type.empty() && s.int_or_string && !v.is_string() && !v.is_int64() &&
               !v.is_uint64() && !IsIntegralDouble(v)) {
      TypeInvalid(name, "integer", SchemaType(v));
    }
    for (const auto& sub : s.all_of) Value(*sub, v, name);
    if (v.is_string()) String(s, v.get_string(), name);
    if (s.enum_values) Enum(s, v, name);
    if (const json::array* a = v.if_array()) Array(s, *a, name);
    if (v.is_number()) Numeric(s, v, name);
    if (const json::object* o = v.if_object()) Object(s, *o, name);
  }

 private:
  static std::string Field(const std::string& name) {
    return name.starts_with('.') ? name.substr(1) : name;
  }
  void Add(std::string reason, const std::string& name, std::string message) {
    errors_.push_back({std::move(reason), Field(name), std::move(message)});
  }
  void TypeInvalid(const std::string& name, std::string_view type, std::string_view have) {
    Add("FieldValueTypeInvalid", name,
        "Invalid value: " + GoQuote(have) + ": " + Field(name) + " in body must be of type " +
            std::string(type) + ": " + GoQuote(have));
  }
  void Invalid(const std::string& name, const json::value& value, const std::string& detail) {
    Add("FieldValueInvalid", name, "Invalid value: " + GoValue(value) + ": " + detail);
  }
  std::string In(const std::string& name) const { return Field(name) + " in body"; }

  void String(const JsonSchema& s, std::string_view str, const std::string& name) {
    const json::value v(str);
    if (s.max_length && static_cast<int64_t>(RuneCount(str)) > *s.max_length) {
      Add("FieldValueTooLong", name,
          "Too long: may not be more than " + std::to_string(*s.max_length) +
              (*s.max_length == 1 ? " byte" : " bytes"));
    }
    if (s.min_length && static_cast<int64_t>(RuneCount(str)) < *s.min_length) {
      Invalid(name, v,
              In(name) + " should be at least " + std::to_string(*s.min_length) + " chars long");
    }
    if (s.pattern_regex && !std::regex_search(str.begin(), str.end(), *s.pattern_regex)) {
      Invalid(name, v, In(name) + " should match '" + s.pattern + "'");
    }
  }

  void Enum(const JsonSchema& s, const json::value& v, const std::string& name) {
    const std::string key = CanonicalJson(v);
    for (const json::value& allowed : *s.enum_values) {
      if (CanonicalJson(allowed) == key) return;
      // 1 and 1.0 are the same number to the validator.
      if (v.is_number() && allowed.is_number() && AsDouble(v) == AsDouble(allowed)) return;
    }
    std::string msg = "Unsupported value: " + GoValue(v);
    if (!s.enum_values->empty()) {
      msg += ": supported values: ";
      for (size_t i = 0; i < s.enum_values->size(); ++i) {
        const json::value& a = (*s.enum_values)[i];
        msg += (i ? ", " : "") +
               GoQuote(a.is_string() ? std::string(a.get_string()) : json::serialize(a));
      }
    }
    Add("FieldValueNotSupported", name, std::move(msg));
  }

  void Array(const JsonSchema& s, const json::array& a, const std::string& name) {
    if (s.items) {
      for (size_t i = 0; i < a.size(); ++i) Value(*s.items, a[i], name + "." + std::to_string(i));
    }
    const auto size = static_cast<int64_t>(a.size());
    if (s.min_items && size < *s.min_items) {
      Invalid(name, json::value(size),
              In(name) + " should have at least " + std::to_string(*s.min_items) + " items");
    }
    if (s.max_items && size > *s.max_items) {
      Add("FieldValueTooMany", name,
          "Too many: " + std::to_string(size) + ": must have at most " +
              std::to_string(*s.max_items) + " items");
    }
  }

  void Numeric(const JsonSchema& s, const json::value& v, const std::string& name) {
    const double d = AsDouble(v);
    if (s.multiple_of && *s.multiple_of > 0) {
      double q = d / *s.multiple_of;
      if (std::abs(q - std::round(q)) > 1e-9) {
        Invalid(name, v, In(name) + " should be a multiple of " + Bound(*s.multiple_of, v));
      }
    }
    if (s.maximum) {
      bool bad = s.exclusive_maximum ? d >= *s.maximum : d > *s.maximum;
      if (bad) {
        Invalid(name, v,
                In(name) +
                    (s.exclusive_maximum ? " should be less than "
                                         : " should be less than or equal to ") +
                    Bound(*s.maximum, v));
      }
    }
    if (s.minimum) {
      bool bad = s.exclusive_minimum ? d <= *s.minimum : d < *s.minimum;
      if (bad) {
        Invalid(name, v,
                In(name) +
                    (s.exclusive_minimum ? " should be greater than "
                                         : " should be greater than or equal to ") +
                    Bound(*s.minimum, v));
      }
    }
  }

  void Object(const JsonSchema& s, const json::object& o, const std::string& name) {
    const auto n = static_cast<int64_t>(o.size());
    if (s.min_properties && n < *s.min_properties) {
      Invalid(
          name, json::value(*s.min_properties),
          In(name) + " should have at least " + std::to_string(*s.min_properties) + " properties");
      return;
    }
    if (s.max_properties && n > *s.max_properties) {
      Add("FieldValueTooMany", name,
          "Too many: " + std::to_string(n) + ": must have at most " +
              std::to_string(*s.max_properties) + " items");
      return;
    }
    if (s.additional_properties) {
      for (const auto& [key, value] : o) {
        if (s.properties.contains(key)) continue;
        Value(*s.additional_properties, value, name + "." + std::string(key));
      }
    }
    for (const auto& [prop, sub] : s.properties) {
      const json::value* value = o.if_contains(prop);
      if (value == nullptr) continue;
      Value(*sub, *value, name.empty() ? prop : name + "." + prop);
    }
    for (const std::string& r : s.required) {
      if (!o.contains(r)) Add("FieldValueRequired", name + "." + r, "Required value");
    }
  }

  std::vector<SchemaError> errors_;
};

// ---- x-kubernetes-list-type (field.Path notation) ---------------------------------------------

class ListTypeValidator {
 public:
  std::vector<SchemaError> Take() { return std::move(errors_); }

  void Object(const std::string& path, const JsonSchema& s, const json::object& o) {
    for (const auto& [k, v] : o) {
      if (s.additional_properties) {
        Value(path + "[" + std::string(k) + "]", *s.additional_properties, v);
      } else if (const JsonSchema* p = s.Property(k)) {
        Value(path.empty() ? std::string(k) : path + "." + std::string(k), *p, v);
      }
    }
  }

 private:
  void Value(const std::string& path, const JsonSchema& s, const json::value& v) {
    if (const json::array* a = v.if_array()) {
      Array(path, s, *a);
    } else if (const json::object* o = v.if_object()) {
      Object(path, s, *o);
    }
  }

  static std::string Index(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  // Indices of the second appearance of each repeated key (upstream reports each value once).
  static std::vector<size_t> NonUnique(const std::vector<std::string>& keys) {
    std::map<std::string, int> seen;
    std::vector<size_t> out;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (++seen[keys[i]] == 2) out.push_back(i);
    }
    return out;
  }

  void Array(const std::string& path, const JsonSchema& s, const json::array& a) {
    if (s.list_type == "set" && a.size() > 1) {
      std::vector<std::string> keys;
      for (const json::value& x : a) keys.push_back(CanonicalJson(x));
      for (size_t i : NonUnique(keys)) {
        errors_.push_back(
            {"FieldValueDuplicate", Index(path, i), "Duplicate value: " + GoValue(a[i])});
      }
    } else if (s.list_type == "map") {
      MapList(path, s, a);
    }
    if (s.items) {
      for (size_t i = 0; i < a.size(); ++i) Value(Index(path, i), *s.items, a[i]);
    }
  }

  void MapList(const std::string& path, const JsonSchema& s, const json::array& a) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_null() && !a[i].is_object()) {
        errors_.push_back({"FieldValueInvalid", Index(path, i),
                           "Invalid value: " + GoValue(a[i]) +
                               ": must be an object for an array of list-type map"});
        return;
      }
    }
    if (a.size() <= 1) return;
    std::vector<json::object> key_objects;
    std::vector<std::string> keys;
    for (const json::value& x : a) {
      json::object key;
      if (const json::object* o = x.if_object()) {
        for (const std::string& k : s.list_map_keys) {
          if (const json::value* kv = o->if_contains(k)) key[k] = *kv;
        }
      }
      keys.push_back(CanonicalJson(key));
      key_objects.push_back(std::move(key));
    }
    for (size_t i : NonUnique(keys)) {
      errors_.push_back({"FieldValueDuplicate", Index(path, i),
                         "Duplicate value: " + GoValue(json::value(key_objects[i]))});
    }
  }

  std::vector<SchemaError> errors_;
};

// ---- Defaulting and pruning -------------------------------------------------------------------

void PruneNulls(json::value& x, const JsonSchema* s) {
  if (s == nullptr) return;
  if (json::object* o = x.if_object()) {
    for (auto it = o->begin(); it != o->end();) {
      const JsonSchema* p = s->Property(it->key());
      if (p == nullptr) p = s->additional_properties.get();
      if (p == nullptr) {
        ++it;
        continue;
      }
      if (it->value().is_null() && !p->nullable && !p->default_value) {
        it = o->erase(it);
        continue;
      }
      PruneNulls(it->value(), p);
      ++it;
    }
  } else if (json::array* a = x.if_array()) {
    for (json::value& item : *a) PruneNulls(item, s->items.get());
  }
}

bool NonNullableNull(const json::value& v, const JsonSchema* s) {
  return v.is_null() && s != nullptr && !s->nullable;
}

void Default(json::value& x, const JsonSchema* s) {
  if (s == nullptr) return;
  if (json::object* o = x.if_object()) {
    for (const auto& [k, p] : s->properties) {
      if (!p->default_value) continue;
      auto it = o->find(k);
      if (it == o->end() || NonNullableNull(it->value(), p.get())) (*o)[k] = *p->default_value;
    }
    for (auto& [k, v] : *o) {
      if (const JsonSchema* p = s->Property(k)) {
        Default(v, p);
      } else if (const JsonSchema* ap = s->additional_properties.get()) {
        if (NonNullableNull(v, ap) && ap->default_value) v = *ap->default_value;
        Default(v, ap);
      }
    }
  } else if (json::array* a = x.if_array()) {
    const JsonSchema* items = s->items.get();
    for (json::value& item : *a) {
      if (NonNullableNull(item, items) && items->default_value) item = *items->default_value;
      Default(item, items);
    }
  }
}

class Pruner {
 public:
  std::vector<std::string> Take() { return std::move(pruned_); }

  void Prune(json::value& x, const JsonSchema* s, const std::string& path, bool root) {
    if (s != nullptr && s->preserve_unknown_fields) {
      SkipPrune(x, s, path, root);
      return;
    }
    if (json::object* o = x.if_object()) {
      for (auto it = o->begin(); it != o->end();) {
        std::string_view k = it->key();
        if (KeepMetaField(k, s, root)) {
          ++it;
          continue;
        }
        const JsonSchema* p = s ? s->Property(k) : nullptr;
        if (p == nullptr && s != nullptr) p = s->additional_properties.get();
        if (p == nullptr) {
          pruned_.push_back(Child(path, k));
          it = o->erase(it);
          continue;
        }
        Prune(it->value(), p, Child(path, k), false);
        ++it;
      }
    } else if (json::array* a = x.if_array()) {
      for (size_t i = 0; i < a->size(); ++i) {
        Prune((*a)[i], s ? s->items.get() : nullptr, path + "[" + std::to_string(i) + "]", false);
      }
    }
  }

 private:
  static std::string Child(const std::string& path, std::string_view k) {
    return path.empty() ? std::string(k) : path + "." + std::string(k);
  }
  // apiVersion, kind and metadata of the resource itself and of embedded resources are not the
  // schema's business (metadata is ObjectMeta's).
  static bool KeepMetaField(std::string_view k, const JsonSchema* s, bool root) {
    if (!root && (s == nullptr || !s->embedded_resource)) return false;
    return k == "apiVersion" || k == "kind" || k == "metadata";
  }

  void SkipPrune(json::value& x, const JsonSchema* s, const std::string& path, bool root) {
    if (json::object* o = x.if_object()) {
      for (auto& [k, v] : *o) {
        if (KeepMetaField(k, s, root)) continue;
        if (const JsonSchema* p = s->Property(k)) {
          Prune(v, p, Child(path, k), false);
        } else if (const JsonSchema* ap = s->additional_properties.get()) {
          Prune(v, ap, Child(path, k), false);
        }
      }
    } else if (json::array* a = x.if_array()) {
      if (s->items == nullptr) return;
      for (size_t i = 0; i < a->size(); ++i) {
        SkipPrune((*a)[i], s->items.get(), path + "[" + std::to_string(i) + "]", false);
      }
    }
  }

  std::vector<std::string> pruned_;
};

// ---- TypeSchemas ------------------------------------------------------------------------------

class TypeBuilder {
 public:
  explicit TypeBuilder(CustomResourceTypes* out) : out_(out) {}

  TypeSchema* NewType(std::string name) {
    out_->types.emplace_back();
    out_->types.back().name = std::move(name);
    return &out_->types.back();
  }

  // The type of an object node with properties (or preserving unknown fields).
  const TypeSchema* ObjectType(const JsonSchema& s, const std::string& name) {
    TypeSchema* t = NewType(name);
    t->preserve_unknown_fields = s.preserve_unknown_fields;
    t->atomic_struct = s.map_type == "atomic";
    for (const auto& [prop, sub] : s.properties) {
      t->fields.push_back(FieldFor(prop, *sub, name + "." + prop));
    }
    t->BuildIndex();
    return t;
  }

  FieldSchema FieldFor(const std::string& json_name, const JsonSchema& s,
                       const std::string& type_name) {
    FieldSchema f;
    f.name = json_name;
    f.nullable_scalar = true;
    if (s.default_value) f.default_json = json::serialize(*s.default_value);
    if (s.type == "array") {
      if (s.items && s.items->type == "array") {
        f.value.kind = ValueKind::kAny;  // lists of lists have no FieldSchema shape
        return f;
      }
      f.repeated = true;
      f.list_type = s.list_type == "set"   ? ListType::kSet
                    : s.list_type == "map" ? ListType::kMap
                                           : ListType::kAtomic;
      f.list_map_keys = s.list_map_keys;
      f.value = s.items ? ElementType(*s.items, type_name) : ValueType{ValueKind::kAny, nullptr};
      return f;
    }
    if (s.type == "object" && s.additional_properties && s.properties.empty()) {
      const JsonSchema& ap = *s.additional_properties;
      if (ap.type == "array") {
        f.value.kind = ValueKind::kAny;
        return f;
      }
      f.is_map = true;
      f.map_type = s.map_type == "atomic" ? MapType::kAtomic : MapType::kGranular;
      f.value = ElementType(ap, type_name);
      return f;
    }
    f.value = ElementType(s, type_name);
    return f;
  }

  ValueType ElementType(const JsonSchema& s, const std::string& type_name) {
    if (s.int_or_string) return Message(kIntOrString);
    if (s.embedded_resource) return {ValueKind::kAny, nullptr};
    if (s.type == "string") return {ValueKind::kString, nullptr};
    if (s.type == "integer") return {ValueKind::kInt64, nullptr};
    if (s.type == "number") return {ValueKind::kDouble, nullptr};
    if (s.type == "boolean") return {ValueKind::kBool, nullptr};
    if (s.type == "object" && (!s.properties.empty() || !s.preserve_unknown_fields)) {
      if (s.additional_properties && s.properties.empty()) return {ValueKind::kAny, nullptr};
      return {ValueKind::kMessage, ObjectType(s, type_name)};
    }
    return {ValueKind::kAny, nullptr};
  }

  static ValueType Message(std::string_view builtin) {
    return {ValueKind::kMessage, BuiltinSchemas().FindType(builtin)};
  }

  static constexpr std::string_view kIntOrString =
      "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

 private:
  CustomResourceTypes* out_;
};

}  // namespace

const JsonSchema* JsonSchema::Property(std::string_view name) const {
  auto it = properties.find(name);
  return it == properties.end() ? nullptr : it->second.get();
}

StatusOr<std::shared_ptr<const JsonSchema>> ParseJsonSchema(const json::value& doc) {
  return Parse(doc, "openAPIV3Schema");
}

std::string GoFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  // Shortest round-trip digits and the decimal exponent, then Go's %g layout (exponent form when
  // exp < -4 || exp >= 21).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.5e+06"
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  bool neg = mantissa[0] == '-';
  if (neg) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 21) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + eb;
  }
  if (exp < 0) return out + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  const auto int_len = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_len) return out + digits + std::string(int_len - digits.size(), '0');
  return out + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

std::vector<SchemaError> ValidateCustomResource(const JsonSchema& schema, const json::object& obj) {
  Validator v;
  v.Value(schema, json::value(obj), "");
  std::vector<SchemaError> errors = v.Take();
  ListTypeValidator lt;
  lt.Object("", schema, obj);
  for (SchemaError& e : lt.Take()) errors.push_back(std::move(e));
  return errors;
}

void DefaultCustomResource(const JsonSchema& schema, json::object& obj) {
  json::value v(std::move(obj));
  PruneNulls(v, &schema);
  Default(v, &schema);
  obj = std::move(v.get_object());
}

std::vector<std::string> PruneCustomResource(const JsonSchema& schema, json::object& obj) {
  json::value v(std::move(obj));
  Pruner p;
  p.Prune(v, &schema, "", /*root=*/true);
  obj = std::move(v.get_object());
  return p.Take();
}

std::vector<std::string> PruneObjectMeta(json::object& obj) {
  auto it = obj.find("metadata");
  if (it == obj.end() || !it->value().is_object()) return {};
  static const TypeSchema* meta = BuiltinSchemas().FindType(std::string(kMeta) + "ObjectMeta");
  std::vector<std::string> out = PruneUnknownFields(it->value().get_object(), *meta);
  for (std::string& p : out) p = "metadata." + p;
  return out;
}

std::unique_ptr<CustomResourceTypes> BuildTypeSchemas(const JsonSchema* schema,
                                                      const std::string& type_name,
                                                      const std::string& list_type_name) {
  auto out = std::make_unique<CustomResourceTypes>();
  TypeBuilder b(out.get());
  TypeSchema* root = b.NewType(type_name);
  auto scalar = [](const char* name) {
    FieldSchema f;
    f.name = name;
    return f;
  };
  auto message = [](const char* name, std::string_view type) {
    FieldSchema f;
    f.name = name;
    f.value = TypeBuilder::Message(type);
    return f;
  };
  root->fields.push_back(scalar("apiVersion"));
  root->fields.push_back(scalar("kind"));
  root->fields.push_back(message("metadata", std::string(kMeta) + "ObjectMeta"));
  if (schema == nullptr) {
    root->preserve_unknown_fields = true;
  } else {
    root->preserve_unknown_fields = schema->preserve_unknown_fields;
    for (const auto& [prop, sub] : schema->properties) {
      if (prop == "apiVersion" || prop == "kind" || prop == "metadata") continue;
      root->fields.push_back(b.FieldFor(prop, *sub, type_name + "." + prop));
    }
  }
  root->BuildIndex();
  out->root = root;

  TypeSchema* list = b.NewType(list_type_name);
  list->fields.push_back(scalar("apiVersion"));
  list->fields.push_back(scalar("kind"));
  list->fields.push_back(message("metadata", std::string(kMeta) + "ListMeta"));
  FieldSchema items;
  items.name = "items";
  items.repeated = true;
  items.list_type = ListType::kAtomic;
  items.value = {ValueKind::kMessage, root};
  list->fields.push_back(std::move(items));
  list->BuildIndex();
  out->list = list;
  return out;
}

}  // namespace converge::api
