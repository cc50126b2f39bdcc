#include "apiserver/storage.h"

#include <charconv>
#include <chrono>

#include "api/custom_resource.h"
#include "api/merge_patch.h"
#include "apiserver/fieldmanager.h"
#include "apiserver/metrics.h"
#include "util/base64.h"
#include "util/ids.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

// generateName retries on a name collision (upstream retries up to 7 times since 1.32).
constexpr int kGenerateNameAttempts = 8;
// Internal retries of a read-modify-write whose store compare failed because someone else wrote
// in between (only when the client did not pin a resourceVersion).
constexpr int kUpdateAttempts = 16;

bool ParseRevision(std::string_view s, store::Revision* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0;
}

// Fields of metadata that only the server sets; clients' values are ignored on create and the
// stored values are kept on update.
void ResetServerMetadataForCreate(api::Object& obj) {
  json::object& m = obj.mutable_metadata();
  for (const char* f : {"resourceVersion", "selfLink", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "uid", "creationTimestamp", "generation"}) {
    m.erase(f);
  }
}

void KeepServerMetadata(api::Object& obj, const api::Object& old) {
  json::object& m = obj.mutable_metadata();
  const json::object* om = api::FindObject(old.doc(), {"metadata"});
  // Upstream's BeforeUpdate: the existing uid when none is given (a different one fails
  // ValidateObjectMetaUpdate); the server's timestamps, deletion state and generation always.
  const bool uid_given = !obj.uid().empty();
  for (const char* f : {"uid", "creationTimestamp", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "generation"}) {
    if (uid_given && std::string_view(f) == "uid") continue;
    m.erase(f);
    if (om) {
      if (auto it = om->find(f); it != om->end()) m[f] = it->value();
    }
  }
  m.erase("selfLink");
}

// Runs one store request and records its latency.
template <typename F>
auto Timed(util::Histogram* h, F&& request) {
  const auto start = std::chrono::steady_clock::now();
  auto result = request();
  h->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return result;
}

// The token of the page after `last`: the next page starts just past its key, at the same
// revision.
std::string ContinueAfter(const api::ResourceInfo& info, store::Revision revision,
                          const CachedObject& last) {
  const std::string base = StoragePrefix(info, "");
  std::string next = last.storage_key.substr(base.size());
  next.push_back('\0');
  return EncodeContinue(revision, next);
}

}  // namespace

std::string EncodeContinue(store::Revision revision, std::string_view start_key_suffix) {
  json::object o;
  o["v"] = "meta.k8s.io/v1";
  o["rv"] = revision;
  o["start"] = start_key_suffix;
  return util::Base64Encode(json::serialize(o));
}

bool DecodeContinue(std::string_view token, store::Revision* revision, std::string* start_suffix) {
  auto raw = util::Base64Decode(token);
  if (!raw) return false;
  boost::system::error_code ec;
  json::value v = json::parse(*raw, ec);
  if (ec || !v.is_object()) return false;
  const json::object& o = v.get_object();
  auto rv = o.find("rv");
  auto start = o.find("start");
  if (rv == o.end() || !rv->value().is_int64() || start == o.end() || !start->value().is_string()) {
    return false;
  }
  *revision = rv->value().get_int64();
  *start_suffix = start->value().get_string();
  // The suffix is relative to the listed prefix and must not escape it.
  return *revision > 0 && start_suffix->find("..") == std::string::npos &&
         (start_suffix->empty() || (*start_suffix)[0] != '/');
}

ResourceStorage::ResourceStorage(std::shared_ptr<const api::ResourceInfo> info,
                                 std::shared_ptr<const Strategy> strategy, store::KV* kv,
                                 Cacher* cacher, WatchCache* cache, const AdmissionChain* admission,
                                 StorageOptions options)
    : info_(std::move(info)),
      strategy_(std::move(strategy)),
      kv_(kv),
      cacher_(cacher),
      cache_(cache),
      admission_(admission),
      options_(options),
      store_latency_([this] {
        util::HistogramFamily& f = ApiMetrics::Get().store_requests;
        const std::string type = info_->storage_prefix + "/";
        return StoreLatency{
            &f.WithLabelValues({"get", type}), &f.WithLabelValues({"listWithCount", type}),
            &f.WithLabelValues({"create", type}), &f.WithLabelValues({"update", type}),
            &f.WithLabelValues({"delete", type})};
      }()) {}

