#include "apiserver/crd_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/custom_resource.h"
#include "apiserver/crd_status.h"
#include "util/time_format.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kCrdGvr{"apiextensions.k8s.io", "v1", "customresourcedefinitions"};

// Writes by the controller are the API server's own.
const UserInfo& SystemUser() {
  static const UserInfo* user = new UserInfo{"system:apiserver", "", {"system:masters"}, true};
  return *user;
}

WriteContext SystemWrite(std::string subresource) {
  WriteContext w;
  w.user = &SystemUser();
  w.field_manager = "kube-apiserver";
  w.subresource = std::move(subresource);
  return w;
}

const json::object& StatusOf(const json::object& doc) {
  static const json::object kEmpty;
  const json::object* s = api::FindObject(doc, {"status"});
  return s ? *s : kEmpty;
}

bool Servable(const json::object& names) {
  return !api::Object::GetString(names, "plural").empty() &&
         !api::Object::GetString(names, "kind").empty();
}

// The versions a CRD serves, storage version first: any of them reaches the objects.
std::vector<std::string> ServedVersions(const api::Object& crd) {
  std::vector<std::string> out;
  if (const json::array* versions = api::FindArray(crd.doc(), {"spec", "versions"})) {
    for (const json::value& v : *versions) {
      const json::object* o = v.if_object();
      if (o == nullptr || !api::FindBool(*o, {"served"})) continue;
      std::string name(api::Object::GetString(*o, "name"));
      if (api::FindBool(*o, {"storage"})) {
        out.insert(out.begin(), std::move(name));
      } else {
        out.push_back(std::move(name));
      }
    }
  }
  return out;
}

}  // namespace

CrdController::CrdController(CustomResourceHost* host, CrdControllerOptions options)
    : host_(host), options_(options) {}

std::string CrdController::Now() const {
  return util::FormatRfc3339(options_.clock->WallNow());
}

void CrdController::Enqueue(const std::string& name, std::chrono::steady_clock::time_point when) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = queue_.emplace(name, when);
  if (!inserted && when < it->second) it->second = when;
  cv_.notify_all();
}

std::vector<api::Object> CrdController::AllCrds(ResourceStorage& crds) {
  std::vector<api::Object> out;
  auto list = crds.List(ListOptions{});  // waits until the cache has every committed write
  if (!list.ok()) return out;
  for (const auto& item : list->items) {
    if (auto parsed = item->Parse(); parsed.ok()) out.push_back(std::move(*parsed));
  }
  return out;
}

void CrdController::Sync() {
  auto crds = host_->StorageFor(kCrdGvr);
  if (!crds) return;
  std::vector<api::Object> all = AllCrds(*crds);
  std::stable_sort(all.begin(), all.end(), [](const api::Object& a, const api::Object& b) {
    return a.creation_timestamp() < b.creation_timestamp();
  });
  for (const api::Object& crd : all) {
    const std::string name(crd.name());
    if (auto again = Reconcile(name); again.count() > 0) {
      Enqueue(name, std::chrono::steady_clock::now() + again);
    }
  }
}

