#include "apiserver/cached_object.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

#include "apiserver/stored_json.h"
#include "store/record.h"
#include "util/metrics.h"
#include "util/packed_strings.h"

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

std::shared_ptr<const std::string> CompressEncoded(const EncodedObject& encoded) {
  std::string frame;
  if (!store::CompressValue(encoded.json, &frame)) return nullptr;
  // A copy at the frame's exact size: CompressValue's string keeps zstd's bound as capacity.
  return std::make_shared<const std::string>(frame);
}

// ---------------------------------------------------------------------------------------------
// CachedObject

util::StatusOr<api::Object> CachedObject::Parse() const {
  return api::Object::Parse(*json());
}

namespace {

// The pool of mutexes guarding CachedObject::decoded_ (held only to copy a weak_ptr).
std::mutex& DecodedMutex(const void* object) {
  static std::mutex pool[64];
  return pool[(reinterpret_cast<uintptr_t>(object) >> 6) % 64];
}

// How in-process watchers got their parsed objects without managedFields: the writer's (a seed)
// or parsed from the bytes.
util::Counter& DecodedObjects(const char* source) {
  static util::CounterFamily& family = util::DefaultRegistry().AddCounter(
      {"apiserver_watch_cache_decoded_objects_total",
       "Versions handed to in-process watchers as parsed objects without managedFields, by "
       "where they came from (the writer's own object, or parsed from the cached bytes).",
       {"source"}});
  return family.WithLabelValues({source});
}

// Returns the object `memo` remembers, or the writer's object from `seed` (remembered in `memo`
// from then on), or parses `cached`'s JSON (dropping metadata.managedFields when
// `without_managed_fields`), remembers it in `memo` and returns it. `mu` guards `memo` and `seed`.
util::StatusOr<api::ObjectPtr> SharedDecode(const CachedObject& cached, bool without_managed_fields,
                                            std::mutex& mu, std::weak_ptr<const api::Object>& memo,
                                            std::shared_ptr<const api::Object>* seed) {
  static util::Counter& from_writer = DecodedObjects("writer");
  static util::Counter& parsed_here = DecodedObjects("parsed");
  {
    std::lock_guard lock(mu);
    if (api::ObjectPtr held = memo.lock()) return held;
    if (seed != nullptr && *seed != nullptr) {
      api::ObjectPtr taken = std::move(*seed);
      seed->reset();
      memo = taken;
      from_writer.Inc();
      return taken;
    }
  }
  // Parsed outside the lock; two readers may parse at once, and both end up with the one that
  // was published first.
  CONVERGE_ASSIGN_OR_RETURN(api::Object parsed, api::Object::Parse(*cached.json()));
  std::shared_ptr<const api::Object> fresh;
  if (without_managed_fields) {
    // The version informers share, held for as long as it is current: compact.
    parsed.mutable_metadata().stable_erase("managedFields");
    fresh = std::make_shared<const api::Object>(api::Object::Compact(parsed.doc()));
  } else {
    fresh = std::make_shared<const api::Object>(std::move(parsed));
  }
  std::lock_guard lock(mu);
  if (api::ObjectPtr other = memo.lock()) return other;
  memo = fresh;
  if (seed != nullptr) parsed_here.Inc();
  return fresh;
}

}  // namespace

std::shared_ptr<const std::string> CachedObject::json() const {
  if (!compressed_) return bytes_;
  std::mutex& mu = DecodedMutex(this);
  {
    std::lock_guard lock(mu);
    if (std::shared_ptr<const std::string> held = plain_.lock()) return held;
  }
  // The frame holds the JSON without resourceVersion; the member goes in at its place as
  // EncodedObject::WithResourceVersion puts it (prefix, digits, suffix).
  EncodedObject shape;
  shape.needs_comma = needs_comma_;
  shape.needs_metadata = needs_metadata_;
  const std::string_view prefix = SplicePrefix(shape);
  const std::string_view suffix =
      needs_metadata_ ? std::string_view("\"}") : std::string_view("\"");
  const size_t insert_at = rv_value_at - prefix.size();
  const std::optional<size_t> size = store::CompressedValueSize(*bytes_);
  if (!size || insert_at > *size) {
    util::AbortWithStatus(
        "watch cache", util::Internal("cached frame of " + storage_key + " has no valid length"));
  }
  char buf[24];
  const std::string_view digits = Digits(revision, buf);
  const size_t splice = prefix.size() + digits.size() + suffix.size();
  std::string out(*size + splice, '\0');
  if (util::Status st = store::DecompressValue(*bytes_, out.data(), *size); !st.ok()) {
    if (st.code() == util::Code::kResourceExhausted) throw std::bad_alloc();
    util::AbortWithStatus(("watch cache: cached frame of " + storage_key).c_str(), st);
  }
  char* at = out.data() + insert_at;
  std::memmove(at + splice, at, *size - insert_at);
  at = std::copy(prefix.begin(), prefix.end(), at);
  at = std::copy(digits.begin(), digits.end(), at);
  std::copy(suffix.begin(), suffix.end(), at);
  auto fresh = std::make_shared<const std::string>(std::move(out));
  std::lock_guard lock(mu);
  if (std::shared_ptr<const std::string> other = plain_.lock()) return other;
  plain_ = fresh;
  return fresh;
}