void ResourceStorage::TrackManagedFields(const api::Object* old, api::Object& obj,
                                         const WriteContext& ctx) const {
  if (ctx.managed_fields != ManagedFieldsMode::kRecordUpdate) return;
  // pods/binding writes through the pod without the field manager, as upstream's BindingREST.
  if (ctx.subresource == "binding") return;
  ManagedFieldsContext mctx;
  mctx.manager = ctx.field_manager;
  mctx.subresource = ctx.subresource;
  mctx.api_version = info_->Gvk().ApiVersion();
  mctx.now = options_.clock->WallNow();
  mctx.reset_fields = DefaultResetFields(info_->Subresource("status") != nullptr, ctx.subresource);
  UpdateManagedFields(info_->schema, old, obj, mctx);
}

std::string ResourceStorage::Now() const {
  return util::FormatRfc3339(options_.clock->WallNow());
}

ApiOr<EncodedObject> ResourceStorage::Encode(const api::Object& obj) const {
  EncodedObject out = EncodeObject(obj.doc());
  if (out.json.size() > options_.max_object_bytes) {
    return RequestEntityTooLarge("object is larger than the maximum of " +
                                 std::to_string(options_.max_object_bytes) + " bytes");
  }
  return out;
}

ApiOr<std::shared_ptr<PendingWrite>> ResourceStorage::Prepare(const std::string& key,
                                                              const api::Object& obj) const {
  auto encoded = Encode(obj);
  if (!encoded.ok()) return encoded.error();
  return std::make_shared<PendingWrite>(info_, key, obj, std::move(*encoded));
}

util::StatusOr<store::TxnResponse> ResourceStorage::CommitOffered(
    store::TxnRequest txn, const std::shared_ptr<PendingWrite>& write, util::Histogram* latency) {
  cache_->Offer(write);
  auto resp = Timed(latency, [&] { return kv_->Txn(std::move(txn)); });
  SettleOffer(write, resp);
  return resp;
}

void ResourceStorage::LendObject(PendingWrite& write, api::Object& obj) const {
  if (cache_->SeedsDecodedObjects()) write.KeepObjectForReaders(std::move(obj));
}

void ResourceStorage::SettleOffer(const std::shared_ptr<PendingWrite>& write,
                                  const util::StatusOr<store::TxnResponse>& resp) {
  if (resp.ok() && resp->succeeded) {
    cache_->Committed(write, resp->header_revision);
  } else {
    cache_->Withdraw(write);
  }
}

std::optional<ApiError> ResourceStorage::RunAdmission(const char* operation, const std::string& ns,
                                                      const std::string& name, api::Object* obj,
                                                      const api::Object* old,
                                                      const WriteContext& ctx) {
  if (!admission_) return std::nullopt;
  AdmissionAttributes attrs;
  attrs.operation = operation;
  attrs.resource = info_.get();
  attrs.subresource = ctx.subresource;
  attrs.ns = ns;
  attrs.name = name;
  attrs.object = obj;
  attrs.old_object = old;
  attrs.user = ctx.user;
  attrs.dry_run = ctx.dry_run;
  attrs.warnings = ctx.warnings;
  if (auto err = admission_->Mutate(attrs)) return err;
  if (attrs.needs_revalidation && obj) {
    if (auto err = Revalidate(ns, *obj, old, ctx)) return err;
  }
  return admission_->Validate(attrs);
}

std::optional<ApiError> ResourceStorage::Revalidate(const std::string& ns, api::Object& obj,
                                                    const api::Object* old,
                                                    const WriteContext& ctx) const {
  if (info_->namespaced) obj.set_namespace(ns);
  if (!ctx.raw) strategy_->Default(obj);
  std::vector<StatusCause> causes =
      ValidateObjectMeta(obj, info_->namespaced, strategy_->name_rule());
  if (old) {
    for (auto& c : ValidateObjectMetaUpdate(obj, *old)) causes.push_back(std::move(c));
  }
  if (causes.empty() && !ctx.raw) {
    if (!old) {
      causes = strategy_->Validate(obj);
    } else {
      causes = ctx.subresource == "status" ? strategy_->ValidateStatusUpdate(obj, *old)
                                           : strategy_->ValidateUpdate(obj, *old);
    }
  }
  if (!causes.empty()) return Invalid(info_->Gvk(), obj.name(), std::move(causes));
  return std::nullopt;
}

ApiOr<std::optional<ResourceStorage::Current>> ResourceStorage::ReadCurrent(
    const std::string& key) {
  store::RangeRequest req;
  req.key = key;
  auto resp = Timed(store_latency_.get, [&] { return kv_->Range(req); });
  if (!resp.ok()) return FromStatus(resp.status(), info_->gvr.Gr());
  if (resp->kvs.empty()) return std::optional<Current>();
  const store::KeyValue& kv = *resp->kvs[0];
  auto obj = api::Object::Parse(kv.value);
  if (!obj.ok()) return InternalError("stored object " + key + " is corrupt");
  obj->set_resource_version(std::to_string(kv.mod_revision));
  return std::optional<Current>(
      Current{std::make_shared<const api::Object>(std::move(*obj)), kv.mod_revision, false});
}

