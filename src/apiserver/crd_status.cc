#include "apiserver/crd_status.h"

#include <algorithm>
#include <optional>
#include <set>

#include "api/object.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::string Str(const json::object& o, std::string_view key) {
  return std::string(api::Object::GetString(o, key));
}

std::vector<std::string> Strings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const json::array* a = api::FindArray(o, {key})) {
    for (const json::value& v : *a) {
      if (v.is_string()) out.emplace_back(v.get_string());
    }
  }
  return out;
}

// equalToAcceptedOrFresh: a requested name is fine when it is already ours or nobody has it.
std::optional<std::string> NameConflict(const std::string& requested, const std::string& accepted,
                                        const std::set<std::string>& used) {
  if (requested == accepted || !used.contains(requested)) return std::nullopt;
  return "\"" + requested + "\" is already in use";
}

json::array StringArray(const std::vector<std::string>& v) {
  json::array a;
  for (const std::string& s : v) a.emplace_back(s);
  return a;
}

}  // namespace

const json::object* FindCrdCondition(const json::object& crd, std::string_view type) {
  const json::array* conditions = api::FindArray(crd, {"status", "conditions"});
  if (conditions == nullptr) return nullptr;
  for (const json::value& c : *conditions) {
    if (const json::object* o = c.if_object(); o && api::Object::GetString(*o, "type") == type) {
      return o;
    }
  }
  return nullptr;
}

bool IsCrdConditionTrue(const json::object& crd, std::string_view type) {
  const json::object* c = FindCrdCondition(crd, type);
  return c != nullptr && api::Object::GetString(*c, "status") == "True";
}

void SetCrdCondition(json::object& crd, const CrdCondition& c, std::string_view now) {
  json::object& status = api::EnsureObject(crd, "status");
  json::value& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  for (json::value& v : conditions.get_array()) {
    json::object* o = v.if_object();
    if (o == nullptr || api::Object::GetString(*o, "type") != c.type) continue;
    if (api::Object::GetString(*o, "status") != c.status) (*o)["lastTransitionTime"] = now;
    (*o)["status"] = c.status;
    (*o)["reason"] = c.reason;
    (*o)["message"] = c.message;
    return;
  }
  conditions.get_array().push_back(json::object{{"type", c.type},
                                                {"status", c.status},
                                                {"lastTransitionTime", now},
                                                {"reason", c.reason},
                                                {"message", c.message}});
}

CrdNamesDecision DecideCrdNames(const json::object& crd,
                                const std::vector<const json::object*>& others) {
  static const json::object kEmpty;
  const std::string group(api::FindString(crd, {"spec", "group"}));
  const std::string self(api::FindString(crd, {"metadata", "name"}));
  // The names other CRDs of the group have claimed (getAcceptedNamesForGroup).
  std::set<std::string> resources;
  std::set<std::string> kinds;
  for (const json::object* other : others) {
    if (api::FindString(*other, {"spec", "group"}) != group) continue;
    if (api::FindString(*other, {"metadata", "name"}) == self) continue;
    const json::object* names = api::FindObject(*other, {"status", "acceptedNames"});
    if (names == nullptr) continue;
    for (std::string_view k : {"plural", "singular"}) {
      if (std::string v = Str(*names, k); !v.empty()) resources.insert(v);
    }
    for (const std::string& s : Strings(*names, "shortNames")) resources.insert(s);
    for (std::string_view k : {"kind", "listKind"}) {
      if (std::string v = Str(*names, k); !v.empty()) kinds.insert(v);
    }
  }

  const json::object* req_ptr = api::FindObject(crd, {"spec", "names"});
  const json::object& requested = req_ptr ? *req_ptr : kEmpty;
  const json::object* acc_ptr = api::FindObject(crd, {"status", "acceptedNames"});
  const json::object& accepted = acc_ptr ? *acc_ptr : kEmpty;

  CrdNamesDecision d;
  d.accepted_names = accepted;
  d.names_accepted = {"NamesAccepted", "Unknown", "", ""};
  auto conflict = [&](const char* reason, const std::string& message) {
    d.names_accepted.status = "False";
    d.names_accepted.reason = reason;
    d.names_accepted.message = message;
  };
  struct Single {
    const char* key;
    const char* reason;
    const std::set<std::string>* used;
  };
  for (const Single& s : {Single{"plural", "PluralConflict", &resources},
                          Single{"singular", "SingularConflict", &resources}}) {
    if (auto err = NameConflict(Str(requested, s.key), Str(accepted, s.key), *s.used)) {
      conflict(s.reason, *err);
    } else {
      d.accepted_names[s.key] = Str(requested, s.key);
    }
  }
  // Short names: each new one must be free.
  const std::vector<std::string> want_short = Strings(requested, "shortNames");
  const std::vector<std::string> have_short = Strings(accepted, "shortNames");
  if (want_short != have_short) {
    std::string errors;
    int n = 0;
    for (const std::string& s : want_short) {
      if (std::find(have_short.begin(), have_short.end(), s) != have_short.end()) continue;
      if (auto err = NameConflict(s, "", resources)) {
        errors += (n++ ? ", " : "") + *err;
      }
    }
    if (n > 0) {
      // utilerrors.NewAggregate: one message as is, several in brackets.
      conflict("ShortNamesConflict", n == 1 ? errors : "[" + errors + "]");
    } else {
      d.accepted_names["shortNames"] = StringArray(want_short);
    }
  }
  for (const Single& s :
       {Single{"kind", "KindConflict", &kinds}, Single{"listKind", "ListKindConflict", &kinds}}) {
    if (auto err = NameConflict(Str(requested, s.key), Str(accepted, s.key), *s.used)) {
      conflict(s.reason, *err);
    } else {
      d.accepted_names[s.key] = Str(requested, s.key);
    }
  }
  // Categories are not checked.
  if (const json::value* cats = requested.if_contains("categories")) {
    d.accepted_names["categories"] = *cats;
  } else {
    d.accepted_names.erase("categories");
  }
  if (d.names_accepted.status == "Unknown") {
    d.names_accepted = {"NamesAccepted", "True", "NoConflicts", "no conflicts found"};
  }

  d.established = {"Established", "False", "NotAccepted", "not all names are accepted"};
  if (const json::object* old = FindCrdCondition(crd, "Established")) {
    d.established = {"Established", Str(*old, "status"), Str(*old, "reason"), Str(*old, "message")};
  }
  if (d.established.status != "True" && d.names_accepted.status == "True") {
    d.established = {"Established", "False", "Installing", "the initial names have been accepted"};
  }
  return d;
}

}  // namespace converge::apiserver
