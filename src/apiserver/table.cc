#include "apiserver/table.h"

#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

json::object PartialObjectMetadata(const api::Object& obj) {
  json::object o;
  o["kind"] = "PartialObjectMetadata";
  o["apiVersion"] = "meta.k8s.io/v1";
  if (const json::object* m = api::FindObject(obj.doc(), {"metadata"})) {
    json::object meta = *m;
    meta.erase("managedFields");
    o["metadata"] = std::move(meta);
  } else {
    o["metadata"] = json::object();
  }
  return o;
}

json::object BuildTable(const TablePrinter& printer, const std::vector<const api::Object*>& objects,
                        const TableOptions& options) {
  json::object table;
  table["kind"] = "Table";
  table["apiVersion"] = "meta.k8s.io/v1";
  json::object meta;
  if (!options.resource_version.empty()) meta["resourceVersion"] = options.resource_version;
  if (!options.continue_token.empty()) meta["continue"] = options.continue_token;
  table["metadata"] = std::move(meta);
  json::array cols;
  if (options.include_columns) {
    for (const TableColumn& c : printer.columns) {
      json::object col;
      col["name"] = c.name;
      col["type"] = c.type;
      col["format"] = c.format;
      col["description"] = c.description;
      col["priority"] = c.priority;
      cols.emplace_back(std::move(col));
    }
  }
  table["columnDefinitions"] = std::move(cols);
  json::array rows;
  rows.reserve(objects.size());
  for (const api::Object* obj : objects) {
    json::object row;
    row["cells"] = printer.cells(*obj, options.now);
    switch (options.include_object) {
      case IncludeObject::kNone: break;
      case IncludeObject::kMetadata: row["object"] = PartialObjectMetadata(*obj); break;
      case IncludeObject::kObject: row["object"] = obj->doc(); break;
    }
    rows.emplace_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

}  // namespace converge::apiserver
