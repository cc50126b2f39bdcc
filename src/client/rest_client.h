// RestClient: the verbs of the Kubernetes API on any resource (client-go's dynamic client plus
// the REST plumbing under it).
//
// Objects are api::Object (JSON with typed accessors); resources are named by
// GroupVersionResource (ResourceForKind maps a kind to one). Namespaced resources take the
// namespace in the ObjectKey / `ns` argument; an empty namespace addresses a cluster-scoped
// resource, or, for List and Watch, all namespaces.
//
// Failures are util::Status with codes and predicates from api_errors.h (IsNotFound,
// IsConflict, IsExpired, ...). A 429 or 5xx response carrying Retry-After is retried after that
// delay, up to RestClientOptions::max_retries times, as client-go does.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/types.h"
#include "client/rest_config.h"
#include "client/transport.h"
#include "client/watch.h"
#include "util/clock.h"
#include "util/status.h"

namespace converge::client {

struct GetOptions {
  // "" (the default): the most recent state (a consistent read); "0": any state the server has.
  std::string resource_version;
  std::string subresource;  // e.g. "status", "scale"
  std::stop_token stop;
  // Deadline for the call; zero: the transport's default (RestConfig::timeout).
  std::chrono::milliseconds timeout{0};
};

struct ListOptions {
  std::string label_selector;  // "app=web,tier in (a,b)"
  std::string field_selector;  // "spec.nodeName=n1"
  // ""/unset: most recent (consistent); "0": any; otherwise see resource_version_match.
  std::string resource_version;
  std::string resource_version_match;  // "", "NotOlderThan" or "Exact"
  int64_t limit = 0;                   // page size; 0 = everything
  std::string continue_token;
  // Watch only.
  std::optional<int64_t> timeout_seconds;
  bool allow_watch_bookmarks = false;
  bool send_initial_events = false;
  std::stop_token stop;
  // Deadline for the call; zero: the transport's default (RestConfig::timeout).
  std::chrono::milliseconds timeout{0};
};

struct WriteOptions {
  bool dry_run = false;
  std::string field_manager;
  std::string field_validation;  // "", "Ignore", "Warn" or "Strict"
  std::stop_token stop;
  // Deadline for the call; zero: the transport's default (RestConfig::timeout).
  std::chrono::milliseconds timeout{0};
};

enum class PatchType {
  kJson,            // application/json-patch+json (RFC 6902)
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json
  kApply,           // application/apply-patch+yaml (server-side apply)
};

struct PatchOptions {
  bool dry_run = false;
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply only: take ownership of conflicting fields
  std::string subresource;    // e.g. "status"
  std::stop_token stop;
  // Deadline for the call; zero: the transport's default (RestConfig::timeout).
  std::chrono::milliseconds timeout{0};
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", "Background", "Foreground" or "Orphan"
  // Preconditions: delete only this incarnation / this version.
  std::string precondition_uid;
  std::string precondition_resource_version;
  bool dry_run = false;
  std::stop_token stop;
  // Deadline for the call; zero: the transport's default (RestConfig::timeout).
  std::chrono::milliseconds timeout{0};
};

struct ObjectList {
  std::string api_version;  // "v1"
  std::string kind;         // "PodList"
  std::string resource_version;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
  // Items, each with apiVersion and kind filled in (servers omit them in lists).
  std::vector<api::Object> items;
};

struct RestClientOptions {
  std::shared_ptr<Transport> transport;  // required
  // Retries of a 429/5xx response that carries Retry-After (client-go: 10).
  int max_retries = 10;
  // Sleeps between those retries. nullptr: util::RealClock().
  util::Clock* clock = nullptr;
  // Extra time a watch's client-side deadline allows past its timeoutSeconds before the stream
  // is given up as hung.
  std::chrono::seconds watch_deadline_slack{30};
};

class RestClient {
 public:
  explicit RestClient(RestClientOptions options);

  // A client for a RestConfig over HTTP(S) (NewTransportForConfig).
  static util::StatusOr<std::unique_ptr<RestClient>> ForConfig(const RestConfig& config);

  util::StatusOr<api::Object> Get(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                                  const GetOptions& options = {});
  util::StatusOr<ObjectList> List(const api::GroupVersionResource& gvr, std::string_view ns,
                                  const ListOptions& options = {});
  // Starts a watch; events are read from the returned Watcher until it ends or options.stop
  // fires (a stop makes a blocked Next return kCancelled).
  util::StatusOr<std::unique_ptr<Watcher>> Watch(const api::GroupVersionResource& gvr,
                                                 std::string_view ns, const ListOptions& options);
  // Creates `object` in `ns` (or, when ns is empty, in the object's own namespace).
  util::StatusOr<api::Object> Create(const api::GroupVersionResource& gvr, std::string_view ns,
                                     const api::Object& object, const WriteOptions& options = {});
  // Replaces the object named by its metadata; metadata.resourceVersion makes it conditional
  // (kAborted/IsConflict when stale).
  util::StatusOr<api::Object> Update(const api::GroupVersionResource& gvr,
                                     const api::Object& object, const WriteOptions& options = {});
  // Replaces the status subresource.
  util::StatusOr<api::Object> UpdateStatus(const api::GroupVersionResource& gvr,
                                           const api::Object& object,
                                           const WriteOptions& options = {});
  util::StatusOr<api::Object> Patch(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                                    PatchType type, std::string_view patch,
                                    const PatchOptions& options = {});
  // Server-side apply of `object` (its apiVersion, kind and metadata name must be set).
  util::StatusOr<api::Object> Apply(const api::GroupVersionResource& gvr, const api::Object& object,
                                    const PatchOptions& options);
  // Deletes one object. OK also when the object stays, marked for deletion, until its
  // finalizers are removed.
  util::Status Delete(const api::GroupVersionResource& gvr, const api::ObjectKey& key,
                      const DeleteOptions& options = {});
  util::Status DeleteCollection(const api::GroupVersionResource& gvr, std::string_view ns,
                                const ListOptions& list_options, const DeleteOptions& options = {});

  // A raw request (discovery, /version, pods/log, ...): 2xx responses are returned, anything
  // else becomes an error Status.
  util::StatusOr<HttpResponse> Do(HttpRequest request);
  // A raw streamed request (followed logs); non-2xx responses become an error Status.
  util::StatusOr<std::unique_ptr<ResponseStream>> Stream(HttpRequest request);

  Transport& transport() { return *options_.transport; }

 private:
  util::StatusOr<api::Object> DoObject(HttpRequest request);

  const RestClientOptions options_;
  util::Clock* const clock_;
};

// The path of a resource collection or object: /api/v1/namespaces/ns/pods/name/status.
std::string ResourcePath(const api::GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name = {}, std::string_view subresource = {});

// The resource that serves a built-in kind (apps/v1 Deployment → apps/v1 deployments).
// NotFound for kinds the built-in registry lacks.
util::StatusOr<api::GroupVersionResource> ResourceForKind(const api::GroupVersionKind& gvk);

// The transport for a RestConfig: HTTP(S), wrapped in a RateLimitedTransport when config.qps > 0.
util::StatusOr<std::shared_ptr<Transport>> NewTransportForConfig(const RestConfig& config);

}  // namespace converge::client
