#include "apiserver/discovery.h"

#include <openssl/evp.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <map>
#include <set>

#include "api/custom_resource.h"
#include "api/special_types.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using api::ResourceInfo;
using Table = api::ResourceRegistry::Table;

std::string Sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string HexPrefix(std::string_view bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n && i < bytes.size(); ++i) {
    out += kHex[static_cast<uint8_t>(bytes[i]) >> 4];
    out += kHex[static_cast<uint8_t>(bytes[i]) & 15];
  }
  return out;
}

// The versions a group serves, in priority order (the first is the preferred version).
std::vector<std::string> GroupVersions(const Table& table, std::string_view group) {
  std::set<std::string> versions;
  for (const auto& r : table.resources) {
    if (r->gvr.group == group) versions.insert(r->gvr.version);
  }
  std::vector<std::string> out(versions.begin(), versions.end());
  std::sort(out.begin(), out.end(), [](const std::string& x, const std::string& y) {
    return api::KubeVersionPrecedes(x, y);
  });
  return out;
}

// The resources of one group-version, sorted by name.
std::vector<const ResourceInfo*> VersionResources(const Table& table, const api::GroupVersion& gv) {
  std::vector<const ResourceInfo*> out;
  for (const auto& r : table.resources) {
    if (r->gvr.group == gv.group && r->gvr.version == gv.version) out.push_back(r.get());
  }
  std::sort(out.begin(), out.end(), [](const ResourceInfo* a, const ResourceInfo* b) {
    return a->gvr.resource < b->gvr.resource;
  });
  return out;
}

json::array JsonStringArray(const std::vector<std::string>& v) {
  json::array a;
  for (const std::string& s : v) a.emplace_back(s);
  return a;
}

json::object Gvk(const api::GroupVersionKind& gvk) {
  return {{"group", gvk.group}, {"version", gvk.version}, {"kind", gvk.kind}};
}

json::object DiscoveryResource(const ResourceInfo& r) {
  json::object o;
  o["resource"] = r.gvr.resource;
  o["responseKind"] = Gvk(r.Gvk());
  o["scope"] = r.namespaced ? "Namespaced" : "Cluster";
  o["singularResource"] = r.singular;
  o["verbs"] = JsonStringArray(r.verbs);
  if (!r.short_names.empty()) o["shortNames"] = JsonStringArray(r.short_names);
  if (!r.categories.empty()) o["categories"] = JsonStringArray(r.categories);
  if (!r.subresources.empty()) {
    std::vector<const api::SubresourceInfo*> subs;
    for (const auto& s : r.subresources) subs.push_back(&s);
    std::sort(subs.begin(), subs.end(),
              [](const auto* a, const auto* b) { return a->name < b->name; });
    json::array arr;
    for (const auto* s : subs) {
      arr.push_back(json::object{{"subresource", s->name},
                                 {"responseKind", Gvk(s->response_kind)},
                                 {"verbs", JsonStringArray(s->verbs)}});
    }
    o["subresources"] = std::move(arr);
  }
  return o;
}

json::object GroupVersionForDiscovery(std::string_view group, std::string_view version) {
  return {
      {"groupVersion", api::GroupVersion{std::string(group), std::string(version)}.ApiVersion()},
      {"version", version}};
}

json::object ApiGroupObject(const Table& table, std::string_view group) {
  json::array versions;
  std::vector<std::string> vs = GroupVersions(table, group);
  for (const std::string& v : vs) versions.push_back(GroupVersionForDiscovery(group, v));
  json::object g;
  g["name"] = group;
  g["versions"] = std::move(versions);
  if (!vs.empty()) g["preferredVersion"] = GroupVersionForDiscovery(group, vs.front());
  return g;
}

}  // namespace

DiscoveryFormat NegotiateDiscoveryFormat(std::string_view accept) {
  // Media ranges in the client's order of preference (kubectl sends no q-values).
  while (!accept.empty()) {
    size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    std::string_view type;
    std::map<std::string, std::string> params;
    size_t pos = 0;
    bool first = true;
    while (pos <= range.size()) {
      size_t semi = range.find(';', pos);
      std::string_view part =
          range.substr(pos, semi == std::string_view::npos ? std::string_view::npos : semi - pos);
      while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
      while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
      if (first) {
        type = part;
        first = false;
      } else if (size_t eq = part.find('='); eq != std::string_view::npos) {
        params[std::string(part.substr(0, eq))] = std::string(part.substr(eq + 1));
      }
      if (semi == std::string_view::npos) break;
      pos = semi + 1;
    }
    bool json_like = type == "application/json" || type == "application/*" || type == "*/*";
    if (!json_like) continue;
    if (params.contains("as") || params.contains("g") || params.contains("v")) {
      if (params["g"] == "apidiscovery.k8s.io" && params["as"] == "APIGroupDiscoveryList") {
        if (params["v"] == "v2") return DiscoveryFormat::kAggregatedV2;
        if (params["v"] == "v2beta1") return DiscoveryFormat::kAggregatedV2Beta1;
      }
      continue;  // some other typed form we do not serve
    }
    return DiscoveryFormat::kLegacy;
  }
  return DiscoveryFormat::kLegacy;
}

