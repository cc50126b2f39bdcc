// Table tests of the pod lifecycle state machine, driven by a FakeClock: each case runs a pod
// through time and checks the printed STATUS (kubectl's column), phase, conditions, container
// states and the events, at exact times.
#include "kubelet/pod_machine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "kubelet/pod_status.h"
#include "util/clock.h"
#include "util/time_format.h"

namespace converge::kubelet {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

// A condition's text is recomputed on every advance and changes rarely: the same text keeps the
// strings it holds (no allocation), another replaces them, none empties it.
TEST(ConditionStateTest, SetTextReplacesOnlyAChangedText) {
  ConditionState c;
  EXPECT_FALSE(c.text);
  const std::string reason = "ContainersNotReady";
  const std::string message = "containers with unready status: [web sidecar]";
  c.SetText(reason, message);
  ASSERT_TRUE(c.text);
  const char* held = c.text->message.data();
  c.SetText(reason, message);
  EXPECT_EQ(c.text->message.data(), held);  // kept, not rebuilt
  EXPECT_EQ(c.message(), message);
  c.SetText(reason, "containers with unready status: [web]");
  EXPECT_EQ(c.reason(), reason);
  EXPECT_EQ(c.message(), "containers with unready status: [web]");
  c.SetText("", "");
  EXPECT_FALSE(c.text);
  EXPECT_EQ(c.reason(), "");
}
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A pod bound to node-0 with one container per (name, image) pair and the given annotations,
// restart policy and owner kind.
struct PodTemplate {
  std::vector<std::pair<std::string, std::string>> containers = {{"web", "nginx:1.27"}};
  std::vector<std::pair<std::string, std::string>> init_containers;
  std::map<std::string, std::string> annotations;
  std::string restart_policy = "Always";
  std::string owner_kind;  // "Job" for a Job-owned pod
  std::string name = "p";
  std::string uid = "uid-1";
  std::string pull_policy;  // "" = default from the tag
  int64_t grace = 30;
  bool sidecar_first_init = false;
};

api::Object MakePod(const PodTemplate& t) {
  json::object meta{{"name", t.name}, {"namespace", "default"}, {"uid", t.uid}};
  if (!t.annotations.empty()) {
    json::object ann;
    for (const auto& [k, v] : t.annotations) ann[k] = v;
    meta["annotations"] = std::move(ann);
  }
  if (!t.owner_kind.empty()) {
    meta["ownerReferences"] = json::array{json::object{{"apiVersion", "batch/v1"},
                                                       {"kind", t.owner_kind},
                                                       {"name", "owner"},
                                                       {"uid", "owner-uid"},
                                                       {"controller", true}}};
  }
  auto list = [&](const std::vector<std::pair<std::string, std::string>>& cs, bool init) {
    json::array a;
    for (size_t i = 0; i < cs.size(); ++i) {
      json::object c{{"name", cs[i].first}, {"image", cs[i].second}};
      if (!t.pull_policy.empty()) c["imagePullPolicy"] = t.pull_policy;
      if (init && i == 0 && t.sidecar_first_init) c["restartPolicy"] = "Always";
      a.push_back(std::move(c));
    }
    return a;
  };
  json::object spec{{"nodeName", "node-0"},
                    {"restartPolicy", t.restart_policy},
                    {"terminationGracePeriodSeconds", t.grace},
                    {"containers", list(t.containers, false)}};
  if (!t.init_containers.empty()) spec["initContainers"] = list(t.init_containers, true);
  return api::Object(json::object{{"apiVersion", "v1"},
                                  {"kind", "Pod"},
                                  {"metadata", std::move(meta)},
                                  {"spec", std::move(spec)}});
}

// kubectl's STATUS column for a status (a compact re-implementation of the printer's passes,
// enough for these cases: reason, Init:x/n or Init:<reason>, container reasons).
std::string PrintedStatus(const json::object& status, const PodMachine& m) {
  std::string reason(api::Object::GetString(status, "phase"));
  if (auto r = api::Object::GetString(status, "reason"); !r.empty()) reason = std::string(r);
  bool initializing = false;
  if (const json::array* inits = api::FindArray(status, {"initContainerStatuses"})) {
    for (size_t i = 0; i < inits->size(); ++i) {
      const json::object& c = (*inits)[i].as_object();
      const json::object* term = api::FindObject(c, {"state", "terminated"});
      if (term && api::FindInt(*term, {"exitCode"}) == 0) continue;
      if (m.init_containers()[i].spec.sidecar && api::FindBool(c, {"started"})) continue;
      std::string_view waiting = api::FindString(c, {"state", "waiting", "reason"});
      if (term) {
        reason = "Init:" + std::string(api::Object::GetString(*term, "reason"));
      } else if (!waiting.empty() && waiting != "PodInitializing") {
        reason = "Init:" + std::string(waiting);
      } else {
        reason = "Init:" + std::to_string(i) + "/" + std::to_string(inits->size());
      }
      initializing = true;
      break;
    }
  }
  if (!initializing) {
    if (const json::array* cs = api::FindArray(status, {"containerStatuses"})) {
      for (auto it = cs->rbegin(); it != cs->rend(); ++it) {
        const json::object& c = it->as_object();
        std::string_view waiting = api::FindString(c, {"state", "waiting", "reason"});
        if (!waiting.empty()) {
          reason = std::string(waiting);
        } else if (const json::object* term = api::FindObject(c, {"state", "terminated"})) {
          reason = std::string(api::Object::GetString(*term, "reason"));
        }
      }
    }
  }
  return reason;
}

std::string CondStatus(const json::object& status, std::string_view type) {
  if (const json::array* conds = api::FindArray(status, {"conditions"})) {
    for (const json::value& c : *conds) {
      if (api::Object::GetString(c.as_object(), "type") == type) {
        return std::string(api::Object::GetString(c.as_object(), "status"));
      }
    }
  }
  return "";
}

// Drives one machine with a FakeClock in steps of `step`, recording what a watcher of the pod
// and of its events would see.
class Harness {
 public:
  explicit Harness(NodeAllocatable allocatable = {}) {
    NodeRuntimeOptions o;
    o.node_name = "node-0";
    o.node_index = 0;
    o.host_ip = "172.18.0.2";
    o.allocatable = allocatable;
    node_ = std::make_unique<NodeRuntime>(o);
    t0_ = clock_.WallNow();
  }

