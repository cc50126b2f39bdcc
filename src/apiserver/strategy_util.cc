#include "apiserver/strategy_util.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "api/labels.h"
#include "api/merge_patch.h"
#include "apiserver/strategy.h"

namespace converge::apiserver::sv {

namespace {

std::string GoQuote(std::string_view s) {
  // Go's %q for the printable ASCII that API values hold; other bytes are escaped as \xNN.
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char* kHex = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || IsDigit(c);
}

std::string RegexError(std::string msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples) {
  msg += " (e.g. ";
  bool first = true;
  for (std::string_view e : examples) {
    if (!first) msg += " or ";
    first = false;
    msg += "'";
    msg += e;
    msg += "', ";
  }
  msg += "regex used for validation is '";
  msg += fmt;
  msg += "')";
  return msg;
}

}  // namespace

std::string Child(std::string_view path, std::string_view name) {
  if (path.empty()) return std::string(name);
  std::string out(path);
  out += '.';
  out += name;
  return out;
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

std::string Key(std::string_view path, std::string_view key) {
  std::string out(path);
  out += '[';
  out += key;
  out += ']';
  return out;
}

StatusCause InvalidRendered(std::string field, std::string rendered_value, std::string detail) {
  std::string msg = "Invalid value: " + rendered_value;
  if (!detail.empty()) msg += ": " + detail;
  return {"FieldValueInvalid", std::move(msg), std::move(field)};
}

StatusCause InvalidInt(std::string field, int64_t value, std::string detail) {
  return FieldInvalid(std::move(field), json::value(value), std::move(detail));
}

std::string GoStringMap(const json::value* map) {
  const json::object* o = AsObject(map);
  if (!o) return "map[string]string(nil)";
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : *o) {
    sorted[std::string(k)] = v.is_string() ? std::string(v.get_string()) : json::serialize(v);
  }
  std::string out = "map[string]string{";
  bool first = true;
  for (const auto& [k, v] : sorted) {
    if (!first) out += ", ";
    first = false;
    out += GoQuote(k) + ":" + GoQuote(v);
  }
  return out + "}";
}

std::string GoStringSlice(const json::value* list) {
  const json::array* a = AsArray(list);
  if (!a) return "[]string(nil)";
  std::string out = "[]string{";
  for (size_t i = 0; i < a->size(); ++i) {
    if (i) out += ", ";
    const json::value& v = (*a)[i];
    out += GoQuote(v.is_string() ? std::string(v.get_string()) : json::serialize(v));
  }
  return out + "}";
}

std::string GoLabelSelector(const json::value* selector) {
  const json::object* s = AsObject(selector);
  if (!s) return "null";
  std::string out = "v1.LabelSelector{MatchLabels:";
  auto ml = s->find("matchLabels");
  out += GoStringMap(ml == s->end() ? nullptr : &ml->value());
  out += ", MatchExpressions:";
  auto me = s->find("matchExpressions");
  const json::array* exprs = me == s->end() ? nullptr : AsArray(&me->value());
  if (!exprs) {
    out += "[]v1.LabelSelectorRequirement(nil)";
  } else {
    out += "[]v1.LabelSelectorRequirement{";
    for (size_t i = 0; i < exprs->size(); ++i) {
      if (i) out += ", ";
      const json::object* r = AsObject(&(*exprs)[i]);
      const json::value* values = r ? api::Find(*r, {"values"}) : nullptr;
      out +=
          "v1.LabelSelectorRequirement{Key:" + GoQuote(r ? api::Object::GetString(*r, "key") : "") +
          ", Operator:" + GoQuote(r ? api::Object::GetString(*r, "operator") : "") +
          ", Values:" + GoStringSlice(values) + "}";
    }
    out += "}";
  }
  return out + "}";
}

std::string GoIntOrString(const json::value* v) {
  if (v && v->is_string()) {
    return "intstr.IntOrString{Type:1, IntVal:0, StrVal:" + GoQuote(v->get_string()) + "}";
  }
  int64_t n = AsInt(v).value_or(0);
  return "intstr.IntOrString{Type:0, IntVal:" + std::to_string(n) + ", StrVal:\"\"}";
}

const json::value* Get(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &it->value();
}

const json::value* Get(const api::Object& o, std::string_view key) {
  return Get(o.doc(), key);
}

const json::object& Spec(const api::Object& o) {
  static const json::object kEmpty;
  const json::object* s = AsObject(Get(o, "spec"));
  return s ? *s : kEmpty;
}

const json::object& Status(const api::Object& o) {
  static const json::object kEmpty;
  const json::object* s = AsObject(Get(o, "status"));
  return s ? *s : kEmpty;
}

const json::object& Metadata(const api::Object& o) {
  static const json::object kEmpty;
  const json::object* m = AsObject(Get(o, "metadata"));
  return m ? *m : kEmpty;
}

void CopyField(json::object& to, const json::object& from, std::string_view key) {
  if (const json::value* v = Get(from, key)) {
    // Usually equal already (the client's object was read from the stored one): comparing
    // costs far less than copying the subtree and destroying the one it replaces.
    if (const json::value* have = to.if_contains(key); !have || !api::JsonEqual(*have, *v)) {
      to[key] = *v;
    }
  } else {
    to.erase(key);
  }
}

bool Truthy(const json::value* v) {
  return v && v->is_bool() && v->get_bool();
}

void KeepServerManagedMetadata(api::Object& obj, const api::Object& old) {
  const json::object& om = Metadata(old);
  json::object& m = obj.mutable_metadata();
  for (std::string_view f : {"uid", "creationTimestamp", "deletionTimestamp",
                             "deletionGracePeriodSeconds", "generation"}) {
    CopyField(m, om, f);
  }
}

const json::object* AsObject(const json::value* v) {
  return v && v->is_object() ? &v->get_object() : nullptr;
}

const json::array* AsArray(const json::value* v) {
  return v && v->is_array() ? &v->get_array() : nullptr;
}

std::optional<int64_t> AsInt(const json::value* v) {
  if (!v) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) {
    double d = v->get_double();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::string_view AsString(const json::value* v) {
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool IsSet(const json::value* v) {
  return v && !v->is_null();
}

std::vector<std::string> IsDns1035Label(std::string_view v) {
  std::vector<std::string> errs;
  if (v.size() > 63) errs.push_back("must be no more than 63 characters");
  bool ok = !v.empty() && v.front() >= 'a' && v.front() <= 'z' && IsLowerAlnum(v.back()) &&
            std::all_of(v.begin(), v.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
  if (!ok) {
    errs.push_back(RegexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character",
        "[a-z]([-a-z0-9]*[a-z0-9])?", {"my-name", "abc-123"}));
  }
  return errs;
}

std::vector<std::string> IsValidPortNum(int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return {"must be between 1 and 65535, inclusive"};
}

std::vector<std::string> IsValidPortName(std::string_view name) {
  std::vector<std::string> errs;
  if (name.size() > 15) errs.push_back("must be no more than 15 characters");
  if (name.empty() ||
      !std::all_of(name.begin(), name.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; })) {
    errs.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (std::none_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    errs.push_back("must contain at least one letter (a-z)");
  }
  if (name.find("--") != std::string_view::npos) {
    errs.push_back("must not contain consecutive hyphens (-)");
  }
  if (!name.empty() && (name.front() == '-' || name.back() == '-')) {
    errs.push_back("must not begin or end with a hyphen (-)");
  }
  return errs;
}

namespace {
void ChDirPrefix(std::string_view v, std::vector<std::string>& errs) {
  if (v == ".") {
    errs.push_back("must not be '.'");
  } else if (v == "..") {
    errs.push_back("must not be '..'");
  } else if (v.substr(0, 2) == "..") {
    errs.push_back("must not start with '..'");
  }
}
}  // namespace

std::vector<std::string> IsConfigMapKey(std::string_view key) {
  std::vector<std::string> errs;
  if (key.size() > 253) errs.push_back("must be no more than 253 characters");
  bool ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  if (!ok) {
    errs.push_back(
        RegexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                   "[-._a-zA-Z0-9]+", {"key.name", "KEY_NAME", "key-name"}));
  }
  ChDirPrefix(key, errs);
  return errs;
}

std::vector<std::string> IsEnvVarName(std::string_view name) {
  std::vector<std::string> errs;
  bool ok = !name.empty() && std::all_of(name.begin(), name.end(),
                                         [](char c) { return c >= ' ' && c <= '~' && c != '='; });
  if (!ok) {
    errs.push_back(
        "a valid environment variable name must consist only of printable ASCII characters other "
        "than '='");
  }
  return errs;
}

std::vector<std::string> IsValidPercent(std::string_view v) {
  bool ok = v.size() >= 2 && v.back() == '%' &&
            std::all_of(v.begin(), v.end() - 1, [](char c) { return IsDigit(c); });
  if (ok) return {};
  return {RegexError("a valid percent string must be a numeric string followed by an ending '%'",
                     "[0-9]+%", {"1%", "93%"})};
}

std::vector<std::string> IsValidPathSegmentName(std::string_view v) {
  if (v == "." || v == "..") return {"may not be '" + std::string(v) + "'"};
  std::vector<std::string> errs;
  if (v.find('/') != std::string_view::npos) errs.push_back("may not contain '/'");
  if (v.find('%') != std::string_view::npos) errs.push_back("may not contain '%'");
  return errs;
}

std::vector<std::string> IsValidIp(std::string_view v) {
  std::string s(v);
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return {};
  }
  return {"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"};
}

bool IsIpv6(std::string_view v) {
  std::string s(v);
  unsigned char buf[16];
  return inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

Causes NonNegative(const std::string& field, const json::value* v) {
  std::optional<int64_t> n = AsInt(v);
  if (n && *n < 0) return {InvalidInt(field, *n, "must be greater than or equal to 0")};
  return {};
}

Causes ValidateDns1123Label(const std::string& field, std::string_view v) {
  Causes out;
  for (auto& m : IsDnsLabel(v)) out.push_back(FieldInvalidString(field, v, m));
  return out;
}

Causes ValidateDns1123Subdomain(const std::string& field, std::string_view v) {
  Causes out;
  for (auto& m : IsDnsSubdomain(v)) out.push_back(FieldInvalidString(field, v, m));
  return out;
}

Causes ValidateQualifiedNameField(const std::string& field, std::string_view v) {
  Causes out;
  for (auto& m : api::ValidateQualifiedName(v)) out.push_back(FieldInvalidString(field, v, m));
  return out;
}

Causes ValidateLabelsField(const std::string& field, const json::value* labels) {
  Causes out;
  const json::object* o = AsObject(labels);
  if (!o) return out;
  for (const auto& [k, v] : *o) {
    for (auto& m : api::ValidateQualifiedName(k)) out.push_back(FieldInvalidString(field, k, m));
    std::string_view value = AsString(&v);
    for (auto& m : api::ValidateLabelValue(value)) {
      out.push_back(FieldInvalidString(field, value, m));
    }
  }
  return out;
}

Causes ValidateAnnotationsField(const std::string& field, const json::value* annotations) {
  Causes out;
  const json::object* o = AsObject(annotations);
  if (!o) return out;
  size_t total = 0;
  for (const auto& [k, v] : *o) {
    std::string lower(k);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (auto& m : api::ValidateQualifiedName(lower)) {
      out.push_back(FieldInvalidString(field, k, m));
    }
    total += k.size() + AsString(&v).size();
  }
  if (total > 256 * 1024) out.push_back(FieldTooLong(field, 256 * 1024));
  return out;
}

Causes ValidateLabelSelectorField(const std::string& field, const json::value* selector) {
  Causes out;
  const json::object* s = AsObject(selector);
  if (!s) return out;
  if (const json::value* ml = api::Find(*s, {"matchLabels"})) {
    Append(out, ValidateLabelsField(Child(field, "matchLabels"), ml));
  }
  const json::array* exprs = AsArray(api::Find(*s, {"matchExpressions"}));
  if (!exprs) return out;
  for (size_t i = 0; i < exprs->size(); ++i) {
    std::string p = Index(Child(field, "matchExpressions"), i);
    const json::object* r = AsObject(&(*exprs)[i]);
    if (!r) continue;
    std::string_view op = api::Object::GetString(*r, "operator");
    const json::array* values = AsArray(api::Find(*r, {"values"}));
    size_t nvalues = values ? values->size() : 0;
    if (op == "In" || op == "NotIn") {
      if (nvalues == 0) {
        out.push_back(FieldRequired(Child(p, "values"),
                                    "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (nvalues > 0) {
        out.push_back(
            FieldForbidden(Child(p, "values"),
                           "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      out.push_back(FieldInvalidString(Child(p, "operator"), op, "not a valid selector operator"));
    }
    Append(out, ValidateQualifiedNameField(Child(p, "key"), api::Object::GetString(*r, "key")));
    for (size_t j = 0; values && j < values->size(); ++j) {
      std::string_view value = AsString(&(*values)[j]);
      for (auto& m : api::ValidateLabelValue(value)) {
        out.push_back(FieldInvalidString(Index(Child(p, "values"), j), value, m));
      }
    }
  }
  return out;
}

void Immutable(Causes& out, const std::string& field, const json::value* now,
               const json::value* before, const std::string& rendered_now) {
  bool now_set = IsSet(now);
  bool before_set = IsSet(before);
  if (now_set != before_set || (now_set && *now != *before)) {
    out.push_back(InvalidRendered(field, rendered_now, "field is immutable"));
  }
}

std::optional<IntOrPercent> ParseIntOrString(const json::value* v) {
  if (!v || v->is_null()) return std::nullopt;
  IntOrPercent out;
  if (v->is_string()) {
    out.is_string = true;
    out.str_val = v->get_string();
    return out;
  }
  if (std::optional<int64_t> n = AsInt(v)) {
    out.int_val = *n;
    return out;
  }
  return std::nullopt;
}

int64_t IntOrPercentValue(const IntOrPercent& v) {
  if (!v.is_string) return v.int_val;
  if (!IsValidPercent(v.str_val).empty()) return 0;
  int64_t n = 0;
  std::from_chars(v.str_val.data(), v.str_val.data() + v.str_val.size() - 1, n);
  return n;
}

}  // namespace converge::apiserver::sv
