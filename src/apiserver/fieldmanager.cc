#include "apiserver/fieldmanager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>

#include "api/fieldpath.h"
#include "api/go_json.h"
#include "api/structured_merge.h"
#include "apiserver/managed_fields.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using api::FieldSet;
using api::Path;
using api::PathElement;

// The manager name upstream's managedFieldsUpdater gives the write in progress, so that it can
// tell whether the write changed anything before merging it into the writer's entry.
constexpr std::string_view kCurrentOperation = "current-operation";
// The Update entry that takes ownership of an object's fields when it is first applied to and has
// no managedFields (upstream's skipNonAppliedManager).
constexpr std::string_view kBeforeFirstApply = "before-first-apply";
// capManagersManager: at most this many Update entries; the oldest merge into buckets.
constexpr size_t kMaxUpdateManagers = 10;
constexpr std::string_view kAncientChanges = "ancient-changes";
constexpr std::string_view kLastAppliedAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";
// apimachinery's TotalAnnotationSizeLimitB.
constexpr size_t kTotalAnnotationSizeLimit = 256 * 1024;
// validation.FieldManagerMaxLength.
constexpr size_t kFieldManagerMaxLength = 128;

// Conflicting fields by the identifier of the manager owning them.
using Conflicts = std::map<std::string, FieldSet>;

// Fields that never enter a manager's set (upstream's stripMetaManager).
const FieldSet& StripSet() {
  static const FieldSet* const kSet = [] {
    auto f = [](std::string_view s) { return PathElement::Field(std::string(s)); };
    std::vector<Path> paths = {{f("apiVersion")}, {f("kind")}, {f("metadata")}};
    for (std::string_view m : {"name", "namespace", "creationTimestamp", "selfLink", "uid",
                               "clusterName", "generation", "managedFields", "resourceVersion"}) {
      paths.push_back({f("metadata"), f(m)});
    }
    return new FieldSet(FieldSet::FromPaths(paths));
  }();
  return *kSet;
}

FieldSet ResetSet(const std::vector<std::string>& dotted) {
  FieldSet out;
  for (const std::string& d : dotted) {
    Path p;
    size_t start = 0;
    while (start <= d.size()) {
      size_t dot = d.find('.', start);
      if (dot == std::string::npos) dot = d.size();
      if (dot > start) p.push_back(PathElement::Field(d.substr(start, dot - start)));
      start = dot + 1;
    }
    out.Insert(p);
  }
  return out;
}

void RemoveManagedFields(json::object& doc) {
  if (json::value* m = doc.if_contains("metadata"); m != nullptr && m->is_object()) {
    m->get_object().stable_erase("managedFields");
  }
}

const json::value* ManagedFieldsOf(const json::object& doc) {
  const json::value* m = doc.if_contains("metadata");
  if (m == nullptr || !m->is_object()) return nullptr;
  return m->get_object().if_contains("managedFields");
}

void SetManagedFields(json::object& doc, const ManagedFields& managed) {
  json::array encoded = EncodeManagedFields(managed);
  if (encoded.empty()) {
    RemoveManagedFields(doc);
    return;
  }
  api::EnsureObject(doc, "metadata")["managedFields"] = std::move(encoded);
}

// Upstream's isResetManagedFields: a non-nil empty list, or a list of one empty entry.
bool IsResetManagedFields(const json::value* mf) {
  if (mf == nullptr || !mf->is_array()) return false;
  const json::array& a = mf->get_array();
  if (a.empty()) return true;
  if (a.size() != 1 || !a[0].is_object()) return false;
  for (const json::key_value_pair& kv : a[0].get_object()) {
    const json::value& v = kv.value();
    if (v.is_null()) continue;
    if (v.is_string() && v.get_string().empty()) continue;
    return false;
  }
  return true;
}

