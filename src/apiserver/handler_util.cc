#include "apiserver/handler_util.h"

#include <charconv>

#include "apiserver/fieldmanager.h"

namespace converge::apiserver {

namespace json = boost::json;

ApiOr<bool> QueryBool(const Request& req, std::string_view key, bool fallback) {
  bool present = false;
  std::string_view v = req.Query(key, &present);
  if (!present) return fallback;
  if (v == "true" || v == "1" || v.empty()) return true;
  if (v == "false" || v == "0") return false;
  return BadRequest("invalid boolean value for " + std::string(key) + ": \"" + std::string(v) +
                    "\"");
}

ApiOr<std::optional<int64_t>> QueryInt(const Request& req, std::string_view key) {
  bool present = false;
  std::string_view v = req.Query(key, &present);
  if (!present || v.empty()) return std::optional<int64_t>();
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size()) {
    return BadRequest("invalid value for " + std::string(key) + ": \"" + std::string(v) +
                      "\": must be an integer");
  }
  return std::optional<int64_t>(out);
}

ApiOr<bool> QueryDryRun(const Request& req) {
  bool dry = false;
  for (const auto& [k, v] : req.query) {
    if (k != "dryRun") continue;
    if (v != "All") {
      return BadRequest("Invalid dry run value: \"" + v + "\": supported values: \"All\"");
    }
    dry = true;
  }
  return dry;
}

ApiOr<std::string> QueryFieldManager(const Request& req, std::string_view options_kind,
                                     bool is_apply) {
  std::string_view manager = req.Query("fieldManager");
  if (auto err = ValidateFieldManagerOptions(
          options_kind, is_apply, manager,
          /*force_set=*/options_kind == "PatchOptions" && req.HasQuery("force"))) {
    return *err;
  }
  if (!manager.empty()) return std::string(manager);
  return DefaultFieldManager(req.Header("user-agent"));
}

ApiOr<WatchFilter> QueryFilter(const Request& req, const api::ResourceInfo& info,
                               const std::string& ns) {
  WatchFilter f;
  f.ns = ns;
  if (std::string_view ls = req.Query("labelSelector"); !ls.empty()) {
    auto sel = api::LabelSelector::Parse(ls);
    if (!sel.ok()) return BadRequest(sel.status().message());
    f.labels = std::move(*sel);
  }
  if (std::string_view fs = req.Query("fieldSelector"); !fs.empty()) {
    auto sel = api::FieldSelector::Parse(fs);
    if (!sel.ok()) return BadRequest(sel.status().message());
    for (const auto& r : sel->requirements()) {
      bool known = r.field == "metadata.name" || r.field == "metadata.namespace";
      for (const auto& s : info.selectable_fields) known |= s == r.field;
      if (!known) {
        return BadRequest("field label not supported: " + r.field);
      }
    }
    if (const std::string* name = sel->RequiredValue("metadata.name")) f.name = *name;
    if (const std::string* n = sel->RequiredValue("metadata.namespace"); n && f.ns.empty()) {
      f.ns = *n;
    }
    f.fields = std::move(*sel);
  }
  return f;
}

ApiOr<IncludeObject> QueryIncludeObject(const Request& req) {
  std::string_view v = req.Query("includeObject");
  if (v.empty() || v == "Metadata") return IncludeObject::kMetadata;
  if (v == "None") return IncludeObject::kNone;
  if (v == "Object") return IncludeObject::kObject;
  return BadRequest("includeObject: Unsupported value: \"" + std::string(v) +
                    "\": supported values: \"Metadata\", \"None\", \"Object\"");
}

std::shared_ptr<const TablePrinter> PrinterForResource(const api::ResourceInfo& info) {
  if (info.crd)
    return std::make_shared<const TablePrinter>(CustomColumnsPrinter(info.crd->columns));
  // Built-in printers live as long as the process: a non-owning pointer.
  return std::shared_ptr<const TablePrinter>(std::shared_ptr<const TablePrinter>(),
                                             &PrinterFor(info));
}

