#include "api/resource.h"

#include <algorithm>
#include <cctype>

namespace converge::api {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool NameMatches(const ResourceInfo& r, std::string_view name) {
  if (EqualsIgnoreCase(r.gvr.resource, name) || EqualsIgnoreCase(r.singular, name) ||
      EqualsIgnoreCase(r.kind, name)) {
    return true;
  }
  return std::any_of(r.short_names.begin(), r.short_names.end(),
                     [&](const std::string& s) { return EqualsIgnoreCase(s, name); });
}

}  // namespace

const SubresourceInfo* ResourceInfo::Subresource(std::string_view name) const {
  for (const SubresourceInfo& s : subresources) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool ResourceInfo::HasVerb(std::string_view verb) const {
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

std::shared_ptr<const ResourceRegistry::Table> ResourceRegistry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return table_;
}

std::shared_ptr<const ResourceInfo> ResourceRegistry::Find(const GroupVersionResource& gvr) const {
  auto table = Snapshot();
  for (const auto& r : table->resources) {
    if (r->gvr == gvr) return r;
  }
  return nullptr;
}

std::shared_ptr<const ResourceInfo> ResourceRegistry::FindByKind(
    const GroupVersionKind& gvk) const {
  auto table = Snapshot();
  for (const auto& r : table->resources) {
    if (r->kind == gvk.kind && r->gvr.group == gvk.group && r->gvr.version == gvk.version) {
      return r;
    }
  }
  return nullptr;
}

std::shared_ptr<const ResourceInfo> ResourceRegistry::Resolve(
    std::string_view name_or_short, std::optional<std::string_view> group) const {
  auto table = Snapshot();
  // Candidates in table order; the first version registered for a group-resource is its
  // preferred one. Groups are tried in discovery order, which puts the core group first.
  for (const std::string& g : table->groups) {
    if (group && g != *group) continue;
    for (const auto& r : table->resources) {
      if (r->gvr.group == g && NameMatches(*r, name_or_short)) return r;
    }
  }
  return nullptr;
}

void ResourceRegistry::Upsert(std::vector<ResourceInfo> infos) {
  std::lock_guard<std::mutex> lock(mu_);
  auto next = std::make_shared<Table>(*table_);
  for (ResourceInfo& info : infos) {
    auto shared = std::make_shared<const ResourceInfo>(std::move(info));
    auto it = std::find_if(next->resources.begin(), next->resources.end(),
                           [&](const auto& r) { return r->gvr == shared->gvr; });
    if (it != next->resources.end()) {
      *it = shared;
    } else {
      next->resources.push_back(shared);
    }
    if (std::find(next->groups.begin(), next->groups.end(), shared->gvr.group) ==
        next->groups.end()) {
      // The core group is always listed first.
      if (shared->gvr.group.empty()) {
        next->groups.insert(next->groups.begin(), shared->gvr.group);
      } else {
        next->groups.push_back(shared->gvr.group);
      }
    }
  }
  table_ = std::move(next);
}

void ResourceRegistry::Remove(const GroupResource& gr) {
  Replace(gr, {});
}

void ResourceRegistry::Replace(const GroupResource& gr,
                               std::vector<std::shared_ptr<const ResourceInfo>> infos) {
  std::lock_guard<std::mutex> lock(mu_);
  auto next = std::make_shared<Table>(*table_);
  // New versions take the place of the first old one, so the table order (and with it the
  // preferred version Resolve picks) stays stable across updates.
  auto first = std::find_if(next->resources.begin(), next->resources.end(),
                            [&](const auto& r) { return r->gvr.Gr() == gr; });
  size_t at = static_cast<size_t>(first - next->resources.begin());
  std::erase_if(next->resources, [&](const auto& r) { return r->gvr.Gr() == gr; });
  at = std::min(at, next->resources.size());
  next->resources.insert(next->resources.begin() + static_cast<std::ptrdiff_t>(at), infos.begin(),
                         infos.end());
  bool group_used = std::any_of(next->resources.begin(), next->resources.end(),
                                [&](const auto& r) { return r->gvr.group == gr.group; });
  if (!group_used) {
    std::erase(next->groups, gr.group);
  } else if (std::find(next->groups.begin(), next->groups.end(), gr.group) == next->groups.end()) {
    next->groups.push_back(gr.group);
  }
  table_ = std::move(next);
}

}  // namespace converge::api
