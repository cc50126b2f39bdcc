#include "api/object.h"

#include <algorithm>
#include <charconv>

namespace converge::api {

util::StatusOr<Object> Object::Parse(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return util::InvalidArgument("invalid JSON: " + ec.message());
  if (!v.is_object()) return util::InvalidArgument("invalid JSON: the document is not an object");
  return Object(std::move(v.get_object()));
}

GroupVersionKind Object::Gvk() const {
  GroupVersion gv = GroupVersion::Parse(api_version());
  return {std::move(gv.group), std::move(gv.version), std::string(kind())};
}

void Object::SetGvk(const GroupVersionKind& gvk) {
  if (doc_.contains("apiVersion") && doc_.contains("kind")) {
    doc_["apiVersion"] = gvk.ApiVersion();
    doc_["kind"] = gvk.kind;
    return;
  }
  // Keep kind and apiVersion first, as upstream serializes them.
  json::object out(doc_.storage());
  out.reserve(doc_.size() + 2);
  out["kind"] = gvk.kind;
  out["apiVersion"] = gvk.ApiVersion();
  for (auto& [k, v] : doc_) {
    if (k != "kind" && k != "apiVersion") out[k] = std::move(v);
  }
  doc_ = std::move(out);
}

const json::object* Object::metadata() const {
  auto it = doc_.find("metadata");
  if (it == doc_.end() || !it->value().is_object()) return nullptr;
  return &it->value().get_object();
}

json::object& Object::mutable_metadata() {
  return EnsureObject(doc_, "metadata");
}

int64_t Object::generation() const {
  const json::object* m = metadata();
  if (!m) return 0;
  auto it = m->find("generation");
  if (it == m->end()) return 0;
  if (it->value().is_int64()) return it->value().get_int64();
  if (it->value().is_uint64()) return static_cast<int64_t>(it->value().get_uint64());
  return 0;
}

std::optional<std::string_view> Object::label(std::string_view key) const {
  const json::object* l = labels();
  if (!l) return std::nullopt;
  auto it = l->find(key);
  if (it == l->end() || !it->value().is_string()) return std::nullopt;
  return std::string_view(it->value().get_string());
}

std::optional<std::string_view> Object::annotation(std::string_view key) const {
  const json::object* a = annotations();
  if (!a) return std::nullopt;
  auto it = a->find(key);
  if (it == a->end() || !it->value().is_string()) return std::nullopt;
  return std::string_view(it->value().get_string());
}

const json::array* Object::owner_references() const {
  const json::object* m = metadata();
  if (!m) return nullptr;
  auto it = m->find("ownerReferences");
  if (it == m->end() || !it->value().is_array()) return nullptr;
  return &it->value().get_array();
}

const json::array* Object::finalizers() const {
  const json::object* m = metadata();
  if (!m) return nullptr;
  auto it = m->find("finalizers");
  if (it == m->end() || !it->value().is_array()) return nullptr;
  return &it->value().get_array();
}

bool Object::HasFinalizer(std::string_view finalizer) const {
  const json::array* f = finalizers();
  if (!f) return false;
  return std::any_of(f->begin(), f->end(), [&](const json::value& v) {
    return v.is_string() && v.get_string() == finalizer;
  });
}

// Setters copy their arguments first: callers may pass views into this very document (e.g.
// SetLabel("name", obj.name())), which the mutation could move.
void Object::SetLabel(std::string_view key, std::string_view value) {
  std::string k(key), v(value);
  EnsureObject(mutable_metadata(), "labels")[k] = v;
}

void Object::SetAnnotation(std::string_view key, std::string_view value) {
  std::string k(key), v(value);
  EnsureObject(mutable_metadata(), "annotations")[k] = v;
}

bool Object::AddFinalizer(std::string_view finalizer_view) {
  std::string finalizer(finalizer_view);
  if (HasFinalizer(finalizer)) return false;
  json::object& m = mutable_metadata();
  json::value& f = m["finalizers"];
  if (!f.is_array()) f = json::array();
  f.get_array().emplace_back(finalizer);
  return true;
}

bool Object::RemoveFinalizer(std::string_view finalizer) {
  if (!HasFinalizer(finalizer)) return false;
  json::array& f = mutable_metadata()["finalizers"].get_array();
  f.erase(std::remove_if(
              f.begin(), f.end(),
              [&](const json::value& v) { return v.is_string() && v.get_string() == finalizer; }),
          f.end());
  if (f.empty()) mutable_metadata().erase("finalizers");
  return true;
}

std::string_view Object::GetString(const json::object& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->value().is_string()) return {};
  return it->value().get_string();
}

