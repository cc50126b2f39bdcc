// The Pod printer: READY, STATUS and RESTARTS for the states kubectl users meet, and the wide
// columns. Times are relative to a fixed `now`.
#include <gtest/gtest.h>

#include <string>

#include "apiserver/printers.h"
#include "apiserver/table.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

const util::WallTime kPodNow = *util::ParseRfc3339("2025-01-01T12:00:00Z");

json::array PodCells(std::string_view pod_json) {
  auto obj = api::Object::Parse(pod_json);
  EXPECT_TRUE(obj.ok()) << pod_json;
  api::ResourceInfo info;
  info.gvr = {"", "v1", "pods"};
  info.kind = "Pod";
  return PrinterFor(info).cells(*obj, kPodNow);
}

struct StatusCase {
  std::string name;
  std::string pod;  // JSON
  std::string ready;
  std::string status;
  std::string restarts;
};

void PrintTo(const StatusCase& c, std::ostream* os) {
  *os << c.name;
}

class PodStatus : public ::testing::TestWithParam<StatusCase> {};

TEST_P(PodStatus, ReadyStatusRestarts) {
  const StatusCase& c = GetParam();
  json::array cells = PodCells(c.pod);
  ASSERT_EQ(cells.size(), 9u);
  EXPECT_EQ(cells[1], json::value(c.ready));
  EXPECT_EQ(cells[2], json::value(c.status));
  EXPECT_EQ(cells[3], json::value(c.restarts));
}

// One app container "app"; `statuses` is status.containerStatuses, `extra` more status fields.
std::string OneContainer(std::string_view phase, std::string_view statuses,
                         std::string_view extra = "") {
  return R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}]},)"
         R"("status":{"phase":")" +
         std::string(phase) + R"(","containerStatuses":[)" + std::string(statuses) + "]" +
         std::string(extra) + "}}";
}

// Two init containers i1, i2 and one app container still waiting for them.
std::string TwoInits(std::string_view init_statuses) {
  return R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i1"},{"name":"i2"}],)"
         R"("containers":[{"name":"app"}]},"status":{"phase":"Pending","initContainerStatuses":[)" +
         std::string(init_statuses) +
         R"(],"containerStatuses":[{"name":"app","state":{"waiting":{"reason":"PodInitializing"}}}]}})";
}

constexpr char kRunningReady[] =
    R"({"name":"app","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2025-01-01T11:00:00Z"}}})";

