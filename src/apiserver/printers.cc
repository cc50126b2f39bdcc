// Table printers for built-in kinds.
#include "apiserver/table.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::string Age(const api::Object& obj, std::chrono::system_clock::time_point now) {
  auto created = util::ParseRfc3339(obj.creation_timestamp());
  if (!created) return "<unknown>";
  return util::HumanDuration(now - *created);
}

TablePrinter GenericPrinter() {
  TablePrinter p;
  p.columns = {{"Name", "string", "name", "Name must be unique within a namespace.", 0},
               {"Age", "date", "", "Time since the object was created.", 0}};
  p.cells = [](const api::Object& obj, std::chrono::system_clock::time_point now) {
    json::array cells;
    cells.emplace_back(obj.name());
    cells.emplace_back(Age(obj, now));
    return cells;
  };
  return p;
}

}  // namespace

const TablePrinter& PrinterFor(const api::ResourceInfo& info) {
  // TODO(#4): upstream's columns for every built-in kind.
  (void)info;
  static const TablePrinter generic = GenericPrinter();
  return generic;
}

}  // namespace converge::apiserver