Response ObjectResponse(int status, const Request& req, const api::ResourceInfo& info,
                        const CachedObject& obj) {
  auto format = NegotiateOutput(req);
  if (!format.ok()) return ErrorResponse(format.error());
  if (!format->table) return JsonResponse(status, *ServedJson(info, obj));
  auto include = QueryIncludeObject(req);
  if (!include.ok()) return ErrorResponse(include.error());
  auto parsed = obj.Parse();
  if (!parsed.ok()) return ErrorResponse(InternalError(parsed.status().message()));
  ConvertToServedVersion(info, *parsed);
  TableOptions opts;
  opts.include_object = *include;
  opts.resource_version = std::to_string(obj.revision);
  json::object table = BuildTable(*PrinterForResource(info), {&*parsed}, opts);
  if (format->table_version != "v1") table["apiVersion"] = "meta.k8s.io/" + format->table_version;
  return JsonResponse(status, json::serialize(table));
}

Response ListResponse(const Request& req, const api::ResourceInfo& info, const ListResult& list) {
  auto format = NegotiateOutput(req);
  if (!format.ok()) return ErrorResponse(format.error());
  const std::string rv = std::to_string(list.revision);
  if (format->table) {
    auto include = QueryIncludeObject(req);
    if (!include.ok()) return ErrorResponse(include.error());
    std::vector<api::Object> parsed;
    parsed.reserve(list.items.size());
    for (const auto& item : list.items) {
      auto p = item->Parse();
      if (!p.ok()) return ErrorResponse(InternalError(p.status().message()));
      ConvertToServedVersion(info, *p);
      parsed.push_back(std::move(*p));
    }
    std::vector<const api::Object*> ptrs;
    ptrs.reserve(parsed.size());
    for (const auto& p : parsed) ptrs.push_back(&p);
    TableOptions opts;
    opts.include_object = *include;
    opts.resource_version = rv;
    opts.continue_token = list.continue_token;
    json::object table = BuildTable(*PrinterForResource(info), ptrs, opts);
    if (format->table_version != "v1") table["apiVersion"] = "meta.k8s.io/" + format->table_version;
    return JsonResponse(200, json::serialize(table));
  }
  // Items are already encoded: concatenate their bytes.
  std::vector<std::shared_ptr<const std::string>> items;
  items.reserve(list.items.size());
  for (const auto& item : list.items) items.push_back(ServedJson(info, *item));
  size_t total = 128;
  for (const auto& item : items) total += item->size() + 1;
  std::string body;
  body.reserve(total);
  body += R"({"kind":")";
  body += info.list_kind;
  body += R"(","apiVersion":")";
  body += info.gvr.Gv().ApiVersion();
  body += R"(","metadata":{"resourceVersion":")";
  body += rv;
  body += '"';
  if (!list.continue_token.empty()) {
    body += R"(,"continue":")";
    body += list.continue_token;
    body += '"';
  }
  if (list.remaining_item_count) {
    body += R"(,"remainingItemCount":)";
    body += std::to_string(*list.remaining_item_count);
  }
  body += R"(},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) body += ',';
    body += *items[i];
  }
  body += "]}";
  return JsonResponse(200, std::move(body));
}

std::optional<ApiError> CheckKind(api::Object& obj, const api::GroupVersionKind& want) {
  std::string_view api_version = obj.api_version();
  std::string_view kind = obj.kind();
  std::string want_av = want.ApiVersion();
  if (!api_version.empty() && api_version != want_av) {
    return BadRequest("the API version in the data (" + std::string(api_version) +
                      ") does not match the expected API version (" + want_av + ")");
  }
  if (!kind.empty() && kind != want.kind) {
    return BadRequest("the kind in the data (" + std::string(kind) +
                      ") does not match the expected kind (" + want.kind + ")");
  }
  obj.SetGvk(want);
  return std::nullopt;
}

}  // namespace converge::apiserver
