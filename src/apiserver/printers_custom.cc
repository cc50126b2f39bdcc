// Custom resources' Tables: Name, then the CRD version's additionalPrinterColumns (upstream's
// apiextensions tableconvertor), each read with a JSONPath and converted by the column type.
#include <algorithm>
#include <charconv>

#include "api/structural_schema.h"
#include "apiserver/printers.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string Unquote(std::string_view s) {
  s = TrimView(s);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    return std::string(s.substr(1, s.size() - 2));
  }
  return std::string(s);
}

// `[?(@.a.b == "v")]`: the items whose relative path equals (or, with !=, differs from) the
// literal. Literals: quoted strings, numbers, true/false.
bool FilterMatches(const json::value& item, std::string_view expr) {
  expr = TrimView(expr);
  bool negate = false;
  size_t op = expr.find("==");
  if (op == std::string_view::npos) {
    op = expr.find("!=");
    negate = op != std::string_view::npos;
  }
  if (op == std::string_view::npos) {
    // [?(@.field)]: the field exists.
    if (!expr.starts_with('@')) return false;
    return !EvaluateJsonPath(item, expr.substr(1)).empty();
  }
  std::string_view lhs = TrimView(expr.substr(0, op));
  std::string rhs = std::string(TrimView(expr.substr(op + 2)));
  if (!lhs.starts_with('@')) return false;
  auto found = EvaluateJsonPath(item, lhs.substr(1));
  bool equal = false;
  if (!found.empty()) {
    const json::value& v = *found.front();
    if (!rhs.empty() && (rhs.front() == '"' || rhs.front() == '\'')) {
      equal = v.is_string() && v.get_string() == Unquote(rhs);
    } else if (rhs == "true" || rhs == "false") {
      equal = v.is_bool() && v.get_bool() == (rhs == "true");
    } else {
      double d = 0;
      auto [p, ec] = std::from_chars(rhs.data(), rhs.data() + rhs.size(), d);
      equal = ec == std::errc() && p == rhs.data() + rhs.size() && v.is_number() &&
              v.to_number<double>() == d;
    }
  }
  return negate ? !equal : equal;
}

// fmt's %v of a decoded JSON value, as the JSONPath printer shows non-strings.
std::string GoPrint(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "<nil>";
    case json::kind::bool_: return v.get_bool() ? "true" : "false";
    case json::kind::int64: return std::to_string(v.get_int64());
    case json::kind::uint64: return std::to_string(v.get_uint64());
    case json::kind::double_: return api::GoFloat(v.get_double());
    case json::kind::string: return std::string(v.get_string());
    case json::kind::array: {
      std::string out = "[";
      const json::array& a = v.get_array();
      for (size_t i = 0; i < a.size(); ++i) out += (i ? " " : "") + GoPrint(a[i]);
      return out + "]";
    }
    case json::kind::object: {
      std::vector<std::pair<std::string_view, const json::value*>> kv;
      for (const auto& [k, val] : v.get_object()) kv.emplace_back(k, &val);
      std::sort(kv.begin(), kv.end());
      std::string out = "map[";
      for (size_t i = 0; i < kv.size(); ++i) {
        out += (i ? " " : "") + std::string(kv[i].first) + ":" + GoPrint(*kv[i].second);
      }
      return out + "]";
    }
  }
  return "";
}

// cellForJSONValue.
json::value Cell(const api::CustomResourceColumn& col, const json::value& v,
                 printers::TimePoint now) {
  if (col.type == "string") return json::value(GoPrint(v));
  if (col.type == "integer") {
    if (v.is_int64() || v.is_uint64()) return v;
    if (v.is_double()) return json::value(static_cast<int64_t>(v.get_double()));
    return nullptr;
  }
  if (col.type == "number") {
    if (v.is_number()) return json::value(v.to_number<double>());
    return nullptr;
  }
  if (col.type == "boolean") return v.is_bool() ? v : json::value(nullptr);
  if (col.type == "date") {
    if (!v.is_string()) return nullptr;
    auto t = util::ParseRfc3339(v.get_string());
    if (!t) return json::value("<invalid>");
    return json::value(util::HumanDuration(now - *t));
  }
  return nullptr;
}

}  // namespace

