// CachedObject: one version of an object as the API server holds it — serialized once, with what
// selectors need — and EncodedObject, the one serialization a write makes of it.
//
// Encode once: a write serializes the object once (EncodeObject), without
// metadata.resourceVersion, which is what the store keeps (upstream stores objects without it:
// the revision is the resourceVersion). Once the store has assigned the revision, the cache's and
// the response's JSON is the same bytes with `"resourceVersion":"<revision>"` spliced in as the
// last member of metadata (EncodedObject::WithResourceVersion): no second serialization, no copy
// of the document. Strings are allocated at their exact size (a serializer's growing buffer would
// keep up to twice the bytes alive for as long as the cache holds the object).
//
// Held compressed: the watch cache's entries (Holding::kInCache) keep those bytes as a zstd frame
// when that pays, the frame the store keeps (the writer compresses once: PendingWrite::compressed
// goes to the store with the value); json() decompresses it and splices the revision in.
//
// Decoded(): in-process readers (the informers of the all-in-one server's components) share one
// parsed copy of each version instead of each parsing the bytes into a copy of its own. The
// parsed object is remembered weakly: it lives as long as some reader holds it (an informer's
// cache does, while this is the current version) and costs the cache nothing afterwards.
// DecodedWithoutManagedFields() is the same for readers that drop metadata.managedFields (the
// components' informers, as upstream's controller manager and scheduler do with an informer
// transform): a third of a pod's parsed size. The two are separate objects, so the full one (what
// a read-modify-write starts from) never lacks its managedFields.
//
// The writer's own object: a write that committed the version already holds it parsed, so it can
// hand it over (SeedDecodedWithoutManagedFields) instead of a reader parsing the bytes again. The
// entry holds such a seed strongly only until the first reader takes it or the version is
// superseded (ReleaseSeed; the watch cache keeps the newest versions' parsed objects alive a
// while longer for watchers that read later: WatchCacheOptions::recent_objects), and writers
// seed only while some in-process watcher decodes the resource (WatchCache::SeedsDecodedObjects):
// a version nobody reads costs nothing.
//
// Thread-safety: immutable once built (the memo behind Decoded is internally synchronized), so a
// CachedObject is shared freely between the cache, its history, watchers and readers.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/labels.h"
#include "api/object.h"
#include "api/resource.h"
#include "store/kv.h"
#include "util/status.h"

namespace converge::apiserver {

// An object serialized without metadata.resourceVersion, and where that member goes.
struct EncodedObject {
  std::string json;  // what the store keeps
  // `json` with metadata.resourceVersion = `revision` (the last member of metadata).
  std::string WithResourceVersion(store::Revision revision) const;
  // Offset of the resourceVersion value's first digit in WithResourceVersion's output.
  size_t ResourceVersionValueOffset() const;

  size_t insert_at = 0;         // where the member is spliced in
  bool needs_comma = false;     // something precedes it in metadata
  bool needs_metadata = false;  // the object has no metadata object: one is added
};

// Serializes `doc` (compact JSON, members in order) leaving out metadata.resourceVersion.
EncodedObject EncodeObject(const boost::json::object& doc);

// `encoded.json` as the store compresses values (store::CompressValue); null where compression
// does not pay (small or incompressible values).
std::shared_ptr<const std::string> CompressEncoded(const EncodedObject& encoded);

// Whether a CachedObject is built to be held by the watch cache (its bytes compressed, when that
// pays: it may be held as long as the version is current) or for one use (a response, a page read
// from the store: compressing it would only cost).
enum class Holding { kTransient, kInCache };

// Every cached version of every object is one of these (150,000 pods are 150,000 of them plus the
// history), so it holds each thing once and packed: the namespace and name are views of the
// storage key, the labels and field values are packed strings (PackLabels, PackFieldValues), and
// the JSON is held compressed when that pays: the zstd frame of the bytes without
// resourceVersion (what the store keeps, and the frame the writer gave the store), into which
// json() splices the revision as it decompresses. A 4 KB pod is held in about 1.6 KB.
struct CachedObject {
  std::string storage_key;       // "/registry/pods/<namespace>/<name>"
  store::Revision revision = 0;  // metadata.resourceVersion
  // metadata.labels, packed (PackLabels): matched by MatchesLabels, rebuilt by LabelsObject.
  std::string labels;
  // Values of the resource's selectable fields (ResourceInfo::selectable_fields), same order,
  // packed into one string (PackFieldValues): an Event has eleven, and every cached version of
  // every object carries them.
  std::string field_values;
  // Where the resourceVersion's digits are in json() (WithRevision rewrites them).
  uint32_t rv_value_at = 0;
  uint32_t rv_value_len = 0;