INSTANTIATE_TEST_SUITE_P(
    Printers, PodStatus,
    ::testing::Values(
        StatusCase{"RunningReady", OneContainer("Running", kRunningReady), "1/1", "Running", "0"},
        StatusCase{"PendingWithoutStatuses",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
                       "status":{"phase":"Pending"}})",
                   "0/2", "Pending", "0"},
        StatusCase{"NoStatusAtAll", R"({"metadata":{"name":"p"}})", "0/0", "", "0"},
        StatusCase{
            "ContainerCreating",
            OneContainer("Pending",
                         R"({"name":"app","state":{"waiting":{"reason":"ContainerCreating"}}})"),
            "0/1", "ContainerCreating", "0"},
        StatusCase{"CrashLoopBackOffRestartedTwoMinutesAgo",
                   OneContainer("Running",
                                R"({"name":"app","restartCount":3,
                                    "state":{"waiting":{"reason":"CrashLoopBackOff"}},
                                    "lastState":{"terminated":{"exitCode":1,"reason":"Error",
                                                 "finishedAt":"2025-01-01T11:58:00Z"}}})"),
                   "0/1", "CrashLoopBackOff", "3 (2m ago)"},
        StatusCase{"ImagePullBackOff",
                   OneContainer("Pending",
                                R"({"name":"app","state":{"waiting":{"reason":"ImagePullBackOff",
                                    "message":"Back-off pulling image"}}})"),
                   "0/1", "ImagePullBackOff", "0"},
        StatusCase{"ErrImagePull",
                   OneContainer("Pending",
                                R"({"name":"app","state":{"waiting":{"reason":"ErrImagePull"}}})"),
                   "0/1", "ErrImagePull", "0"},
        StatusCase{"Completed",
                   OneContainer("Succeeded",
                                R"({"name":"app","state":{"terminated":{"exitCode":0,
                                    "reason":"Completed"}}})"),
                   "0/1", "Completed", "0"},
        StatusCase{
            "TerminatedWithoutReasonShowsExitCode",
            OneContainer("Failed", R"({"name":"app","state":{"terminated":{"exitCode":137}}})"),
            "0/1", "ExitCode:137", "0"},
        StatusCase{
            "TerminatedBySignal",
            OneContainer("Failed",
                         R"({"name":"app","state":{"terminated":{"exitCode":0,"signal":9}}})"),
            "0/1", "Signal:9", "0"},
        StatusCase{"WaitingWithoutReasonKeepsPhase",
                   OneContainer("Pending", R"({"name":"app","state":{"waiting":{}}})"), "0/1",
                   "Pending", "0"},
        StatusCase{"CompletedContainerWithAnotherRunningIsRunning",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
                       "status":{"phase":"Running",
                         "conditions":[{"type":"Ready","status":"True"}],
                         "containerStatuses":[
                           {"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
                           {"name":"b","ready":true,"state":{"running":{}}}]}})",
                   "1/2", "Running", "0"},
        StatusCase{"CompletedContainerWithAnotherRunningButPodNotReady",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
                       "status":{"phase":"Running",
                         "conditions":[{"type":"Ready","status":"False"}],
                         "containerStatuses":[
                           {"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
                           {"name":"b","ready":true,"state":{"running":{}}}]}})",
                   "1/2", "NotReady", "0"},
        StatusCase{
            "RunningButNotReadyContainerIsNotCounted",
            OneContainer("Running", R"({"name":"app","ready":false,"state":{"running":{}}})"),
            "0/1", "Running", "0"},
        StatusCase{"FirstAppContainerReasonWins",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
                       "status":{"phase":"Running","containerStatuses":[
                         {"name":"a","state":{"waiting":{"reason":"CrashLoopBackOff"}}},
                         {"name":"b","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}})",
                   "0/2", "CrashLoopBackOff", "0"},
        StatusCase{
            "InitInProgress",
            TwoInits(R"({"name":"i1","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
                               {"name":"i2","state":{"running":{}}})"),
            "0/1", "Init:1/2", "0"},
        StatusCase{"InitWaitingPodInitializingCountsAsInProgress",
                   TwoInits(R"({"name":"i1","state":{"waiting":{"reason":"PodInitializing"}}},
                               {"name":"i2","state":{"waiting":{"reason":"PodInitializing"}}})"),
                   "0/1", "Init:0/2", "0"},
        StatusCase{"InitCrashLoopBackOff", TwoInits(R"({"name":"i1","restartCount":4,
                                "state":{"waiting":{"reason":"CrashLoopBackOff"}},
                                "lastState":{"terminated":{"exitCode":1,
                                             "finishedAt":"2025-01-01T11:59:30Z"}}},
                               {"name":"i2","state":{"waiting":{"reason":"PodInitializing"}}})"),
                   "0/1", "Init:CrashLoopBackOff", "4 (30s ago)"},
        StatusCase{"InitFailedWithExitCode",
                   TwoInits(R"({"name":"i1","state":{"terminated":{"exitCode":1}}})"), "0/1",
                   "Init:ExitCode:1", "0"},
        StatusCase{
            "InitFailedWithReason",
            TwoInits(R"({"name":"i1","state":{"terminated":{"exitCode":2,"reason":"Error"}}})"),
            "0/1", "Init:Error", "0"},
        StatusCase{"InitKilledBySignal",
                   TwoInits(R"({"name":"i1","state":{"terminated":{"exitCode":143,"signal":15}}})"),
                   "0/1", "Init:Signal:15", "0"},
        StatusCase{"InitDoneRestartsOfPlainInitContainersNotCounted",
                   R"({"metadata":{"name":"p"},
                       "spec":{"initContainers":[{"name":"i1"}],"containers":[{"name":"app"}]},
                       "status":{"phase":"Running",
                         "conditions":[{"type":"Initialized","status":"True"}],
                         "initContainerStatuses":[{"name":"i1","restartCount":3,
                           "state":{"terminated":{"exitCode":0,"reason":"Completed"}}}],
                         "containerStatuses":[)" +
                       std::string(kRunningReady) + "]}}",
                   "1/1", "Running", "0"},
        StatusCase{"SidecarStartedCountsAsReadyAndKeepsRestarts",
                   R"({"metadata":{"name":"p"},
                       "spec":{"initContainers":[{"name":"proxy","restartPolicy":"Always"}],
                               "containers":[{"name":"app"}]},
                       "status":{"phase":"Running",
                         "conditions":[{"type":"Initialized","status":"True"},
                                       {"type":"Ready","status":"True"}],
                         "initContainerStatuses":[{"name":"proxy","started":true,"ready":true,
                           "restartCount":2,"state":{"running":{}},
                           "lastState":{"terminated":{"exitCode":1,
                                        "finishedAt":"2025-01-01T11:55:00Z"}}}],
                         "containerStatuses":[)" +
                       std::string(kRunningReady) + "]}}",
                   "2/2", "Running", "2 (5m ago)"},
        StatusCase{"SidecarNotStartedBlocksInitialization",
                   R"({"metadata":{"name":"p"},
                       "spec":{"initContainers":[{"name":"proxy","restartPolicy":"Always"}],
                               "containers":[{"name":"app"}]},
                       "status":{"phase":"Pending",
                         "initContainerStatuses":[{"name":"proxy","started":false,
                           "state":{"waiting":{"reason":"ContainerCreating"}}}]}})",
                   "0/2", "Init:ContainerCreating", "0"},
        StatusCase{"Terminating",
                   R"({"metadata":{"name":"p","deletionTimestamp":"2025-01-01T11:59:00Z"},
                       "spec":{"containers":[{"name":"app"}]},
                       "status":{"phase":"Running","containerStatuses":[)" +
                       std::string(kRunningReady) + "]}}",
                   "1/1", "Terminating", "0"},
        StatusCase{"DeletedAfterSucceedingKeepsCompleted",
                   R"({"metadata":{"name":"p","deletionTimestamp":"2025-01-01T11:59:00Z"},
                       "spec":{"containers":[{"name":"app"}]},
                       "status":{"phase":"Succeeded","containerStatuses":[{"name":"app",
                         "state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}})",
                   "0/1", "Completed", "0"},
        StatusCase{"NodeLostIsUnknown",
                   R"({"metadata":{"name":"p","deletionTimestamp":"2025-01-01T11:59:00Z"},
                       "spec":{"containers":[{"name":"app"}]},
                       "status":{"phase":"Running","reason":"NodeLost"}})",
                   "0/1", "Unknown", "0"},
        StatusCase{"StatusReasonOverridesPhase",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}]},
                       "status":{"phase":"Failed","reason":"Evicted"}})",
                   "0/1", "Evicted", "0"},
        StatusCase{"SchedulingGated",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"app"}]},
                       "status":{"phase":"Pending","conditions":[{"type":"PodScheduled",
                         "status":"False","reason":"SchedulingGated"}]}})",
                   "0/1", "SchedulingGated", "0"},
        StatusCase{
            "RestartsWithoutLastStateHaveNoAgo",
            OneContainer("Running",
                         R"({"name":"app","ready":true,"restartCount":2,"state":{"running":{}}})"),
            "1/1", "Running", "2"},
        StatusCase{"RestartsSumAndLatestFinishWins",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
                       "status":{"phase":"Running","containerStatuses":[
                         {"name":"a","ready":true,"restartCount":2,"state":{"running":{}},
                          "lastState":{"terminated":{"finishedAt":"2025-01-01T11:00:00Z"}}},
                         {"name":"b","ready":true,"restartCount":3,"state":{"running":{}},
                          "lastState":{"terminated":{"finishedAt":"2025-01-01T11:50:00Z"}}}]}})",
                   "2/2", "Running", "5 (10m ago)"}),
    [](const ::testing::TestParamInfo<StatusCase>& info) { return info.param.name; });

