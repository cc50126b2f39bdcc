// The strategy of every custom resource (upstream's apiextensions customResourceStrategy and
// statusStrategy): the CRD version's structural schema prunes, defaults and validates; status
// is a subresource when the CRD says so; generation moves with every change outside metadata
// (and outside status when status is a subresource).
#include "api/custom_resource.h"
#include "apiserver/strategy.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

// Everything but metadata: upstream's copyNonMetadata comparison for the generation.
bool EqualOutsideMetadata(const api::Object& a, const api::Object& b) {
  const json::object& x = a.doc();
  const json::object& y = b.doc();
  size_t nx = 0;
  for (const auto& [k, v] : x) {
    if (k == "metadata") continue;
    ++nx;
    auto it = y.find(k);
    if (it == y.end() || it->value() != v) return false;
  }
  size_t ny = 0;
  for (const auto& [k, v] : y) ny += k != "metadata";
  return nx == ny;
}

// An int64 at a dotted scale path (".spec.replicas"); nullopt when absent, an error message when
// present but not an integer.
std::optional<int64_t> NestedInt(const json::object& obj, std::string_view path,
                                 std::string* error) {
  if (path.starts_with('.')) path.remove_prefix(1);
  const json::value* v = nullptr;
  const json::object* cur = &obj;
  size_t start = 0;
  while (cur != nullptr) {
    size_t dot = path.find('.', start);
    std::string_view part =
        path.substr(start, dot == std::string_view::npos ? path.npos : dot - start);
    v = cur->if_contains(part);
    if (v == nullptr) return std::nullopt;
    if (dot == std::string_view::npos) break;
    cur = v->if_object();
    start = dot + 1;
    if (cur == nullptr) return std::nullopt;
  }
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  *error = std::string(path) + " accessor error: " + json::serialize(*v) + " is of the type " +
           (v->is_double()   ? "float64"
            : v->is_string() ? "string"
                             : "interface {}") +
           ", expected int64";
  return std::nullopt;
}

class CustomResourceStrategy : public Strategy {
 public:
  explicit CustomResourceStrategy(ResourceInfoPtr info) : Strategy(info), crd_(info->crd) {}

  // Pruning and defaulting run on every write (upstream prunes and defaults while decoding the
  // request and the patched result): unknown fields never reach storage.
  void Default(api::Object& obj) const override {
    if (!crd_->schema) return;
    api::PruneCustomResource(*crd_->schema, obj.mutable_doc());
    api::PruneObjectMeta(obj.mutable_doc());
    api::DefaultCustomResource(*crd_->schema, obj.mutable_doc());
  }

  void PrepareForCreate(api::Object& obj) const override {
    if (HasStatusSubresource()) obj.mutable_doc().erase("status");
    obj.set_generation(1);
    // Objects are stored in the storage version (the served versions differ only in apiVersion).
    obj.SetGvk({info().gvr.group, info().storage_version, info().kind});
  }

  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    if (HasStatusSubresource()) {
      json::object& doc = obj.mutable_doc();
      if (auto it = old.doc().find("status"); it != old.doc().end()) {
        doc["status"] = it->value();
      } else {
        doc.erase("status");
      }
    }
    Default(obj);
    int64_t gen = old.generation();
    if (!EqualOutsideMetadata(obj, old)) ++gen;
    obj.set_generation(gen);
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    sv::Causes out = SchemaCauses(obj);
    if (crd_->scale) {
      ValidateReplicas(obj, crd_->scale->spec_replicas_path, &out);
    }
    return out;
  }
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object&) const override {
    return Validate(obj);
  }
  // The status strategy validates the schema and the status replicas, not the spec's.
  std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                const api::Object&) const override {
    sv::Causes out = SchemaCauses(obj);
    if (crd_->scale) ValidateReplicas(obj, crd_->scale->status_replicas_path, &out);
    return out;
  }

  bool TracksGeneration() const override { return true; }

 private:
  sv::Causes SchemaCauses(const api::Object& obj) const {
    sv::Causes out;
    if (!crd_->schema) return out;
    for (api::SchemaError& e : api::ValidateCustomResource(*crd_->schema, obj.doc())) {
      out.push_back({std::move(e.reason), std::move(e.message), std::move(e.field)});
    }
    return out;
  }

  // ValidateScaleSpec / ValidateScaleStatus: the replicas path holds a non-negative int32.
  static void ValidateReplicas(const api::Object& obj, const std::string& path, sv::Causes* out) {
    if (path.empty()) return;
    std::string error;
    std::optional<int64_t> n = NestedInt(obj.doc(), path, &error);
    if (!error.empty()) {
      out->push_back(FieldInvalid(path, json::value(0), error));
    } else if (n && *n < 0) {
      out->push_back(FieldInvalid(path, json::value(*n), "should be a non-negative integer"));
    } else if (n && *n > 2147483647) {
      out->push_back(
          FieldInvalid(path, json::value(*n), "should be less than or equal to 2147483647"));
    }
  }

  std::shared_ptr<const api::CustomResourceInfo> crd_;
};

}  // namespace

std::shared_ptr<const Strategy> MakeCustomResourceStrategy(ResourceInfoPtr info) {
  if (!info->custom || !info->crd) return nullptr;
  return std::make_shared<CustomResourceStrategy>(std::move(info));
}

}  // namespace converge::apiserver