void StripMeta(ManagedFields& managed, const std::string& id) {
  auto it = managed.fields.find(id);
  if (it == managed.fields.end()) return;
  it->second.set.Subtract(StripSet());
  if (it->second.set.Empty()) managed.fields.erase(it);
}

// An entry left unread holds fields: an encoder never writes an empty entry.
void DropEmpty(ManagedFields& managed) {
  for (auto it = managed.fields.begin(); it != managed.fields.end();) {
    const bool empty = it->second.unread == nullptr && it->second.set.Empty();
    it = empty ? managed.fields.erase(it) : std::next(it);
  }
}

// merge.Updater.update: the other managers lose what the write changed or removed. `cmp` is the
// comparison of the versions before and after the write, without the ignored fields. Returns the
// fields of other managers the write changed (conflicts, for apply) and the comparison.
util::StatusOr<api::Comparison> ReconcileComparison(util::StatusOr<api::Comparison> compared,
                                                    ManagedFields& managed,
                                                    const std::string& writer, bool force,
                                                    Conflicts* conflicts) {
  CONVERGE_ASSIGN_OR_RETURN(api::Comparison cmp, std::move(compared));
  const bool others = std::any_of(managed.fields.begin(), managed.fields.end(),
                                  [&](const auto& entry) { return entry.first != writer; });
  // Nobody else owns anything on a create: nothing to lose, nothing to conflict with.
  if (!others) {
    DropEmpty(managed);
    return cmp;
  }
  const FieldSet changed = cmp.modified.Union(cmp.added);
  Conflicts found;
  for (auto& [id, mf] : managed.fields) {
    if (id == writer) continue;
    if (mf.unread != nullptr) {
      // An entry the write neither changed nor removed a field of stays as stored, unread.
      const json::object& stored = mf.unread->get_object();
      if (!changed.IntersectsFieldsV1(stored) && !cmp.removed.IntersectsFieldsV1(stored)) continue;
      CONVERGE_RETURN_IF_ERROR(ReadManagerSet(mf));
    }
    FieldSet c = mf.set.Intersection(changed);
    if (!c.Empty()) found.emplace(id, std::move(c));
  }
  if (!force && !found.empty()) {
    *conflicts = std::move(found);
    return cmp;
  }
  for (auto& [id, mf] : managed.fields) {
    if (id == writer || mf.unread != nullptr) continue;
    if (auto it = found.find(id); it != found.end()) mf.set.Subtract(it->second);
    if (!cmp.removed.Empty()) mf.set.Subtract(cmp.removed);
  }
  DropEmpty(managed);
  return cmp;
}

// capManagersManager: merges the oldest Update entries into "ancient-changes" buckets (one per
// apiVersion) until at most kMaxUpdateManagers Update entries remain.
void CapUpdateManagers(ManagedFields& managed) {
  std::vector<std::string> updaters;
  for (const auto& [id, mf] : managed.fields) {
    if (!mf.applied) updaters.push_back(id);
  }
  if (updaters.size() <= kMaxUpdateManagers) return;
  for (auto& [id, mf] : managed.fields) {
    if (!ReadManagerSet(mf).ok()) mf = ManagerFields{{}, mf.api_version, mf.applied};
  }
  auto seconds = [&](const std::string& id) -> int64_t {
    auto t = managed.times.find(id);
    if (t == managed.times.end()) return 0;
    std::optional<util::WallTime> w = util::ParseRfc3339(t->second);
    return w ? std::chrono::duration_cast<std::chrono::seconds>(w->time_since_epoch()).count() : 0;
  };
  std::sort(updaters.begin(), updaters.end(), [&](const std::string& a, const std::string& b) {
    const int64_t sa = seconds(a), sb = seconds(b);
    if (sa != sb) return sa < sb;
    return a < b;
  });
  std::map<std::string, std::string> version_to_first;
  size_t length = updaters.size();
  for (size_t i = 0; i < updaters.size() && length > kMaxUpdateManagers; ++i) {
    const std::string& id = updaters[i];
    const ManagerFields vs = managed.fields.at(id);
    std::optional<std::string> time;
    if (auto t = managed.times.find(id); t != managed.times.end()) time = t->second;
    const std::string bucket =
        ManagerIdentifier(kAncientChanges, kOperationUpdate, vs.api_version, "");
    auto first = version_to_first.find(vs.api_version);
    if (first == version_to_first.end()) {
      version_to_first.emplace(vs.api_version, id);
      continue;
    }
    if (managed.fields.count(bucket) == 0) {
      ManagerFields moved = managed.fields.at(first->second);
      managed.fields.erase(first->second);
      managed.fields.emplace(bucket, std::move(moved));
    }
    ManagerFields& b = managed.fields.at(bucket);
    b = ManagerFields{vs.set.Union(b.set), vs.api_version, vs.applied};
    managed.fields.erase(id);
    --length;
    if (time) {
      managed.times[bucket] = *time;
    } else {
      managed.times.erase(bucket);
    }
  }
}

