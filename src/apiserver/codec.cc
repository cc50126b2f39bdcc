#include "apiserver/codec.h"

#include <algorithm>
#include <set>

#include "api/protobuf.h"
#include "api/yaml.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// With `duplicates`: the paths of the body's repeated keys are appended, found in the same pass.
ApiOr<json::value> ParseJson(std::string_view body,
                             std::vector<std::string>* duplicates = nullptr) {
  json::parse_options opts;
  opts.max_depth = kMaxJsonDepth;
  boost::system::error_code ec;
  json::value v = api::ParseJsonFindingDuplicates(body, opts, ec, duplicates);
  if (ec) {
    if (ec == json::error::too_deep) {
      return BadRequest("the request body is nested too deeply (more than " +
                        std::to_string(kMaxJsonDepth) + " levels)");
    }
    return BadRequest("error decoding the request body as JSON: " + ec.message());
  }
  return v;
}

}  // namespace

std::string MediaType(std::string_view content_type) {
  return Lower(TrimSpace(content_type.substr(0, content_type.find(';'))));
}

ApiOr<json::value> DecodeJsonOrYaml(std::string_view body, bool yaml,
                                    std::vector<std::string>* yaml_duplicates) {
  if (!yaml) return ParseJson(body);
  auto v = api::YamlToJson(body, yaml_duplicates);
  if (!v.ok()) return BadRequest("error decoding YAML: " + v.status().message());
  return std::move(*v);
}

ApiOr<api::FieldValidation> QueryFieldValidation(const Request& req) {
  auto mode = api::ParseFieldValidation(req.Query("fieldValidation"));
  if (!mode.ok()) {
    return Invalid({"meta.k8s.io", "v1", "CreateOptions"}, "",
                   {{"FieldValueNotSupported", mode.status().message(), "fieldValidation"}});
  }
  return *mode;
}

void BodyDuplicates::AddTo(api::StrictReport& report) const {
  std::set<std::string_view> seen;
  for (const std::string& p : json_paths) {
    if (seen.insert(p).second) report.Add("duplicate field \"" + p + "\"");
  }
  report.AddYamlDuplicates(yaml_reports);
}

std::optional<ApiError> ApplyStrictReport(const api::StrictReport& report,
                                          api::FieldValidation mode,
                                          std::vector<std::string>* warnings,
                                          std::string_view prefix) {
  if (report.empty() || mode == api::FieldValidation::kIgnore) return std::nullopt;
  if (mode == api::FieldValidation::kWarn) {
    if (warnings) warnings->insert(warnings->end(), report.warnings.begin(), report.warnings.end());
    return std::nullopt;
  }
  return BadRequest(std::string(prefix) + report.Message());
}

void AddWarnings(Response& resp, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) {
    std::string quoted;
    for (char c : w) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    resp.headers.emplace_back("Warning", "299 - \"" + quoted + "\"");
  }
}

ApiOr<api::Object> DecodeObject(const Request& req, const api::TypeSchema* schema,
                                std::vector<std::string>* warnings, BodyDuplicates* duplicates) {
  std::string type = MediaType(req.Header("content-type"));
  if (req.body.empty()) return BadRequest("the request body is empty");
  auto mode = QueryFieldValidation(req);
  if (!mode.ok()) return mode.error();
  const bool strict = *mode != api::FieldValidation::kIgnore;
  std::string yaml_as_json;
  std::string_view json_text;
  std::optional<std::vector<std::string>> yaml_duplicates;
  if (type.empty() || type == "application/json" || type == "*/*") {
    json_text = req.body;
  } else if (type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml") {
    yaml_duplicates.emplace();
    auto v = DecodeJsonOrYaml(req.body, true, strict ? &*yaml_duplicates : nullptr);
    if (!v.ok()) return v.error();
    yaml_as_json = json::serialize(*v);
    json_text = yaml_as_json;
  } else if (type == api::kProtobufContentType) {
    auto decoded = api::DecodeProtobufObject(req.body);
    if (!decoded.ok()) return BadRequest(decoded.status().message());
    return api::Object(std::move(*decoded));
  } else {
    return UnsupportedMediaType(
        "the body of the request was in an unknown format - accepted "
        "media types include: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf");
  }
  if (schema) {
    auto decoded = api::DecodeJsonBody(json_text, *schema, *mode,
                                       yaml_duplicates ? &*yaml_duplicates : nullptr);
    if (!decoded.ok()) return BadRequest(decoded.status().message());
    if (warnings) {
      for (auto& w : decoded->warnings) warnings->push_back(std::move(w));
    }
    return api::Object(std::move(decoded->object));
  }
  const bool find_duplicates = duplicates != nullptr && strict && !yaml_duplicates;
  auto v = ParseJson(json_text, find_duplicates ? &duplicates->json_paths : nullptr);
  if (!v.ok()) return v.error();
  if (!v->is_object()) return BadRequest("the request body must be a JSON object");
  if (duplicates != nullptr && strict && yaml_duplicates) {
    duplicates->yaml_reports = std::move(*yaml_duplicates);
  }
  return api::Object(std::move(v->get_object()));
}

ApiOr<OutputFormat> NegotiateOutput(const Request& req) {
  OutputFormat out;
  std::string_view accept = req.Header("accept");
  if (accept.empty()) return out;
  bool acceptable = false;
  size_t pos = 0;
  while (pos <= accept.size()) {
    size_t comma = accept.find(',', pos);
    std::string_view entry =
        accept.substr(pos, comma == std::string_view::npos ? accept.npos : comma - pos);
    pos = comma == std::string_view::npos ? accept.size() + 1 : comma + 1;
    std::string media = MediaType(entry);
    if (media != "application/json" && media != "*/*" && media != "application/*") continue;
    // Parameters: as=Table;g=meta.k8s.io;v=v1
    std::string as, g, ver;
    size_t p = entry.find(';');
    while (p != std::string_view::npos) {
      size_t next = entry.find(';', p + 1);
      std::string_view param = TrimSpace(
          entry.substr(p + 1, next == std::string_view::npos ? entry.npos : next - p - 1));
      auto eq = param.find('=');
      if (eq != std::string_view::npos) {
        std::string key(TrimSpace(param.substr(0, eq)));
        std::string val(TrimSpace(param.substr(eq + 1)));
        if (key == "as") as = val;
        if (key == "g") g = val;
        if (key == "v") ver = val;
      }
      p = next;
    }
    if (as.empty()) {
      acceptable = true;
      if (!out.table) break;  // first acceptable plain entry wins unless a Table came first
      continue;
    }
    if (as == "Table" && g == "meta.k8s.io" && (ver == "v1" || ver == "v1beta1")) {
      if (!out.table) {
        out.table = true;
        out.table_version = ver;
      }
      acceptable = true;
      break;  // entries are in preference order
    }
  }
  if (!acceptable) {
    return NotAcceptable(
        "only the following media types are accepted: application/json, "
        "application/yaml, application/vnd.kubernetes.protobuf");
  }
  return out;
}

}  // namespace converge::apiserver
