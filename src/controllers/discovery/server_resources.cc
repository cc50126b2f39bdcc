#include "controllers/discovery/server_resources.h"

#include <boost/json.hpp>

#include <algorithm>

namespace converge::controllers::discovery {

namespace json = boost::json;

namespace {

util::StatusOr<json::object> GetJson(client::RestClient& client, std::string path,
                                     std::stop_token stop) {
  client::HttpRequest r;
  r.path = std::move(path);
  r.headers.emplace_back("accept", "application/json");  // the legacy documents
  r.stop = stop;
  CONVERGE_ASSIGN_OR_RETURN(client::HttpResponse resp, client.Do(std::move(r)));
  boost::system::error_code ec;
  json::value v = json::parse(resp.body, ec);
  if (ec || !v.is_object()) return util::Internal("malformed discovery document");
  return std::move(v.get_object());
}

}  // namespace

std::string DiscoveryResult::FailureMessage() const {
  if (failed_groups.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [gv, err] : failed_groups) parts.push_back(gv + ": " + err);
  std::sort(parts.begin(), parts.end());
  std::string out = "unable to retrieve the complete list of server APIs: ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

util::StatusOr<std::vector<api::ResourceInfo>> ParseResourceList(const api::GroupVersion& gv,
                                                                 std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return util::Internal("malformed APIResourceList");
  std::vector<api::ResourceInfo> out;
  const json::array* resources = api::FindArray(v.get_object(), {"resources"});
  if (resources == nullptr) return out;
  for (const json::value& r : *resources) {
    if (!r.is_object()) continue;
    const json::object& o = r.get_object();
    std::string_view name = api::Object::GetString(o, "name");
    if (name.empty() || name.find('/') != std::string_view::npos) continue;  // subresource
    api::ResourceInfo info;
    info.gvr = {gv.group, gv.version, std::string(name)};
    info.kind = std::string(api::Object::GetString(o, "kind"));
    info.namespaced = api::FindBool(o, {"namespaced"});
    if (const json::array* verbs = api::FindArray(o, {"verbs"})) {
      for (const json::value& verb : *verbs) {
        if (verb.is_string()) info.verbs.emplace_back(verb.get_string());
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

util::StatusOr<DiscoveryResult> ServerPreferredResources(client::RestClient& client,
                                                         std::stop_token stop) {
  DiscoveryResult result;
  std::vector<api::GroupVersion> gvs;
  auto core = GetJson(client, "/api", stop);
  if (core.ok()) {
    const json::array* versions = api::FindArray(*core, {"versions"});
    if (versions != nullptr && !versions->empty() && versions->at(0).is_string()) {
      gvs.push_back({"", std::string(versions->at(0).get_string())});
    }
  }
  auto groups = GetJson(client, "/apis", stop);
  if (!core.ok() && !groups.ok()) return groups.status().WithContext("discovery");
  if (groups.ok()) {
    if (const json::array* list = api::FindArray(*groups, {"groups"})) {
      for (const json::value& g : *list) {
        if (!g.is_object()) continue;
        std::string_view gv = api::FindString(g.get_object(), {"preferredVersion", "groupVersion"});
        if (!gv.empty()) gvs.push_back(api::GroupVersion::Parse(gv));
      }
    }
  }
  for (const api::GroupVersion& gv : gvs) {
    std::string path = gv.group.empty() ? "/api/" + gv.version : "/apis/" + gv.ApiVersion();
    client::HttpRequest r;
    r.path = path;
    r.headers.emplace_back("accept", "application/json");
    r.stop = stop;
    auto resp = client.Do(std::move(r));
    if (!resp.ok()) {
      result.failed_groups[gv.ApiVersion()] = resp.status().message();
      continue;
    }
    auto parsed = ParseResourceList(gv, resp->body);
    if (!parsed.ok()) {
      result.failed_groups[gv.ApiVersion()] = parsed.status().message();
      continue;
    }
    for (auto& info : *parsed) result.resources.push_back(std::move(info));
  }
  return result;
}

}  // namespace converge::controllers::discovery