void CrdController::Run(std::stop_token stop) {
  std::stop_callback wake_on_stop(stop, [this] {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  });
  std::shared_ptr<CacheWatcher> watcher;
  while (!stop.stop_requested()) {
    if (!watcher) {
      // A new watch starts with ADDED events for every CRD: a relist.
      if (auto crds = host_->StorageFor(kCrdGvr)) {
        auto w = crds->cache()->Watch({}, {}, 10000);
        if (w.ok()) watcher = std::move(*w);
      }
    }
    if (watcher) {
      std::vector<WatchItem> items;
      auto r = watcher->Poll(&items, [this] {
        std::lock_guard lock(mu_);
        news_ = true;
        cv_.notify_all();
      });
      if (r == CacheWatcher::PollResult::kEnd) {
        watcher->Stop();
        watcher.reset();
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      std::set<std::string> groups;
      for (const WatchItem& item : items) {
        if (!item.event) continue;
        Enqueue(std::string(item.event->object()->name()), now);
        if (auto parsed = item.event->object()->Parse(); parsed.ok()) {
          groups.insert(std::string(api::FindString(parsed->doc(), {"spec", "group"})));
        }
      }
      // A change in a group can settle another CRD's name conflict.
      if (!groups.empty()) {
        if (auto crds = host_->StorageFor(kCrdGvr)) {
          for (const auto& c : crds->cache()->List({}).items) {
            auto parsed = c->Parse();
            if (parsed.ok() &&
                groups.contains(std::string(api::FindString(parsed->doc(), {"spec", "group"})))) {
              Enqueue(std::string(c->name()), now);
            }
          }
        }
      }
      if (r == CacheWatcher::PollResult::kData) continue;  // drain before reconciling
    }

    std::string next;
    {
      std::unique_lock lock(mu_);
      auto due = std::min_element(queue_.begin(), queue_.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      const auto now = std::chrono::steady_clock::now();
      if (due != queue_.end() && due->second <= now) {
        next = due->first;
        queue_.erase(due);
      } else {
        auto until = now + std::chrono::seconds(1);
        if (due != queue_.end()) until = std::min(until, due->second);
        cv_.wait_until(lock, stop, until, [this] { return news_; });
        news_ = false;
        continue;
      }
    }
    auto again = Reconcile(next);
    if (again.count() > 0) Enqueue(next, std::chrono::steady_clock::now() + again);
  }
  if (watcher) watcher->Stop();
}

std::chrono::milliseconds CrdController::Reconcile(const std::string& name) {
  auto crds = host_->StorageFor(kCrdGvr);
  if (!crds) return options_.retry_interval;
  auto got = crds->Get("", name, "");
  if (!got.ok()) {
    if (got.error().code == 404) {
      Unserve(name);
      return {};
    }
    return options_.retry_interval;
  }
  auto parsed = (*got)->Parse();
  if (!parsed.ok()) return {};
  const api::Object crd = std::move(*parsed);
  if (crd.being_deleted()) return Finalize(*crds, crd);

  std::vector<api::Object> all = AllCrds(*crds);
  std::vector<const json::object*> others;
  for (const api::Object& o : all) others.push_back(&o.doc());
  CrdNamesDecision d = DecideCrdNames(crd.doc(), others);

  json::object doc = crd.doc();
  const std::string now = Now();
  api::EnsureObject(doc, "status")["acceptedNames"] = d.accepted_names;
  SetCrdCondition(doc, d.names_accepted, now);
  SetCrdCondition(doc, d.established, now);
  // Served once every requested name is accepted (or, for a CRD already established, under the
  // names it has, when a later change conflicts), as upstream's CRD handler decides.
  const bool established = IsCrdConditionTrue(crd.doc(), "Established");
  if (Servable(d.accepted_names) && (d.names_accepted.status == "True" || established)) {
    if (util::Status s = Serve(crd, d.accepted_names, /*terminating=*/false); !s.ok()) {
      spdlog::warn("customresourcedefinition {}: cannot serve: {}", name, s.ToString());
    } else {
      SetCrdCondition(
          doc,
          {"Established", "True", "InitialNamesAccepted", "the initial names have been accepted"},
          now);
    }
  }
  if (!WriteStatus(*crds, crd, StatusOf(doc)).ok()) return options_.retry_interval;
  return {};
}

std::chrono::milliseconds CrdController::Finalize(ResourceStorage& crds, const api::Object& crd) {
  if (!crd.HasFinalizer(kCrdCleanupFinalizer)) return {};
  const std::string name(crd.name());
  const json::object* names_ptr = api::FindObject(crd.doc(), {"status", "acceptedNames"});
  const json::object names = names_ptr ? *names_ptr : json::object();
  size_t remaining = 0;
  if (Servable(names)) {
    // Keep serving (reads, deletes) while refusing new objects.
    if (util::Status s = Serve(crd, names, /*terminating=*/true); !s.ok()) {
      spdlog::warn("customresourcedefinition {}: {}", name, s.ToString());
    }
    const std::string group(api::FindString(crd.doc(), {"spec", "group"}));
    const std::string plural(api::Object::GetString(names, "plural"));
    std::shared_ptr<ResourceStorage> storage;
    for (const std::string& v : ServedVersions(crd)) {
      if ((storage = host_->StorageFor({group, v, plural}))) break;
    }
    if (storage) {
      auto list = storage->List(ListOptions{});
      if (!list.ok()) return options_.retry_interval;
      WriteContext w = SystemWrite("");
      for (const auto& item : list->items) {
        auto r = storage->Delete(item->key().ns, item->key().name, DeleteOptions{}, w);
        if (!r.ok()) {
          if (r.error().code != 404) ++remaining;
        } else if (!r->deleted) {
          ++remaining;  // its own finalizers hold it
        }
      }
    }
  }
  json::object doc = crd.doc();
  if (remaining > 0) {
    SetCrdCondition(doc,
                    {"Terminating", "True", "InstanceDeletionInProgress",
                     "CustomResource deletion is in progress"},
                    Now());
    (void)WriteStatus(crds, crd, StatusOf(doc));
    return options_.retry_interval;
  }
  SetCrdCondition(
      doc, {"Terminating", "True", "InstanceDeletionCompleted", "removed all instances"}, Now());
  if (!WriteStatus(crds, crd, StatusOf(doc)).ok()) return options_.retry_interval;
  auto removed = crds.Update(
      "", name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (current == nullptr) return NotFound(kCrdGvr.Gr(), name);
        api::Object next = *current;
        next.mutable_metadata().erase("resourceVersion");
        next.RemoveFinalizer(kCrdCleanupFinalizer);
        return next;
      },
      SystemWrite(""));
  if (!removed.ok() && removed.error().code != 404) return options_.retry_interval;
  // The DELETED event unregisters the resource.
  return {};
}

util::Status CrdController::Serve(const api::Object& crd, const json::object& names,
                                  bool terminating) {
  const std::string name(crd.name());
  const json::object* spec = api::FindObject(crd.doc(), {"spec"});
  std::string fingerprint = (spec ? json::serialize(*spec) : std::string()) + "|" +
                            json::serialize(names) + "|" + (terminating ? "1" : "0") + "|" +
                            std::string(crd.uid());
  auto it = served_.find(name);
  if (it != served_.end() && it->second.fingerprint == fingerprint) return util::Status();
  auto infos = api::CustomResourceInfos(crd.doc(), names, terminating);
  if (!infos.ok()) return infos.status();
  api::GroupResource gr{std::string(api::FindString(crd.doc(), {"spec", "group"})),
                        std::string(api::Object::GetString(names, "plural"))};
  if (it != served_.end() && it->second.gr != gr) host_->ServeCustomResource(it->second.gr, {});
  std::vector<std::shared_ptr<const api::ResourceInfo>> versions;
  for (api::ResourceInfo& info : *infos) {
    versions.push_back(std::make_shared<const api::ResourceInfo>(std::move(info)));
  }
  host_->ServeCustomResource(gr, std::move(versions));
  served_[name] = Served{std::move(gr), std::move(fingerprint)};
  return util::Status();
}

void CrdController::Unserve(const std::string& name) {
  auto it = served_.find(name);
  if (it == served_.end()) return;
  host_->ServeCustomResource(it->second.gr, {});
  served_.erase(it);
}

util::Status CrdController::WriteStatus(ResourceStorage& crds, const api::Object& crd,
                                        const json::object& status) {
  if (StatusOf(crd.doc()) == status) return util::Status();
  const std::string name(crd.name());
  auto r = crds.Update(
      "", name,
      [&](const api::Object* current) -> ApiOr<api::Object> {
        if (current == nullptr) return NotFound(kCrdGvr.Gr(), name);
        api::Object next = *current;
        next.mutable_metadata().erase("resourceVersion");
        next.mutable_doc()["status"] = status;
        return next;
      },
      SystemWrite("status"));
  if (!r.ok()) return util::Unavailable(r.error().message);
  return util::Status();
}

}  // namespace converge::apiserver
