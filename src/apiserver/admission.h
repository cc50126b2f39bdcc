// Admission: the mutating-then-validating chain every write passes after decoding and before
// storage (seed §三 step 2). Plugins see the object (mutable in the mutating phase), the old
// object on updates, and who is asking.
//
// Thread-safety: plugins are shared by all requests; Admit/Validate must be thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/resource.h"
#include "apiserver/errors.h"
#include "apiserver/request.h"

namespace converge::apiserver {

struct AdmissionAttributes {
  std::string operation;  // CREATE, UPDATE, DELETE
  const api::ResourceInfo* resource = nullptr;
  std::string subresource;
  std::string ns;
  std::string name;
  api::Object* object = nullptr;            // the new object (null for DELETE)
  const api::Object* old_object = nullptr;  // null for CREATE
  const UserInfo* user = nullptr;
  bool dry_run = false;
  // Warnings for the client (Warning headers), e.g. from admission webhooks; null = dropped.
  std::vector<std::string>* warnings = nullptr;
  // Set by a mutating plugin that changed *object in ways the strategy has not seen (a webhook's
  // patch): the storage defaults and validates the object again before the validating phase.
  bool needs_revalidation = false;
};

class AdmissionPlugin {
 public:
  virtual ~AdmissionPlugin() = default;
  virtual std::string_view name() const = 0;
  // Mutating phase: may change *attrs.object.
  virtual std::optional<ApiError> Admit(AdmissionAttributes& attrs) {
    (void)attrs;
    return std::nullopt;
  }
  // Validating phase: must not change anything.
  virtual std::optional<ApiError> Validate(const AdmissionAttributes& attrs) {
    (void)attrs;
    return std::nullopt;
  }
};

// Runs every plugin's Admit in order, then every plugin's Validate; the first error wins.
class AdmissionChain {
 public:
  void Add(std::shared_ptr<AdmissionPlugin> plugin) { plugins_.push_back(std::move(plugin)); }
  // Mutate, then Validate.
  std::optional<ApiError> Run(AdmissionAttributes& attrs) const;
  // The two phases separately, for callers that validate the object in between.
  std::optional<ApiError> Mutate(AdmissionAttributes& attrs) const;
  std::optional<ApiError> Validate(const AdmissionAttributes& attrs) const;

 private:
  std::vector<std::shared_ptr<AdmissionPlugin>> plugins_;  // constant after start-up
};

}  // namespace converge::apiserver