  PodMachine& Add(const PodTemplate& t) {
    machines_.push_back(std::make_unique<PodMachine>(MakePodSpecView(MakePod(t))));
    PodMachine& m = *machines_.back();
    m.Advance(*node_, clock_.WallNow(), &out_);
    return m;
  }

  // Seconds since the start, as a double (for readable expectations).
  double Since(WallTime t) const { return std::chrono::duration<double>(t - t0_).count(); }
  double Now() const { return Since(clock_.WallNow()); }

  // Advances every machine to `seconds` after the start, in steps.
  void RunUntil(double seconds, Duration step = 100ms) {
    WallTime end =
        t0_ + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
    while (clock_.WallNow() < end) {
      clock_.Step(std::min<Duration>(step, end - clock_.WallNow()));
      for (auto& m : machines_) m->Advance(*node_, clock_.WallNow(), &out_);
    }
  }

  void Update(PodMachine& m, const PodTemplate& t, std::function<void(api::Object&)> edit = {}) {
    api::Object pod = MakePod(t);
    if (edit) edit(pod);
    m.Update(MakePodSpecView(pod), *node_, clock_.WallNow(), &out_);
  }

  json::object Status(const PodMachine& m) const { return BuildPodStatus(m, ""); }
  std::string Printed(const PodMachine& m) const { return PrintedStatus(Status(m), m); }

  // "reason: message" of events, in order; clears them.
  std::vector<std::string> TakeEvents() {
    std::vector<std::string> out;
    for (const KubeletEvent& e : out_.events) out.push_back(e.reason + ": " + e.message);
    out_.events.clear();
    return out;
  }
  // Times (seconds since start) of events with `reason`.
  std::vector<double> EventTimes(std::string_view reason) const {
    std::vector<double> out;
    for (const KubeletEvent& e : all_events()) {
      if (e.reason == reason) out.push_back(Since(e.time));
    }
    return out;
  }
  const std::vector<KubeletEvent>& all_events() const { return out_.events; }
  MachineOutput& output() { return out_; }
  NodeRuntime& node() { return *node_; }
  util::FakeClock& clock() { return clock_; }
  WallTime t0() const { return t0_; }

