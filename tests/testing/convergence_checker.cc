#include "testing/convergence_checker.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "testing/http_client.h"

namespace converge::testing {

namespace json = boost::json;

namespace {

using Kind = ConvergenceChecker::Kind;

std::string Path(Kind kind, const std::string& ns) {
  switch (kind) {
    case Kind::kPod: return "/api/v1/namespaces/" + ns + "/pods";
    case Kind::kReplicaSet: return "/apis/apps/v1/namespaces/" + ns + "/replicasets";
    case Kind::kDeployment: return "/apis/apps/v1/namespaces/" + ns + "/deployments";
  }
  return "";
}

const json::value* Find(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::object* cur = &o;
  const json::value* v = nullptr;
  for (std::string_view k : path) {
    if (!cur) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    v = &it->value();
    cur = v->if_object();
  }
  return v;
}

std::string Str(const json::object& o, std::initializer_list<std::string_view> path) {
  const json::value* v = Find(o, path);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

int64_t Int(const json::object& o, std::initializer_list<std::string_view> path, int64_t def = 0) {
  const json::value* v = Find(o, path);
  if (!v) return def;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->get_double());
  return def;
}

int64_t Revision(const json::object& o) {
  std::string rv = Str(o, {"metadata", "resourceVersion"});
  return rv.empty() ? 0 : std::stoll(rv);
}

std::string Uid(const json::object& o) {
  return Str(o, {"metadata", "uid"});
}
std::string Name(const json::object& o) {
  return Str(o, {"metadata", "name"});
}

// The uid of the controller owner of `kind`, or "".
std::string ControllerUid(const json::object& o, std::string_view kind) {
  const json::value* refs = Find(o, {"metadata", "ownerReferences"});
  if (!refs || !refs->is_array()) return "";
  for (const auto& r : refs->get_array()) {
    if (!r.is_object()) continue;
    const json::object& ref = r.get_object();
    auto c = ref.find("controller");
    if (c != ref.end() && c->value().is_bool() && c->value().get_bool() &&
        Str(ref, {"kind"}) == kind) {
      return Str(ref, {"uid"});
    }
  }
  return "";
}

bool Terminating(const json::object& pod) {
  const json::value* ts = Find(pod, {"metadata", "deletionTimestamp"});
  return ts && !ts->is_null();
}

// As the ReplicaSet controller counts: not terminating, not finished.
bool Live(const json::object& pod) {
  std::string phase = Str(pod, {"status", "phase"});
  return !Terminating(pod) && phase != "Succeeded" && phase != "Failed";
}

bool PodReady(const json::object& pod) {
  const json::value* conds = Find(pod, {"status", "conditions"});
  if (!conds || !conds->is_array()) return false;
  for (const auto& c : conds->get_array()) {
    if (c.is_object() && Str(c.get_object(), {"type"}) == "Ready") {
      return Str(c.get_object(), {"status"}) == "True";
    }
  }
  return false;
}

// maxSurge resolved against spec.replicas (upstream: percentages round up; Recreate: 0).
int64_t MaxSurge(const json::object& d) {
  if (Str(d, {"spec", "strategy", "type"}) == "Recreate") return 0;
  int64_t replicas = Int(d, {"spec", "replicas"}, 1);
  const json::value* s = Find(d, {"spec", "strategy", "rollingUpdate", "maxSurge"});
  if (!s) return (replicas * 25 + 99) / 100;
  if (s->is_int64()) return s->get_int64();
  if (s->is_string()) {
    std::string text(s->get_string());
    if (!text.empty() && text.back() == '%') {
      int64_t pct = std::stoll(text.substr(0, text.size() - 1));
      return (replicas * pct + 99) / 100;
    }
    return std::stoll(text);
  }
  return 0;
}

std::vector<json::object> Items(const json::value& list) {
  std::vector<json::object> out;
  if (!list.is_object()) return out;
  const json::value* items = Find(list.get_object(), {"items"});
  if (!items || !items->is_array()) return out;
  for (const auto& it : items->get_array()) {
    if (it.is_object()) out.push_back(it.get_object());
  }
  return out;
}

std::unique_ptr<TestClient> NewClient(const std::string& kubeconfig) {
  auto cfg = Kubeconfig::Load(kubeconfig);
  if (!cfg.ok()) return nullptr;
  return std::make_unique<TestClient>(*cfg);
}

// Lists `kind` in `ns`; nullopt when the server did not answer 200.
std::optional<std::vector<json::object>> List(TestClient& c, Kind kind, const std::string& ns) {
  HttpResponse r = c.Get(Path(kind, ns));
  if (r.status != 200) return std::nullopt;
  return Items(r.Json());
}

// What keeps the final state from being the desired one (invariant 4, nodes, terminating pods).
std::vector<std::string> FinalStateProblems(TestClient& c, const std::string& ns,
                                            std::vector<json::object>* pods_out = nullptr) {
  std::vector<std::string> problems;
  auto deployments = List(c, Kind::kDeployment, ns);
  auto replicasets = List(c, Kind::kReplicaSet, ns);
  auto pods = List(c, Kind::kPod, ns);
  HttpResponse nodes = c.Get("/api/v1/nodes");
  if (!deployments || !replicasets || !pods || nodes.status != 200) {
    return {"the API server did not answer the lists"};
  }
  if (pods_out) *pods_out = *pods;
  for (const auto& node : Items(nodes.Json())) {
    bool ready = false;
    if (const json::value* conds = Find(node, {"status", "conditions"});
        conds && conds->is_array()) {
      for (const auto& cond : conds->get_array()) {
        if (cond.is_object() && Str(cond.get_object(), {"type"}) == "Ready") {
          ready = Str(cond.get_object(), {"status"}) == "True";
        }
      }
    }
    if (!ready) problems.push_back("node " + Name(node) + " is not Ready");
    if (const json::value* taints = Find(node, {"spec", "taints"}); taints && taints->is_array()) {
      for (const auto& t : taints->get_array()) {
        std::string key = t.is_object() ? Str(t.get_object(), {"key"}) : "";
        if (key == "node.kubernetes.io/unreachable" || key == "node.kubernetes.io/not-ready") {
          problems.push_back("node " + Name(node) + " is tainted " + key);
        }
      }
    }
  }
  for (const auto& d : *deployments) {
    const std::string name = Name(d);
    const int64_t want = Int(d, {"spec", "replicas"}, 1);
    if (Int(d, {"status", "observedGeneration"}) != Int(d, {"metadata", "generation"})) {
      problems.push_back("deployment " + name + ": observedGeneration " +
                         std::to_string(Int(d, {"status", "observedGeneration"})) +
                         " != generation " + std::to_string(Int(d, {"metadata", "generation"})));
    }
    for (const char* field :
         {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"}) {
      int64_t got = Int(d, {"status", field});
      if (got != want) {
        problems.push_back("deployment " + name + ": status." + field + " " + std::to_string(got) +
                           " != spec.replicas " + std::to_string(want));
      }
    }
    // The newest ReplicaSet (highest revision annotation) holds every pod; the others none.
    std::string newest_uid;
    int64_t newest_revision = -1;
    for (const auto& rs : *replicasets) {
      if (ControllerUid(rs, "Deployment") != Uid(d)) continue;
      std::string rev = Str(rs, {"metadata", "annotations", "deployment.kubernetes.io/revision"});
      int64_t r = rev.empty() ? 0 : std::stoll(rev);
      if (r > newest_revision) {
        newest_revision = r;
        newest_uid = Uid(rs);
      }
    }
    for (const auto& rs : *replicasets) {
      if (ControllerUid(rs, "Deployment") != Uid(d)) continue;
      int64_t expect = Uid(rs) == newest_uid ? want : 0;
      if (Int(rs, {"spec", "replicas"}, 1) != expect || Int(rs, {"status", "replicas"}) != expect) {
        problems.push_back("replicaset " + Name(rs) + ": spec/status replicas " +
                           std::to_string(Int(rs, {"spec", "replicas"}, 1)) + "/" +
                           std::to_string(Int(rs, {"status", "replicas"})) + ", want " +
                           std::to_string(expect));
      }
    }
    int owned = 0;
    for (const auto& p : *pods) {
      if (ControllerUid(p, "ReplicaSet") == newest_uid && Live(p)) ++owned;
    }
    if (owned != want) {
      problems.push_back("deployment " + name + ": " + std::to_string(owned) +
                         " live pods in the newest ReplicaSet, want " + std::to_string(want));
    }
  }
  for (const auto& p : *pods) {
    if (Terminating(p)) {
      problems.push_back("pod " + Name(p) + " is still terminating");
    } else if (!PodReady(p)) {
      problems.push_back("pod " + Name(p) + " is not Ready (" + Str(p, {"status", "phase"}) + ")");
    }
  }
  if (problems.size() > 12) {
    size_t more = problems.size() - 12;
    problems.resize(12);
    problems.push_back("... and " + std::to_string(more) + " more");
  }
  return problems;
}

// apiserver_request_total of writes, by "VERB resource[/subresource]", minus the expected ones.
std::map<std::string, double> UnexpectedWrites(const std::string& metrics) {
  static const std::set<std::string> kWrites = {"POST", "PUT", "PATCH", "APPLY", "DELETE"};
  // Reviews are questions, not writes; leases and events are the heartbeats of a healthy idle
  // cluster; node status is the kubelets' heartbeat.
  static const std::set<std::string> kExcluded = {"leases",
                                                  "events",
                                                  "nodes/status",
                                                  "tokenreviews",
                                                  "subjectaccessreviews",
                                                  "selfsubjectaccessreviews",
                                                  "localsubjectaccessreviews",
                                                  "selfsubjectrulesreviews",
                                                  "selfsubjectreviews"};
  std::map<std::string, double> out;
  std::istringstream in(metrics);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("apiserver_request_total{")) continue;
    auto label = [&](const std::string& name) {
      std::string key = name + "=\"";
      size_t p = line.find(key);
      if (p == std::string::npos) return std::string();
      p += key.size();
      return line.substr(p, line.find('"', p) - p);
    };
    std::string verb = label("verb");
    if (!kWrites.count(verb)) continue;
    std::string resource = label("resource");
    std::string sub = label("subresource");
    std::string what = sub.empty() ? resource : resource + "/" + sub;
    if (kExcluded.count(resource) || kExcluded.count(what)) continue;
    out[verb + " " + what] += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return out;
}

}  // namespace

ConvergenceChecker::ConvergenceChecker(ConvergenceCheckerOptions options)
    : options_(std::move(options)) {}

ConvergenceChecker::~ConvergenceChecker() {
  Stop();
}

bool ConvergenceChecker::Start() {
  for (Kind k : {Kind::kPod, Kind::kReplicaSet, Kind::kDeployment}) {
    threads_.emplace_back([this, k] { WatchLoop(k); });
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mu_);
      if (listed_ == 3) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void ConvergenceChecker::Stop() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

ConvergenceChecker::Stats ConvergenceChecker::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool ConvergenceChecker::WaitConverged(std::chrono::seconds timeout, std::string* why) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> problems;
  while (std::chrono::steady_clock::now() < deadline) {
    auto client = NewClient(options_.kubeconfig_path);
    if (client) {
      problems = FinalStateProblems(*client, options_.ns);
      if (problems.empty()) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (why) {
    why->clear();
    for (const auto& p : problems) *why += p + "\n";
  }
  return false;
}

void ConvergenceChecker::Add(Record r) {
  std::lock_guard lock(mu_);
  r.seq = static_cast<int64_t>(records_.size());
  if (!r.snapshot) ++stats_.events;
  records_.push_back(std::move(r));
}

void ConvergenceChecker::WatchLoop(Kind kind) {
  const std::string path = Path(kind, options_.ns);
  int64_t rv = 0;
  bool need_list = true;
  bool listed_once = false;
  bool watched_once = false;
  auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); };
  while (!stop_) {
    auto client = NewClient(options_.kubeconfig_path);
    if (!client) {
      pause();
      continue;
    }
    if (need_list) {
      HttpResponse r = client->Get(path);
      if (r.status != 200) {
        pause();
        continue;
      }
      json::value list = r.Json();
      if (!list.is_object()) {
        pause();
        continue;
      }
      Record snap;
      snap.kind = kind;
      snap.snapshot = true;
      snap.revision = std::stoll(Str(list.get_object(), {"metadata", "resourceVersion"}));
      snap.items = Items(list);
      snap.gap_from = rv;
      rv = snap.revision;
      Add(std::move(snap));
      need_list = false;
      std::lock_guard lock(mu_);
      if (listed_once) {
        ++stats_.relists;
      } else {
        ++listed_;
      }
      listed_once = true;
    }
    auto w = client->Watch(path + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=60&" +
                           "resourceVersion=" + std::to_string(rv));
    if (w->status() == 410) {
      need_list = true;
      continue;
    }
    if (w->status() != 200) {
      pause();
      continue;
    }
    if (watched_once) {
      std::lock_guard lock(mu_);
      ++stats_.resumes;
    }
    watched_once = true;
    while (!stop_) {
      // A timed-out read ends the stream (http_client.h); the loop then resumes from rv.
      std::optional<json::value> ev = w->Next(std::chrono::milliseconds(2000));
      if (!ev || !ev->is_object()) break;
      const json::object& e = ev->get_object();
      std::string type = Str(e, {"type"});
      const json::value* obj = Find(e, {"object"});
      if (!obj || !obj->is_object()) break;
      if (type == "ERROR") {
        if (Int(obj->get_object(), {"code"}) == 410) need_list = true;
        break;
      }
      rv = Revision(obj->get_object());
      if (type == "BOOKMARK") continue;
      Record rec;
      rec.kind = kind;
      rec.type = type;
      rec.object = obj->get_object();
      rec.revision = rv;
      Add(std::move(rec));
    }
  }
}

std::vector<std::string> ConvergenceChecker::Violations() {
  std::vector<std::string> out;
  auto violate = [&](std::string s) {
    if (out.size() < 20) out.push_back(std::move(s));
  };

  // Invariant 3 needs the replay to have seen everything a fresh list shows: the system is
  // converged (quiet), so the watches catch up within moments; retry the comparison a while.
  auto client = NewClient(options_.kubeconfig_path);
  if (!client) return {"cannot read " + options_.kubeconfig_path};
  for (int attempt = 0;; ++attempt) {
    out.clear();
    std::vector<Record> records;
    {
      std::lock_guard lock(mu_);
      records = records_;
    }
    std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
      if (a.revision != b.revision) return a.revision < b.revision;
      if (a.snapshot != b.snapshot) return !a.snapshot;
      return a.seq < b.seq;
    });

