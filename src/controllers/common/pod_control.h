// PodControl: how workload controllers create, delete and patch pods (upstream's
// PodControlInterface). The interface is all a controller's I/O layer needs for pods;
// RealPodControl talks to the API server and records events, FakePodControl (fake_pod_control.h)
// records calls for tests.
//
// Events, as upstream writes them, on the owner:
//   SuccessfulCreate  "Created pod: <name>"           FailedCreate  "Error creating: <message>"
//   SuccessfulDelete  "Deleted pod: <name>"           FailedDelete  "Error deleting: <message>"
// (No FailedCreate when the namespace is terminating: every create there fails by design.)
//
// Thread-safety: implementations are safe for concurrent use (controllers create in parallel).
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

#include "api/object.h"
#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "controllers/common/owner_refs.h"
#include "util/status.h"

namespace converge::controllers {

inline constexpr std::string_view kSuccessfulCreatePodReason = "SuccessfulCreate";
inline constexpr std::string_view kFailedCreatePodReason = "FailedCreate";
inline constexpr std::string_view kSuccessfulDeletePodReason = "SuccessfulDelete";
inline constexpr std::string_view kFailedDeletePodReason = "FailedDelete";

class PodControl {
 public:
  virtual ~PodControl() = default;

  // Creates one pod in `ns` from `pod_template` (a PodTemplateSpec: metadata + spec), owned by
  // `owner` through `controller_ref`. The name is generated from `generate_name`, or "<owner>-"
  // when empty. Errors are the API's (client/api_errors.h); InvalidArgument when the template has
  // no labels (such a pod could never be matched back to its owner).
  virtual util::Status CreatePod(std::string_view ns, const boost::json::object& pod_template,
                                 const api::Object& owner, const OwnerRef& controller_ref,
                                 std::string_view generate_name = {}) = 0;
  // Deletes the pod `ns/name` on behalf of `owner`. NotFound when it is already gone (no event).
  virtual util::Status DeletePod(std::string_view ns, std::string_view name,
                                 const api::Object& owner) = 0;
  // Applies a strategic-merge patch to the pod (adoption and release).
  virtual util::Status PatchPod(std::string_view ns, std::string_view name,
                                std::string_view patch) = 0;
};

// The pod a controller creates from a template (GetPodFromTemplate): the template's labels,
// annotations, finalizers and spec, generateName "<owner>-" (or `generate_name`), and the
// controller reference.
api::Object PodFromTemplate(const boost::json::object& pod_template, const api::Object& owner,
                            const OwnerRef& controller_ref, std::string_view generate_name = {});

// The create failed because the namespace is being deleted (the NamespaceTerminating cause).
bool IsNamespaceTerminating(const util::Status& s);

class RealPodControl final : public PodControl {
 public:
  // Both must outlive this object.
  RealPodControl(client::RestClient* client, client::EventRecorder* recorder)
      : client_(client), recorder_(recorder) {}

  util::Status CreatePod(std::string_view ns, const boost::json::object& pod_template,
                         const api::Object& owner, const OwnerRef& controller_ref,
                         std::string_view generate_name = {}) override;
  util::Status DeletePod(std::string_view ns, std::string_view name,
                         const api::Object& owner) override;
  util::Status PatchPod(std::string_view ns, std::string_view name,
                        std::string_view patch) override;

 private:
  client::RestClient* const client_;
  client::EventRecorder* const recorder_;
};

}  // namespace converge::controllers
