#include "api/object.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "util/metrics.h"

namespace converge::api {
namespace {

util::Counter& Materializations() {
  static util::Counter& counter =
      util::DefaultRegistry()
          .AddCounter({"converge_compact_objects_materialized_total",
                       "Times a compact object (a version in-process informers share) was asked "
                       "for its Boost.JSON tree and built one; readers that use views build none.",
                       {}})
          .WithLabelValues({});
  return counter;
}

}  // namespace

uint64_t CompactMaterializations() {
  return static_cast<uint64_t>(Materializations().Value());
}

Object::Object(const Object& other) : doc_(other.doc_), compact_(other.compact_) {}

Object::Object(Object&& other) noexcept
    : doc_(std::move(other.doc_)),
      compact_(std::move(other.compact_)),
      materialized_(other.materialized_.exchange(nullptr, std::memory_order_relaxed)) {}

Object& Object::operator=(const Object& other) {
  if (this != &other) *this = Object(other);
  return *this;
}

Object& Object::operator=(Object&& other) noexcept {
  if (this != &other) {
    doc_ = std::move(other.doc_);
    compact_ = std::move(other.compact_);
    delete materialized_.exchange(other.materialized_.exchange(nullptr, std::memory_order_relaxed),
                                  std::memory_order_relaxed);
  }
  return *this;
}

Object::~Object() {
  delete materialized_.load(std::memory_order_relaxed);
}

Object Object::Compact(const json::object& doc) {
  if (CompactTree tree = CompactTree::Build(doc)) return Object(std::move(tree));
  return Object(doc);
}

const json::object& Object::Materialized() const {
  if (json::object* built = materialized_.load(std::memory_order_acquire)) return *built;
  auto fresh = std::make_unique<json::object>(ToJson(compact_.root()));
  json::object* expected = nullptr;
  if (materialized_.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) {
    Materializations().Inc();
    return *fresh.release();
  }
  return *expected;  // another reader built it first
}

json::object& Object::mutable_doc() {
  if (compact_) {
    json::object* built = materialized_.exchange(nullptr, std::memory_order_relaxed);
    doc_ = built != nullptr ? std::move(*built) : ToJson(compact_.root());
    delete built;
    compact_ = CompactTree();
  }
  return doc_;
}

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
  mutable_doc();
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

json::object& Object::mutable_metadata() {
  return EnsureObject(mutable_doc(), "metadata");
}

int64_t Object::generation() const {
  const View g = metadata().if_contains("generation");
  if (std::optional<int64_t> i = g.if_int64()) return *i;
  if (std::optional<uint64_t> u = g.if_uint64()) return static_cast<int64_t>(*u);
  return 0;
}

std::optional<std::string_view> Object::label(std::string_view key) const {
  return labels().if_contains(key).if_string();
}

std::optional<std::string_view> Object::annotation(std::string_view key) const {
  return annotations().if_contains(key).if_string();
}

bool Object::HasFinalizer(std::string_view finalizer) const {
  for (View v : finalizers()) {
    if (v.if_string() == finalizer) return true;
  }
  return false;
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
  return api::GetString(metadata(), key);
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

std::string FieldValue(ObjectView o, std::string_view dotted_path) {
  ObjectView cur = o;
  while (true) {
    auto dot = dotted_path.find('.');
    std::string_view part = dotted_path.substr(0, dot);
    View v = cur.if_contains(part);
    if (!v) return "";
    if (dot == std::string_view::npos) {
      if (std::optional<std::string_view> s = v.if_string()) return std::string(*s);
      if (std::optional<bool> b = v.if_bool()) return *b ? "true" : "false";
      if (std::optional<int64_t> i = v.if_int64()) return std::to_string(*i);
      if (std::optional<uint64_t> u = v.if_uint64()) return std::to_string(*u);
      return "";
    }
    cur = v.if_object();
    if (!cur) return "";
    dotted_path.remove_prefix(dot + 1);
  }
}

json::object& EnsureObject(json::object& obj, std::string_view key) {
  json::value& v = obj[key];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}

}  // namespace converge::api
