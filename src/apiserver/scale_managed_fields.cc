#include "apiserver/scale_managed_fields.h"

#include <utility>

namespace converge::apiserver {

namespace {

constexpr std::string_view kScaleGroupVersion = "autoscaling/v1";

const api::Path& ReplicasPathInScale() {
  static const api::Path* path =
      new api::Path{api::PathElement::Field("spec"), api::PathElement::Field("replicas")};
  return *path;
}

}  // namespace

api::Path ReplicasPathFromJsonPath(std::string_view json_path) {
  if (json_path.starts_with('.')) json_path.remove_prefix(1);
  api::Path path;
  while (!json_path.empty()) {
    const size_t dot = json_path.find('.');
    path.push_back(api::PathElement::Field(std::string(json_path.substr(0, dot))));
    if (dot == std::string_view::npos) break;
    json_path.remove_prefix(dot + 1);
  }
  return path;
}

ManagedFields ScaleManagedFieldsFromParent(const ManagedFields& parent,
                                           const ReplicasPaths& paths) {
  ManagedFields out;
  for (const auto& [id, fields] : parent.fields) {
    auto mapping = paths.find(fields.api_version);
    // Entries in a version without a known replicas field are not the Scale's business.
    if (mapping == paths.end() || !mapping->second) continue;
    if (!fields.set.Has(*mapping->second)) continue;
    out.fields[id] = ManagerFields{api::FieldSet::FromPaths({ReplicasPathInScale()}),
                                   std::string(kScaleGroupVersion), fields.applied};
    if (auto t = parent.times.find(id); t != parent.times.end()) out.times[id] = t->second;
  }
  return out;
}

ManagedFields ParentManagedFieldsFromScale(const ManagedFields& parent, const ManagedFields& scale,
                                           const ReplicasPaths& paths,
                                           std::string_view group_version) {
  ManagedFields out;
  std::map<std::string, ManagerFields> scale_fields = scale.fields;
  auto keep = [&](const std::string& id, ManagerFields fields) {
    out.fields[id] = std::move(fields);
    if (auto t = parent.times.find(id); t != parent.times.end()) {
      out.times[id] = t->second;
    } else {
      out.times.erase(id);
    }
  };
  for (const auto& [id, fields] : parent.fields) {
    auto mapping = paths.find(fields.api_version);
    if (mapping == paths.end()) continue;  // upstream drops entries of unknown versions
    const std::optional<api::Path>& path = mapping->second;
    if (!path || !fields.set.Has(*path)) {
      keep(id, fields);
      continue;
    }
    if (!scale_fields.contains(id)) {
      // The write through /scale took the replicas field away from this manager.
      api::FieldSet rest = fields.set.Difference(api::FieldSet::FromPaths({*path}));
      if (!rest.Empty())
        keep(id, ManagerFields{std::move(rest), fields.api_version, fields.applied});
    } else {
      keep(id, fields);
      scale_fields.erase(id);
    }
  }
  auto mapping = paths.find(group_version);
  for (const auto& [id, fields] : scale_fields) {
    if (!fields.set.Has(ReplicasPathInScale())) continue;
    if (mapping == paths.end() || !mapping->second) continue;
    keep(id, ManagerFields{api::FieldSet::FromPaths({*mapping->second}), std::string(group_version),
                           fields.applied});
  }
  return out;
}

}  // namespace converge::apiserver