TEST(PodPrinter, FullRowWithWideColumns) {
  json::array cells = PodCells(R"({
    "metadata":{"name":"web-1","namespace":"default","creationTimestamp":"2025-01-01T11:00:00Z"},
    "spec":{"nodeName":"node-1","containers":[{"name":"app"}],
            "readinessGates":[{"conditionType":"example.com/lb"},{"conditionType":"example.com/dns"}]},
    "status":{"phase":"Running","podIP":"10.0.0.9","podIPs":[{"ip":"10.0.0.7"},{"ip":"fd00::7"}],
              "nominatedNodeName":"node-2",
              "conditions":[{"type":"example.com/lb","status":"True"},
                            {"type":"example.com/dns","status":"False"}],
              "containerStatuses":[)" +
                               std::string(kRunningReady) + "]}}");
  EXPECT_EQ(json::value(cells), json::parse(R"(["web-1","1/1","Running","0","60m",
                                                 "10.0.0.7","node-1","node-2","1/2"])"));
}

TEST(PodPrinter, WideColumnsPlaceholdersAndPodIPFallback) {
  json::array cells = PodCells(R"({"metadata":{"name":"p"},"status":{"podIP":"10.0.0.9"}})");
  EXPECT_EQ(json::value(cells),
            json::parse(R"(["p","0/0","","0","<unknown>","10.0.0.9","<none>","<none>","<none>"])"));
  cells = PodCells(R"({"metadata":{"name":"p"}})");
  EXPECT_EQ(cells[5], json::value("<none>"));
}

TEST(PodPrinter, ColumnsMatchUpstream) {
  api::ResourceInfo info;
  info.gvr = {"", "v1", "pods"};
  const TablePrinter& p = PrinterFor(info);
  std::vector<std::string> got;
  for (const TableColumn& c : p.columns) {
    got.push_back(c.name + ":" + c.type + ":" + c.format + ":" + std::to_string(c.priority));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "Name:string:name:0", "Ready:string::0", "Status:string::0",
                     "Restarts:string::0", "Age:string::0", "IP:string::1", "Node:string::1",
                     "Nominated Node:string::1", "Readiness Gates:string::1"}));
}

}  // namespace
}  // namespace converge::apiserver
