// Server-side printing: meta.k8s.io/v1 Table responses for `kubectl get`.
//
// kubectl 1.32 has no client-side printers for built-in kinds: the columns it shows (READY,
// STATUS, RESTARTS, AGE, -o wide's IP/NODE...) come from here. Each kind has a TablePrinter
// (upstream's pkg/printers/internalversion column sets, in printers*.cc); built-in kinds without
// one get upstream's default Name / Created At, custom resources Name and Age.
//
// Thread-safety: printers are immutable and shared.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "api/custom_resource.h"
#include "api/object.h"
#include "api/resource.h"

namespace converge::apiserver {

struct TableColumn {
  std::string name;         // "Name", "Ready", ... (kubectl upper-cases them)
  std::string type;         // "string", "integer", "number", "boolean", "date"
  std::string format;       // "name" for the Name column, else usually ""
  std::string description;  // our own words
  int priority = 0;         // 0 = always shown; 1 = only with -o wide
};

struct TablePrinter {
  std::vector<TableColumn> columns;
  // One row's cells, in column order. `now` is the server's wall time (AGE is computed
  // server-side).
  std::function<boost::json::array(const api::Object& obj,
                                   std::chrono::system_clock::time_point now)>
      cells;
};

// The printer for a resource: its kind's own, upstream's default (Name, Created At) for built-in
// kinds upstream has no printer for (roles, CRDs...), or Name/Age for custom resources.
const TablePrinter& PrinterFor(const api::ResourceInfo& info);

// A custom resource's printer (printers_custom.cc): Name, then the CRD version's
// additionalPrinterColumns, each cell converted by its column type as upstream's tableconvertor
// does (date: the age, "<invalid>" when unparsable; absent: null, which kubectl shows as <none>).
TablePrinter CustomColumnsPrinter(const std::vector<api::CustomResourceColumn>& columns);

// The JSONPath subset printer columns use: ".a.b", "['a.b']", "[2]", "[-1]", "[*]", ".*" and
// filters "[?(@.type=="Ready")]" (==, != against a string, number or boolean, or existence).
// Returns the matches in order; empty when nothing matches or the path is outside the subset.
std::vector<const boost::json::value*> EvaluateJsonPath(const boost::json::value& root,
                                                        std::string_view path);

// includeObject: what each row's `object` holds.
enum class IncludeObject { kNone, kMetadata, kObject };

struct TableOptions {
  IncludeObject include_object = IncludeObject::kMetadata;
  bool include_columns = true;   // watch events after the first may omit column definitions
  std::string resource_version;  // metadata.resourceVersion of the Table
  std::string continue_token;
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

// Builds a Table from objects already parsed. `printer` is usually PrinterFor(info); custom
// resources pass one built from additionalPrinterColumns.
boost::json::object BuildTable(const TablePrinter& printer,
                               const std::vector<const api::Object*>& objects,
                               const TableOptions& options);

// The row object for IncludeObject::kMetadata: a meta.k8s.io/v1 PartialObjectMetadata.
boost::json::object PartialObjectMetadata(const api::Object& obj);

}  // namespace converge::apiserver
