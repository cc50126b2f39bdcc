#include "apiserver/strategy.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"
#include "api/merge_patch.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

bool LowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool IsLabelShape(std::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return LowerAlnum(c) || c == '-'; });
}

// Everything but metadata and status: what a "spec change" means for generation tracking.
bool SpecEqual(const api::Object& a, const api::Object& b) {
  const json::object& x = a.doc();
  const json::object& y = b.doc();
  auto skip = [](std::string_view k) {
    return k == "metadata" || k == "status" || k == "apiVersion" || k == "kind";
  };
  size_t nx = 0;
  for (const auto& [k, v] : x) {
    if (skip(k)) continue;
    ++nx;
    auto it = y.find(k);
    if (it == y.end() || !api::JsonEqual(it->value(), v)) return false;
  }
  size_t ny = 0;
  for (const auto& [k, v] : y) {
    if (!skip(k)) ++ny;
  }
  return nx == ny;
}

}  // namespace

std::vector<std::string> IsDnsSubdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 253) errs.push_back("must be no more than 253 characters");
  bool ok = !value.empty();
  size_t start = 0;
  while (ok && start <= value.size()) {
    size_t dot = value.find('.', start);
    std::string_view part =
        value.substr(start, dot == std::string_view::npos ? value.npos : dot - start);
    if (!IsLabelShape(part)) ok = false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (!ok) {
    errs.push_back(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
        "used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return errs;
}

std::vector<std::string> IsDnsLabel(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back("must be no more than 63 characters");
  if (!IsLabelShape(value)) {
    errs.push_back(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

std::vector<StatusCause> ValidateObjectMeta(const api::Object& obj, bool namespaced,
                                            Strategy::NameRule rule) {
  std::vector<StatusCause> causes;
  std::string_view name = obj.name();
  if (name.empty()) {
    if (obj.generate_name().empty()) {
      causes.push_back(FieldRequired("metadata.name", "name or generateName is required"));
    }
  } else {
    std::vector<std::string> errs;
    switch (rule) {
      case Strategy::NameRule::kDnsSubdomain: errs = IsDnsSubdomain(name); break;
      case Strategy::NameRule::kDnsLabel: errs = IsDnsLabel(name); break;
      case Strategy::NameRule::kPathSegment: errs = sv::IsValidPathSegmentName(name); break;
      case Strategy::NameRule::kDns1035Label: errs = sv::IsDns1035Label(name); break;
      case Strategy::NameRule::kNone: break;
    }
    for (auto& e : errs) causes.push_back(FieldInvalidString("metadata.name", name, e));
  }
  if (namespaced) {
    if (obj.namespace_().empty()) {
      causes.push_back(FieldRequired("metadata.namespace"));
    } else {
      for (auto& e : IsDnsLabel(obj.namespace_())) {
        causes.push_back(FieldInvalidString("metadata.namespace", obj.namespace_(), e));
      }
    }
  } else if (!obj.namespace_().empty()) {
    causes.push_back(FieldForbidden("metadata.namespace", "not allowed on this type"));
  }
  if (const json::object* labels = api::FindObject(obj.doc(), {"metadata", "labels"})) {
    for (const auto& [k, v] : *labels) {
      for (auto& e : api::ValidateQualifiedName(k)) {
        causes.push_back(FieldInvalidString("metadata.labels", k, e));
      }
      if (!v.is_string()) {
        causes.push_back(FieldInvalid("metadata.labels", v, "label values must be strings"));
        continue;
      }
      for (auto& e : api::ValidateLabelValue(v.get_string())) {
        causes.push_back(FieldInvalidString("metadata.labels", v.get_string(), e));
      }
    }
  }
  if (const json::object* ann = api::FindObject(obj.doc(), {"metadata", "annotations"})) {
    size_t total = 0;
    for (const auto& [k, v] : *ann) {
      for (auto& e : api::ValidateQualifiedName(k)) {
        causes.push_back(FieldInvalidString("metadata.annotations", k, e));
      }
      total += k.size() + (v.is_string() ? v.get_string().size() : 0);
    }
    if (total > 256 * 1024) {
      causes.push_back(FieldTooLong("metadata.annotations", 256 * 1024));
    }
  }
  if (const json::array* refs = api::FindArray(obj.doc(), {"metadata", "ownerReferences"})) {
    int controllers = 0;
    for (size_t i = 0; i < refs->size(); ++i) {
      std::string path = "metadata.ownerReferences[" + std::to_string(i) + "]";
      if (!(*refs)[i].is_object()) {
        causes.push_back(FieldInvalid(path, (*refs)[i], "must be an object"));
        continue;
      }
      const json::object& r = (*refs)[i].get_object();
      for (const char* f : {"apiVersion", "kind", "name", "uid"}) {
        if (api::Object::GetString(r, f).empty()) {
          causes.push_back(FieldRequired(path + "." + f));
        }
      }
      if (auto it = r.find("controller");
          it != r.end() && it->value().is_bool() && it->value().get_bool()) {
        ++controllers;
      }
    }
    if (controllers > 1) {
      causes.push_back(FieldInvalid("metadata.ownerReferences", json::value(*refs),
                                    "Only one reference can have Controller set to true"));
    }
  }
  if (const json::array* fin = api::FindArray(obj.doc(), {"metadata", "finalizers"})) {
    for (size_t i = 0; i < fin->size(); ++i) {
      const json::value& f = (*fin)[i];
      std::string path = "metadata.finalizers[" + std::to_string(i) + "]";
      if (!f.is_string()) {
        causes.push_back(FieldInvalid(path, f, "must be a string"));
        continue;
      }
      for (auto& e : api::ValidateQualifiedName(f.get_string())) {
        causes.push_back(FieldInvalidString(path, f.get_string(), e));
      }
    }
  }
  return causes;
}

std::vector<StatusCause> ValidateObjectMetaUpdate(const api::Object& obj, const api::Object& old) {
  std::vector<StatusCause> causes;
  auto immutable = [&](std::string_view field, std::string_view now, std::string_view before) {
    if (now != before) {
      causes.push_back(
          FieldInvalidString("metadata." + std::string(field), now, "field is immutable"));
    }
  };
  immutable("name", obj.name(), old.name());
  immutable("namespace", obj.namespace_(), old.namespace_());
  immutable("uid", obj.uid(), old.uid());
  // A new finalizer cannot be added once deletion started (it could block forever).
  if (old.being_deleted()) {
    if (const json::array* fin = api::FindArray(obj.doc(), {"metadata", "finalizers"})) {
      for (const json::value& f : *fin) {
        if (f.is_string() && !old.HasFinalizer(f.get_string())) {
          causes.push_back(FieldForbidden("metadata.finalizers",
                                          "no new finalizers can be added if the object is being "
                                          "deleted, found new finalizers [\"" +
                                              std::string(f.get_string()) + "\"]"));
        }
      }
    }
  }
  return causes;
}

void Strategy::Default(api::Object&) const {}

bool Strategy::TracksGeneration() const {
  const std::string& g = info_->gvr.group;
  return info_->custom || g == "apps" || g == "batch" || g == "policy" ||
         g == "networking.k8s.io" || g == "apiextensions.k8s.io";
}

void Strategy::PrepareForCreate(api::Object& obj) const {
  if (HasStatusSubresource()) obj.mutable_doc().erase("status");
  if (TracksGeneration()) obj.set_generation(1);
}

void Strategy::PrepareForUpdate(api::Object& obj, const api::Object& old) const {
  if (HasStatusSubresource()) sv::CopyField(obj.mutable_doc(), old.doc(), "status");
  if (TracksGeneration()) {
    // Default first (idempotent): a client that omits defaulted fields has not changed the spec.
    Default(obj);
    int64_t gen = old.generation();
    if (!SpecEqual(obj, old)) ++gen;
    obj.set_generation(gen);
  }
}

namespace {

// Makes `to` equal to `from` except for the members named in `keep`, which stay as they are. In
// place, member by member: `to` is usually `from` with a few changes.
void CopyAllBut(json::object& to, const json::object& from,
                std::initializer_list<std::string_view> keep) {
  auto kept = [&keep](std::string_view key) {
    return std::find(keep.begin(), keep.end(), key) != keep.end();
  };
  std::vector<std::string> extra;
  for (const auto& m : to) {
    if (!kept(m.key()) && !from.contains(m.key())) extra.emplace_back(m.key());
  }
  for (const std::string& k : extra) to.stable_erase(k);
  for (const auto& m : from) {
    if (!kept(m.key())) sv::CopyField(to, from, m.key());
  }
}

}  // namespace

void Strategy::PrepareForStatusUpdate(api::Object& obj, const api::Object& old) const {
  // Only status moves through /status: everything else comes from the stored object, except the
  // concurrency token the client sent.
  json::object& doc = obj.mutable_doc();
  CopyAllBut(doc, old.doc(), {"status", "metadata"});
  if (const json::value* status = doc.if_contains("status"); status && status->is_null()) {
    doc.erase("status");
  }
  CopyAllBut(obj.mutable_metadata(), sv::Metadata(old), {"resourceVersion"});
}

std::vector<StatusCause> Strategy::Validate(const api::Object&) const {
  return {};
}

std::vector<StatusCause> Strategy::ValidateUpdate(const api::Object& obj,
                                                  const api::Object&) const {
  return Validate(obj);
}

std::vector<StatusCause> Strategy::ValidateStatusUpdate(const api::Object&,
                                                        const api::Object&) const {
  return {};
}

bool Strategy::ReadyToDelete(const api::Object& obj) const {
  const json::array* f = api::FindArray(obj.doc(), {"metadata", "finalizers"});
  return f == nullptr || f->empty();
}

int64_t Strategy::GracePeriod(const api::Object&, std::optional<int64_t>) const {
  return 0;
}

}  // namespace converge::apiserver