    std::map<std::string, json::object> pods, replicasets, deployments;  // by uid
    int64_t creates = 0, deletes = 0;

    // What the replay cannot know: each kind's events between a watcher's last resourceVersion
    // and its relist (and before its first list).
    std::map<Kind, std::vector<std::pair<int64_t, int64_t>>> gaps;
    // Every ReplicaSet version seen anywhere (events and lists): (revision, spec.replicas).
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> rs_versions;
    for (const Record& r : records) {
      if (r.snapshot) gaps[r.kind].emplace_back(r.gap_from, r.revision);
      if (r.kind != Kind::kReplicaSet || r.type == "DELETED") continue;
      auto note = [&](const json::object& rs) {
        rs_versions[Uid(rs)].emplace_back(Revision(rs), Int(rs, {"spec", "replicas"}, 1));
      };
      if (r.snapshot) {
        for (const auto& o : r.items) note(o);
      } else {
        note(r.object);
      }
    }
    for (auto& [uid, v] : rs_versions) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    // The gap of `kind` that revision `rev` falls in, if any.
    auto gap_at = [&](Kind kind, int64_t rev) -> std::optional<std::pair<int64_t, int64_t>> {
      for (const auto& g : gaps[kind]) {
        if (g.first < rev && rev < g.second) return g;
      }
      return std::nullopt;
    };
    // spec.replicas of `rs_uid` at revision `rev`; nullopt when the replay cannot know it (in a
    // gap of the ReplicaSet watch, with a version written after `rev` seen only by the relist).
    //
    // "At" allows one spec change of staleness: the larger of the spec current at `rev` and the
    // spec it replaced. The ReplicaSet controller acts on its informer's copy, which may lag;
    // but whoever changes spec.replicas (the Deployment controller, through the same shared
    // informer, or a user) must have seen the previous change first — an update from a stale
    // copy is refused with 409 — so the controller's copy is at most one change behind.
    auto spec_at = [&](const std::string& rs_uid, int64_t rev) -> std::optional<int64_t> {
      std::optional<int64_t> at, before;
      std::optional<std::pair<int64_t, int64_t>> gap = gap_at(Kind::kReplicaSet, rev);
      for (const auto& [v, replicas] : rs_versions[rs_uid]) {
        if (v <= rev) {
          if (at && *at != replicas) before = at;
          at = replicas;
        } else if (gap && v <= gap->second) {
          return std::nullopt;
        }
      }
      if (at && before) return std::max(*at, *before);
      return at;
    };
    // The largest spec.replicas `rs_uid` had at any revision in [from, to]; nullopt if unknown.
    auto max_spec = [&](const std::string& rs_uid, int64_t from,
                        int64_t to) -> std::optional<int64_t> {
      for (const auto& g : gaps[Kind::kReplicaSet]) {
        if (g.first < to && from < g.second) return std::nullopt;
      }
      std::optional<int64_t> m;
      for (const auto& [v, replicas] : rs_versions[rs_uid]) {
        if (v <= from) {
          m = replicas;  // the version current at `from` (later ones replace it)
        } else if (v <= to) {
          m = std::max(m.value_or(0), replicas);
        }
      }
      return m;
    };
    auto live_of = [&](const std::string& rs_uid) {
      int64_t n = 0;
      for (const auto& [uid, p] : pods) {
        if (Live(p) && ControllerUid(p, "ReplicaSet") == rs_uid) ++n;
      }
      return n;
    };