std::optional<ResourceStorage::Current> ResourceStorage::CachedCurrent(
    const std::string& key) const {
  CachedObjectPtr cached = cache_->Get(key);
  if (!cached) return std::nullopt;
  auto decoded = cached->Decoded();
  if (!decoded.ok()) return std::nullopt;
  return Current{std::move(*decoded), cached->revision, true};
}

ApiOr<CachedObjectPtr> ResourceStorage::Create(const std::string& ns, api::Object obj,
                                               const WriteContext& ctx) {
  auto prepared = PrepareCreate(ns, std::move(obj), ctx);
  if (!prepared.ok()) return prepared.error();
  if (ctx.dry_run) return DryRunCreated(*prepared);
  return CommitCreate(std::move(*prepared));
}

CachedObjectPtr ResourceStorage::DryRunCreated(const PreparedCreate& prepared) const {
  return CachedObject::FromObject(*info_, StorageKey(*info_, prepared.ns, prepared.object.name()),
                                  prepared.object, 0);
}

ApiOr<ResourceStorage::PreparedCreate> ResourceStorage::PrepareCreate(const std::string& ns,
                                                                      api::Object obj,
                                                                      const WriteContext& ctx) {
  if (info_->crd && info_->crd->terminating) {
    // Upstream's crdHandler while the CRD's instances are being deleted.
    return MethodNotAllowed("create not allowed while custom resource definition is terminating");
  }
  if (info_->namespaced) obj.set_namespace(ns);
  ResetServerMetadataForCreate(obj);
  obj.set_uid(util::NewUuid());
  obj.mutable_metadata()["creationTimestamp"] = Now();
  // The name exists before the strategy runs: some kinds derive labels from it (Jobs,
  // namespaces).
  const bool generated = obj.name().empty() && !obj.generate_name().empty();
  if (generated) {
    obj.set_name(std::string(obj.generate_name()) +
                 util::RandomString(5, util::kNameSuffixAlphabet));
  }
  // Upstream defaults while decoding, before PrepareForCreate; defaulting again afterwards
  // covers what preparation added. Both are idempotent.
  strategy_->Default(obj);
  strategy_->PrepareForCreate(obj);
  strategy_->Default(obj);
  // The creator owns every field it stored, defaults included (upstream defaults at decode).
  TrackManagedFields(nullptr, obj, ctx);
  std::vector<StatusCause> causes =
      ValidateObjectMeta(obj, info_->namespaced, strategy_->name_rule());
  if (causes.empty()) causes = strategy_->Validate(obj);
  if (!causes.empty()) return Invalid(info_->Gvk(), obj.name(), std::move(causes));

  if (auto err = RunAdmission("CREATE", ns, std::string(obj.name()), &obj, nullptr, ctx)) {
    return *err;
  }
  return PreparedCreate{ns, std::move(obj), generated};
}

// A create's transaction: put `write` unless the key exists.
store::TxnRequest ResourceStorage::CreateTxn(const PendingWrite& write) {
  store::TxnRequest txn;
  txn.compare.push_back({write.storage_key(), "", store::Compare::Target::kCreateRevision,
                         store::Compare::Result::kEqual, 0, ""});
  txn.success.push_back(
      store::PutRequest{write.storage_key(), write.json(), false, 0, write.compressed()});
  return txn;
}

std::optional<ApiOr<CachedObjectPtr>> ResourceStorage::CreateOutcome(
    PreparedCreate& prepared, PendingWrite& write, const util::StatusOr<store::TxnResponse>& resp) {
  if (!resp.ok()) return FromStatus(resp.status(), info_->gvr.Gr(), prepared.object.name());
  if (resp->succeeded) return write.Entry(resp->header_revision);
  // Nothing was put: the object lent to the write (LendObject) comes back for the next attempt.
  if (std::optional<api::Object> lent = write.TakeObject()) prepared.object = std::move(*lent);
  if (!prepared.generated_name || ++prepared.attempts >= kGenerateNameAttempts) {
    return AlreadyExists(info_->gvr.Gr(), prepared.object.name());
  }
  prepared.object.set_name(std::string(prepared.object.generate_name()) +
                           util::RandomString(5, util::kNameSuffixAlphabet));
  return std::nullopt;
}