// The Update chain under skipNonApplied: capManagers(buildManagerInfo(managedFieldsUpdater(
// stripMeta(structuredMerge.Update)))).
//
// `live` and `updated` carry no metadata.managedFields (callers remove them); the comparison skips
// that field and the reset fields rather than walking them.
util::Status RecordUpdate(const api::TypeSchema* schema, const json::object& live,
                          const json::object& updated, ManagedFields& managed,
                          std::string_view manager, const ManagedFieldsContext& ctx) {
  const std::string id = ManagerIdentifier(manager.empty() ? "unknown" : manager, kOperationUpdate,
                                           ctx.api_version, ctx.subresource);
  const std::string self(kCurrentOperation);
  const FieldSet ignored = ResetSet(ctx.reset_fields);
  FieldSet skip = ignored;
  skip.Insert({PathElement::Field("metadata"), PathElement::Field("managedFields")});
  Conflicts unused;
  util::StatusOr<api::Comparison> cmp = ReconcileComparison(
      api::Compare(live, updated, schema, skip), managed, self, /*force=*/true, &unused);
  if (!cmp.ok()) return cmp.status();
  FieldSet mine;
  if (auto it = managed.fields.find(self); it != managed.fields.end()) {
    mine = std::move(it->second.set);
  }
  // mine ∪ modified ∪ added − removed, recursively without the ignored fields. Each set operation
  // copies the tree, and on a create all but the first would copy it unchanged: a union or
  // difference with an empty set is the set itself, and the comparison already skipped the
  // ignored fields, so only what `mine` held before can contain them.
  const bool may_hold_ignored = !mine.Empty();
  if (!cmp->modified.Empty()) mine = mine.Union(cmp->modified);
  if (!cmp->added.Empty()) mine = mine.Empty() ? std::move(cmp->added) : mine.Union(cmp->added);
  if (!cmp->removed.Empty()) mine.Subtract(cmp->removed);
  if (may_hold_ignored && !ignored.Empty()) mine = mine.RecursiveDifference(ignored);
  if (mine.Empty()) {
    managed.fields.erase(self);
  } else {
    managed.fields[self] = ManagerFields{std::move(mine), ctx.api_version, false};
  }
  StripMeta(managed, self);
  if (auto it = managed.fields.find(self); it != managed.fields.end()) {
    ManagerFields vs = std::move(it->second);
    managed.fields.erase(it);
    if (auto prev = managed.fields.find(id); prev != managed.fields.end()) {
      CONVERGE_RETURN_IF_ERROR(ReadManagerSet(prev->second));
      vs.set = vs.set.Union(prev->second.set);
    }
    managed.fields[id] = ManagerFields{std::move(vs.set), vs.api_version, false};
    managed.times[id] = util::FormatRfc3339(ctx.now);
  }
  CapUpdateManagers(managed);
  return util::Status::Ok();
}