std::string_view Object::MetaString(std::string_view key) const {
  const json::object* m = metadata();
  return m ? GetString(*m, key) : std::string_view();
}

const json::object* Object::MetaObject(std::string_view key) const {
  const json::object* m = metadata();
  if (!m) return nullptr;
  auto it = m->find(key);
  if (it == m->end() || !it->value().is_object()) return nullptr;
  return &it->value().get_object();
}

void Object::SetMetaString(std::string_view key, std::string_view value) {
  std::string v(value);
  mutable_metadata()[key] = std::move(v);
}

const json::value* Find(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* cur = &v;
  for (std::string_view p : path) {
    if (!cur->is_object()) return nullptr;
    const json::object& o = cur->get_object();
    auto it = o.find(p);
    if (it == o.end()) return nullptr;
    cur = &it->value();
  }
  return cur;
}

const json::value* Find(const json::object& o, std::initializer_list<std::string_view> path) {
  if (path.size() == 0) return nullptr;
  auto first = path.begin();
  auto it = o.find(*first);
  if (it == o.end()) return nullptr;
  const json::value* cur = &it->value();
  for (auto p = first + 1; p != path.end(); ++p) {
    if (!cur->is_object()) return nullptr;
    const json::object& obj = cur->get_object();
    auto child = obj.find(*p);
    if (child == obj.end()) return nullptr;
    cur = &child->value();
  }
  return cur;
}

std::string_view FindString(const json::object& o, std::initializer_list<std::string_view> path,
                            std::string_view fallback) {
  const json::value* v = Find(o, path);
  if (!v || !v->is_string()) return fallback;
  return v->get_string();
}

int64_t FindInt(const json::object& o, std::initializer_list<std::string_view> path,
                int64_t fallback) {
  const json::value* v = Find(o, path);
  if (!v) return fallback;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->get_double());
  return fallback;
}

bool FindBool(const json::object& o, std::initializer_list<std::string_view> path, bool fallback) {
  const json::value* v = Find(o, path);
  if (!v || !v->is_bool()) return fallback;
  return v->get_bool();
}

const json::object* FindObject(const json::object& o,
                               std::initializer_list<std::string_view> path) {
  const json::value* v = Find(o, path);
  if (!v || !v->is_object()) return nullptr;
  return &v->get_object();
}

const json::array* FindArray(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = Find(o, path);
  if (!v || !v->is_array()) return nullptr;
  return &v->get_array();
}

std::string FieldValue(const json::object& o, std::string_view dotted_path) {
  const json::object* cur = &o;
  while (true) {
    auto dot = dotted_path.find('.');
    std::string_view part = dotted_path.substr(0, dot);
    auto it = cur->find(part);
    if (it == cur->end()) return "";
    const json::value& v = it->value();
    if (dot == std::string_view::npos) {
      if (v.is_string()) return std::string(v.get_string());
      if (v.is_bool()) return v.get_bool() ? "true" : "false";
      if (v.is_int64()) return std::to_string(v.get_int64());
      if (v.is_uint64()) return std::to_string(v.get_uint64());
      return "";
    }
    if (!v.is_object()) return "";
    cur = &v.get_object();
    dotted_path.remove_prefix(dot + 1);
  }
}

json::object& EnsureObject(json::object& obj, std::string_view key) {
  json::value& v = obj[key];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}

}  // namespace converge::api