    for (const Record& r : records) {
      if (r.kind == Kind::kReplicaSet || r.kind == Kind::kDeployment) {
        auto& state = r.kind == Kind::kReplicaSet ? replicasets : deployments;
        if (r.snapshot) {
          state.clear();
          for (const auto& o : r.items) state[Uid(o)] = o;
        } else if (r.type == "DELETED") {
          state.erase(Uid(r.object));
        } else {
          state[Uid(r.object)] = r.object;
        }
      } else if (r.snapshot) {
        std::set<std::string> listed;
        std::set<std::string> new_owners;
        for (const auto& o : r.items) {
          listed.insert(Uid(o));
          if (!pods.count(Uid(o))) {
            ++creates;
            new_owners.insert(ControllerUid(o, "ReplicaSet"));
          }
        }
        for (const auto& [uid, p] : pods) {
          if (!listed.count(uid)) ++deletes;
        }
        pods.clear();
        for (const auto& o : r.items) pods[Uid(o)] = o;
        for (const std::string& owner : new_owners) {
          if (owner.empty() || !replicasets.count(owner)) continue;
          std::optional<int64_t> allowed = max_spec(owner, r.gap_from, r.revision);
          if (int64_t live = live_of(owner); allowed && live > *allowed) {
            violate("invariant 1: replicaset " + Name(replicasets[owner]) + " had " +
                    std::to_string(live) + " live pods at revision " + std::to_string(r.revision) +
                    " (relist), spec.replicas at most " + std::to_string(*allowed));
          }
        }
      } else {
        const std::string uid = Uid(r.object);
        if (r.type == "DELETED") {
          if (pods.erase(uid)) ++deletes;
        } else {
          const bool created = !pods.count(uid);
          pods[uid] = r.object;
          if (created) {
            ++creates;
            std::string owner = ControllerUid(r.object, "ReplicaSet");
            // -1: unknown (no owner, or a version the replay cannot know).
            const int64_t allowed = owner.empty() ? -1 : spec_at(owner, r.revision).value_or(-1);
            if (int64_t live = live_of(owner); allowed >= 0 && live > allowed) {
              violate("invariant 1: pod " + Name(r.object) + " created at revision " +
                      std::to_string(r.revision) + " gave replicaset " +
                      (replicasets.count(owner) ? Name(replicasets[owner]) : owner) + " " +
                      std::to_string(live) + " live pods; spec.replicas " +
                      std::to_string(allowed));
            }
          }
        }
      }
      // Invariant 2 after every change (where the replay knows both kinds' state).
      if (gap_at(Kind::kReplicaSet, r.revision) || gap_at(Kind::kDeployment, r.revision)) continue;
      for (const auto& [duid, d] : deployments) {
        if (Int(d, {"status", "observedGeneration"}) != Int(d, {"metadata", "generation"})) {
          continue;
        }
        int64_t sum = 0;
        for (const auto& [ruid, rs] : replicasets) {
          if (ControllerUid(rs, "Deployment") == duid) sum += Int(rs, {"spec", "replicas"}, 1);
        }
        int64_t bound = Int(d, {"spec", "replicas"}, 1) + MaxSurge(d);
        if (sum > bound) {
          violate("invariant 2: at revision " + std::to_string(r.revision) + " deployment " +
                  Name(d) + "'s replicasets want " + std::to_string(sum) +
                  " pods; spec.replicas + maxSurge = " + std::to_string(bound));
        }
      }
    }

