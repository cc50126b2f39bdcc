// PrinterFor and the helpers every printers_<area>.cc uses.
#include "apiserver/printers.h"

#include <algorithm>
#include <map>
#include <vector>

#include "api/labels.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace printers {

namespace {

const json::object kEmptyObject;

std::string CreatedAtCell(const api::Object& obj) {
  // Go formats the zero metav1.Time as the year-1 instant.
  auto t = util::ParseRfc3339(obj.creation_timestamp());
  if (!t) return "0001-01-01T00:00:00Z";
  return util::FormatRfc3339(*t);
}

// Custom resources without additionalPrinterColumns: Name and Age (a "date" column), as the
// CRD handler's defaulted columns print them.
TablePrinter CustomResourcePrinter() {
  return MakePrinter({NameColumn(), Column("Age", "date", "Time since the object was created.")},
                     [](const api::Object& obj, TimePoint now) {
                       json::array cells;
                       cells.emplace_back(obj.name());
                       cells.emplace_back(AgeOf(obj, now));
                       return cells;
                     });
}

PrinterMap BuildPrinterMap() {
  PrinterMap map;
  AddPodPrinter(map);
  AddCorePrinters(map);
  AddWorkloadPrinters(map);
  AddClusterPrinters(map);
  return map;
}

}  // namespace

TablePrinter DefaultConvertorPrinter() {
  return MakePrinter(
      {NameColumn(), Column("Created At", "date", "When the object was created (RFC 3339, UTC).")},
      [](const api::Object& obj, TimePoint) {
        json::array cells;
        cells.emplace_back(obj.name());
        cells.emplace_back(CreatedAtCell(obj));
        return cells;
      });
}

TableColumn NameColumn() {
  return {"Name", "string", "name", "The object's name, unique within its namespace.", 0};
}

TableColumn AgeColumn() {
  return {"Age", "string", "", "Time since the object was created.", 0};
}

TableColumn Column(std::string name, std::string type, std::string description, int priority) {
  return {std::move(name), std::move(type), "", std::move(description), priority};
}

TablePrinter MakePrinter(std::vector<TableColumn> columns,
                         std::function<json::array(const api::Object&, TimePoint)> cells) {
  TablePrinter p;
  p.columns = std::move(columns);
  p.cells = std::move(cells);
  return p;
}

const json::object& Sub(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || !it->value().is_object()) return kEmptyObject;
  return it->value().get_object();
}

std::vector<const json::object*> Objects(const json::object& o, std::string_view key) {
  std::vector<const json::object*> out;
  auto it = o.find(key);
  if (it == o.end() || !it->value().is_array()) return out;
  for (const json::value& v : it->value().get_array()) {
    if (v.is_object()) out.push_back(&v.get_object());
  }
  return out;
}

int64_t Count(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end()) return 0;
  if (it->value().is_object()) return static_cast<int64_t>(it->value().get_object().size());
  if (it->value().is_array()) return static_cast<int64_t>(it->value().get_array().size());
  return 0;
}

std::string_view Str(const json::object& o, std::string_view key) {
  return api::Object::GetString(o, key);
}

int64_t Int(const json::object& o, std::string_view key, int64_t fallback) {
  return api::FindInt(o, {key}, fallback);
}

bool Bool(const json::object& o, std::string_view key) {
  return api::FindBool(o, {key});
}

bool Has(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && !it->value().is_null();
}

std::string TimestampSince(std::string_view rfc3339, TimePoint now) {
  if (rfc3339.empty()) return "<unknown>";
  auto t = util::ParseRfc3339(rfc3339);
  if (!t) return "<unknown>";
  return util::HumanDuration(now - *t);
}

std::string AgeOf(const api::Object& obj, TimePoint now) {
  return TimestampSince(obj.creation_timestamp(), now);
}

std::string FormatLabels(const json::object& labels) {
  // Go's labels.Set.String sorts by key.
  std::vector<std::pair<std::string_view, std::string_view>> kv;
  for (const auto& [k, v] : labels) {
    kv.emplace_back(k, v.is_string() ? std::string_view(v.get_string()) : std::string_view());
  }
  if (kv.empty()) return "<none>";
  std::sort(kv.begin(), kv.end());
  std::string out;
  for (const auto& [k, v] : kv) {
    if (!out.empty()) out += ',';
    out.append(k).append("=").append(v);
  }
  return out;
}

std::string FormatLabelSelector(const json::value* selector) {
  auto sel = api::LabelSelector::FromLabelSelector(selector);
  if (!sel.ok()) return "<error>";
  std::string s = sel->ToString();
  return s.empty() ? "<none>" : s;
}

std::string SelectorString(const json::value* selector) {
  auto sel = api::LabelSelector::FromLabelSelector(selector);
  if (!sel.ok()) return "<invalid>";
  return sel->ToString();
}

std::pair<std::string, std::string> ContainerCells(const json::object& pod_spec) {
  std::string names, images;
  bool first = true;
  for (const json::object* c : Objects(pod_spec, "containers")) {
    if (!first) {
      names += ',';
      images += ',';
    }
    first = false;
    names += Str(*c, "name");
    images += Str(*c, "image");
  }
  return {std::move(names), std::move(images)};
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string OrNone(std::string_view s) {
  return s.empty() ? "<none>" : std::string(s);
}

}  // namespace printers

const TablePrinter& PrinterFor(const api::ResourceInfo& info) {
  static const printers::PrinterMap* const map =
      new printers::PrinterMap(printers::BuildPrinterMap());
  static const TablePrinter custom = printers::CustomResourcePrinter();
  static const TablePrinter fallback = printers::DefaultConvertorPrinter();
  if (info.custom) return custom;
  auto it = map->find(api::GroupResource{info.gvr.group, info.gvr.resource});
  return it == map->end() ? fallback : it->second;
}

}  // namespace converge::apiserver