 private:
  util::FakeClock clock_;
  WallTime t0_;
  std::unique_ptr<NodeRuntime> node_;
  std::vector<std::unique_ptr<PodMachine>> machines_;
  MachineOutput out_;
};

// ---- the happy path ----

TEST(PodMachineTest, PodPullsStartsAndBecomesReady) {
  Harness h;
  PodMachine& m = h.Add({});
  EXPECT_EQ(h.Printed(m), "ContainerCreating");
  EXPECT_EQ(m.phase(), "Pending");
  EXPECT_THAT(h.TakeEvents(), ElementsAre("Pulling: Pulling image \"nginx:1.27\""));
  json::object st = h.Status(m);
  EXPECT_EQ(CondStatus(st, "PodReadyToStartContainers"), "True");
  EXPECT_EQ(CondStatus(st, "Initialized"), "True");
  EXPECT_EQ(CondStatus(st, "Ready"), "False");
  EXPECT_EQ(api::Object::GetString(st, "podIP"), "10.244.0.2");
  EXPECT_EQ(api::Object::GetString(st, "hostIP"), "172.18.0.2");

  h.RunUntil(0.2);
  EXPECT_EQ(h.Printed(m), "Running");
  EXPECT_EQ(m.phase(), "Running");
  std::vector<std::string> events = h.TakeEvents();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_THAT(events[0], HasSubstr("Pulled: Successfully pulled image \"nginx:1.27\" in 200ms "
                                   "(200ms including waiting). Image size: "));
  EXPECT_EQ(events[1], "Created: Created container: web");
  EXPECT_EQ(events[2], "Started: Started container web");
  st = h.Status(m);
  EXPECT_EQ(CondStatus(st, "Ready"), "True");
  EXPECT_EQ(CondStatus(st, "ContainersReady"), "True");
  EXPECT_EQ(CondStatus(st, "PodScheduled"), "True");
  const json::object& cs = api::FindArray(st, {"containerStatuses"})->at(0).as_object();
  EXPECT_EQ(api::Object::GetString(cs, "image"), "docker.io/library/nginx:1.27");
  EXPECT_THAT(std::string(api::Object::GetString(cs, "imageID")),
              HasSubstr("docker.io/library/nginx@sha256:"));
  EXPECT_THAT(std::string(api::Object::GetString(cs, "containerID")), HasSubstr("converge-sim://"));
  EXPECT_TRUE(api::FindBool(cs, {"ready"}));
  EXPECT_TRUE(api::FindBool(cs, {"started"}));
  EXPECT_EQ(api::FindInt(cs, {"restartCount"}), 0);
  EXPECT_EQ(util::ParseRfc3339(api::FindString(cs, {"state", "running", "startedAt"})),
            util::ParseRfc3339(util::FormatRfc3339(h.t0() + 200ms)));
  EXPECT_FALSE(m.NextDue().has_value()) << "a running pod without behaviour has nothing to do";
}

TEST(PodMachineTest, ImagesAreSharedOnANodeAndPullPoliciesHonoured) {
  struct Case {
    std::string name;
    std::string image;
    std::string policy;
    std::string second_pod_first_event;
  };
  const std::vector<Case> cases = {
      {"IfNotPresentReusesTheImage", "nginx:1.27", "",
       "Pulled: Container image \"nginx:1.27\" "
       "already present on machine"},
      {"AlwaysPullsAgain", "nginx:1.27", "Always", "Pulling: Pulling image \"nginx:1.27\""},
      {"LatestDefaultsToAlways", "nginx", "", "Pulling: Pulling image \"nginx\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    PodTemplate t;
    t.containers = {{"web", c.image}};
    t.pull_policy = c.policy;
    h.Add(t);
    h.RunUntil(1);
    h.TakeEvents();
    t.name = "q";
    t.uid = "uid-2";
    PodMachine& second = h.Add(t);
    std::vector<std::string> events = h.TakeEvents();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0], c.second_pod_first_event);
    h.RunUntil(2);
    EXPECT_EQ(h.Printed(second), "Running");
    EXPECT_EQ(api::Object::GetString(h.Status(second), "podIP"), "10.244.0.3");
  }
}

