#include "apiserver/managed_fields.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>

#include "api/go_json.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

util::StatusOr<std::string> StringMember(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return std::string();
  if (!v->is_string()) {
    return util::InvalidArgument("managedFields: " + std::string(key) + " is not a string");
  }
  return std::string(v->get_string());
}

int64_t UnixSeconds(const std::string& rfc3339) {
  if (rfc3339.empty()) return 0;
  std::optional<util::WallTime> t = util::ParseRfc3339(rfc3339);
  if (!t) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count();
}

}  // namespace

std::string ManagerIdentifier(std::string_view manager, std::string_view operation,
                              std::string_view api_version, std::string_view subresource) {
  // Go's json.Marshal of a ManagedFieldsEntry: members in declaration order, empty ones omitted.
  std::string out = "{";
  auto member = [&](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    if (out.size() > 1) out += ',';
    api::AppendGoJsonString(out, key);
    out += ':';
    api::AppendGoJsonString(out, value);
  };
  member("manager", manager);
  member("operation", operation);
  if (operation != kOperationApply) member("apiVersion", api_version);
  member("subresource", subresource);
  return out + "}";
}

namespace {

// The identifiers ManagerIdentifier builds from printable ASCII without escapes, read without a
// JSON parser: `{"manager":"m","operation":"Update",...}`. nullopt when `identifier` is anything
// else (escapes, other bytes, unknown or repeated keys): the caller then parses it as JSON, so
// both ways give the same answer.
std::optional<ManagerInfo> ParsePlainIdentifier(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e || c == '\\') return std::nullopt;
  }
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return std::nullopt;
  ManagerInfo info;
  if (s.size() == 2) return info;
  bool seen[4] = {false, false, false, false};
  size_t i = 1;
  for (;;) {
    if (s[i] != '"') return std::nullopt;
    const size_t key_end = s.find('"', i + 1);
    if (key_end == std::string_view::npos || key_end + 2 >= s.size() || s[key_end + 1] != ':' ||
        s[key_end + 2] != '"') {
      return std::nullopt;
    }
    const std::string_view key = s.substr(i + 1, key_end - i - 1);
    const size_t value_end = s.find('"', key_end + 3);
    if (value_end == std::string_view::npos) return std::nullopt;
    const std::string_view value = s.substr(key_end + 3, value_end - key_end - 3);
    int slot;
    std::string* field;
    if (key == "manager") {
      slot = 0, field = &info.manager;
    } else if (key == "operation") {
      slot = 1, field = &info.operation;
    } else if (key == "apiVersion") {
      slot = 2, field = &info.api_version;
    } else if (key == "subresource") {
      slot = 3, field = &info.subresource;
    } else {
      return std::nullopt;
    }
    if (seen[slot]) return std::nullopt;
    seen[slot] = true;
    field->assign(value);
    i = value_end + 1;
    if (i == s.size() - 1) return info;  // at the closing brace
    if (s[i] != ',') return std::nullopt;
    ++i;
  }
}

}  // namespace

std::optional<ManagerInfo> ParseManagerIdentifier(std::string_view identifier) {
  if (std::optional<ManagerInfo> plain = ParsePlainIdentifier(identifier)) return plain;
  return ParseManagerIdentifierAsJson(identifier);
}

std::optional<ManagerInfo> ParseManagerIdentifierAsJson(std::string_view identifier) {
  boost::system::error_code ec;
  json::value v = json::parse(identifier, ec);
  if (ec || !v.is_object()) return std::nullopt;
  ManagerInfo info;
  for (auto [key, field] :
       {std::pair{"manager", &info.manager}, std::pair{"operation", &info.operation},
        std::pair{"apiVersion", &info.api_version}, std::pair{"subresource", &info.subresource}}) {
    util::StatusOr<std::string> s = StringMember(v.get_object(), key);
    if (!s.ok()) return std::nullopt;
    *field = *std::move(s);
  }
  return info;
}

