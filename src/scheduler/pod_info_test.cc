#include "scheduler/pod_info.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace converge::scheduler {
namespace {

api::ObjectPtr ParsePod(std::string_view json) {
  auto obj = api::Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status().ToString();
  return std::make_shared<const api::Object>(std::move(*obj));
}

TEST(PodInfo, StringsAreViewsOfThePodItHolds) {
  // The PodInfo is the pod's only holder once built: its views must point into that object
  // (ASan reports them if they point into anything freed).
  PodInfoPtr info = NewPodInfo(ParsePod(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "team", "name": "web-7d9c5b6f4-x2x7q",
                 "uid": "0d5f6a7e-2b9c-4a43-9a61-5c7a0e3f9d11"},
    "spec": {"nodeName": "node-with-a-long-name-0042", "schedulerName": "batch-scheduler-east",
             "containers": [{"name": "web", "image": "nginx"}]},
    "status": {"nominatedNodeName": "node-with-a-long-name-0007", "phase": "Pending"}})"));
  std::string long_string_churn(4096, 'x');  // reuse of anything freed above
  EXPECT_EQ(info->key.ns, "team");
  EXPECT_EQ(info->key.name, "web-7d9c5b6f4-x2x7q");
  EXPECT_EQ(info->uid, "0d5f6a7e-2b9c-4a43-9a61-5c7a0e3f9d11");
  EXPECT_EQ(info->node_name, "node-with-a-long-name-0042");
  EXPECT_EQ(info->scheduler_name, "batch-scheduler-east");
  EXPECT_EQ(info->nominated_node_name, "node-with-a-long-name-0007");
  EXPECT_EQ(info->uid.data(), info->pod->uid().data()) << "a view, not a copy";
}

TEST(PodInfo, AbsentSchedulerNameIsTheDefaultScheduler) {
  PodInfoPtr info = NewPodInfo(ParsePod(
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "a", "name": "b"},
          "spec": {"containers": [{"name": "c", "image": "i"}]}})"));
  EXPECT_EQ(info->scheduler_name, "default-scheduler");
  EXPECT_TRUE(info->node_name.empty());
  EXPECT_TRUE(info->nominated_node_name.empty());
  EXPECT_TRUE(info->uid.empty());
}

}  // namespace
}  // namespace converge::scheduler