  // The full object, resourceVersion set. Held compressed, it is decompressed here: callers that
  // hold the result at the same time share one copy (a watch event's watchers), later ones
  // decompress again (zstd: ~1.4 µs per KB of a pod's JSON). Read it once per use: each call may
  // decompress.
  std::shared_ptr<const std::string> json() const;
  // json() if it needs no decompressing (held plain, or decompressed and still held by some
  // caller); else null.
  std::shared_ptr<const std::string> JsonIfAtHand() const;
  // Whether the bytes are held compressed.
  bool compressed() const { return compressed_; }
  // The bytes held: the JSON, or with compressed() the frame (for tests and size accounting).
  const std::string& held_bytes() const { return *bytes_; }

  // The namespace ("" for cluster-scoped resources) and name: views of storage_key.
  std::string_view ns() const { return std::string_view(storage_key).substr(ns_at_, ns_len_); }
  std::string_view name() const { return std::string_view(storage_key).substr(name_at_); }
  api::ObjectKey key() const { return {std::string(ns()), std::string(name())}; }
  // Sets where ns() and name() are in storage_key (a key under `info`'s storage prefix).
  void SetKeyPositions(const api::ResourceInfo& info);

  // Whether metadata.labels match `selector` (as LabelSelector::Matches on the parsed object).
  bool MatchesLabels(const api::LabelSelector& selector) const;
  // metadata.labels as an object (empty without labels).
  boost::json::object LabelsObject() const;
  // Whether metadata.deletionTimestamp is set: answered without reading the JSON (namespace
  // admission asks it of the request's namespace on every create).
  bool being_deleted() const { return being_deleted_; }

  // Parses json() (the cache keeps only bytes: parsed objects cost 3-5x the memory).
  util::StatusOr<api::Object> Parse() const;
  // The parsed object, shared with every other caller while any of them holds it.
  util::StatusOr<api::ObjectPtr> Decoded() const;
  // As Decoded, without metadata.managedFields; shared by every caller of this method.
  util::StatusOr<api::ObjectPtr> DecodedWithoutManagedFields() const;
  // Hands the writer's object of this version to DecodedWithoutManagedFields. `obj` must be the
  // object this version's bytes were encoded from (its managedFields and resourceVersion may be
  // anything: they are set here). A no-op if a reader already decoded this version.
  void SeedDecodedWithoutManagedFields(api::Object obj) const;
  // Drops a seed no reader took (the version is superseded); it is remembered weakly, so a
  // reader still gets it while someone else holds it.
  void ReleaseSeed() const;
  // What DecodedWithoutManagedFields returns if it needs no parsing (the seed, or the object a
  // reader holds), else null. DecodedWithoutManagedFields returns the same object for as long
  // as the caller keeps it.
  api::ObjectPtr DecodedWithoutManagedFieldsIfAtHand() const;
  // The value a field selector compares for `field`.
  std::string FieldValue(const api::ResourceInfo& info, std::string_view field) const;
  // The same object with resourceVersion `revision` (a DELETED event carries the last state at
  // the deletion's revision).
  std::shared_ptr<const CachedObject> WithRevision(store::Revision revision) const;

  // Builds a cache entry from an object, setting metadata.resourceVersion to `revision`.
  static std::shared_ptr<const CachedObject> FromObject(const api::ResourceInfo& info,
                                                        std::string storage_key, api::Object obj,
                                                        store::Revision revision,
                                                        Holding holding = Holding::kTransient);
  // Builds a cache entry from `obj` as `encoded` serialized it (EncodeObject(obj.doc())), at
  // `revision`: the JSON is spliced, not serialized again. `frame`: CompressEncoded(encoded), if
  // the caller has it (held then whatever `holding` says); else kInCache compresses here.
  static std::shared_ptr<const CachedObject> FromEncoded(
      const api::ResourceInfo& info, std::string storage_key, const api::Object& obj,
      const EncodedObject& encoded, store::Revision revision,
      std::shared_ptr<const std::string> frame = nullptr, Holding holding = Holding::kTransient);
  // Builds a cache entry from a stored key-value (its mod_revision becomes the resourceVersion).
  static util::StatusOr<std::shared_ptr<const CachedObject>> FromKeyValue(
      const api::ResourceInfo& info, const store::KeyValue& kv,
      Holding holding = Holding::kTransient);

 private:
  friend class PendingWrite;  // builds its entry with SetBytes
  // Holds `encoded` at `revision`: its frame when given (`frame`, CompressValue of
  // encoded.json), else the JSON with the revision spliced in.
  void SetBytes(const EncodedObject& encoded, store::Revision revision,
                std::shared_ptr<const std::string> frame);