// merge.Updater.prune: removes what the applier applied last time and not now, unless someone
// (another manager, or the applier's new configuration) owns it.
json::value Prune(const api::TypeSchema* schema, const json::value& merged,
                  const ManagedFields& managed, const FieldSet& last) {
  if (last.Empty()) return merged;
  json::value pruned = merged;
  api::RemoveItems(pruned, last, schema);
  // addBackOwnedItems.
  FieldSet owned;
  for (const auto& [id, mf] : managed.fields) owned = owned.Union(mf.set);
  const FieldSet merged_set = api::ToFieldSet(merged, schema);
  const FieldSet pruned_set = api::ToFieldSet(pruned, schema);
  json::value kept = merged;
  api::RemoveItems(kept, merged_set.Difference(pruned_set.Union(owned)), schema);
  // addBackDanglingItems: only what the applier itself owned goes.
  const FieldSet kept_set = api::ToFieldSet(kept, schema);
  json::value out = merged;
  api::RemoveItems(out, merged_set.Difference(kept_set).Intersection(last), schema);
  return out;
}

struct ApplyOutcome {
  json::value object;
  ManagedFields managed;
  Conflicts conflicts;  // non-empty: the apply failed
};

ApiError InternalErrorUnknown(std::string message) {
  // Upstream answers errors that are not API statuses with code 500 and reason "" (Unknown).
  ApiError e;
  e.code = 500;
  e.message = std::move(message);
  return e;
}

// The Apply chain under lastApplied*: skipNonApplied(capManagers(buildManagerInfo(
// managedFieldsUpdater(stripMeta(structuredMerge.Apply))))).
util::StatusOr<ApplyOutcome> RecordApply(const api::TypeSchema* schema, const json::value& live,
                                         const json::value& config, ManagedFields managed,
                                         const ManagedFieldsContext& ctx, bool force) {
  ApplyOutcome out;
  json::value current = live;
  if (managed.fields.empty()) {
    const json::object empty;
    util::Status st =
        RecordUpdate(schema, empty, current.get_object(), managed, kBeforeFirstApply, ctx);
    if (!st.ok()) {
      return util::Internal("failed to create manager for existing fields: " + st.message());
    }
  }
  const std::string id = ManagerIdentifier(ctx.manager.empty() ? "unknown" : ctx.manager,
                                           kOperationApply, ctx.api_version, ctx.subresource);
  const FieldSet ignored = ResetSet(ctx.reset_fields);

  util::StatusOr<json::value> merged = api::Merge(current, config, schema);
  if (!merged.ok()) return util::Internal("failed to merge config: " + merged.status().message());
  FieldSet last;
  if (auto it = managed.fields.find(id); it != managed.fields.end()) last = it->second.set;
  managed.fields[id] = ManagerFields{api::ToFieldSet(config, schema).RecursiveDifference(ignored),
                                     ctx.api_version, true};
  json::value result = Prune(schema, *merged, managed, last);
  util::StatusOr<api::Comparison> compared = api::Compare(current, result, schema);
  if (compared.ok()) compared->ExcludeFields(ignored);
  util::StatusOr<api::Comparison> cmp =
      ReconcileComparison(std::move(compared), managed, id, force, &out.conflicts);
  if (!cmp.ok()) return util::Internal("failed to compare objects: " + cmp.status().message());
  if (!out.conflicts.empty()) return out;
  StripMeta(managed, id);
  if (cmp->IsSame()) {
    out.object = std::move(current);
  } else {
    managed.times[id] = util::FormatRfc3339(ctx.now);
    out.object = std::move(result);
  }
  out.managed = std::move(managed);
  return out;
}

// printManager: how a conflict names the owner.
std::string PrintManager(const std::string& id) {
  std::optional<ManagerInfo> info = ParseManagerIdentifier(id);
  if (!info) return api::GoQuote(id);
  std::string s = api::GoQuote(info->manager);
  if (!info->subresource.empty()) s += " with subresource " + api::GoQuote(info->subresource);
  if (info->operation == kOperationUpdate) s += " using " + info->api_version;
  return s;
}

