// Request and response pieces particular to custom resources: pruning a request body against
// the CRD version's schema (with fieldValidation's Strict/Warn reporting), and serving objects in
// the requested version (conversion strategy None: the versions differ only in apiVersion).
#include <set>

#include "api/custom_resource.h"
#include "api/field_validation.h"
#include "apiserver/codec.h"
#include "apiserver/handler_util.h"

namespace converge::apiserver {

namespace json = boost::json;

std::optional<ApiError> PruneCustomResourceBody(const Request& req, const api::ResourceInfo& info,
                                                api::Object& obj, bool wrap,
                                                std::vector<std::string>* warnings) {
  auto mode = QueryFieldValidation(req);
  if (!mode.ok()) return mode.error();
  std::vector<std::string> unknown;
  if (info.crd && info.crd->schema) {
    unknown = api::PruneCustomResource(*info.crd->schema, obj.mutable_doc());
  }
  for (std::string& p : api::PruneObjectMeta(obj.mutable_doc())) unknown.push_back(std::move(p));
  if (*mode == api::FieldValidation::kIgnore) return std::nullopt;
  std::vector<std::string> problems;
  for (const std::string& p : unknown) problems.push_back("unknown field \"" + p + "\"");
  if (wrap) {
    std::string type = MediaType(req.Header("content-type"));
    if (type.empty() || type == "application/json") {
      if (auto dups = api::FindDuplicateFields(req.body); dups.ok()) {
        std::set<std::string> seen;
        for (const std::string& p : *dups) {
          if (seen.insert(p).second) problems.push_back("duplicate field \"" + p + "\"");
        }
      }
    }
  }
  if (problems.empty()) return std::nullopt;
  if (*mode == api::FieldValidation::kWarn) {
    if (warnings) warnings->insert(warnings->end(), problems.begin(), problems.end());
    return std::nullopt;
  }
  std::string msg = "strict decoding error: ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? ", " : "") + problems[i];
  if (wrap) {
    // Upstream's transformDecodeError for create and update bodies.
    msg = info.kind + " in version \"" + info.gvr.version + "\" cannot be handled as a " +
          info.kind + ": " + msg;
  }
  return BadRequest(std::move(msg));
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
  if (!NeedsVersionConversion(info, *obj.json)) return obj.json;
  auto parsed = obj.Parse();
  if (!parsed.ok()) return obj.json;
  ConvertToServedVersion(info, *parsed);
  return std::make_shared<const std::string>(parsed->Serialize());
}

}  // namespace converge::apiserver