ApiOr<CachedObjectPtr> ResourceStorage::CommitCreate(PreparedCreate prepared) {
  for (;;) {
    auto write = Prepare(StorageKey(*info_, prepared.ns, prepared.object.name()), prepared.object);
    if (!write.ok()) return write.error();
    LendObject(**write, prepared.object);
    auto resp = CommitOffered(CreateTxn(**write), *write, store_latency_.create);
    if (auto outcome = CreateOutcome(prepared, **write, resp)) return std::move(*outcome);
  }
}

void ResourceStorage::CommitCreateAsync(PreparedCreate prepared,
                                        std::function<void(std::function<void()>)> resume,
                                        std::function<void(ApiOr<CachedObjectPtr>)> done) {
  auto write = Prepare(StorageKey(*info_, prepared.ns, prepared.object.name()), prepared.object);
  if (!write.ok()) return done(write.error());
  LendObject(**write, prepared.object);
  cache_->Offer(*write);
  const auto start = std::chrono::steady_clock::now();
  // The store's callback must not block: it records the latency and hands the rest to `resume`.
  kv_->TxnAsync(CreateTxn(**write), [this, prepared = std::move(prepared), write = *write,
                                     resume = std::move(resume), done = std::move(done),
                                     start](util::StatusOr<store::TxnResponse> resp) mutable {
    store_latency_.create->Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    auto again = resume;
    again([this, prepared = std::move(prepared), write = std::move(write),
           resume = std::move(resume), done = std::move(done), resp = std::move(resp)]() mutable {
      SettleOffer(write, resp);
      auto outcome = CreateOutcome(prepared, *write, resp);
      if (outcome) return done(std::move(*outcome));
      CommitCreateAsync(std::move(prepared), std::move(resume), std::move(done));
    });
  });
}

std::optional<ApiError> ResourceStorage::WaitForCache(store::Revision revision) {
  if (cacher_->WaitForRevision(revision, options_.too_large_rv_wait)) return std::nullopt;
  ApiError e = Timeout("Too large resource version: " + std::to_string(revision) +
                           ", current: " + std::to_string(cacher_->applied_revision()),
                       1);
  e.causes.push_back({"ResourceVersionTooLarge", "Too large resource version", ""});
  return e;
}

ApiOr<CachedObjectPtr> ResourceStorage::Get(const std::string& ns, const std::string& name,
                                            const std::string& resource_version) {
  std::string key = StorageKey(*info_, ns, name);
  if (!cache_->keeps_objects() && !resource_version.empty()) {
    // No objects in the cache: any version, or one not older than N, is read from the store.
    store::Revision rv = 0;
    if (!ParseRevision(resource_version, &rv)) {
      return BadRequest("invalid resource version \"" + resource_version + "\"");
    }
    if (rv > 0) {
      if (auto err = WaitForCache(rv)) return *err;
    }
    return Get(ns, name, "");
  }
  if (resource_version.empty()) {
    store::RangeRequest req;
    req.key = key;
    auto resp = Timed(store_latency_.get, [&] { return kv_->Range(req); });
    if (!resp.ok()) return FromStatus(resp.status(), info_->gvr.Gr(), name);
    if (resp->kvs.empty()) return NotFound(info_->gvr.Gr(), name);
    auto obj = CachedObject::FromKeyValue(*info_, *resp->kvs[0]);
    if (!obj.ok()) return InternalError(obj.status().message());
    return *obj;
  }
  store::Revision rv = 0;
  if (!ParseRevision(resource_version, &rv)) {
    return BadRequest("invalid resource version \"" + resource_version + "\"");
  }
  if (rv > 0) {
    if (auto err = WaitForCache(rv)) return *err;
  }
  // "0": whatever the cache holds, without waiting. The server's own lookups (admission's
  // ServiceAccount, TokenRequest's bound objects) read this way on every pod create.
  CachedObjectPtr obj = cache_->Get(key);
  if (!obj) return NotFound(info_->gvr.Gr(), name);
  return obj;
}

ApiOr<ListResult> ResourceStorage::ListFromCache(const ListOptions& options,
                                                 const std::string& start_key) {
  // No objects in the cache (Events): the store's current state, which is at least as new.
  if (!cache_->keeps_objects()) return ListFromStore(options, 0, start_key);
  bool more = false;
  size_t limit = options.limit > 0 ? static_cast<size_t>(options.limit) : 0;
  WatchCache::ListResult r = cache_->List(options.filter, start_key, limit, &more);
  ListResult out;
  out.revision = r.revision;
  out.items = std::move(r.items);
  if (more && !out.items.empty()) {
    out.continue_token = ContinueAfter(*info_, out.revision, *out.items.back());
    out.remaining_item_count = r.remaining;
  }
  return out;
}

