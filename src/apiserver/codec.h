// Request body decoding and response content negotiation.
//
// Bodies: application/json (also when no Content-Type is sent, as kubectl does for PUT /scale),
// application/yaml, and application/vnd.kubernetes.protobuf (the `k8s\0` envelope, decoded with
// the schema registry). Anything else is 415.
// Responses: JSON always; a meta.k8s.io Table when the Accept header asks for one (as=Table).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_validation.h"
#include "api/object.h"
#include "api/types.h"
#include "apiserver/errors.h"
#include "apiserver/request.h"

namespace converge::apiserver {

// The media type of a Content-Type or Accept entry, lower-cased, without parameters.
std::string MediaType(std::string_view content_type);

// Repeated keys of a body, for strict decoding (upstream's fieldValidation=Strict|Warn).
struct BodyDuplicates {
  std::vector<std::string> json_paths;    // a JSON body: FindDuplicateFields
  std::vector<std::string> yaml_reports;  // a YAML body: YamlToJson's duplicate_keys
  // `duplicate field "x"` for each JSON path (once each), or the YAML reports.
  void AddTo(api::StrictReport& report) const;
};

// Decodes the body into a JSON object by its Content-Type (protobuf bodies name their kind in
// the envelope). With a schema, JSON and YAML bodies are checked as upstream's decoder does under
// the request's ?fieldValidation (Strict: unknown or duplicate fields are 400; Warn: they become
// `warnings`; unknown fields are always dropped) and values of the wrong type are 400. Without
// one (custom resources, whose schema is applied later), `duplicates` receives the body's
// repeated keys unless fieldValidation is Ignore.
ApiOr<api::Object> DecodeObject(const Request& req, const api::TypeSchema* schema = nullptr,
                                std::vector<std::string>* warnings = nullptr,
                                BodyDuplicates* duplicates = nullptr);
// The request's ?fieldValidation (default Warn, as upstream).
ApiOr<api::FieldValidation> QueryFieldValidation(const Request& req);
// Adds `299 - "<warning>"` Warning headers.
void AddWarnings(Response& resp, const std::vector<std::string>& warnings);
// Decodes JSON or YAML text into a JSON value (patch bodies). For YAML, `yaml_duplicates`
// receives the repeated keys as YamlToJson reports them.
ApiOr<boost::json::value> DecodeJsonOrYaml(std::string_view body, bool yaml,
                                           std::vector<std::string>* yaml_duplicates = nullptr);
// Applies the outcome of strict decoding under `mode`: nothing for Ignore or an empty report;
// Warn appends the report's warnings to `warnings`; Strict returns 400 BadRequest with
// `prefix` + report.Message().
std::optional<ApiError> ApplyStrictReport(const api::StrictReport& report,
                                          api::FieldValidation mode,
                                          std::vector<std::string>* warnings,
                                          std::string_view prefix = "");

struct OutputFormat {
  bool table = false;
  std::string table_version = "v1";  // meta.k8s.io/v1 or v1beta1
};
// Reads the Accept header. 406 when nothing acceptable is offered.
ApiOr<OutputFormat> NegotiateOutput(const Request& req);

// Maximum JSON nesting accepted in request bodies (upstream's decoder limit is 10,000).
inline constexpr int kMaxJsonDepth = 10000;

}  // namespace converge::apiserver