TEST(PodMachineTest, SerializedPullsQueueBehindEachOther) {
  Harness h;
  PodTemplate a;
  a.containers = {{"a", "redis:7"}};
  PodTemplate b;
  b.name = "q";
  b.uid = "uid-2";
  b.containers = {{"b", "postgres:16"}};
  h.Add(a);
  PodMachine& second = h.Add(b);
  h.RunUntil(0.3);
  EXPECT_EQ(h.Printed(second), "ContainerCreating") << "waits for the first pull";
  h.RunUntil(0.4);
  EXPECT_EQ(h.Printed(second), "Running");
  std::vector<std::string> events;
  for (const KubeletEvent& e : h.all_events()) {
    if (e.reason == "Pulled" && e.field_path == "spec.containers{b}") events.push_back(e.message);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_THAT(events[0], HasSubstr("in 200ms (400ms including waiting)"));
}

// ---- images that cannot be pulled ----

TEST(PodMachineTest, MissingImageBacksOffLikeUpstream) {
  Harness h;
  PodTemplate t;
  t.containers = {{"web", "nginx:doesnotexist"}};
  PodMachine& m = h.Add(t);
  h.RunUntil(0.2);
  EXPECT_EQ(h.Printed(m), "ErrImagePull");
  EXPECT_THAT(h.TakeEvents(),
              ElementsAre("Pulling: Pulling image \"nginx:doesnotexist\"",
                          "Failed: Failed to pull image \"nginx:doesnotexist\": rpc error: code = "
                          "NotFound desc = failed to pull and unpack image "
                          "\"docker.io/library/nginx:doesnotexist\": failed to resolve reference "
                          "\"docker.io/library/nginx:doesnotexist\": "
                          "docker.io/library/nginx:doesnotexist: not found",
                          "Failed: Error: ErrImagePull"));
  h.RunUntil(1.2);
  EXPECT_EQ(h.Printed(m), "ImagePullBackOff");
  EXPECT_THAT(h.TakeEvents(), ElementsAre("BackOff: Back-off pulling image \"nginx:doesnotexist\"",
                                          "Failed: Error: ImagePullBackOff"));
  EXPECT_EQ(m.phase(), "Pending");
  // Upstream's backoff: 10 s, doubling, capped at 5 minutes; each retry starts when the delay
  // since the last failure is over, and each pull takes 200 ms to fail.
  h.RunUntil(1300, 100ms);
  std::vector<double> pulls = h.EventTimes("Pulling");
  std::vector<double> expected = {10.2, 30.4, 70.6, 150.8, 311.0, 611.2, 911.4, 1211.6};
  ASSERT_EQ(pulls.size(), expected.size());
  for (size_t i = 0; i < pulls.size(); ++i) EXPECT_NEAR(pulls[i], expected[i], 1e-6) << i;
  EXPECT_EQ(h.Printed(m), "ImagePullBackOff");
}

TEST(PodMachineTest, ImagesThatCannotStart) {
  struct Case {
    std::string name;
    std::string image;
    std::string policy;
    std::string status;
    std::vector<std::string> events;
  };
  const std::vector<Case> cases = {
      {"UnknownRegistryHost",
       "missing.example/app:1",
       "",
       "ErrImagePull",
       {"Pulling: Pulling image \"missing.example/app:1\"",
        "Failed: Failed to pull image \"missing.example/app:1\": rpc error: code = Unknown desc = "
        "failed to pull and unpack image \"missing.example/app:1\": failed to resolve reference "
        "\"missing.example/app:1\": failed to do request: Head "
        "\"https://missing.example/v2/app/manifests/1\": dial tcp: lookup missing.example: no "
        "such host",
        "Failed: Error: ErrImagePull"}},
      {"UppercaseName",
       "Nginx:1.27",
       "",
       "InvalidImageName",
       {"InspectFailed: Failed to apply default image tag \"Nginx:1.27\": couldn't parse image "
        "name \"Nginx:1.27\": invalid reference format: repository name (library/Nginx) must be "
        "lowercase",
        "Failed: Error: InvalidImageName"}},
      {"NeverPolicyAndAbsent",
       "nginx:1.27",
       "Never",
       "ErrImageNeverPull",
       {"ErrImageNeverPull: Container image \"nginx:1.27\" is not present with pull policy of "
        "Never",
        "Failed: Error: ErrImageNeverPull"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    PodTemplate t;
    t.containers = {{"web", c.image}};
    t.pull_policy = c.policy;
    PodMachine& m = h.Add(t);
    h.RunUntil(0.5);
    EXPECT_EQ(h.Printed(m), c.status);
    EXPECT_EQ(h.TakeEvents(), c.events);
  }
}

// ---- containers that exit ----

TEST(PodMachineTest, ExitsFollowRestartPolicy) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> annotations;
    std::string restart_policy;
    std::string owner_kind;
    double at;
    std::string phase;
    std::string printed;
    int restarts;
  };
  const std::vector<Case> cases = {
      {"JobPodRunsOneSecondAndSucceeds", {}, "Never", "Job", 1.2, "Succeeded", "Completed", 0},
      {"JobPodStillRunningBefore", {}, "Never", "Job", 1.1, "Running", "Running", 0},
      {"ExitCodeWithNeverFails",
       {{"sim.converge.io/run-seconds", "2"}, {"sim.converge.io/exit-code", "3"}},
       "Never",
       "",
       2.2,
       "Failed",
       "Error",
       0},
      {"OnFailureSucceedsOnZero",
       {{"sim.converge.io/run-seconds", "1"}},
       "OnFailure",
       "",
       1.2,
       "Succeeded",
       "Completed",
       0},
      {"OnFailureRestartsAFailure",
       {{"sim.converge.io/crash-after-seconds", "1"}},
       "OnFailure",
       "",
       2.2,
       "Running",
       "Running",
       1},
      {"AlwaysRestartsASuccess",
       {{"sim.converge.io/run-seconds", "1"}},
       "Always",
       "",
       2.2,
       "Running",
       "Running",
       1},
      {"BeforeTheRestartTheExitShows",
       {{"sim.converge.io/crash-after-seconds", "1"}},
       "Always",
       "",
       1.5,
       "Running",
       "Error",
       0},
      {"PerContainerAnnotationWins",
       {{"sim.converge.io/run-seconds", "100"}, {"web.sim.converge.io/run-seconds", "1"}},
       "Never",
       "",
       1.2,
       "Succeeded",
       "Completed",
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    PodTemplate t;
    t.annotations = c.annotations;
    t.restart_policy = c.restart_policy;
    t.owner_kind = c.owner_kind;
    PodMachine& m = h.Add(t);
    h.RunUntil(c.at);
    EXPECT_EQ(m.phase(), c.phase);
    EXPECT_EQ(h.Printed(m), c.printed);
    EXPECT_EQ(m.containers()[0].restart_count, c.restarts);
  }
}

TEST(PodMachineTest, SucceededPodReleasesItsResourcesAndReportsPodCompleted) {
  Harness h({.cpu_milli = 1000, .memory_bytes = 1 << 30, .pods = 1});
  PodTemplate t;
  t.owner_kind = "Job";
  t.restart_policy = "Never";
  PodMachine& m = h.Add(t);
  h.RunUntil(2);
  ASSERT_EQ(m.phase(), "Succeeded");
  json::object st = h.Status(m);
  EXPECT_EQ(CondStatus(st, "Ready"), "False");
  EXPECT_EQ(CondStatus(st, "PodReadyToStartContainers"), "False");
  const json::object& term = *api::FindObject(
      api::FindArray(st, {"containerStatuses"})->at(0).as_object(), {"state", "terminated"});
  EXPECT_EQ(api::Object::GetString(term, "reason"), "Completed");
  EXPECT_EQ(api::FindInt(term, {"exitCode"}), 0);
  EXPECT_EQ(h.node().admitted_pods(), 0u);
  // The node (capacity 1 pod) takes the next pod; its image is already present, so its
  // container starts at once.
  t.name = "q";
  t.uid = "uid-2";
  PodMachine& next = h.Add(t);
  EXPECT_EQ(next.phase(), "Running");
  EXPECT_TRUE(next.start_time().has_value());
  EXPECT_EQ(h.node().admitted_pods(), 1u);
}

TEST(PodMachineTest, CrashLoopBackOffDoublesFromFinishedAt) {
  Harness h;
  PodTemplate t;
  t.annotations = {{"sim.converge.io/crash-after-seconds", "1"}};
  h.Add(t);
  // Start at 0.2; every run lasts 1 s; the first restart follows the exit after the 1 s sync;
  // later ones wait 10, 20, 40, 80, 160, 300, 300 s from the exit.
  h.RunUntil(1200);
  std::vector<double> starts = h.EventTimes("Started");
  std::vector<double> expected = {0.2, 2.2, 13.2, 34.2, 75.2, 156.2, 317.2, 618.2, 919.2};
  ASSERT_GE(starts.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(starts[i], expected[i], 1e-6) << i;
  std::vector<std::string> backoffs;
  for (const KubeletEvent& e : h.all_events()) {
    if (e.reason == "BackOff") backoffs.push_back(e.message);
  }
  ASSERT_FALSE(backoffs.empty());
  EXPECT_EQ(backoffs[0], "Back-off restarting failed container web in pod p_default(uid-1)");
}

TEST(PodMachineTest, CrashLoopBackOffStatus) {
  Harness h;
  PodTemplate t;
  t.annotations = {{"sim.converge.io/crash-after-seconds", "1"}};
  PodMachine& m = h.Add(t);
  h.RunUntil(5);  // second exit at 3.2, back-off until 13.2
  EXPECT_EQ(h.Printed(m), "CrashLoopBackOff");
  EXPECT_EQ(m.phase(), "Running");
  json::object st = h.Status(m);
  const json::object& cs = api::FindArray(st, {"containerStatuses"})->at(0).as_object();
  EXPECT_EQ(api::FindString(cs, {"state", "waiting", "message"}),
            "back-off 10s restarting failed container=web pod=p_default(uid-1)");
  EXPECT_EQ(api::FindInt(cs, {"lastState", "terminated", "exitCode"}), 1);
  EXPECT_EQ(api::FindString(cs, {"lastState", "terminated", "reason"}), "Error");
  EXPECT_EQ(api::FindInt(cs, {"restartCount"}), 1);
  EXPECT_EQ(CondStatus(st, "Ready"), "False");
}

TEST(PodMachineTest, ContainerIdsNameOneInstanceEach) {
  Harness h;
  PodTemplate t;
  t.annotations = {{"sim.converge.io/crash-after-seconds", "1"}};
  PodMachine& m = h.Add(t);
  PodTemplate other;
  other.name = "q";
  other.uid = "uid-2";
  PodMachine& n = h.Add(other);
  auto status_of = [&](const PodMachine& pod) {
    json::object st = h.Status(pod);
    return api::FindArray(st, {"containerStatuses"})->at(0).as_object();
  };
  EXPECT_FALSE(status_of(m).contains("containerID")) << "not started yet";
  h.RunUntil(0.5);
  const std::string first(api::Object::GetString(status_of(m), "containerID"));
  EXPECT_THAT(first, ::testing::MatchesRegex("converge-sim://[0-9a-f]{64}"));
  EXPECT_NE(api::Object::GetString(status_of(n), "containerID"), first) << "another pod's";
  h.RunUntil(1.5);  // exited at 1.2: the terminated state names the same instance
  EXPECT_EQ(api::Object::GetString(status_of(m), "containerID"), first);
  EXPECT_EQ(api::FindString(status_of(m), {"state", "terminated", "containerID"}), first);
  h.RunUntil(2.5);  // restarted at 2.2: a new instance, a new ID
  const std::string second(api::Object::GetString(status_of(m), "containerID"));
  EXPECT_THAT(second, ::testing::MatchesRegex("converge-sim://[0-9a-f]{64}"));
  EXPECT_NE(second, first);
  EXPECT_EQ(api::FindString(status_of(m), {"lastState", "terminated", "containerID"}), first);

  // A new kubelet keeps the IDs the status reported, whatever their form.
  json::object status = h.Status(m);
  status["containerStatuses"].as_array()[0].as_object()["containerID"] = "containerd://abc";
  NodeRuntime fresh({.node_name = "node-0"});
  PodMachine adopted(MakePodSpecView(MakePod(t)));
  MachineOutput out;
  adopted.Adopt(status, fresh, h.clock().WallNow(), &out);
  EXPECT_EQ(adopted.ContainerId(adopted.containers()[0]), "containerd://abc");
  ASSERT_EQ(out.logs.size(), 1u);
  EXPECT_EQ(out.logs[0].container_id, "containerd://abc");
}

TEST(PodMachineTest, ReadinessDelay) {
  Harness h;
  PodTemplate t;
  t.annotations = {{"sim.converge.io/readiness-delay-seconds", "5"}};
  PodMachine& m = h.Add(t);
  h.RunUntil(5.1);
  EXPECT_EQ(h.Printed(m), "Running");
  EXPECT_EQ(CondStatus(h.Status(m), "Ready"), "False");
  EXPECT_EQ(m.ready().reason(), "ContainersNotReady");
  EXPECT_EQ(m.ready().message(), "containers with unready status: [web]");
  h.RunUntil(5.2);
  EXPECT_EQ(CondStatus(h.Status(m), "Ready"), "True");
  EXPECT_EQ(h.Since(m.ready().last_transition), 5.2);
}

// ---- init containers ----

TEST(PodMachineTest, InitContainersRunOneAtATimeToCompletion) {
  Harness h;
  PodTemplate t;
  t.init_containers = {{"init-a", "busybox:1.36"}, {"init-b", "busybox:1.36"}};
  PodMachine& m = h.Add(t);
  struct Step {
    double at;
    std::string printed;
    std::string phase;
  };
  // init-a: pull 0.2, run 1 s (to 1.2); init-b: image present, run to 2.2; web: pull, 2.4.
  for (const Step& s : std::vector<Step>{{0.1, "Init:0/2", "Pending"},
                                         {1.1, "Init:0/2", "Pending"},
                                         {1.3, "Init:1/2", "Pending"},
                                         {2.3, "PodInitializing", "Pending"},
                                         {2.5, "Running", "Running"}}) {
    h.RunUntil(s.at);
    EXPECT_EQ(h.Printed(m), s.printed) << s.at;
    EXPECT_EQ(m.phase(), s.phase) << s.at;
  }
  EXPECT_EQ(CondStatus(h.Status(m), "Initialized"), "True");
  EXPECT_EQ(h.EventTimes("Started"), (std::vector<double>{0.2, 1.2, 2.4}));
}

TEST(PodMachineTest, FailedInitContainerFailsPodWithNeverAndRetriesOtherwise) {
  for (std::string policy : {"Never", "Always"}) {
    SCOPED_TRACE(policy);
    Harness h;
    PodTemplate t;
    t.restart_policy = policy;
    t.init_containers = {{"init", "busybox:1.36"}};
    t.annotations = {{"init.sim.converge.io/exit-code", "2"}};
    PodMachine& m = h.Add(t);
    h.RunUntil(5);
    if (policy == "Never") {
      EXPECT_EQ(m.phase(), "Failed");
      EXPECT_EQ(h.Printed(m), "Init:Error");
      EXPECT_EQ(m.stage(), PodStage::kTerminal);
    } else {
      EXPECT_EQ(m.phase(), "Pending");
      EXPECT_EQ(h.Printed(m), "Init:CrashLoopBackOff");
      EXPECT_EQ(m.init_containers()[0].restart_count, 1);
    }
    EXPECT_TRUE(h.EventTimes("Started").size() <= 2u);
  }
}

TEST(PodMachineTest, SidecarStartsAndStaysWhileAppRuns) {
  Harness h;
  PodTemplate t;
  t.sidecar_first_init = true;
  t.init_containers = {{"proxy", "envoy:1.30"}};
  PodMachine& m = h.Add(t);
  h.RunUntil(1);
  EXPECT_EQ(h.Printed(m), "Running");
  EXPECT_TRUE(m.init_containers()[0].running());
  EXPECT_TRUE(m.containers()[0].running());
  EXPECT_EQ(CondStatus(h.Status(m), "Ready"), "True");
}

// ---- admission ----

TEST(PodMachineTest, AdmissionRejectsWhatDoesNotFit) {
  Harness h({.cpu_milli = 16000, .memory_bytes = 64ll << 30, .pods = 1});
  h.Add({});
  PodTemplate t;
  t.name = "q";
  t.uid = "uid-2";
  PodMachine& m = h.Add(t);
  EXPECT_EQ(m.phase(), "Failed");
  json::object st = h.Status(m);
  EXPECT_EQ(api::Object::GetString(st, "reason"), "OutOfpods");
  EXPECT_EQ(api::Object::GetString(st, "message"),
            "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, "
            "capacity: 1");
  EXPECT_EQ(h.Printed(m), "OutOfpods");
  EXPECT_FALSE(st.contains("containerStatuses"));
  EXPECT_FALSE(st.contains("startTime"));
}

// ---- deletion ----

TEST(PodMachineTest, GracefulDeletion) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> annotations;
    int64_t grace;
    double exits_after;  // seconds after the deletion
    int exit_code;
  };
  const std::vector<Case> cases = {
      {"ExitsOnSigterm", {}, 30, 0, 0},
      {"TakesItsShutdownTime", {{"sim.converge.io/shutdown-seconds", "3"}}, 30, 3, 0},
      {"IgnoresSigtermAndIsKilledAtTheDeadline",
       {{"sim.converge.io/ignore-sigterm", "true"}},
       5,
       5,
       137},
      {"ShutdownLongerThanGraceIsKilled",
       {{"sim.converge.io/shutdown-seconds", "60"}},
       10,
       10,
       137},
      {"MinimumGraceIsTwoSeconds", {{"sim.converge.io/ignore-sigterm", "true"}}, 1, 2, 137},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Harness h;
    PodTemplate t;
    t.annotations = c.annotations;
    PodMachine& m = h.Add(t);
    h.RunUntil(1);
    ASSERT_EQ(h.Printed(m), "Running");
    h.TakeEvents();
    const double deleted_at = h.Now();
    h.Update(m, t, [&](api::Object& pod) {
      pod.mutable_metadata()["deletionTimestamp"] =
          util::FormatRfc3339(h.clock().WallNow() + std::chrono::seconds(c.grace));
      pod.mutable_metadata()["deletionGracePeriodSeconds"] = c.grace;
    });
    std::vector<std::string> events = h.TakeEvents();
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0], "Killing: Stopping container web");
    if (c.exits_after > 0) {
      EXPECT_FALSE(m.wants_delete());
      h.RunUntil(deleted_at + c.exits_after - 0.1);
      EXPECT_FALSE(m.wants_delete()) << "still stopping";
      EXPECT_TRUE(m.containers()[0].running());
    }
    h.RunUntil(deleted_at + c.exits_after + 0.1);
    EXPECT_TRUE(m.wants_delete());
    ASSERT_TRUE(m.containers()[0].terminated.has_value());
    EXPECT_EQ(m.containers()[0].terminated->exit_code, c.exit_code);
    EXPECT_EQ(m.phase(), c.exit_code == 0 ? "Succeeded" : "Failed");
    EXPECT_EQ(h.node().admitted_pods(), 0u);
    EXPECT_FALSE(m.NextDue().has_value()) << "nothing restarts after deletion";
  }
}

