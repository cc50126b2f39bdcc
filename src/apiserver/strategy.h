// Strategy: what is special about one kind when it is created, updated, validated or deleted
// (upstream's RESTCreateStrategy / RESTUpdateStrategy / RESTDeleteStrategy and SetDefaults_*).
//
// The generic storage (storage.h) runs the same sequence for every kind:
//
//   create:  decode → BeforeCreate (uid, timestamps, generation) → PrepareForCreate → Default
//            → Validate (metadata + kind) → admission → store
//   update:  decode/patch → (main resource) PrepareForUpdate | (status) PrepareForStatusUpdate
//            → Default → ValidateUpdate → admission → store (generation bumped when the spec moved)
//   delete:  preconditions → GracePeriod → finalizers → store
//
// Strategies are stateless and shared; all methods are const and thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "api/object.h"
#include "api/resource.h"
#include "apiserver/errors.h"

namespace converge::apiserver {

class Strategy {
 public:
  explicit Strategy(std::shared_ptr<const api::ResourceInfo> info) : info_(std::move(info)) {}
  virtual ~Strategy() = default;

  const api::ResourceInfo& info() const { return *info_; }

  // Upstream's defaulting for the kind (SetDefaults_Deployment, SetDefaults_PodSpec, ...).
  // Applied to every object written: create, update, patch and apply results.
  virtual void Default(api::Object& obj) const;

  // Create: clear what clients may not set. The default clears `status` for kinds with a status
  // subresource and sets generation 1 for kinds that track it.
  virtual void PrepareForCreate(api::Object& obj) const;
  // Update through the main resource: the default keeps `status` from `old` (kinds with a status
  // subresource) and bumps generation when anything but metadata and status changed.
  virtual void PrepareForUpdate(api::Object& obj, const api::Object& old) const;
  // Update through /status: the default keeps everything but `status` (and metadata labels,
  // annotations... as upstream: only status changes) from `old`.
  virtual void PrepareForStatusUpdate(api::Object& obj, const api::Object& old) const;

  // Validation of the kind's own fields. ObjectMeta is validated by the storage layer
  // (ValidateObjectMeta) before these run. Returns causes (empty = valid).
  virtual std::vector<StatusCause> Validate(const api::Object& obj) const;
  virtual std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                                  const api::Object& old) const;
  virtual std::vector<StatusCause> ValidateStatusUpdate(const api::Object& obj,
                                                        const api::Object& old) const;

  // metadata.generation starts at 1 and moves with the spec.
  virtual bool TracksGeneration() const;
  // PUT of a missing object creates it (upstream: e.g. leases? no; nodes? no; most kinds: no).
  virtual bool AllowCreateOnUpdate() const { return false; }
  // An update without metadata.resourceVersion is accepted (last write wins).
  virtual bool AllowUnconditionalUpdate() const { return true; }

  // Graceful deletion: the grace period to apply to a delete of `obj` given the requested one
  // (DeleteOptions.gracePeriodSeconds). 0 means delete now. Only pods are graceful upstream.
  virtual int64_t GracePeriod(const api::Object& obj, std::optional<int64_t> requested) const;

  // Whether an object marked for deletion may now be removed from storage: no finalizers left
  // (namespaces also wait for spec.finalizers to empty).
  virtual bool ReadyToDelete(const api::Object& obj) const;
  // Called when a delete marks the object instead of removing it (deletionTimestamp set):
  // namespaces move to phase Terminating here.
  virtual void PrepareForDelete(api::Object&) const {}

  // The default propagation policy when DeleteOptions has none (Background for most kinds).
  virtual std::string_view DefaultPropagationPolicy() const { return "Background"; }

  // How metadata.name is validated.
  // kDns1035Label: services (must start with a letter); kNone: not checked (core/v1 events).
  enum class NameRule { kDnsSubdomain, kDnsLabel, kPathSegment, kDns1035Label, kNone };
  virtual NameRule name_rule() const { return NameRule::kDnsSubdomain; }

 protected:
  bool HasStatusSubresource() const { return info_->Subresource("status") != nullptr; }

 private:
  std::shared_ptr<const api::ResourceInfo> info_;
};

// Returns the strategy for a resource (built-in kinds have their own; others get the generic
// one). The result lives as long as the process.
std::shared_ptr<const Strategy> MakeStrategy(std::shared_ptr<const api::ResourceInfo> info);

// ObjectMeta validation shared by every kind (name, generateName, namespace, labels,
// annotations, ownerReferences, finalizers), with upstream's field paths and messages.
std::vector<StatusCause> ValidateObjectMeta(const api::Object& obj, bool namespaced,
                                            Strategy::NameRule rule);
// Rules for immutable metadata on update (uid, creationTimestamp, name, namespace, ...).
std::vector<StatusCause> ValidateObjectMetaUpdate(const api::Object& obj, const api::Object& old);

// Name checks; return upstream's messages (empty when valid).
std::vector<std::string> IsDnsSubdomain(std::string_view value);
std::vector<std::string> IsDnsLabel(std::string_view value);

}  // namespace converge::apiserver
