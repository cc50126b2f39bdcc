// ResourceStorage: the generic REST storage of one resource (upstream's genericregistry.Store).
//
// Every built-in kind and every custom resource goes through the same code: create, get, list,
// update (PUT and the read-modify-write behind PATCH and apply), delete with preconditions,
// graceful deletion, finalizers and propagation policy. What differs per kind lives in its
// Strategy. Writes go to the store as transactions comparing revisions (optimistic
// concurrency); reads come from the watch cache unless a caller needs an exact revision.
//
// Thread-safety: safe for concurrent use; calls block while the store commits (callers run on
// the API server's worker pool, never on an I/O thread).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/resource.h"
#include "apiserver/admission.h"
#include "apiserver/errors.h"
#include "apiserver/strategy.h"
#include "apiserver/watch_cache.h"
#include "store/kv.h"
#include "util/clock.h"
#include "util/metrics.h"

namespace converge::apiserver {

// How a write treats metadata.managedFields (fieldmanager.h).
enum class ManagedFieldsMode {
  // Record the write as an Update by WriteContext::field_manager: create, PUT, non-apply PATCH,
  // /status, /scale, namespaces/finalize.
  kRecordUpdate,
  // The caller computed them (server-side apply): store the object's managedFields as they are.
  kAsGiven,
};

// Who is writing and how.
struct WriteContext {
  const UserInfo* user = nullptr;
  bool dry_run = false;
  // ?fieldManager, or the User-Agent's prefix when absent (ManagerOrUserAgent).
  std::string field_manager;
  std::string subresource;  // "", "status", "scale", "finalize" or "binding" for updates
  ManagedFieldsMode managed_fields = ManagedFieldsMode::kRecordUpdate;
  // Server-side apply: a missing object is created whatever the strategy's
  // AllowCreateOnUpdate says (upstream's forceAllowCreate for apply patches).
  bool force_allow_create = false;
  // The caller has already produced the exact object to store (pods/binding, scale): skip the
  // strategy's update preparation and validation; metadata rules still apply.
  bool raw = false;
  // Receives warnings for the client from admission (webhooks); null = dropped.
  std::vector<std::string>* warnings = nullptr;
};

struct ListOptions {
  WatchFilter filter;
  std::string resource_version;        // as sent; empty = unset
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
  int64_t limit = 0;
  std::string continue_token;
};

struct ListResult {
  std::vector<CachedObjectPtr> items;
  store::Revision revision = 0;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", Orphan, Background, Foreground
  // DeleteOptions.orphanDependents as sent (deprecated; only decides the 202 answer here).
  std::optional<bool> orphan_dependents;
  std::string precondition_uid;
  std::string precondition_resource_version;
  bool dry_run = false;
};

struct DeleteResult {
  CachedObjectPtr object;  // the last state (deleted) or the marked object (pending)
  bool deleted = false;    // false: marked for deletion (finalizers or grace period pending)
};

struct StorageOptions {
  util::Clock* clock = &util::RealClock();
  // How long a read asking for a resourceVersion newer than the cache waits before 504.
  std::chrono::milliseconds too_large_rv_wait{std::chrono::seconds(3)};
  // Largest stored object (etcd's default request limit is 1.5 MiB).
  size_t max_object_bytes = 1536 * 1024;
};

class ResourceStorage {
 public:
  ResourceStorage(std::shared_ptr<const api::ResourceInfo> info,
                  std::shared_ptr<const Strategy> strategy, store::KV* kv, Cacher* cacher,
                  WatchCache* cache, const AdmissionChain* admission, StorageOptions options);

  const api::ResourceInfo& info() const { return *info_; }
  const Strategy& strategy() const { return *strategy_; }
  WatchCache* cache() const { return cache_; }

  // `obj` has been decoded and checked against the URL (kind, apiVersion, namespace).
  ApiOr<CachedObjectPtr> Create(const std::string& ns, api::Object obj, const WriteContext& ctx);

  // Create in two steps, for callers that do not wait for the store (HttpServer's requests):
  // PrepareCreate does everything before the write (metadata, defaulting, managedFields,
  // validation, admission); CommitCreateAsync writes, retrying a taken generated name as Create
  // does, and calls `done` exactly once, through `resume` unless encoding the object fails first
  // (then at once); the store's thread never runs it. The storage must outlive `done`. Create is
  // PrepareCreate, then DryRunCreated for a dry run or else CommitCreate, the same write waited
  // for.
  struct PreparedCreate {
    std::string ns;
    api::Object object;
    bool generated_name = false;  // the name came from generateName: retry another on conflict
    int attempts = 0;
  };
  ApiOr<PreparedCreate> PrepareCreate(const std::string& ns, api::Object obj,
                                      const WriteContext& ctx);
  CachedObjectPtr DryRunCreated(const PreparedCreate& prepared) const;
  ApiOr<CachedObjectPtr> CommitCreate(PreparedCreate prepared);
  void CommitCreateAsync(PreparedCreate prepared, std::function<void(std::function<void()>)> resume,
                         std::function<void(ApiOr<CachedObjectPtr>)> done);

  // resource_version: "" = most recent (read from the store), "0" = any (cache), N = not older.
  ApiOr<CachedObjectPtr> Get(const std::string& ns, const std::string& name,
                             const std::string& resource_version);