TEST(PodMachineTest, DeletionWhilePullingStopsEverything) {
  Harness h;
  PodTemplate t;
  t.containers = {{"web", "nginx:doesnotexist"}};
  PodMachine& m = h.Add(t);
  h.RunUntil(3);
  h.Update(m, t, [&](api::Object& pod) {
    pod.mutable_metadata()["deletionTimestamp"] = util::FormatRfc3339(h.clock().WallNow());
    pod.mutable_metadata()["deletionGracePeriodSeconds"] = 30;
  });
  EXPECT_TRUE(m.wants_delete());
  h.TakeEvents();
  h.RunUntil(60);
  EXPECT_TRUE(h.TakeEvents().empty()) << "no more pulls";
}

// ---- spec changes ----

TEST(PodMachineTest, ImageChangeRestartsTheContainerWithoutBackoff) {
  Harness h;
  PodTemplate t;
  PodMachine& m = h.Add(t);
  h.RunUntil(1);
  h.TakeEvents();
  t.containers = {{"web", "nginx:1.28"}};
  h.Update(m, t);
  std::vector<std::string> events = h.TakeEvents();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0], "Killing: Container web definition changed, will be restarted");
  EXPECT_EQ(events[1], "Pulling: Pulling image \"nginx:1.28\"");
  h.RunUntil(1.3);
  EXPECT_EQ(h.Printed(m), "Running");
  EXPECT_EQ(m.containers()[0].restart_count, 1);
  EXPECT_EQ(m.containers()[0].image_ref, "docker.io/library/nginx:1.28");
}

