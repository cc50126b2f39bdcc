// Request and response pieces particular to custom resources: pruning a request body against
// the CRD version's schema (with fieldValidation's Strict/Warn reporting), and serving objects in
// the requested version (conversion strategy None: the versions differ only in apiVersion).
#include "api/custom_resource.h"
#include "api/field_validation.h"
#include "apiserver/codec.h"
#include "apiserver/handler_util.h"

namespace converge::apiserver {

namespace json = boost::json;

std::optional<ApiError> PruneCustomResourceBody(const Request& req, const api::ResourceInfo& info,
                                                api::Object& obj, api::StrictReport report,
                                                bool wrap, std::vector<std::string>* warnings) {
  auto mode = QueryFieldValidation(req);
  if (!mode.ok()) return mode.error();
  // Upstream's unstructuredSchemaCoercer: ObjectMeta's unknown fields first, then what the
  // structural schema prunes (sorted).
  std::vector<std::string> unknown = api::PruneObjectMeta(obj.mutable_doc());
  if (info.crd && info.crd->schema) {
    std::vector<std::string> pruned =
        api::PruneCustomResource(*info.crd->schema, obj.mutable_doc());
    api::SortFieldPaths(pruned);
    unknown.insert(unknown.end(), pruned.begin(), pruned.end());
  }
  for (const std::string& p : unknown) report.Add("unknown field \"" + p + "\"");
  // Upstream's transformDecodeError for create and update bodies.
  const std::string prefix = wrap ? info.kind + " in version \"" + info.gvr.version +
                                        "\" cannot be handled as a " + info.kind + ": "
                                  : "";
  return ApplyStrictReport(report, *mode, warnings, prefix);
}

bool NeedsVersionConversion(const api::ResourceInfo& info, std::string_view json) {
  if (!info.crd) return false;
  if (info.gvr.version != info.storage_version) return true;
  // Objects written under an earlier storage version keep theirs.
  return json.find("\"apiVersion\":\"" + info.Gvk().ApiVersion() + "\"") == std::string_view::npos;
}

void ConvertToServedVersion(const api::ResourceInfo& info, api::Object& obj) {
  if (info.crd) obj.SetGvk(info.Gvk());
}

std::shared_ptr<const std::string> ServedJson(const api::ResourceInfo& info,
                                              const CachedObject& obj) {
  std::shared_ptr<const std::string> json = obj.json();
  if (!NeedsVersionConversion(info, *json)) return json;
  auto parsed = api::Object::Parse(*json);
  if (!parsed.ok()) return json;
  ConvertToServedVersion(info, *parsed);
  return std::make_shared<const std::string>(parsed->Serialize());
}

}  // namespace converge::apiserver