ApiOr<ListResult> ResourceStorage::ListFromStore(const ListOptions& options,
                                                 store::Revision revision,
                                                 const std::string& start_key) {
  std::string prefix = StoragePrefix(*info_, options.filter.ns);
  ListResult out;
  out.revision = revision;
  std::string from = std::max(prefix, start_key);
  const std::string end = store::PrefixEnd(prefix);
  const size_t limit = options.limit > 0 ? static_cast<size_t>(options.limit) : 0;
  // Without a selector every key of the range is an item: one page is exactly `limit` keys of the
  // store. With one, some keys may not match: ask for more and go on from where a batch ended.
  const WatchFilter& f = options.filter;
  const bool selective = !f.name.empty() || !f.labels.Empty() || !f.fields.Empty();
  while (true) {
    store::RangeRequest req;
    req.key = from;
    req.range_end = end;
    req.revision = revision;
    if (limit > 0) req.limit = selective ? std::max<int64_t>(options.limit * 2, 64) : options.limit;
    auto resp = Timed(store_latency_.list, [&] { return kv_->Range(req); });
    if (!resp.ok()) {
      if (store::IsCompacted(resp.status())) {
        return Expired("too old resource version: " + std::to_string(revision) + " (" +
                       std::to_string(kv_->CompactRevision()) + ")");
      }
      if (store::IsFutureRevision(resp.status())) {
        if (auto err = WaitForCache(revision)) return *err;
        continue;
      }
      return FromStatus(resp.status(), info_->gvr.Gr());
    }
    if (revision == 0) {  // the store's current state: every further batch reads that revision
      revision = resp->header_revision;
      out.revision = revision;
    }
    for (const auto& kv : resp->kvs) {
      auto obj = CachedObject::FromKeyValue(*info_, *kv);
      if (!obj.ok()) return InternalError(obj.status().message());
      if (!options.filter.Matches(*info_, **obj)) continue;
      if (limit > 0 && out.items.size() == limit) {
        out.continue_token = ContinueAfter(*info_, revision, *out.items.back());
        return out;
      }
      out.items.push_back(std::move(*obj));
    }
    if (!resp->more) return out;
    // The page is full and the store has more keys: upstream gives a continue token then too,
    // whether or not any of the rest matches a selector — and, without a selector, the number
    // of the rest (one batch was the whole page).
    if (limit > 0 && out.items.size() == limit) {
      out.continue_token = ContinueAfter(*info_, revision, *out.items.back());
      if (!selective) out.remaining_item_count = resp->count - static_cast<int64_t>(limit);
      return out;
    }
    from = resp->kvs.back()->key;
    from.push_back('\0');
  }
}

ApiOr<ListResult> ResourceStorage::ListCurrentFromStore(const WatchFilter& filter) {
  ListOptions options;
  options.filter = filter;
  return ListFromStore(options, 0, "");
}

