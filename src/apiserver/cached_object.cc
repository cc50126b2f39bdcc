#include "apiserver/cached_object.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <mutex>
#include <optional>

#include "apiserver/stored_json.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

constexpr std::string_view kResourceVersionMember = "\"resourceVersion\":\"";

// Appends compact JSON to `out` through one reusable serializer.
class JsonAppender {
 public:
  explicit JsonAppender(std::string* out) : out_(out) {}
  void Value(const json::value& v) {
    serializer_.reset(&v);
    Drain();
  }
  void Object(const json::object& o) {
    serializer_.reset(&o);
    Drain();
  }
  void Key(std::string_view k) {
    serializer_.reset(k);
    Drain();
    out_->push_back(':');
  }

 private:
  void Drain() {
    while (!serializer_.done()) {
      std::string_view part = serializer_.read(buffer_, sizeof(buffer_));
      out_->append(part);
    }
  }

  std::string* const out_;
  json::serializer serializer_;
  char buffer_[4096];
};

std::string_view Digits(store::Revision revision, char (&buf)[24]) {
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), revision);
  (void)ec;
  return std::string_view(buf, static_cast<size_t>(end - buf));
}

// The prefix spliced in before the revision's digits.
std::string_view SplicePrefix(const EncodedObject& e) {
  if (e.needs_metadata) {
    return e.needs_comma ? std::string_view(",\"metadata\":{\"resourceVersion\":\"")
                         : std::string_view("\"metadata\":{\"resourceVersion\":\"");
  }
  return e.needs_comma ? std::string_view(",\"resourceVersion\":\"") : kResourceVersionMember;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// EncodedObject

EncodedObject EncodeObject(const json::object& doc) {
  // Serialized into a per-thread scratch buffer, then copied once at its exact size.
  thread_local std::string scratch;
  scratch.clear();
  EncodedObject e;
  JsonAppender append(&scratch);
  bool saw_metadata = false;
  scratch.push_back('{');
  bool first = true;
  for (const json::key_value_pair& kv : doc) {
    if (!first) scratch.push_back(',');
    first = false;
    append.Key(kv.key());
    if (kv.key() != "metadata" || !kv.value().is_object() || saw_metadata) {
      append.Value(kv.value());
      continue;
    }
    saw_metadata = true;
    scratch.push_back('{');
    bool first_member = true;
    for (const json::key_value_pair& m : kv.value().get_object()) {
      if (m.key() == "resourceVersion") continue;
      if (!first_member) scratch.push_back(',');
      first_member = false;
      append.Key(m.key());
      append.Value(m.value());
    }
    e.insert_at = scratch.size();
    e.needs_comma = !first_member;
    scratch.push_back('}');
  }
  if (!saw_metadata) {
    e.insert_at = scratch.size();
    e.needs_comma = !first;
    e.needs_metadata = true;
  }
  scratch.push_back('}');
  e.json.assign(scratch.data(), scratch.size());
  // Keep the scratch of a thread that once encoded a huge object from pinning that memory.
  if (scratch.capacity() > (1u << 20)) std::string().swap(scratch);
  return e;
}

std::string EncodedObject::WithResourceVersion(store::Revision revision) const {
  char buf[24];
  std::string_view digits = Digits(revision, buf);
  std::string_view prefix = SplicePrefix(*this);
  std::string_view suffix = needs_metadata ? std::string_view("\"}") : std::string_view("\"");
  std::string out;
  out.reserve(json.size() + prefix.size() + digits.size() + suffix.size());
  out.append(json, 0, insert_at);
  out.append(prefix);
  out.append(digits);
  out.append(suffix);
  out.append(json, insert_at);
  return out;
}

size_t EncodedObject::ResourceVersionValueOffset() const {
  return insert_at + SplicePrefix(*this).size();
}

// ---------------------------------------------------------------------------------------------
// CachedObject

util::StatusOr<api::Object> CachedObject::Parse() const {
  return api::Object::Parse(*json);
}

namespace {

// The pool of mutexes guarding CachedObject::decoded_ (held only to copy a weak_ptr).
std::mutex& DecodedMutex(const void* object) {
  static std::mutex pool[64];
  return pool[(reinterpret_cast<uintptr_t>(object) >> 6) % 64];
}

// Returns the object `memo` remembers, or parses `json` (dropping metadata.managedFields when
// `without_managed_fields`), remembers it in `memo` and returns it. `mu` guards `memo`.
util::StatusOr<api::ObjectPtr> SharedDecode(const std::string& json, bool without_managed_fields,
                                            std::mutex& mu,
                                            std::weak_ptr<const api::Object>& memo) {
  {
    std::lock_guard lock(mu);
    if (api::ObjectPtr held = memo.lock()) return held;
  }
  // Parsed outside the lock; two readers may parse at once, and both end up with the one that
  // was published first.
  CONVERGE_ASSIGN_OR_RETURN(api::Object parsed, api::Object::Parse(json));
  if (without_managed_fields) parsed.mutable_metadata().stable_erase("managedFields");
  auto fresh = std::make_shared<const api::Object>(std::move(parsed));
  std::lock_guard lock(mu);
  if (api::ObjectPtr other = memo.lock()) return other;
  memo = fresh;
  return fresh;
}

}  // namespace

util::StatusOr<api::ObjectPtr> CachedObject::Decoded() const {
  return SharedDecode(*json, /*without_managed_fields=*/false, DecodedMutex(this), decoded_);
}

util::StatusOr<api::ObjectPtr> CachedObject::DecodedWithoutManagedFields() const {
  return SharedDecode(*json, /*without_managed_fields=*/true, DecodedMutex(this),
                      decoded_without_managed_fields_);
}

std::string CachedObject::FieldValue(const api::ResourceInfo& info, std::string_view field) const {
  if (field == "metadata.name") return key.name;
  if (field == "metadata.namespace") return key.ns;
  for (size_t i = 0; i < info.selectable_fields.size(); ++i) {
    if (info.selectable_fields[i] == field) return std::string(UnpackFieldValue(field_values, i));
  }
  return "";
}

std::string PackFieldValues(const api::ResourceInfo& info, const json::object& doc) {
  // Built in a per-thread scratch, then copied once at its exact size.
  thread_local std::string scratch;
  scratch.clear();
  for (const std::string& f : info.selectable_fields) {
    std::string value = api::FieldValue(doc, f);
    size_t n = value.size();
    while (n >= 0x80) {
      scratch.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    scratch.push_back(static_cast<char>(n));
    scratch.append(value);
  }
  std::string packed(scratch);
  if (scratch.capacity() > (1u << 16)) std::string().swap(scratch);
  return packed;
}

std::string_view UnpackFieldValue(std::string_view packed, size_t index) {
  size_t at = 0;
  for (size_t i = 0; at < packed.size(); ++i) {
    size_t n = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= packed.size()) return {};
      auto byte = static_cast<unsigned char>(packed[at++]);
      n |= static_cast<size_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    if (n > packed.size() - at) return {};
    if (i == index) return packed.substr(at, n);
    at += n;
  }
  return {};
}

CachedObjectPtr CachedObject::WithRevision(store::Revision rev) const {
  auto c = std::make_shared<CachedObject>();
  c->storage_key = storage_key;
  c->key = key;
  c->revision = rev;
  c->labels = labels;
  c->field_values = field_values;
  char buf[24];
  std::string_view digits = Digits(rev, buf);
  std::string out;
  out.reserve(json->size() - rv_value_len + digits.size());
  out.append(*json, 0, rv_value_at);
  out.append(digits);
  out.append(*json, rv_value_at + rv_value_len);
  c->rv_value_at = rv_value_at;
  c->rv_value_len = digits.size();
  c->json = std::make_shared<const std::string>(std::move(out));
  return c;
}

CachedObjectPtr CachedObject::FromEncoded(const api::ResourceInfo& info, std::string storage_key,
                                          const api::Object& obj, const EncodedObject& encoded,
                                          store::Revision revision) {
  auto c = std::make_shared<CachedObject>();
  c->key = KeyFromStorageKey(info, storage_key);
  c->storage_key = std::move(storage_key);
  c->revision = revision;
  if (const json::object* l = obj.labels()) c->labels = *l;
  c->field_values = PackFieldValues(info, obj.doc());
  std::string text = encoded.WithResourceVersion(revision);
  char buf[24];
  c->rv_value_at = encoded.ResourceVersionValueOffset();
  c->rv_value_len = Digits(revision, buf).size();
  c->json = std::make_shared<const std::string>(std::move(text));
  return c;
}

CachedObjectPtr CachedObject::FromObject(const api::ResourceInfo& info, std::string storage_key,
                                         api::Object obj, store::Revision revision) {
  return FromEncoded(info, std::move(storage_key), obj, EncodeObject(obj.doc()), revision);
}

util::StatusOr<CachedObjectPtr> CachedObject::FromKeyValue(const api::ResourceInfo& info,
                                                           const store::KeyValue& kv) {
  auto obj = api::Object::Parse(kv.value);
  if (!obj.ok()) {
    return util::DataLoss("stored object at " + kv.key +
                          " is not valid JSON: " + obj.status().message());
  }
  // The stored bytes are what EncodeObject wrote: the revision is spliced into them instead of
  // serializing the parsed object again (the parse is for labels and field values).
  if (std::optional<EncodedObject> slot = FindResourceVersionSlot(kv.value)) {
    slot->json = kv.value;
    return FromEncoded(info, kv.key, *obj, *slot, kv.mod_revision);
  }
  return FromObject(info, kv.key, std::move(*obj), kv.mod_revision);
}

// ---------------------------------------------------------------------------------------------
// PendingWrite

PendingWrite::PendingWrite(std::shared_ptr<const api::ResourceInfo> info, std::string storage_key,
                           const api::Object& obj, EncodedObject encoded)
    : storage_key_(std::move(storage_key)), encoded_(std::move(encoded)), info_(std::move(info)) {
  if (const json::object* l = obj.labels()) labels_ = *l;
  field_values_ = PackFieldValues(*info_, obj.doc());
}

CachedObjectPtr PendingWrite::Entry(store::Revision revision) {
  std::lock_guard lock(mu_);
  if (entry_ != nullptr) {
    return entry_->revision == revision ? entry_ : entry_->WithRevision(revision);
  }
  auto c = std::make_shared<CachedObject>();
  c->key = KeyFromStorageKey(*info_, storage_key_);
  c->storage_key = storage_key_;
  c->revision = revision;
  c->labels = std::move(labels_);
  c->field_values = std::move(field_values_);
  char buf[24];
  c->json = std::make_shared<const std::string>(encoded_.WithResourceVersion(revision));
  c->rv_value_at = encoded_.ResourceVersionValueOffset();
  c->rv_value_len = Digits(revision, buf).size();
  entry_ = std::move(c);
  return entry_;
}

// ---------------------------------------------------------------------------------------------
// Keys

std::string StorageKey(const api::ResourceInfo& info, std::string_view ns, std::string_view name) {
  std::string key = info.storage_prefix;
  key += '/';
  if (info.namespaced) {
    key += ns;
    key += '/';
  }
  key += name;
  return key;
}

std::string StoragePrefix(const api::ResourceInfo& info, std::string_view ns) {
  std::string key = info.storage_prefix;
  key += '/';
  if (info.namespaced && !ns.empty()) {
    key += ns;
    key += '/';
  }
  return key;
}

api::ObjectKey KeyFromStorageKey(const api::ResourceInfo& info, std::string_view storage_key) {
  std::string_view rest =
      storage_key.substr(std::min(storage_key.size(), info.storage_prefix.size() + 1));
  if (!info.namespaced) return {"", std::string(rest)};
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return {"", std::string(rest)};
  return {std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1))};
}

}  // namespace converge::apiserver