ApiError ConflictError(const Conflicts& conflicts) {
  ApiError e;
  e.code = 409;
  e.reason = "Conflict";
  size_t total = 0;
  std::string grouped;
  std::string single;
  for (const auto& [id, set] : conflicts) {
    const std::string who = PrintManager(id);
    if (!grouped.empty()) grouped += '\n';
    grouped += "conflicts with " + who + ":";
    set.Iterate([&](const Path& p) {
      const std::string field = api::PathString(p);
      e.causes.push_back(StatusCause{"FieldManagerConflict", "conflict with " + who, field});
      grouped += "\n- " + field;
      single = "conflict with " + who + ": " + field;
      ++total;
    });
  }
  e.message = total == 1 ? "Apply failed with 1 conflict: " + single
                         : "Apply failed with " + std::to_string(total) + " conflicts: " + grouped;
  return e;
}

const json::object* Annotations(const json::object& doc) {
  const json::value* m = doc.if_contains("metadata");
  if (m == nullptr || !m->is_object()) return nullptr;
  const json::value* a = m->get_object().if_contains("annotations");
  return a != nullptr && a->is_object() ? &a->get_object() : nullptr;
}

std::string_view LastApplied(const json::object& doc) {
  const json::object* a = Annotations(doc);
  if (a == nullptr) return {};
  const json::value* v = a->if_contains(kLastAppliedAnnotation);
  return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// lastAppliedManager.allowedConflictsFromLastApplied: the fields the last-applied annotation
// lists with the values the object still has. nullopt when there is no usable annotation.
std::optional<FieldSet> AllowedConflictsFromLastApplied(const api::TypeSchema* schema,
                                                        const json::value& live,
                                                        std::string_view api_version) {
  std::string_view text = LastApplied(live.get_object());
  if (text.empty()) return std::nullopt;
  boost::system::error_code ec;
  json::value last = json::parse(text, ec);
  if (ec || !last.is_object()) return std::nullopt;
  if (api::Object::GetString(last.get_object(), "apiVersion") != api_version) return std::nullopt;
  if (!api::ValidateApplied(last, schema).ok()) return std::nullopt;
  FieldSet set = api::ToFieldSet(last, schema);
  util::StatusOr<api::Comparison> cmp = api::Compare(last, live, schema);
  if (!cmp.ok()) return std::nullopt;
  return set.Difference(cmp->modified).Difference(cmp->added).Difference(cmp->removed);
}

// lastAppliedUpdater: the annotation becomes the applied configuration (without the annotation),
// encoded as Go encodes a map (sorted keys); dropped if the annotations would exceed their limit.
void UpdateLastApplied(json::object& doc, const json::object& config) {
  json::value copy = config;
  if (json::value* m = copy.get_object().if_contains("metadata"); m && m->is_object()) {
    json::object& meta = m->get_object();
    if (json::value* a = meta.if_contains("annotations")) {
      if (a->is_object()) a->get_object().stable_erase(kLastAppliedAnnotation);
      if (!a->is_object() || a->get_object().empty()) meta.stable_erase("annotations");
    }
  }
  json::object& annotations = api::EnsureObject(api::EnsureObject(doc, "metadata"), "annotations");
  annotations[kLastAppliedAnnotation] = api::GoJsonMarshal(copy, /*sort_keys=*/true);
  size_t total = 0;
  for (const json::key_value_pair& kv : annotations) {
    total += kv.key().size() + (kv.value().is_string() ? kv.value().get_string().size() : 0);
  }
  if (total > kTotalAnnotationSizeLimit) annotations.stable_erase(kLastAppliedAnnotation);
}

// GroupVersionKind.String() of an apiVersion and kind: "apps/v1, Kind=Deployment", "/v1, Kind=Pod".
std::string GvkString(std::string_view api_version, std::string_view kind) {
  std::string gv(api_version);
  if (gv.find('/') == std::string::npos) gv = "/" + gv;
  return gv + ", Kind=" + std::string(kind);
}

}  // namespace