std::shared_ptr<const std::string> CachedObject::JsonIfAtHand() const {
  if (!compressed_) return bytes_;
  std::lock_guard lock(DecodedMutex(this));
  return plain_.lock();
}

void CachedObject::SetBytes(const EncodedObject& encoded, store::Revision rev,
                            std::shared_ptr<const std::string> frame) {
  char buf[24];
  rv_value_at = static_cast<uint32_t>(encoded.ResourceVersionValueOffset());
  rv_value_len = static_cast<uint32_t>(Digits(rev, buf).size());
  compressed_ = frame != nullptr;
  needs_comma_ = encoded.needs_comma;
  needs_metadata_ = encoded.needs_metadata;
  bytes_ = compressed_ ? std::move(frame)
                       : std::make_shared<const std::string>(encoded.WithResourceVersion(rev));
}

util::StatusOr<api::ObjectPtr> CachedObject::Decoded() const {
  return SharedDecode(*this, /*without_managed_fields=*/false, DecodedMutex(this), decoded_,
                      nullptr);
}

util::StatusOr<api::ObjectPtr> CachedObject::DecodedWithoutManagedFields() const {
  return SharedDecode(*this, /*without_managed_fields=*/true, DecodedMutex(this),
                      decoded_without_managed_fields_, &seed_);
}

void CachedObject::SeedDecodedWithoutManagedFields(api::Object obj) const {
  {
    std::lock_guard lock(DecodedMutex(this));
    if (!decoded_without_managed_fields_.expired()) return;
  }
  // What a reader would have got from the bytes: no managedFields, this version's
  // resourceVersion.
  obj.mutable_metadata().stable_erase("managedFields");
  obj.set_resource_version(std::to_string(revision));
  // Compact (api/json_view.h): informers hold it for as long as it is current.
  auto seed = std::make_shared<const api::Object>(api::Object::Compact(obj.doc()));
  std::lock_guard lock(DecodedMutex(this));
  if (decoded_without_managed_fields_.expired()) seed_ = std::move(seed);
}

void CachedObject::ReleaseSeed() const {
  std::shared_ptr<const api::Object> dropped;  // destroyed after the lock is released
  std::lock_guard lock(DecodedMutex(this));
  // Remembered weakly: whoever else holds it (WatchCache's recent objects) keeps it for readers.
  if (seed_ != nullptr) decoded_without_managed_fields_ = seed_;
  dropped = std::move(seed_);
}

api::ObjectPtr CachedObject::DecodedWithoutManagedFieldsIfAtHand() const {
  std::lock_guard lock(DecodedMutex(this));
  if (seed_ != nullptr) return seed_;
  return decoded_without_managed_fields_.lock();
}

std::string CachedObject::FieldValue(const api::ResourceInfo& info, std::string_view field) const {
  if (field == "metadata.name") return std::string(name());
  if (field == "metadata.namespace") return std::string(ns());
  for (size_t i = 0; i < info.selectable_fields.size(); ++i) {
    if (info.selectable_fields[i] == field) return std::string(UnpackFieldValue(field_values, i));
  }
  return "";
}

namespace {

// A copy of `scratch` at its exact size; a scratch that grew huge is released.
std::string ExactCopy(std::string& scratch) {
  std::string packed(scratch);
  if (scratch.capacity() > (1u << 16)) std::string().swap(scratch);
  return packed;
}

}  // namespace

std::string PackFieldValues(const api::ResourceInfo& info, const json::object& doc) {
  // Built in a per-thread scratch, then copied once at its exact size.
  thread_local std::string scratch;
  scratch.clear();
  for (const std::string& f : info.selectable_fields)
    util::AppendPacked(&scratch, api::FieldValue(doc, f));
  return ExactCopy(scratch);
}