std::string StorageVersionHash(std::string_view group, std::string_view version,
                               std::string_view kind) {
  std::string key = std::string(group) + "/" + std::string(version) + "/" + std::string(kind);
  return api::Base64Encode(Sha256(key).substr(0, 8));
}

std::string RenderAggregatedDiscovery(const Table& table, DiscoveryRoot root,
                                      DiscoveryFormat format) {
  json::array items;
  for (const std::string& group : table.groups) {
    if ((root == DiscoveryRoot::kCore) != group.empty()) continue;
    json::array versions;
    for (const std::string& v : GroupVersions(table, group)) {
      json::array resources;
      for (const ResourceInfo* r : VersionResources(table, {group, v})) {
        resources.push_back(DiscoveryResource(*r));
      }
      versions.push_back(json::object{
          {"version", v}, {"resources", std::move(resources)}, {"freshness", "Current"}});
    }
    json::object metadata;
    if (!group.empty()) metadata["name"] = group;
    metadata["creationTimestamp"] = nullptr;
    items.push_back(
        json::object{{"metadata", std::move(metadata)}, {"versions", std::move(versions)}});
  }
  json::object list;
  list["kind"] = "APIGroupDiscoveryList";
  list["apiVersion"] = format == DiscoveryFormat::kAggregatedV2Beta1 ? "apidiscovery.k8s.io/v2beta1"
                                                                     : "apidiscovery.k8s.io/v2";
  list["metadata"] = json::object();
  list["items"] = std::move(items);
  return json::serialize(list);
}

std::string RenderApiVersions(const Table& table, std::string_view server_address) {
  json::array versions;
  for (const std::string& v : GroupVersions(table, "")) versions.emplace_back(v);
  json::object o;
  o["kind"] = "APIVersions";
  o["versions"] = std::move(versions);
  o["serverAddressByClientCIDRs"] =
      json::array{json::object{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}};
  return json::serialize(o);
}

std::string RenderApiGroupList(const Table& table) {
  json::array groups;
  for (const std::string& group : table.groups) {
    if (!group.empty()) groups.push_back(ApiGroupObject(table, group));
  }
  json::object o;
  o["kind"] = "APIGroupList";
  o["apiVersion"] = "v1";
  o["groups"] = std::move(groups);
  return json::serialize(o);
}

std::optional<std::string> RenderApiGroup(const Table& table, std::string_view group) {
  if (group.empty() || GroupVersions(table, group).empty()) return std::nullopt;
  json::object o;
  o["kind"] = "APIGroup";
  o["apiVersion"] = "v1";
  for (auto& [k, v] : ApiGroupObject(table, group)) o[k] = std::move(v);
  return json::serialize(o);
}

