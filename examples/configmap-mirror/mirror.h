// The configmap-mirror controller: keeps a copy of every ConfigMap of a source namespace in a
// target namespace. Copies carry the label mirror.converge.io/source-namespace, which is how the
// controller knows which ConfigMaps in the target namespace are its own: it never touches others.
//
// Decide is a pure function from a cache snapshot to a plan; MirrorReconciler carries the plan
// out through the API. That split is the shape to copy: test Decide with tables, and the
// reconciler with a fake transport.
#pragma once

#include <string>

#include "api/object.h"
#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/lister.h"
#include "client/rest_client.h"

namespace mirror {

namespace api = converge::api;
namespace client = converge::client;

inline constexpr const char* kSourceLabel = "mirror.converge.io/source-namespace";

struct Plan {
  enum class Action { kNothing, kCreate, kUpdate, kDelete };
  Action action = Action::kNothing;
  api::Object desired;  // kCreate, kUpdate: the copy to write; kDelete: the copy to remove
  std::string why;      // for logs and events
};

// source: the ConfigMap in the source namespace (null when gone); copy: the ConfigMap of the
// same name in the target namespace (null when absent).
Plan Decide(const api::ObjectPtr& source, const api::ObjectPtr& copy, const std::string& source_ns,
            const std::string& target_ns);

struct MirrorOptions {
  std::string source_ns;
  std::string target_ns;
  client::RestClient* client = nullptr;
  const client::Indexer* cache = nullptr;  // the ConfigMap informer's cache
  client::EventRecorder* recorder = nullptr;
};

class MirrorReconciler {
 public:
  explicit MirrorReconciler(MirrorOptions options) : options_(std::move(options)) {}

  // Reconciles one source key (source_ns/name).
  client::ReconcileResult Reconcile(const api::ObjectKey& key, std::stop_token stop);

  // The key to reconcile for a ConfigMap event anywhere (none for unrelated namespaces or for
  // target-namespace ConfigMaps that are not copies).
  std::optional<api::ObjectKey> KeyFor(const api::Object& configmap) const;

 private:
  const MirrorOptions options_;
};

}  // namespace mirror