std::string_view UnpackFieldValue(std::string_view packed, size_t index) {
  size_t at = 0;
  std::string_view item;
  for (size_t i = 0; util::NextPacked(packed, &at, &item); ++i) {
    if (i == index) return item;
  }
  return {};
}

std::string PackLabels(const json::object& doc) {
  auto metadata = doc.find("metadata");
  if (metadata == doc.end() || !metadata->value().is_object()) return {};
  const json::object& m = metadata->value().get_object();
  auto labels = m.find("labels");
  if (labels == m.end() || !labels->value().is_object()) return {};
  thread_local std::string scratch;
  scratch.clear();
  for (const json::key_value_pair& kv : labels->value().get_object()) {
    util::AppendPacked(&scratch, kv.key());
    util::AppendPacked(&scratch, kv.value().is_string() ? std::string_view(kv.value().get_string())
                                                        : std::string_view());
  }
  return ExactCopy(scratch);
}

std::optional<std::string_view> PackedLabelValue(std::string_view packed, std::string_view key) {
  size_t at = 0;
  std::string_view k, v;
  while (util::NextPacked(packed, &at, &k) && util::NextPacked(packed, &at, &v)) {
    if (k == key) return v;
  }
  return std::nullopt;
}

namespace {

// LabelSelector::Requirement::Matches for a label whose value is `value` (nullopt: no such
// label). The same rules (cached_object_test checks the two agree on a table of cases).
bool RequirementMatches(const api::LabelSelector::Requirement& r,
                        std::optional<std::string_view> value) {
  using Op = api::LabelSelector::Op;
  const bool present = value.has_value();
  const std::string_view have = value.value_or(std::string_view());
  auto in_values = [&] { return std::binary_search(r.values.begin(), r.values.end(), have); };
  switch (r.op) {
    case Op::kIn:
    case Op::kEquals: return present && in_values();
    case Op::kNotIn:
    case Op::kNotEquals: return !present || !in_values();
    case Op::kExists: return present;
    case Op::kDoesNotExist: return !present;
    case Op::kGreaterThan:
    case Op::kLessThan: {
      if (!present || r.values.empty()) return false;
      int64_t lhs = 0, rhs = 0;
      auto r1 = std::from_chars(have.data(), have.data() + have.size(), lhs);
      auto r2 = std::from_chars(r.values[0].data(), r.values[0].data() + r.values[0].size(), rhs);
      if (r1.ec != std::errc() || r2.ec != std::errc()) return false;
      return r.op == Op::kGreaterThan ? lhs > rhs : lhs < rhs;
    }
  }
  return false;
}

}  // namespace

bool CachedObject::MatchesLabels(const api::LabelSelector& selector) const {
  if (selector.MatchesNothing()) return false;
  for (const api::LabelSelector::Requirement& r : selector.requirements()) {
    if (!RequirementMatches(r, PackedLabelValue(labels, r.key))) return false;
  }
  return true;
}

json::object CachedObject::LabelsObject() const {
  json::object out;
  size_t at = 0;
  std::string_view k, v;
  while (util::NextPacked(labels, &at, &k) && util::NextPacked(labels, &at, &v)) out[k] = v;
  return out;
}

void CachedObject::SetKeyPositions(const api::ResourceInfo& info) {
  // As KeyFromStorageKey.
  const size_t rest = std::min(storage_key.size(), info.storage_prefix.size() + 1);
  ns_at_ = static_cast<uint32_t>(rest);
  ns_len_ = 0;
  name_at_ = static_cast<uint32_t>(rest);
  if (!info.namespaced) return;
  size_t slash = storage_key.find('/', rest);
  if (slash == std::string::npos) return;
  ns_len_ = static_cast<uint32_t>(slash - rest);
  name_at_ = static_cast<uint32_t>(slash + 1);
}

CachedObjectPtr CachedObject::WithRevision(store::Revision rev) const {
  auto c = std::make_shared<CachedObject>();
  c->storage_key = storage_key;
  c->ns_at_ = ns_at_;
  c->ns_len_ = ns_len_;
  c->name_at_ = name_at_;
  c->revision = rev;
  c->labels = labels;
  c->field_values = field_values;
  c->compressed_ = compressed_;
  c->needs_comma_ = needs_comma_;
  c->needs_metadata_ = needs_metadata_;
  c->being_deleted_ = being_deleted_;
  char buf[24];
  std::string_view digits = Digits(rev, buf);
  c->rv_value_at = rv_value_at;
  c->rv_value_len = static_cast<uint32_t>(digits.size());
  if (compressed_) {
    // The frame has no resourceVersion: json() splices the new one in.
    c->bytes_ = bytes_;
    return c;
  }
  std::string out;
  out.reserve(bytes_->size() - rv_value_len + digits.size());
  out.append(*bytes_, 0, rv_value_at);
  out.append(digits);
  out.append(*bytes_, rv_value_at + rv_value_len);
  c->bytes_ = std::make_shared<const std::string>(std::move(out));
  return c;
}