  ApiOr<ListResult> List(const ListOptions& options);
  // The objects matching `filter` as the store holds them now, and that revision: the initial
  // state of a watch when the watch cache keeps no objects (WatchCache::keeps_objects).
  ApiOr<ListResult> ListCurrentFromStore(const WatchFilter& filter);

  // The read-modify-write behind PUT, PATCH and apply: `fn` receives the current object (null
  // when absent and create-on-update is allowed) and returns the desired object. Retries on
  // write conflicts unless the desired object pins a resourceVersion (then 409 Conflict).
  using UpdateFn = std::function<ApiOr<api::Object>(const api::Object* current)>;
  struct UpdateResult {
    CachedObjectPtr object;
    bool created = false;
  };
  ApiOr<UpdateResult> Update(const std::string& ns, const std::string& name, const UpdateFn& fn,
                             const WriteContext& ctx, bool allow_create = false);

  ApiOr<DeleteResult> Delete(const std::string& ns, const std::string& name,
                             const DeleteOptions& options, const WriteContext& ctx);

 private:
  struct Current {
    api::ObjectPtr object;  // never modified: possibly the cache's shared decoded copy
    store::Revision mod_revision = 0;
    bool from_cache = false;  // a guess: only the store's compare on mod_revision confirms it
  };
  // A fresh read from the store; nullopt when absent.
  ApiOr<std::optional<Current>> ReadCurrent(const std::string& key);
  // The watch cache's version (upstream's cachedExistingObject): a read-modify-write starts
  // from it, sparing a store read and a parse (in-process informers usually hold the decoded
  // object already). A stale guess costs a retry from a fresh store read. nullopt when the cache
  // lacks the object.
  std::optional<Current> CachedCurrent(const std::string& key) const;
  // Runs `txn`, whose put is `write`'s bytes, with `write` offered to the watch cache meanwhile
  // (so that the cache need not parse and encode the stored bytes again); the store's latency is
  // recorded in `latency`.
  util::StatusOr<store::TxnResponse> CommitOffered(store::TxnRequest txn,
                                                   const std::shared_ptr<PendingWrite>& write,
                                                   util::Histogram* latency);
  // Moves `obj`, which `write` was encoded from, into `write` for the in-process watchers that
  // would otherwise parse the committed version (PendingWrite::KeepObjectForReaders) when the
  // cache has such watchers; else leaves it. A write that put nothing gives it back (TakeObject).
  void LendObject(PendingWrite& write, api::Object& obj) const;
  // Settles `write`'s offer by its transaction's outcome (WatchCache::Committed or Withdraw).
  void SettleOffer(const std::shared_ptr<PendingWrite>& write,
                   const util::StatusOr<store::TxnResponse>& resp);
  static store::TxnRequest CreateTxn(const PendingWrite& write);
  // What a create's commit came to: the created object or the error, or nullopt when a generated
  // name was taken and `prepared` now holds another one to try.
  std::optional<ApiOr<CachedObjectPtr>> CreateOutcome(
      PreparedCreate& prepared, PendingWrite& write,
      const util::StatusOr<store::TxnResponse>& resp);
  // The pending write of `obj` at `key`, or the error of encoding it.
  ApiOr<std::shared_ptr<PendingWrite>> Prepare(const std::string& key,
                                               const api::Object& obj) const;
  ApiOr<ListResult> ListFromStore(const ListOptions& options, store::Revision revision,
                                  const std::string& start_key);
  ApiOr<ListResult> ListFromCache(const ListOptions& options, const std::string& start_key);
  std::optional<ApiError> WaitForCache(store::Revision revision);
  // Mutating admission, validation again when a plugin asked for it (a webhook's patch), then
  // validating admission.
  std::optional<ApiError> RunAdmission(const char* operation, const std::string& ns,
                                       const std::string& name, api::Object* obj,
                                       const api::Object* old, const WriteContext& ctx);
  // Defaults and validates an object changed by mutating admission (old: null on create).
  std::optional<ApiError> Revalidate(const std::string& ns, api::Object& obj,
                                     const api::Object* old, const WriteContext& ctx) const;
  // Records the write in obj's metadata.managedFields as the context asks (old: null on create).
  void TrackManagedFields(const api::Object* old, api::Object& obj, const WriteContext& ctx) const;
  // Serialized form for the store: the object without resourceVersion (cached_object.h).
  ApiOr<EncodedObject> Encode(const api::Object& obj) const;
  std::string Now() const;

  const std::shared_ptr<const api::ResourceInfo> info_;
  const std::shared_ptr<const Strategy> strategy_;
  store::KV* const kv_;
  Cacher* const cacher_;
  WatchCache* const cache_;
  const AdmissionChain* const admission_;
  const StorageOptions options_;
  // etcd_request_duration_seconds children of this resource (ApiMetrics::store_requests).
  struct StoreLatency {
    util::Histogram* get;
    util::Histogram* list;
    util::Histogram* create;
    util::Histogram* update;
    util::Histogram* remove;
  };
  const StoreLatency store_latency_;
};

// The continue token of a paginated list: the snapshot revision and where to resume.
std::string EncodeContinue(store::Revision revision, std::string_view start_key_suffix);
bool DecodeContinue(std::string_view token, store::Revision* revision, std::string* start_suffix);

}  // namespace converge::apiserver
