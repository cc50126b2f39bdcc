// Internal to the printers*.cc files: the per-kind Table printers (upstream's
// pkg/printers/internalversion column sets, v1.32) and the cell helpers they share.
//
// Each printers_<area>.cc registers its kinds into a PrinterMap; PrinterFor (table.h) looks a
// resource up there. Printers read the stored JSON directly and never fail: a field that is absent
// or of the wrong type reads as its zero value, as a decoded Go struct would.
//
// The server always prints every column (upstream's server-side convertor runs with Wide=true);
// kubectl hides priority-1 columns unless -o wide.
//
// Where upstream prints a value its defaulting guarantees (Service type, port protocol, Secret
// type, replicas, CronJob suspend), the printers apply the same default, so an object stored
// without it prints as it would on a real cluster.
//
// Thread-safety: free functions over immutable data; safe from any thread.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "api/object.h"
#include "api/types.h"
#include "apiserver/table.h"

namespace converge::apiserver::printers {

namespace json = boost::json;
using TimePoint = std::chrono::system_clock::time_point;

// Keyed by group and resource: every served version of a resource prints the same columns.
using PrinterMap = std::map<api::GroupResource, TablePrinter>;

// Registration, one function per file.
void AddPodPrinter(PrinterMap& map);        // printers_pod.cc
void AddCorePrinters(PrinterMap& map);      // printers_core.cc: the rest of core/v1, events
void AddWorkloadPrinters(PrinterMap& map);  // printers_workloads.cc: apps, batch, policy
void AddClusterPrinters(PrinterMap& map);   // printers_cluster.cc: rbac, coordination,
                                            // admissionregistration, apiextensions, reviews

// Upstream's default table convertor (k8s.io/apiserver rest.NewDefaultTableConvertor), used by
// built-in resources without a printer (roles, clusterroles, CRDs): Name and "Created At" (an
// RFC 3339 timestamp in UTC).
TablePrinter DefaultConvertorPrinter();

// Columns. Types and priorities are upstream's; the descriptions are ours.
TableColumn NameColumn();  // "Name", string, format "name"
TableColumn AgeColumn();   // "Age", string
TableColumn Column(std::string name, std::string type, std::string description, int priority = 0);

// A printer from columns and a row function.
TablePrinter MakePrinter(std::vector<TableColumn> columns,
                         std::function<json::array(const api::Object&, TimePoint)> cells);

// --- Reading fields --------------------------------------------------------------------------

// The object at `key` of `o`, or an empty object when absent or not an object.
const json::object& Sub(const json::object& o, std::string_view key);
// The objects of the array at `key` (non-object elements skipped).
std::vector<const json::object*> Objects(const json::object& o, std::string_view key);
// Number of entries of the object or array at `key`; 0 when absent or of another type.
int64_t Count(const json::object& o, std::string_view key);
std::string_view Str(const json::object& o, std::string_view key);
int64_t Int(const json::object& o, std::string_view key, int64_t fallback = 0);
bool Bool(const json::object& o, std::string_view key);
bool Has(const json::object& o, std::string_view key);  // present and not null

// --- Formatting cells ------------------------------------------------------------------------

// upstream translateTimestampSince: HumanDuration(now - t), "<unknown>" for an absent or
// unparsable timestamp.
std::string TimestampSince(std::string_view rfc3339, TimePoint now);
std::string AgeOf(const api::Object& obj, TimePoint now);
// labels.FormatLabels: "k=v,k2=v2" sorted by key; "<none>" when empty.
std::string FormatLabels(const json::object& labels);
// metav1.FormatLabelSelector: the selector's string form; "<none>" when it selects everything or
// is absent, "<error>" when invalid.
std::string FormatLabelSelector(const json::value* selector);
// Deployment's Selector cell: the string form, "" when empty or absent, "<invalid>" when invalid.
std::string SelectorString(const json::value* selector);
// The "Containers" and "Images" cells: names and images, comma-joined.
std::pair<std::string, std::string> ContainerCells(const json::object& pod_spec);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// "<none>" for an empty string.
std::string OrNone(std::string_view s);

}  // namespace converge::apiserver::printers