TEST(PodMachineTest, FixingAMissingImageStartsThePod) {
  Harness h;
  PodTemplate t;
  t.containers = {{"web", "nginx:doesnotexist"}};
  PodMachine& m = h.Add(t);
  h.RunUntil(5);
  ASSERT_EQ(h.Printed(m), "ImagePullBackOff");
  t.containers = {{"web", "nginx:1.27"}};
  h.Update(m, t);
  h.RunUntil(5.3);
  EXPECT_EQ(h.Printed(m), "Running");
}

// ---- adoption ----

// The status a previous kubelet reported of a pod of `t` it ran for 3 s: what a new one adopts.
json::object StatusAfterRunning(Harness& h, const PodTemplate& t) {
  PodMachine& m = h.Add(t);
  h.RunUntil(3);
  return h.Status(m);
}

TEST(PodMachineTest, AdoptsWhatAPreviousKubeletStarted) {
  Harness h;
  PodTemplate t;
  json::object status = StatusAfterRunning(h, t);

  // A new kubelet (a fresh node runtime) sees the pod with that status.
  NodeRuntimeOptions o;
  o.node_name = "node-0";
  o.host_ip = "172.18.0.2";
  NodeRuntime fresh(o);
  PodMachine adopted(MakePodSpecView(MakePod(t)));
  MachineOutput out;
  adopted.Adopt(status, fresh, h.clock().WallNow(), &out);
  adopted.Advance(fresh, h.clock().WallNow(), &out);
  EXPECT_TRUE(out.events.empty()) << "nothing restarted";
  EXPECT_EQ(StatusFingerprint(BuildPodStatus(adopted, "")), StatusFingerprint(status));
  EXPECT_EQ(fresh.admitted_pods(), 1u);
}