void UpdateManagedFields(const api::TypeSchema* schema, const api::Object* old, api::Object& obj,
                         const ManagedFieldsContext& ctx) {
  static const json::object kNoObject;
  // The live object is read in place: its managedFields are skipped by the comparison
  // (RecordUpdate), not removed from a copy.
  const json::object& live = old != nullptr ? old->doc() : kNoObject;
  const bool create = old == nullptr || old->uid().empty();
  // decodeLiveOrNew.
  auto decode_live = [&]() -> ManagedFields {
    // The stored entries are read only where the write touches them (SetReading::kWhenNeeded):
    // `live` outlives `managed`.
    util::StatusOr<ManagedFields> m =
        DecodeManagedFields(ManagedFieldsOf(live), SetReading::kWhenNeeded);
    return m.ok() ? *std::move(m) : ManagedFields{};
  };
  ManagedFields managed;
  if (!ctx.subresource.empty()) {
    managed = decode_live();
  } else {
    const json::value* requested = ManagedFieldsOf(obj.doc());
    if (!IsResetManagedFields(requested)) {
      util::StatusOr<ManagedFields> m = DecodeManagedFields(requested);
      managed = m.ok() && !m->fields.empty() ? *std::move(m) : decode_live();
    }
  }
  RemoveManagedFields(obj.mutable_doc());
  // skipNonApplied: an existing object without managedFields is not tracked until it is applied.
  if (managed.fields.empty() && !create) return;
  if (!RecordUpdate(schema, live, obj.doc(), managed, ctx.manager, ctx).ok()) return;
  SetManagedFields(obj.mutable_doc(), managed);
}

ApiOr<api::Object> ServerSideApply(const api::TypeSchema* schema, const api::Object* live,
                                   const api::Object& applied, const ManagedFieldsContext& ctx,
                                   bool force) {
  if (applied.api_version() != ctx.api_version) {
    return BadRequest("Incorrect version specified in apply patch. Specified patch version: " +
                      std::string(applied.api_version()) + ", expected: " + ctx.api_version);
  }
  if (const json::value* mf = ManagedFieldsOf(applied.doc()); mf != nullptr && mf->is_array()) {
    return BadRequest("metadata.managedFields must be nil");
  }
  const json::value config(applied.doc());
  if (util::Status st = api::ValidateApplied(config, schema); !st.ok()) {
    return InternalErrorUnknown(
        "failed to create typed patch object (" + std::string(applied.namespace_()) + "/" +
        std::string(applied.name()) + "; " + GvkString(applied.api_version(), applied.kind()) +
        "): " + st.message());
  }
  json::value current = live != nullptr ? json::value(live->doc()) : json::value(json::object());
  util::StatusOr<ManagedFields> managed =
      DecodeManagedFields(ManagedFieldsOf(current.get_object()));
  if (!managed.ok()) {
    return InternalErrorUnknown("failed to decode managed fields: " + managed.status().message());
  }
  RemoveManagedFields(current.get_object());

  util::StatusOr<ApplyOutcome> outcome = RecordApply(schema, current, config, *managed, ctx, force);
  if (!outcome.ok()) return InternalErrorUnknown(outcome.status().message());
  // lastAppliedManager: kubectl's server-side apply may take over what its client-side apply set.
  if (!outcome->conflicts.empty() && ctx.manager == "kubectl") {
    if (std::optional<FieldSet> allowed =
            AllowedConflictsFromLastApplied(schema, current, ctx.api_version)) {
      Conflicts remaining;
      for (const auto& [id, set] : outcome->conflicts) {
        FieldSet left;
        set.Iterate([&](const Path& p) {
          if (!allowed->Has(p)) left.Insert(p);
        });
        if (!left.Empty()) remaining.emplace(id, std::move(left));
      }
      if (remaining.empty()) {
        outcome = RecordApply(schema, current, config, *managed, ctx, /*force=*/true);
        if (!outcome.ok()) return InternalErrorUnknown(outcome.status().message());
      } else {
        outcome->conflicts = std::move(remaining);
      }
    }
  }
  if (!outcome->conflicts.empty()) return ConflictError(outcome->conflicts);

  if (!outcome->object.is_object()) outcome->object = json::object();
  json::object& doc = outcome->object.get_object();
  // lastAppliedUpdater.
  if (ctx.manager == "kubectl" && !LastApplied(doc).empty()) {
    UpdateLastApplied(doc, applied.doc());
  }
  SetManagedFields(doc, outcome->managed);
  return api::Object(std::move(doc));
}