    // Invariant 3: the replay's pods are the server's pods, and as many as desired.
    std::vector<json::object> listed_pods;
    std::vector<std::string> final_problems =
        FinalStateProblems(*client, options_.ns, &listed_pods);
    std::set<std::string> server_uids, seen_uids;
    for (const auto& p : listed_pods) server_uids.insert(Uid(p));
    for (const auto& [uid, p] : pods) seen_uids.insert(uid);
    int64_t desired = 0;
    for (const auto& [uid, d] : deployments) desired += Int(d, {"spec", "replicas"}, 1);
    const bool caught_up = server_uids == seen_uids;
    if (!caught_up && attempt < 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (!caught_up) {
      violate("invariant 3: the watched pods (" + std::to_string(seen_uids.size()) +
              ") differ from a fresh list (" + std::to_string(server_uids.size()) + ")");
    }
    if (creates - deletes != desired) {
      violate("invariant 3: " + std::to_string(creates) + " pods created, " +
              std::to_string(deletes) + " deleted, but " + std::to_string(desired) + " desired");
    }
    for (auto& p : final_problems) violate("invariant 4: " + p);
    return out;
  }
}

std::vector<std::string> ConvergenceChecker::CheckQuiet(std::chrono::milliseconds window) {
  auto client = NewClient(options_.kubeconfig_path);
  if (!client) return {"cannot read " + options_.kubeconfig_path};
  HttpResponse before = client->Get("/metrics");
  std::this_thread::sleep_for(window);
  HttpResponse after = client->Get("/metrics");
  if (before.status != 200 || after.status != 200) return {"cannot read /metrics"};
  std::map<std::string, double> b = UnexpectedWrites(before.body);
  std::vector<std::string> out;
  for (const auto& [what, n] : UnexpectedWrites(after.body)) {
    double delta = n - b[what];
    if (delta > 0) out.push_back(what + " x" + std::to_string(static_cast<int64_t>(delta)));
  }
  return out;
}

}  // namespace converge::testing