CachedObjectPtr CachedObject::FromEncoded(const api::ResourceInfo& info, std::string storage_key,
                                          const api::Object& obj, const EncodedObject& encoded,
                                          store::Revision revision,
                                          std::shared_ptr<const std::string> frame,
                                          Holding holding) {
  auto c = std::make_shared<CachedObject>();
  c->storage_key = std::move(storage_key);
  c->SetKeyPositions(info);
  c->revision = revision;
  c->labels = PackLabels(obj.doc());
  c->field_values = PackFieldValues(info, obj.doc());
  c->being_deleted_ = obj.being_deleted();
  if (frame == nullptr && holding == Holding::kInCache) frame = CompressEncoded(encoded);
  c->SetBytes(encoded, revision, std::move(frame));
  return c;
}

CachedObjectPtr CachedObject::FromObject(const api::ResourceInfo& info, std::string storage_key,
                                         api::Object obj, store::Revision revision,
                                         Holding holding) {
  return FromEncoded(info, std::move(storage_key), obj, EncodeObject(obj.doc()), revision, nullptr,
                     holding);
}

util::StatusOr<CachedObjectPtr> CachedObject::FromKeyValue(const api::ResourceInfo& info,
                                                           const store::KeyValue& kv,
                                                           Holding holding) {
  auto obj = api::Object::Parse(kv.value);
  if (!obj.ok()) {
    return util::DataLoss("stored object at " + kv.key +
                          " is not valid JSON: " + obj.status().message());
  }
  // The stored bytes are what EncodeObject wrote: the revision is spliced into them instead of
  // serializing the parsed object again (the parse is for labels and field values).
  if (std::optional<EncodedObject> slot = FindResourceVersionSlot(kv.value)) {
    slot->json = kv.value;
    return FromEncoded(info, kv.key, *obj, *slot, kv.mod_revision, nullptr, holding);
  }
  return FromObject(info, kv.key, std::move(*obj), kv.mod_revision, holding);
}

// ---------------------------------------------------------------------------------------------
// PendingWrite

PendingWrite::PendingWrite(std::shared_ptr<const api::ResourceInfo> info, std::string storage_key,
                           const api::Object& obj, EncodedObject encoded)
    : storage_key_(std::move(storage_key)),
      encoded_(std::move(encoded)),
      frame_(CompressEncoded(encoded_)),
      info_(std::move(info)),
      being_deleted_(obj.being_deleted()) {
  labels_ = PackLabels(obj.doc());
  field_values_ = PackFieldValues(*info_, obj.doc());
}

CachedObjectPtr PendingWrite::Entry(store::Revision revision) {
  std::lock_guard lock(mu_);
  if (entry_ != nullptr) {
    return entry_->revision == revision ? entry_ : entry_->WithRevision(revision);
  }
  auto c = std::make_shared<CachedObject>();
  c->storage_key = storage_key_;
  c->SetKeyPositions(*info_);
  c->revision = revision;
  c->labels = std::move(labels_);
  c->field_values = std::move(field_values_);
  c->being_deleted_ = being_deleted_;
  c->SetBytes(encoded_, revision, frame_);
  if (c->compressed_) {
    // The writer's response and watchers of this version read its JSON right away: they share
    // the bytes spliced here (as json() would remember them) instead of decompressing the frame.
    plain_ = std::make_shared<const std::string>(encoded_.WithResourceVersion(revision));
    c->plain_ = plain_;
  }
  if (object_) {
    c->SeedDecodedWithoutManagedFields(std::move(*object_));
    object_.reset();
  }
  entry_ = std::move(c);
  return entry_;
}

void PendingWrite::KeepObjectForReaders(api::Object obj) {
  std::lock_guard lock(mu_);
  if (entry_ == nullptr) object_ = std::move(obj);
}

std::optional<api::Object> PendingWrite::TakeObject() {
  std::lock_guard lock(mu_);
  return std::exchange(object_, std::nullopt);
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