std::vector<const json::value*> EvaluateJsonPath(const json::value& root, std::string_view path) {
  std::vector<const json::value*> current{&root};
  path = TrimView(path);
  if (path.starts_with('{') && path.ends_with('}')) path = path.substr(1, path.size() - 2);
  if (path.starts_with('$')) path.remove_prefix(1);
  size_t i = 0;
  while (i < path.size() && !current.empty()) {
    std::vector<const json::value*> next;
    if (path[i] == '.') {
      ++i;
      size_t end = path.find_first_of(".[", i);
      if (end == std::string_view::npos) end = path.size();
      std::string_view name = path.substr(i, end - i);
      i = end;
      if (name.empty()) continue;
      for (const json::value* v : current) {
        if (const json::object* o = v->if_object()) {
          if (name == "*") {
            for (const auto& [k, child] : *o) next.push_back(&child);
          } else if (const json::value* child = o->if_contains(name)) {
            next.push_back(child);
          }
        }
      }
    } else if (path[i] == '[') {
      size_t close = std::string_view::npos;
      if (path.substr(i).starts_with("[?(")) {
        close = path.find(")]", i);
        if (close != std::string_view::npos) ++close;
      } else {
        close = path.find(']', i);
      }
      if (close == std::string_view::npos) return {};
      std::string_view inner = path.substr(i + 1, close - i - 1);
      i = close + 1;
      for (const json::value* v : current) {
        if (inner.starts_with("?(") && inner.ends_with(')')) {
          if (const json::array* a = v->if_array()) {
            for (const json::value& item : *a) {
              if (FilterMatches(item, inner.substr(2, inner.size() - 3))) next.push_back(&item);
            }
          }
        } else if (!inner.empty() && (inner.front() == '\'' || inner.front() == '"')) {
          if (const json::object* o = v->if_object()) {
            if (const json::value* child = o->if_contains(Unquote(inner))) next.push_back(child);
          }
        } else if (inner == "*") {
          if (const json::array* a = v->if_array()) {
            for (const json::value& item : *a) next.push_back(&item);
          } else if (const json::object* o = v->if_object()) {
            for (const auto& [k, child] : *o) next.push_back(&child);
          }
        } else if (const json::array* a = v->if_array()) {
          long long n = 0;
          auto [p, ec] = std::from_chars(inner.data(), inner.data() + inner.size(), n);
          if (ec != std::errc() || p != inner.data() + inner.size()) return {};
          if (n < 0) n += static_cast<long long>(a->size());
          if (n >= 0 && static_cast<size_t>(n) < a->size()) {
            next.push_back(&(*a)[static_cast<size_t>(n)]);
          }
        }
      }
    } else {
      return {};  // not a path this subset understands
    }
    current = std::move(next);
  }
  return current;
}

TablePrinter CustomColumnsPrinter(const std::vector<api::CustomResourceColumn>& columns) {
  std::vector<TableColumn> cols{printers::NameColumn()};
  for (const auto& c : columns) {
    cols.push_back({c.name, c.type, c.format, c.description, c.priority});
  }
  return printers::MakePrinter(std::move(cols),
                               [columns](const api::Object& obj, printers::TimePoint now) {
                                 json::array cells;
                                 cells.emplace_back(obj.name());
                                 const json::value root(obj.doc());
                                 for (const auto& c : columns) {
                                   auto found = EvaluateJsonPath(root, c.json_path);
                                   if (found.empty()) {
                                     cells.emplace_back(nullptr);
                                   } else {
                                     cells.push_back(Cell(c, *found.front(), now));
                                   }
                                 }
                                 return cells;
                               });
}

}  // namespace converge::apiserver