util::StatusOr<ManagedFields> DecodeManagedFields(const json::value* managed_fields,
                                                  SetReading reading) {
  ManagedFields out;
  if (managed_fields == nullptr || managed_fields->is_null()) return out;
  if (!managed_fields->is_array()) {
    return util::InvalidArgument("metadata.managedFields is not a list");
  }
  const json::array& entries = managed_fields->get_array();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i].is_object()) {
      return util::InvalidArgument("managed fields entry " + std::to_string(i) +
                                   " is not an object");
    }
    const json::object& e = entries[i].get_object();
    CONVERGE_ASSIGN_OR_RETURN(std::string manager, StringMember(e, "manager"));
    CONVERGE_ASSIGN_OR_RETURN(std::string operation, StringMember(e, "operation"));
    CONVERGE_ASSIGN_OR_RETURN(std::string api_version, StringMember(e, "apiVersion"));
    CONVERGE_ASSIGN_OR_RETURN(std::string time, StringMember(e, "time"));
    CONVERGE_ASSIGN_OR_RETURN(std::string fields_type, StringMember(e, "fieldsType"));
    CONVERGE_ASSIGN_OR_RETURN(std::string subresource, StringMember(e, "subresource"));
    if (operation != kOperationApply && operation != kOperationUpdate) {
      return util::InvalidArgument("operation must be `Apply` or `Update`");
    }
    if (api_version.empty()) return util::InvalidArgument("apiVersion must not be empty");
    if (fields_type.empty()) {
      return util::InvalidArgument("missing fieldsType in managed fields entry " +
                                   std::to_string(i));
    }
    if (fields_type != "FieldsV1") {
      return util::InvalidArgument("invalid fieldsType \"" + fields_type +
                                   "\" in managed fields entry " + std::to_string(i));
    }
    std::string normalized_time;
    if (!time.empty()) {
      std::optional<util::WallTime> t = util::ParseRfc3339(time);
      if (!t)
        return util::InvalidArgument("managed fields entry " + std::to_string(i) +
                                     ": invalid time " + time);
      // metav1.Time keeps seconds and is written in UTC.
      normalized_time = util::FormatRfc3339(std::chrono::floor<std::chrono::seconds>(*t));
    }
    static const json::value kNull;
    const json::value* fv1 = e.if_contains("fieldsV1");
    const std::string id = ManagerIdentifier(manager, operation, api_version, subresource);
    if (reading == SetReading::kWhenNeeded && fv1 != nullptr && fv1->is_object() &&
        !fv1->get_object().empty()) {
      out.fields[id] = ManagerFields{{}, api_version, operation == kOperationApply, fv1};
    } else {
      util::StatusOr<api::FieldSet> set = api::FieldSet::FromFieldsV1(fv1 ? *fv1 : kNull);
      if (!set.ok()) {
        return util::InvalidArgument("error decoding versioned set from managed fields entry " +
                                     std::to_string(i) + ": " + set.status().message());
      }
      out.fields[id] = ManagerFields{*std::move(set), api_version, operation == kOperationApply};
    }
    if (normalized_time.empty()) {
      out.times.erase(id);
    } else {
      out.times[id] = normalized_time;
    }
  }
  return out;
}

util::Status ReadManagerSet(ManagerFields& fields) {
  if (fields.unread == nullptr) return util::Status::Ok();
  util::StatusOr<api::FieldSet> set = api::FieldSet::FromFieldsV1(*fields.unread);
  if (!set.ok()) return set.status();
  fields.set = *std::move(set);
  fields.unread = nullptr;
  return util::Status::Ok();
}

json::array EncodeManagedFields(const ManagedFields& managed) {
  struct Entry {
    ManagerInfo info;
    std::string time;
    int64_t seconds;  // UnixSeconds(time), read once rather than in every comparison
    const ManagerFields* fields;
  };
  std::vector<Entry> entries;
  entries.reserve(managed.fields.size());
  for (const auto& [id, mf] : managed.fields) {
    Entry e{ParseManagerIdentifier(id).value_or(ManagerInfo{}), {}, 0, &mf};
    e.info.api_version = mf.api_version;
    if (mf.applied) e.info.operation = std::string(kOperationApply);
    if (auto t = managed.times.find(id); t != managed.times.end()) e.time = t->second;
    e.seconds = UnixSeconds(e.time);
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& p, const Entry& q) {
    if (p.info.operation != q.info.operation) return p.info.operation < q.info.operation;
    if (p.seconds != q.seconds) return p.seconds < q.seconds;
    if (p.info.manager != q.info.manager) return p.info.manager < q.info.manager;
    if (p.info.api_version != q.info.api_version) return p.info.api_version < q.info.api_version;
    return p.info.subresource < q.info.subresource;
  });
  json::array out;
  for (const Entry& e : entries) {
    json::object o;
    if (!e.info.manager.empty()) o["manager"] = e.info.manager;
    if (!e.info.operation.empty()) o["operation"] = e.info.operation;
    if (!e.info.api_version.empty()) o["apiVersion"] = e.info.api_version;
    if (!e.time.empty()) o["time"] = e.time;
    o["fieldsType"] = "FieldsV1";
    if (e.fields->unread != nullptr) {
      o["fieldsV1"] = *e.fields->unread;
    } else {
      o["fieldsV1"] = e.fields->set.ToFieldsV1();
    }
    if (!e.info.subresource.empty()) o["subresource"] = e.info.subresource;
    out.emplace_back(std::move(o));
  }
  return out;
}

}  // namespace converge::apiserver
