#include "api/schema_registry.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <vector>

#include "api/embedded_data.h"

namespace converge::api {
namespace {

namespace json = boost::json;
using util::InvalidArgument;
using util::Status;
using util::StatusOr;

// Protobuf field numbers above this are rejected: the number index is a dense array.
constexpr int kMaxFieldNumber = 10000;

StatusOr<json::value> ParseJson(std::string_view text, std::string_view what) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return InvalidArgument(std::string(what) + ": " + ec.message());
  return v;
}

std::string_view Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool Bool(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}

std::optional<SpecialType> ParseSpecial(std::string_view s) {
  if (s == "Time") return SpecialType::kTime;
  if (s == "MicroTime") return SpecialType::kMicroTime;
  if (s == "Duration") return SpecialType::kDuration;
  if (s == "Quantity") return SpecialType::kQuantity;
  if (s == "IntOrString") return SpecialType::kIntOrString;
  if (s == "RawExtension") return SpecialType::kRawExtension;
  if (s == "FieldsV1") return SpecialType::kFieldsV1;
  if (s == "StringList") return SpecialType::kStringList;
  return std::nullopt;
}

std::optional<ValueKind> ScalarKind(std::string_view t) {
  if (t == "string") return ValueKind::kString;
  if (t == "bool") return ValueKind::kBool;
  if (t == "int32") return ValueKind::kInt32;
  if (t == "int64") return ValueKind::kInt64;
  if (t == "float") return ValueKind::kFloat;
  if (t == "double") return ValueKind::kDouble;
  if (t == "bytes") return ValueKind::kBytes;
  if (t == "any") return ValueKind::kAny;
  return std::nullopt;
}

ListType ParseListType(std::string_view s) {
  if (s == "atomic") return ListType::kAtomic;
  if (s == "set") return ListType::kSet;
  if (s == "map") return ListType::kMap;
  return ListType::kUnspecified;
}

MapType ParseMapType(std::string_view s) {
  if (s == "atomic") return MapType::kAtomic;
  if (s == "granular") return MapType::kGranular;
  return MapType::kUnspecified;
}

}  // namespace