std::string DefaultFieldManager(std::string_view user_agent) {
  const std::string_view prefix = user_agent.substr(0, user_agent.find('/'));
  std::string out;
  size_t i = 0;
  while (i < prefix.size()) {
    size_t width = 0;
    const char32_t r = api::DecodeRune(prefix, i, &width);
    if (api::GoIsPrint(r)) {
      // An invalid byte reads as U+FFFD (3 bytes), as Go's range over a string does.
      const std::string_view bytes =
          (r == 0xFFFD && width == 1) ? std::string_view("\xEF\xBF\xBD") : prefix.substr(i, width);
      if (out.size() + bytes.size() > kFieldManagerMaxLength) break;
      out.append(bytes);
    }
    i += width;
  }
  return out;
}

std::optional<ApiError> ValidateFieldManagerOptions(std::string_view options_kind, bool is_apply,
                                                    std::string_view field_manager,
                                                    bool force_set) {
  std::vector<StatusCause> causes;
  if (!is_apply) {
    if (force_set)
      causes.push_back(FieldForbidden("force", "may not be specified for non-apply patch"));
  } else if (field_manager.empty()) {
    causes.push_back(FieldRequired("fieldManager", "is required for apply patch"));
  }
  if (field_manager.size() > kFieldManagerMaxLength) {
    causes.push_back(FieldTooLong("fieldManager", kFieldManagerMaxLength));
  }
  size_t i = 0;
  while (i < field_manager.size()) {
    size_t width = 0;
    const char32_t r = api::DecodeRune(field_manager, i, &width);
    if (!api::GoIsPrint(r)) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "U+%04X", static_cast<unsigned>(r));
      // field.Invalid renders the value with %q.
      causes.push_back(StatusCause{"FieldValueInvalid",
                                   "Invalid value: " + api::GoQuote(field_manager) +
                                       ": invalid character " + buf + " (at position " +
                                       std::to_string(i) + ")",
                                   "fieldManager"});
    }
    i += width;
  }
  if (causes.empty()) return std::nullopt;
  return Invalid(api::GroupVersionKind{"meta.k8s.io", "", std::string(options_kind)}, "",
                 std::move(causes));
}

std::optional<ApiError> CheckObjectName(const api::Object& obj, std::string_view url_name,
                                        std::string_view url_namespace) {
  if (obj.name() != url_name) {
    return BadRequest("the name of the object (" + std::string(obj.name()) +
                      ") does not match the name on the URL (" + std::string(url_name) + ")");
  }
  if (!url_namespace.empty() && !obj.namespace_().empty() && obj.namespace_() != url_namespace) {
    return BadRequest("the namespace of the object (" + std::string(obj.namespace_()) +
                      ") does not match the namespace on the URL (" + std::string(url_namespace) +
                      ")");
  }
  return std::nullopt;
}

std::vector<std::string> DefaultResetFields(bool has_status_subresource,
                                            std::string_view subresource) {
  if (!has_status_subresource) return {};
  if (subresource.empty()) return {"status"};
  if (subresource == "status") return {"spec"};
  return {};
}

}  // namespace converge::apiserver