  // The JSON with resourceVersion (compressed_ false), or the zstd frame of the JSON without it
  // (compressed_ true: json() splices the revision in at rv_value_at, after the member's
  // beginning as needs_comma_ and needs_metadata_ say, EncodedObject's flags).
  std::shared_ptr<const std::string> bytes_;
  // json()'s decompressed copy while some caller holds it (the same mutex pool as decoded_).
  mutable std::weak_ptr<const std::string> plain_;
  // Decoded's memo, guarded by a mutex of a small shared pool chosen by this object's address
  // (a mutex per object would cost 40 bytes on every cached version; std::atomic<weak_ptr> of
  // libstdc++ 12 is not understood by ThreadSanitizer).
  mutable std::weak_ptr<const api::Object> decoded_;
  mutable std::weak_ptr<const api::Object> decoded_without_managed_fields_;  // the same pool
  // The writer's object until a reader of DecodedWithoutManagedFields takes it (the same pool).
  mutable std::shared_ptr<const api::Object> seed_;
  uint32_t ns_at_ = 0;
  uint32_t ns_len_ = 0;
  uint32_t name_at_ = 0;
  bool compressed_ = false;
  bool needs_comma_ = false;
  bool needs_metadata_ = false;
  bool being_deleted_ = false;
};
using CachedObjectPtr = std::shared_ptr<const CachedObject>;

// A write about to be committed, as the writer hands it to the watch cache before the store
// sees it (WatchCache::Offer): when the store's event for the key carries exactly json(), the
// cache takes its entry from here — the revision spliced into the bytes already serialized —
// instead of parsing and encoding the stored value again. The writer's response comes from the
// same Entry, so cache and response share one CachedObject.
//
// Thread-safety: safe for concurrent use (the writer and the cache's dispatcher both call Entry).
class PendingWrite {
 public:
  // `encoded` is EncodeObject(obj.doc()).
  PendingWrite(std::shared_ptr<const api::ResourceInfo> info, std::string storage_key,
               const api::Object& obj, EncodedObject encoded);
  PendingWrite(const PendingWrite&) = delete;
  PendingWrite& operator=(const PendingWrite&) = delete;

  const std::string& storage_key() const { return storage_key_; }
  // The bytes the store is given.
  const std::string& json() const { return encoded_.json; }
  // Their CompressEncoded frame (null if compression does not pay): the store is given it with
  // the bytes (PutRequest::compressed_value) and the cache entry holds it.
  const std::shared_ptr<const std::string>& compressed() const { return frame_; }
  // The cache entry once committed at `revision`; built once, shared by every caller.
  CachedObjectPtr Entry(store::Revision revision);
  // The object this write was encoded from, for the entry's readers: Entry seeds it
  // (CachedObject::SeedDecodedWithoutManagedFields), so whichever of the cache and the writer
  // builds the entry first, no in-process watcher parses it. TakeObject gives it back while no
  // entry has been built (the write put nothing and will be retried).
  void KeepObjectForReaders(api::Object obj);
  std::optional<api::Object> TakeObject();

 private:
  const std::string storage_key_;
  const EncodedObject encoded_;
  const std::shared_ptr<const std::string> frame_;
  const std::shared_ptr<const api::ResourceInfo> info_;
  const bool being_deleted_;  // the object has a deletionTimestamp
  std::mutex mu_;
  std::string labels_;        // guarded by mu_; moved into the first entry (PackLabels)
  std::string field_values_;  // guarded by mu_; moved into the first entry
  CachedObjectPtr entry_;     // guarded by mu_
  // The entry's JSON, for as long as this write lives (its response is written meanwhile); the
  // entry remembers it weakly (CachedObject::json). Guarded by mu_.
  std::shared_ptr<const std::string> plain_;
  std::optional<api::Object> object_;  // guarded by mu_; until Entry seeds it
};

// The values of `info`'s selectable fields in `doc` (api::FieldValue), packed for
// CachedObject::field_values: each as its length (LEB128) then its bytes, in one string of exactly
// that size.
std::string PackFieldValues(const api::ResourceInfo& info, const boost::json::object& doc);
// The `index`th value packed by PackFieldValues ("" past the end).
std::string_view UnpackFieldValue(std::string_view packed, size_t index);

// metadata.labels of `doc`, packed for CachedObject::labels: each key and value as its length
// (LEB128) then its bytes, in one string of exactly that size; a value that is not a string is
// packed as "" (LabelSelector matches it so).
std::string PackLabels(const boost::json::object& doc);
// The value of label `key` in `packed`; nullopt when there is no such label.
std::optional<std::string_view> PackedLabelValue(std::string_view packed, std::string_view key);

// Storage key helpers: "/registry/pods/default/web".
std::string StorageKey(const api::ResourceInfo& info, std::string_view ns, std::string_view name);
// The key prefix for listing a namespace ("/registry/pods/default/") or everything
// ("/registry/pods/").
std::string StoragePrefix(const api::ResourceInfo& info, std::string_view ns);
// The ObjectKey of a storage key under `info`'s prefix.
api::ObjectKey KeyFromStorageKey(const api::ResourceInfo& info, std::string_view storage_key);

}  // namespace converge::apiserver