StatusOr<std::unique_ptr<SchemaRegistry>> SchemaRegistry::Parse(
    std::span<const std::string_view> schema_docs, std::string_view overrides_doc) {
  std::unique_ptr<SchemaRegistry> reg(new SchemaRegistry());

  // Pass 1: create every type, so that references resolve regardless of order.
  std::vector<std::pair<TypeSchema*, const json::object*>> pending;
  std::vector<json::value> docs;
  docs.reserve(schema_docs.size());
  for (std::string_view text : schema_docs) {
    CONVERGE_ASSIGN_OR_RETURN(json::value doc, ParseJson(text, "schema document"));
    docs.push_back(std::move(doc));
  }
  for (const json::value& doc : docs) {
    const json::object* o = doc.if_object();
    const json::object* types =
        o ? (o->contains("types") ? o->at("types").if_object() : nullptr) : nullptr;
    std::string_view package = o ? Str(*o, "package") : std::string_view();
    if (!types || package.empty()) {
      return InvalidArgument("schema document lacks \"package\" or \"types\"");
    }
    for (const auto& [name, body] : *types) {
      std::string full = std::string(package) + "." + std::string(name);
      if (!body.is_object()) return InvalidArgument("type " + full + " is not an object");
      TypeSchema& t = reg->types_.emplace_back();
      t.name = full;
      if (!reg->by_name_.emplace(full, &t).second) {
        return InvalidArgument("type " + full + " is defined twice");
      }
      pending.emplace_back(&t, &body.get_object());
    }
  }

  // Pass 2: fields.
  for (auto& [t, body] : pending) {
    t->atomic_struct = Str(*body, "structType") == "atomic";
    const json::value* fields = body->if_contains("fields");
    if (!fields || !fields->is_array()) return InvalidArgument("type " + t->name + " lacks fields");
    std::set<int> numbers;
    for (const json::value& fv : fields->get_array()) {
      const json::object* fo = fv.if_object();
      if (!fo) return InvalidArgument("type " + t->name + ": a field is not an object");
      FieldSchema f;
      f.name = std::string(Str(*fo, "name"));
      const json::value* num = fo->if_contains("number");
      if (f.name.empty() || !num || !num->is_int64()) {
        return InvalidArgument("type " + t->name + ": a field lacks name or number");
      }
      f.number = static_cast<int>(num->get_int64());
      if (f.number < 0 || f.number > kMaxFieldNumber || !numbers.insert(f.number).second) {
        return InvalidArgument("type " + t->name + ": bad or duplicate field number " +
                               std::to_string(f.number));
      }
      std::string_view type = Str(*fo, "type");
      if (auto kind = ScalarKind(type)) {
        f.value.kind = *kind;
      } else {
        f.value.kind = ValueKind::kMessage;
        f.value.message = reg->FindType(type);
        if (!f.value.message) {
          return InvalidArgument("type " + t->name + "." + f.name + " refers to unknown type " +
                                 std::string(type));
        }
      }
      f.repeated = Bool(*fo, "repeated");
      f.is_map = Bool(*fo, "map");
      f.required = Bool(*fo, "required");
      f.patch_strategy = std::string(Str(*fo, "patchStrategy"));
      f.patch_merge_key = std::string(Str(*fo, "patchMergeKey"));
      f.list_type = ParseListType(Str(*fo, "listType"));
      f.map_type = ParseMapType(Str(*fo, "mapType"));
      if (const json::value* keys = fo->if_contains("listMapKeys"); keys && keys->is_array()) {
        for (const json::value& k : keys->get_array()) {
          if (k.is_string()) f.list_map_keys.emplace_back(k.get_string());
        }
      }
      if (const json::value* d = fo->if_contains("default")) f.default_json = json::serialize(*d);
      t->fields.push_back(std::move(f));
    }
  }

  CONVERGE_ASSIGN_OR_RETURN(json::value overrides, ParseJson(overrides_doc, "overrides"));
  if (!overrides.is_object()) return InvalidArgument("overrides: not an object");
  const json::object& ov = overrides.get_object();
  auto section = [&](std::string_view key) -> const json::object* {
    const json::value* v = ov.if_contains(key);
    return v ? v->if_object() : nullptr;
  };
  auto find_mutable = [&](std::string_view name) -> TypeSchema* {
    auto it = reg->by_name_.find(name);
    return it == reg->by_name_.end() ? nullptr : it->second;
  };

  if (const json::object* special = section("special")) {
    for (const auto& [name, kind] : *special) {
      TypeSchema* t = find_mutable(name);
      auto sp = kind.is_string() ? ParseSpecial(kind.get_string()) : std::nullopt;
      if (!t || !sp) return InvalidArgument("overrides.special: bad entry " + std::string(name));
      t->special = *sp;
    }
  }

  if (const json::object* nullable = section("nullable")) {
    for (const auto& [name, list] : *nullable) {
      TypeSchema* t = find_mutable(name);
      if (!t || !list.is_array()) {
        return InvalidArgument("overrides.nullable: unknown type " + std::string(name));
      }
      for (const json::value& fname : list.get_array()) {
        if (!fname.is_string()) return InvalidArgument("overrides.nullable: bad field name");
        if (fname.get_string() == "*") {
          for (FieldSchema& f : t->fields) f.nullable_scalar = true;
          continue;
        }
        bool found = false;
        for (FieldSchema& f : t->fields) {
          if (f.name == fname.get_string()) {
            f.nullable_scalar = true;
            found = true;
          }
        }
        if (!found) {
          return InvalidArgument("overrides.nullable: " + std::string(name) + " has no field " +
                                 std::string(fname.get_string()));
        }
      }
    }
  }

  if (const json::object* inl = section("inline")) {
    // Flattens type `name`'s inline fields, first flattening the embedded types themselves.
    std::set<std::string, std::less<>> done, in_progress;
    std::function<Status(std::string_view)> flatten = [&](std::string_view name) -> Status {
      if (done.contains(name)) return Status::Ok();
      if (!in_progress.emplace(name).second) {
        return InvalidArgument("overrides.inline: cycle at " + std::string(name));
      }
      TypeSchema* t = find_mutable(name);
      const json::value* list = inl->if_contains(name);
      if (!t || !list || !list->is_array()) {
        return InvalidArgument("overrides.inline: unknown type " + std::string(name));
      }
      for (const json::value& fname : list->get_array()) {
        auto it = std::find_if(t->fields.begin(), t->fields.end(), [&](const FieldSchema& f) {
          return fname.is_string() && f.name == fname.get_string();
        });
        if (it == t->fields.end() || it->value.kind != ValueKind::kMessage || it->repeated ||
            it->is_map) {
          return InvalidArgument("overrides.inline: " + std::string(name) +
                                 " has no single message field " + json::serialize(fname));
        }
        const TypeSchema* embedded = it->value.message;
        if (inl->contains(embedded->name)) CONVERGE_RETURN_IF_ERROR(flatten(embedded->name));
        t->inline_embeds.push_back({it->number, embedded});
        std::vector<FieldSchema> copies = embedded->fields;
        for (FieldSchema& c : copies) c.number = 0;
        size_t pos = static_cast<size_t>(it - t->fields.begin());
        t->fields.erase(it);
        t->fields.insert(t->fields.begin() + static_cast<std::ptrdiff_t>(pos),
                         std::make_move_iterator(copies.begin()),
                         std::make_move_iterator(copies.end()));
      }
      in_progress.erase(in_progress.find(name));
      done.emplace(name);
      return Status::Ok();
    };
    for (const auto& entry : *inl) CONVERGE_RETURN_IF_ERROR(flatten(entry.key()));
  }

  for (TypeSchema& t : reg->types_) {
    std::set<std::string_view> names;
    for (const FieldSchema& f : t.fields) {
      if (!names.insert(f.name).second) {
        return InvalidArgument("type " + t.name + " has two fields named " + f.name);
      }
    }
    t.BuildIndex();
  }
  return reg;
}

const TypeSchema* SchemaRegistry::FindType(std::string_view full_name) const {
  auto it = by_name_.find(full_name);
  return it == by_name_.end() ? nullptr : it->second;
}

const SchemaRegistry& BuiltinSchemas() {
  static const SchemaRegistry* registry = [] {
    std::vector<std::string_view> docs;
    for (const EmbeddedFile& f : EmbeddedApiFiles()) {
      if (f.path.starts_with("schema/")) docs.push_back(f.contents);
    }
    auto overrides = FindEmbeddedApiFile("overrides.json");
    auto reg = SchemaRegistry::Parse(docs, overrides.value_or(""));
    if (!reg.ok()) util::AbortWithStatus("embedded schema data is broken", reg.status());
    return std::move(reg).value().release();
  }();
  return *registry;
}

}  // namespace converge::api