ApiOr<ListResult> ResourceStorage::List(const ListOptions& options) {
  const std::string& rv_text = options.resource_version;
  const std::string& match = options.resource_version_match;
  store::Revision rv = 0;
  if (!rv_text.empty() && !ParseRevision(rv_text, &rv)) {
    return BadRequest("invalid resource version \"" + rv_text + "\"");
  }
  // Upstream's ValidateListOptions: 422 on ListOptions.meta.k8s.io.
  if (!match.empty()) {
    std::vector<StatusCause> causes;
    if (rv_text.empty()) {
      causes.push_back(
          FieldForbidden("resourceVersionMatch",
                         "resourceVersionMatch is forbidden unless resourceVersion is provided"));
    }
    if (!options.continue_token.empty()) {
      causes.push_back(FieldForbidden(
          "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"));
    }
    if (match != "NotOlderThan" && match != "Exact") {
      causes.push_back(FieldNotSupported("resourceVersionMatch", json::value(match),
                                         {"Exact", "NotOlderThan", ""}));
    }
    if (match == "Exact" && rv_text == "0") {
      causes.push_back(
          FieldForbidden("resourceVersionMatch",
                         "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
    }
    if (!causes.empty()) {
      return Invalid({"meta.k8s.io", "v1", "ListOptions"}, "", std::move(causes));
    }
  }
  if (!options.continue_token.empty()) {
    if (!rv_text.empty() && rv != 0) {
      return BadRequest("specifying resource version is not allowed when using continue");
    }
    store::Revision snapshot = 0;
    std::string suffix;
    if (!DecodeContinue(options.continue_token, &snapshot, &suffix)) {
      return BadRequest("continue key is not valid: invalid continue token");
    }
    std::string start = StoragePrefix(*info_, "") + suffix;
    auto result = ListFromStore(options, snapshot, start);
    if (!result.ok() && result.error().code == 410) {
      ApiError e = Expired(
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter, or use the continue token in "
          "this response to retrieve the remainder of the results. Continuing with the provided "
          "token results in an inconsistent list - objects that were created, modified, or "
          "deleted between the time the first chunk was returned and now may show up in the "
          "list.");
      return e;
    }
    return result;
  }
  // Exact snapshot: either asked for, or implied by a limit with a specific version.
  if (match == "Exact" || (rv > 0 && options.limit > 0 && match.empty())) {
    return ListFromStore(options, rv, "");
  }
  if (rv_text == "0") {
    // "Any" version may be served, and upstream serves whatever its cache holds. Ours waits (up
    // to a bound, then serves what it has) until the cache holds every write acknowledged before
    // this request: an informer starting after a restart never misses objects its previous
    // incarnation wrote just before (a controller would act on them twice).
    cacher_->WaitFresh(options_.too_large_rv_wait);
    ListOptions all = options;
    all.limit = 0;  // resourceVersion=0 is served whole from the cache (limit may be ignored)
    return ListFromCache(all, "");
  }
  if (rv > 0) {
    if (auto err = WaitForCache(rv)) return *err;
  } else if (!cacher_->WaitFresh(options_.too_large_rv_wait)) {
    return Timeout("timed out waiting for the watch cache to catch up", 1);
  }
  return ListFromCache(options, "");
}

ApiOr<ResourceStorage::UpdateResult> ResourceStorage::Update(const std::string& ns,
                                                             const std::string& name,
                                                             const UpdateFn& fn,
                                                             const WriteContext& ctx,
                                                             bool allow_create) {
  const std::string key = StorageKey(*info_, ns, name);
  const bool status_update = ctx.subresource == "status";
  // The first attempt starts from the watch cache's version; anything that version decides
  // alone — an error, "nothing changed", a failed compare — is checked again against a fresh
  // read from the store before it is believed (upstream's GuaranteedUpdate does the same).
  bool try_cache = !ctx.dry_run;
  for (int attempt = 0; attempt < kUpdateAttempts; ++attempt) {
    std::optional<Current> current;
    if (try_cache) current = CachedCurrent(key);
    if (!current) {
      try_cache = false;
      auto read = ReadCurrent(key);
      if (!read.ok()) return read.error();
      current = std::move(*read);
    }
    const bool guess = current && current->from_cache;
    // Returns `error` unless the decision was made on a guess: then retry from the store.
    auto settle = [&](ApiError error) -> std::optional<ApiError> {
      if (guess) {
        try_cache = false;
        return std::nullopt;
      }
      return error;
    };
    if (!current) {
      if (!ctx.force_allow_create && (!allow_create || !strategy_->AllowCreateOnUpdate())) {
        return NotFound(info_->gvr.Gr(), name);
      }
      auto desired = fn(nullptr);
      if (!desired.ok()) return desired.error();
      if (!desired->resource_version().empty()) {
        // Upstream: an update that names a version of something that does not exist.
        return NotFound(info_->gvr.Gr(), name);
      }
      auto created = Create(ns, std::move(*desired), ctx);
      if (!created.ok()) {
        if (created.error().reason == "AlreadyExists") continue;  // raced with a create
        return created.error();
      }
      return UpdateResult{std::move(*created), true};
    }
    const api::Object& old = *current->object;
    auto desired_or = fn(&old);
    if (!desired_or.ok()) {
      if (auto e = settle(desired_or.error())) return *e;
      continue;
    }
    api::Object obj = std::move(*desired_or);

    // Optimistic concurrency: a resourceVersion in the request must match the stored one.
    const bool pinned = !obj.resource_version().empty();
    if (pinned && obj.resource_version() != old.resource_version()) {
      if (auto e = settle(ConflictModified(info_->gvr.Gr(), name))) return *e;
      continue;
    }
    if (!pinned && !strategy_->AllowUnconditionalUpdate()) {
      return Invalid(info_->Gvk(), name,
                     {FieldInvalid("metadata.resourceVersion", json::value(""),
                                   "must be specified for an update")});
    }
    if (info_->namespaced) obj.set_namespace(ns);
    obj.SetGvk(old.Gvk());
    if (!ctx.raw) strategy_->Default(obj);
    if (ctx.raw) {
      KeepServerMetadata(obj, old);
    } else if (status_update) {
      strategy_->PrepareForStatusUpdate(obj, old);
    } else {
      KeepServerMetadata(obj, old);
      strategy_->PrepareForUpdate(obj, old);
    }
    if (!ctx.raw) strategy_->Default(obj);
    TrackManagedFields(&old, obj, ctx);
    std::vector<StatusCause> causes =
        ValidateObjectMeta(obj, info_->namespaced, strategy_->name_rule());
    for (auto& c : ValidateObjectMetaUpdate(obj, old)) causes.push_back(std::move(c));
    if (causes.empty() && !ctx.raw) {
      causes = status_update ? strategy_->ValidateStatusUpdate(obj, old)
                             : strategy_->ValidateUpdate(obj, old);
    }
    if (!causes.empty()) {
      if (auto e = settle(Invalid(info_->Gvk(), name, std::move(causes)))) return *e;
      continue;
    }
    if (auto err = RunAdmission("UPDATE", ns, name, &obj, &old, ctx)) {
      if (auto e = settle(std::move(*err))) return *e;
      continue;
    }

    // Nothing changed: no write, no new resourceVersion, no watch event.
    obj.set_resource_version(old.resource_version());
    if (api::JsonEqual(obj.doc(), old.doc())) {
      if (guess) {  // unchanged from the cache's version, which may be behind the store
        try_cache = false;
        continue;
      }
      return UpdateResult{
          CachedObject::FromObject(*info_, key, std::move(obj), current->mod_revision), false};
    }
    if (ctx.dry_run) {
      return UpdateResult{
          CachedObject::FromObject(*info_, key, std::move(obj), current->mod_revision), false};
    }
    store::TxnRequest txn;
    txn.compare.push_back({key, "", store::Compare::Target::kModRevision,
                           store::Compare::Result::kEqual, current->mod_revision, ""});
    // The last finalizer of an object being deleted (with no grace period left) removes it.
    const bool remove = obj.being_deleted() && strategy_->ReadyToDelete(obj) &&
                        api::FindInt(obj.doc(), {"metadata", "deletionGracePeriodSeconds"}) == 0;
    std::shared_ptr<PendingWrite> write;
    if (remove) {
      txn.success.push_back(store::DeleteRangeRequest{key, "", false});
    } else {
      auto prepared = Prepare(key, obj);
      if (!prepared.ok()) return prepared.error();
      write = std::move(*prepared);
      LendObject(*write, obj);  // not needed here any more: a failed attempt starts afresh
      txn.success.push_back(store::PutRequest{key, write->json(), false, 0, write->compressed()});
    }
    auto resp = write ? CommitOffered(std::move(txn), write, store_latency_.update)
                      : Timed(store_latency_.update, [&] { return kv_->Txn(std::move(txn)); });
    if (!resp.ok()) return FromStatus(resp.status(), info_->gvr.Gr(), name);
    if (!resp->succeeded) {
      if (guess) {
        try_cache = false;
        continue;
      }
      if (pinned) return ConflictModified(info_->gvr.Gr(), name);
      continue;  // someone wrote in between; re-read and re-apply
    }
    if (remove) {
      return UpdateResult{
          CachedObject::FromObject(*info_, key, std::move(obj), resp->header_revision), false};
    }
    return UpdateResult{write->Entry(resp->header_revision), false};
  }
  return ConflictModified(info_->gvr.Gr(), name);
}

ApiOr<DeleteResult> ResourceStorage::Delete(const std::string& ns, const std::string& name,
                                            const DeleteOptions& options, const WriteContext& ctx) {
  const std::string key = StorageKey(*info_, ns, name);
  const std::string& policy = options.propagation_policy;
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    return Invalid({"meta.k8s.io", "v1", "DeleteOptions"}, "",
                   {FieldNotSupported("propagationPolicy", json::value(policy),
                                      {"Foreground", "Background", "Orphan", "nil"})});
  }
  if (options.grace_period_seconds && *options.grace_period_seconds < 0) {
    return Invalid({"meta.k8s.io", "v1", "DeleteOptions"}, "",
                   {FieldInvalid("gracePeriodSeconds", json::value(*options.grace_period_seconds),
                                 "must be greater than or equal to 0")});
  }
  // As in Update: start from the watch cache's version; what it decides alone is checked again
  // against a fresh store read.
  bool try_cache = !options.dry_run;
  for (int attempt = 0; attempt < kUpdateAttempts; ++attempt) {
    std::optional<Current> cur;
    if (try_cache) cur = CachedCurrent(key);
    if (!cur) {
      try_cache = false;
      auto read = ReadCurrent(key);
      if (!read.ok()) return read.error();
      if (!*read) return NotFound(info_->gvr.Gr(), name);
      cur = std::move(*read);
    }
    const bool guess = cur->from_cache;
    const api::Object& old = *cur->object;
    std::optional<ApiError> refused;
    if (!options.precondition_uid.empty() && options.precondition_uid != old.uid()) {
      refused = Conflict(info_->gvr.Gr(), name,
                         "Precondition failed: UID in precondition: " + options.precondition_uid +
                             ", UID in object meta: " + std::string(old.uid()));
    } else if (!options.precondition_resource_version.empty() &&
               options.precondition_resource_version != old.resource_version()) {
      refused = Conflict(info_->gvr.Gr(), name,
                         "Precondition failed: ResourceVersion in precondition: " +
                             options.precondition_resource_version +
                             ", ResourceVersion in meta: " + std::string(old.resource_version()));
    } else {
      refused = RunAdmission("DELETE", ns, name, nullptr, &old, ctx);
    }
    if (refused) {
      if (!guess) return *refused;
      try_cache = false;
      continue;
    }

    // Decide: remove now, or mark (deletionTimestamp) and let finalizers / the kubelet finish.
    api::Object obj = old;
    std::string_view effective =
        policy.empty() ? strategy_->DefaultPropagationPolicy() : std::string_view(policy);
    bool changed = false;
    if (!old.being_deleted() || !policy.empty()) {
      if (effective == "Orphan") {
        changed |= obj.RemoveFinalizer("foregroundDeletion");
        changed |= obj.AddFinalizer("orphan");
      } else if (effective == "Foreground") {
        changed |= obj.RemoveFinalizer("orphan");
        changed |= obj.AddFinalizer("foregroundDeletion");
      } else if (!policy.empty()) {
        changed |= obj.RemoveFinalizer("orphan");
        changed |= obj.RemoveFinalizer("foregroundDeletion");
      }
    }
    int64_t grace = strategy_->GracePeriod(old, options.grace_period_seconds);
    const bool pending = grace > 0 || !strategy_->ReadyToDelete(obj);
    if (pending) {
      json::object& m = obj.mutable_metadata();
      auto now = options_.clock->WallNow();
      if (!old.being_deleted()) {
        m["deletionTimestamp"] = util::FormatRfc3339(now + std::chrono::seconds(grace));
        m["deletionGracePeriodSeconds"] = grace;
        strategy_->PrepareForDelete(obj);
        changed = true;
      } else {
        // Already terminating: a shorter grace period moves the deadline closer.
        int64_t old_grace = api::FindInt(old.doc(), {"metadata", "deletionGracePeriodSeconds"});
        if (grace < old_grace) {
          m["deletionTimestamp"] = util::FormatRfc3339(now + std::chrono::seconds(grace));
          m["deletionGracePeriodSeconds"] = grace;
          changed = true;
        }
      }
      if (grace == 0 && strategy_->ReadyToDelete(obj)) {
        // Nothing left to wait for after all (e.g. grace shortened to 0).
      } else {
        if (!changed || options.dry_run) {
          if (guess) {  // unchanged from the cache's version, which may be behind the store
            try_cache = false;
            continue;
          }
          return DeleteResult{
              CachedObject::FromObject(*info_, key, std::move(obj), cur->mod_revision), false};
        }
        auto write = Prepare(key, obj);
        if (!write.ok()) return write.error();
        store::TxnRequest txn;
        txn.compare.push_back({key, "", store::Compare::Target::kModRevision,
                               store::Compare::Result::kEqual, cur->mod_revision, ""});
        txn.success.push_back(
            store::PutRequest{key, (*write)->json(), false, 0, (*write)->compressed()});
        auto resp = CommitOffered(txn, *write, store_latency_.update);
        if (!resp.ok()) return FromStatus(resp.status(), info_->gvr.Gr(), name);
        if (!resp->succeeded) {
          try_cache = false;
          continue;
        }
        return DeleteResult{(*write)->Entry(resp->header_revision), false};
      }
    }
    if (options.dry_run) {
      return DeleteResult{CachedObject::FromObject(*info_, key, std::move(obj), cur->mod_revision),
                          true};
    }
    store::TxnRequest txn;
    txn.compare.push_back({key, "", store::Compare::Target::kModRevision,
                           store::Compare::Result::kEqual, cur->mod_revision, ""});
    txn.success.push_back(store::DeleteRangeRequest{key, "", false});
    auto resp = Timed(store_latency_.remove, [&] { return kv_->Txn(std::move(txn)); });
    if (!resp.ok()) return FromStatus(resp.status(), info_->gvr.Gr(), name);
    if (!resp->succeeded) {
      try_cache = false;
      continue;
    }
    return DeleteResult{CachedObject::FromObject(*info_, key, std::move(obj), cur->mod_revision),
                        true};
  }
  return ConflictModified(info_->gvr.Gr(), name);
}

}  // namespace converge::apiserver