std::optional<std::string> RenderApiResourceList(const Table& table, const api::GroupVersion& gv) {
  std::vector<const ResourceInfo*> resources = VersionResources(table, gv);
  if (resources.empty()) return std::nullopt;
  // Main resources and their subresources ("deployments/scale"), sorted by name together.
  std::vector<std::pair<std::string, json::object>> entries;
  for (const ResourceInfo* r : resources) {
    json::object o;
    o["name"] = r->gvr.resource;
    o["singularName"] = r->singular;
    o["namespaced"] = r->namespaced;
    o["kind"] = r->kind;
    o["verbs"] = JsonStringArray(r->verbs);
    if (!r->short_names.empty()) o["shortNames"] = JsonStringArray(r->short_names);
    if (!r->categories.empty()) o["categories"] = JsonStringArray(r->categories);
    if (!r->storage_prefix.empty()) {
      o["storageVersionHash"] = StorageVersionHash(r->gvr.group, r->storage_version, r->kind);
    }
    entries.emplace_back(r->gvr.resource, std::move(o));
    for (const api::SubresourceInfo& s : r->subresources) {
      json::object so;
      std::string name = r->gvr.resource + "/" + s.name;
      so["name"] = name;
      so["singularName"] = "";
      so["namespaced"] = r->namespaced;
      if (s.response_kind.group != gv.group || s.response_kind.version != gv.version) {
        so["group"] = s.response_kind.group;
        so["version"] = s.response_kind.version;
      }
      so["kind"] = s.response_kind.kind;
      so["verbs"] = JsonStringArray(s.verbs);
      entries.emplace_back(std::move(name), std::move(so));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  json::array arr;
  for (auto& e : entries) arr.push_back(std::move(e.second));
  json::object o;
  o["kind"] = "APIResourceList";
  o["apiVersion"] = "v1";
  o["groupVersion"] = gv.ApiVersion();
  o["resources"] = std::move(arr);
  return json::serialize(o);
}

// ---- DiscoveryService ------------------------------------------------------------------------

struct DiscoveryService::Cache {
  std::shared_ptr<const Table> table;
  // Rendered documents by key; nullopt records a 404. Guarded by DiscoveryService::mu_.
  std::map<std::string, std::optional<DiscoveryDocument>, std::less<>> docs;
};

DiscoveryService::DiscoveryService(const api::ResourceRegistry* registry,
                                   DiscoveryServiceOptions options)
    : registry_(registry), options_(std::move(options)) {}

namespace {

DiscoveryDocument MakeDocument(std::string body, std::string_view content_type) {
  std::string etag = "\"" + HexPrefix(Sha256(body), 16) + "\"";
  return {std::make_shared<const std::string>(std::move(body)), content_type, std::move(etag)};
}

}  // namespace

std::shared_ptr<DiscoveryService::Cache> DiscoveryService::CurrentCacheLocked() const {
  auto table = registry_->Snapshot();
  if (!cache_ || cache_->table != table) {
    cache_ = std::make_shared<Cache>();
    cache_->table = std::move(table);
  }
  return cache_;
}

DiscoveryDocument DiscoveryService::Root(DiscoveryRoot root, std::string_view accept) const {
  DiscoveryFormat format = NegotiateDiscoveryFormat(accept);
  std::string key = std::string(root == DiscoveryRoot::kCore ? "api:" : "apis:") +
                    std::to_string(static_cast<int>(format));
  std::lock_guard<std::mutex> lock(mu_);
  auto cache = CurrentCacheLocked();
  auto it = cache->docs.find(key);
  if (it != cache->docs.end()) return *it->second;
  DiscoveryDocument doc;
  switch (format) {
    case DiscoveryFormat::kAggregatedV2:
      doc = MakeDocument(RenderAggregatedDiscovery(*cache->table, root, format),
                         kAggregatedDiscoveryV2ContentType);
      break;
    case DiscoveryFormat::kAggregatedV2Beta1:
      doc = MakeDocument(RenderAggregatedDiscovery(*cache->table, root, format),
                         kAggregatedDiscoveryV2Beta1ContentType);
      break;
    case DiscoveryFormat::kLegacy:
      doc = MakeDocument(root == DiscoveryRoot::kCore
                             ? RenderApiVersions(*cache->table, options_.server_address)
                             : RenderApiGroupList(*cache->table),
                         kJsonContentType);
      break;
  }
  cache->docs.emplace(std::move(key), doc);
  return doc;
}

std::optional<DiscoveryDocument> DiscoveryService::Group(std::string_view group) const {
  std::string key = "group:" + std::string(group);
  std::lock_guard<std::mutex> lock(mu_);
  auto cache = CurrentCacheLocked();
  auto it = cache->docs.find(key);
  if (it != cache->docs.end()) return it->second;
  std::optional<DiscoveryDocument> doc;
  if (auto body = RenderApiGroup(*cache->table, group)) {
    doc = MakeDocument(std::move(*body), kJsonContentType);
    cache->docs.emplace(std::move(key), doc);  // 404s are not cached: clients choose the keys
  }
  return doc;
}

std::optional<DiscoveryDocument> DiscoveryService::ResourceList(const api::GroupVersion& gv) const {
  std::string key = "resources:" + gv.group + "/" + gv.version;
  std::lock_guard<std::mutex> lock(mu_);
  auto cache = CurrentCacheLocked();
  auto it = cache->docs.find(key);
  if (it != cache->docs.end()) return it->second;
  std::optional<DiscoveryDocument> doc;
  if (auto body = RenderApiResourceList(*cache->table, gv)) {
    doc = MakeDocument(std::move(*body), kJsonContentType);
    cache->docs.emplace(std::move(key), doc);  // 404s are not cached: clients choose the keys
  }
  return doc;
}

}  // namespace converge::apiserver