TEST(PodMachineTest, AdoptedTerminalPodKeepsItsPhaseReasonAndMessage) {
  Harness h;
  PodTemplate t;
  json::object status = StatusAfterRunning(h, t);
  status["phase"] = "Failed";
  status["reason"] = "Evicted";
  status["message"] = "The node was low on resource: memory.";

  NodeRuntime fresh({.node_name = "node-0"});
  PodMachine adopted(MakePodSpecView(MakePod(t)));
  MachineOutput out;
  adopted.Adopt(status, fresh, h.clock().WallNow(), &out);
  EXPECT_EQ(adopted.phase(), "Failed");
  json::object st = BuildPodStatus(adopted, "");
  EXPECT_EQ(api::Object::GetString(st, "phase"), "Failed");
  EXPECT_EQ(api::Object::GetString(st, "reason"), "Evicted");
  EXPECT_EQ(api::Object::GetString(st, "message"), "The node was low on resource: memory.");
  EXPECT_EQ(fresh.admitted_pods(), 0u) << "a terminal pod holds nothing";
}

TEST(PodMachineTest, AdoptedPodAlreadyBeingDeletedIsStoppedThenDeleted) {
  Harness h;
  PodTemplate t;
  json::object status = StatusAfterRunning(h, t);

  // The kubelet was down while the pod was deleted (evicted); a new one sees it running.
  NodeRuntimeOptions o;
  o.node_name = "node-0";
  o.host_ip = "172.18.0.2";
  NodeRuntime fresh(o);
  api::Object pod = MakePod(t);
  pod.mutable_metadata()["deletionTimestamp"] = util::FormatRfc3339(h.clock().WallNow());
  pod.mutable_metadata()["deletionGracePeriodSeconds"] = 1;
  PodMachine adopted(MakePodSpecView(pod));
  MachineOutput out;
  adopted.Adopt(status, fresh, h.clock().WallNow(), &out);
  adopted.Advance(fresh, h.clock().WallNow(), &out);
  ASSERT_FALSE(out.events.empty());
  EXPECT_EQ(out.events[0].reason, "Killing");
  // nginx stops on SIGTERM at once: the pod is terminal and ready for the final delete.
  EXPECT_TRUE(adopted.wants_delete());
  EXPECT_FALSE(adopted.NextDue().has_value()) << "nothing restarts";
  EXPECT_EQ(fresh.admitted_pods(), 0u);
}

}  // namespace
}  // namespace converge::kubelet
