// Helpers for the strategy tests: resource descriptions, JSON objects from literals, and the
// create/update sequences the generic storage runs (strategy.h), with causes rendered as
// "field: message" lines (what kubectl prints for a 422).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/resource.h"
#include "apiserver/strategy.h"

namespace converge::apiserver::testing {

inline std::shared_ptr<const api::ResourceInfo> Info(std::string group, std::string version,
                                                     std::string resource, std::string kind,
                                                     bool namespaced = true,
                                                     std::vector<std::string> subresources = {}) {
  auto info = std::make_shared<api::ResourceInfo>();
  info->gvr = {std::move(group), std::move(version), std::move(resource)};
  info->kind = std::move(kind);
  info->namespaced = namespaced;
  for (auto& s : subresources) info->subresources.push_back({s, {}, {"get", "update", "patch"}});
  return info;
}

inline api::Object Obj(std::string_view json) {
  auto parsed = api::Object::Parse(json);
  EXPECT_TRUE(parsed.ok()) << json;
  return parsed.ok() ? std::move(parsed).value() : api::Object();
}

inline std::vector<std::string> Lines(const std::vector<StatusCause>& causes) {
  std::vector<std::string> out;
  for (const auto& c : causes)
    out.push_back(c.field.empty() ? c.message : c.field + ": " + c.message);
  return out;
}

// The storage layer's create sequence after BeforeCreate: PrepareForCreate, Default, then
// ObjectMeta and kind validation. Returns the causes; `obj` is left as it would be stored.
inline std::vector<std::string> Create(const Strategy& s, api::Object& obj) {
  s.PrepareForCreate(obj);
  s.Default(obj);
  auto causes = ValidateObjectMeta(obj, s.info().namespaced, s.name_rule());
  auto kind = s.Validate(obj);
  causes.insert(causes.end(), kind.begin(), kind.end());
  return Lines(causes);
}

// The update sequence through the main resource.
inline std::vector<std::string> Update(const Strategy& s, api::Object& obj,
                                       const api::Object& old) {
  s.PrepareForUpdate(obj, old);
  s.Default(obj);
  auto causes = ValidateObjectMetaUpdate(obj, old);
  auto kind = s.ValidateUpdate(obj, old);
  causes.insert(causes.end(), kind.begin(), kind.end());
  return Lines(causes);
}

// The update sequence through /status.
inline std::vector<std::string> StatusUpdate(const Strategy& s, api::Object& obj,
                                             const api::Object& old) {
  s.PrepareForStatusUpdate(obj, old);
  s.Default(obj);
  auto causes = ValidateObjectMetaUpdate(obj, old);
  auto kind = s.ValidateStatusUpdate(obj, old);
  causes.insert(causes.end(), kind.begin(), kind.end());
  return Lines(causes);
}

inline std::string Json(const api::Object& o, std::initializer_list<std::string_view> path) {
  const boost::json::value* v = api::Find(o.doc(), path);
  return v ? boost::json::serialize(*v) : "<absent>";
}

}  // namespace converge::apiserver::testing
