// Exact Table cells for representative objects of every built-in kind except Pod
// (printers_pod_test.cc). Times are relative to a fixed `now`.
#include <gtest/gtest.h>

#include <string>

#include "apiserver/table.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

const util::WallTime kNow = *util::ParseRfc3339("2025-01-01T12:00:00Z");

api::ResourceInfo Info(std::string group, std::string resource) {
  api::ResourceInfo info;
  info.gvr = {std::move(group), "v1", std::move(resource)};
  return info;
}

struct CellsCase {
  std::string name;
  std::string group;
  std::string resource;
  std::string object;  // JSON
  std::string cells;   // JSON array
};

void PrintTo(const CellsCase& c, std::ostream* os) {
  *os << c.name;
}

class Cells : public ::testing::TestWithParam<CellsCase> {};

TEST_P(Cells, Exact) {
  const CellsCase& c = GetParam();
  auto obj = api::Object::Parse(c.object);
  ASSERT_TRUE(obj.ok()) << c.object;
  const TablePrinter& p = PrinterFor(Info(c.group, c.resource));
  json::array cells = p.cells(*obj, kNow);
  EXPECT_EQ(json::value(cells), json::parse(c.cells)) << json::serialize(cells);
  EXPECT_EQ(cells.size(), p.columns.size());
}

// Created an hour before kNow: Age "60m".
#define META(name) R"("metadata":{"name":")" name R"(","creationTimestamp":"2025-01-01T11:00:00Z")"

INSTANTIATE_TEST_SUITE_P(
    Deployments, Cells,
    ::testing::Values(
        CellsCase{"Deployment", "apps", "deployments", "{" META("web") R"(},
                   "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
                     "template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"},
                                                       {"name":"log","image":"busybox"}]}}},
                   "status":{"replicas":3,"updatedReplicas":3,"readyReplicas":2,"availableReplicas":2}})",
                  R"(["web","2/3",3,2,"60m","nginx,log","nginx:1.27,busybox","app=web"])"},
        CellsCase{"DeploymentBareDefaultsToOneReplicaAndEmptySelector", "apps", "deployments",
                  R"({"metadata":{"name":"d"}})", R"(["d","0/1",0,0,"<unknown>","","",""])"},
        CellsCase{"DeploymentSelectorExpressions", "apps", "deployments",
                  R"({"metadata":{"name":"d"},"spec":{"replicas":0,"selector":{
                       "matchLabels":{"tier":"fe"},
                       "matchExpressions":[{"key":"app","operator":"In","values":["b","a"]},
                                           {"key":"canary","operator":"DoesNotExist"}]}}})",
                  R"(["d","0/0",0,0,"<unknown>","","","app in (a,b),!canary,tier=fe"])"},
        CellsCase{"DeploymentInvalidSelector", "apps", "deployments",
                  R"({"metadata":{"name":"d"},"spec":{"selector":{"matchExpressions":[
                       {"key":"app","operator":"Near"}]}}})",
                  R"(["d","0/1",0,0,"<unknown>","","","<invalid>"])"},
        CellsCase{
            "ReplicaSet", "apps", "replicasets", "{" META("web-5d8") R"(},"spec":{"replicas":3,
                     "selector":{"matchLabels":{"app":"web","pod-template-hash":"5d8"}},
                     "template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}},
                   "status":{"replicas":3,"readyReplicas":1}})",
            R"(["web-5d8",3,3,1,"60m","nginx","nginx:1.27","app=web,pod-template-hash=5d8"])"},
        CellsCase{"ReplicaSetWithoutSelectorPrintsNone", "apps", "replicasets",
                  R"({"metadata":{"name":"rs"},"spec":{"replicas":0}})",
                  R"(["rs",0,0,0,"<unknown>","","","<none>"])"},
        CellsCase{"StatefulSet", "apps", "statefulsets", "{" META("db") R"(},"spec":{"replicas":3,
                     "template":{"spec":{"containers":[{"name":"pg","image":"postgres:16"}]}}},
                   "status":{"readyReplicas":1}})",
                  R"(["db","1/3","60m","pg","postgres:16"])"},
        CellsCase{
            "DaemonSet", "apps", "daemonsets",
            "{" META("agent") R"(},"spec":{"selector":{"matchLabels":{"app":"agent"}},
                     "template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"},
                       "containers":[{"name":"a","image":"agent:2"}]}}},
                   "status":{"desiredNumberScheduled":3,"currentNumberScheduled":3,"numberReady":2,
                             "updatedNumberScheduled":1,"numberAvailable":2}})",
            R"(["agent",3,3,2,1,2,"kubernetes.io/os=linux","60m","a","agent:2","app=agent"])"},
        CellsCase{"DaemonSetWithoutNodeSelector", "apps", "daemonsets",
                  R"({"metadata":{"name":"ds"}})",
                  R"(["ds",0,0,0,0,0,"<none>","<unknown>","","","<none>"])"},
        CellsCase{"ControllerRevision", "apps", "controllerrevisions",
                  "{" META("db-7f9") R"(,"ownerReferences":[
                     {"apiVersion":"v1","kind":"Pod","name":"x"},
                     {"apiVersion":"apps/v1","kind":"StatefulSet","name":"db","controller":true}]},
                   "revision":2})",
                  R"(["db-7f9","statefulset.apps/db",2,"60m"])"},
        CellsCase{"ControllerRevisionWithoutController", "apps", "controllerrevisions",
                  R"({"metadata":{"name":"r"},"revision":1})", R"(["r","<none>",1,"<unknown>"])"}),
    [](const ::testing::TestParamInfo<CellsCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Batch, Cells,
    ::testing::Values(
        CellsCase{"JobComplete", "batch", "jobs",
                  "{" META("pi") R"(},"spec":{"completions":1,"parallelism":1,
                     "selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u1"}},
                     "template":{"spec":{"containers":[{"name":"pi","image":"perl:5.34"}]}}},
                   "status":{"succeeded":1,"startTime":"2025-01-01T11:00:00Z",
                     "completionTime":"2025-01-01T11:00:42Z",
                     "conditions":[{"type":"SuccessCriteriaMet","status":"True"},
                                   {"type":"Complete","status":"True"}]}})",
                  R"(["pi","Complete","1/1","42s","60m","pi","perl:5.34",
                      "batch.kubernetes.io/controller-uid=u1"])"},
        CellsCase{"JobRunningCountsUpToNow", "batch", "jobs",
                  R"({"metadata":{"name":"j"},"spec":{"completions":3},
                      "status":{"active":1,"succeeded":1,"startTime":"2025-01-01T11:55:00Z"}})",
                  R"(["j","Running","1/3","5m","<unknown>","","","<none>"])"},
        CellsCase{"JobFailedWithParallelismAndNoCompletions", "batch", "jobs",
                  R"({"metadata":{"name":"j"},"spec":{"parallelism":3},
                      "status":{"failed":4,"startTime":"2025-01-01T10:00:00Z",
                        "completionTime":"2025-01-01T10:30:00Z",
                        "conditions":[{"type":"Complete","status":"False"},
                                      {"type":"Failed","status":"True","reason":"BackoffLimitExceeded"}]}})",
                  R"(["j","Failed","0/1 of 3","30m","<unknown>","","","<none>"])"},
        CellsCase{"JobWithoutStartTimeHasNoDuration", "batch", "jobs",
                  R"({"metadata":{"name":"j"},"spec":{"suspend":true},
                      "status":{"conditions":[{"type":"Suspended","status":"True"}]}})",
                  R"(["j","Suspended","0/1","","<unknown>","","","<none>"])"},
        CellsCase{"JobFailureTarget", "batch", "jobs",
                  R"({"metadata":{"name":"j"},
                      "status":{"conditions":[{"type":"FailureTarget","status":"True"}]}})",
                  R"(["j","FailureTarget","0/1","","<unknown>","","","<none>"])"},
        CellsCase{"JobBeingDeletedIsTerminating", "batch", "jobs",
                  R"({"metadata":{"name":"j","deletionTimestamp":"2025-01-01T11:59:00Z"},
                      "status":{"conditions":[{"type":"Suspended","status":"True"}]}})",
                  R"(["j","Terminating","0/1","","<unknown>","","","<none>"])"},
        CellsCase{
            "CronJob", "batch", "cronjobs",
            "{" META("nightly") R"(},"spec":{"schedule":"*/5 * * * *",
                     "jobTemplate":{"spec":{"template":{"spec":{"containers":[
                       {"name":"c","image":"busybox"}]}}}}},
                   "status":{"active":[{"name":"nightly-1"}],
                             "lastScheduleTime":"2025-01-01T11:55:00Z"}})",
            R"(["nightly","*/5 * * * *","<none>","False",1,"5m","60m","c","busybox","<none>"])"},
        CellsCase{"CronJobSuspendedNeverScheduled", "batch", "cronjobs",
                  R"({"metadata":{"name":"c"},"spec":{"schedule":"@daily","timeZone":"Etc/UTC",
                      "suspend":true}})",
                  R"(["c","@daily","Etc/UTC","True",0,"<none>","<unknown>","","","<none>"])"},
        CellsCase{
            "PodDisruptionBudgetInt", "policy", "poddisruptionbudgets",
            "{" META("pdb") R"(},"spec":{"minAvailable":2},"status":{"disruptionsAllowed":1}})",
            R"(["pdb","2","N/A",1,"60m"])"},
        CellsCase{"PodDisruptionBudgetPercent", "policy", "poddisruptionbudgets",
                  R"({"metadata":{"name":"pdb"},"spec":{"maxUnavailable":"50%"}})",
                  R"(["pdb","N/A","50%",0,"<unknown>"])"}),
    [](const ::testing::TestParamInfo<CellsCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Core, Cells,
    ::testing::Values(
        CellsCase{"NodeReadyWithRoles", "", "nodes",
                  "{" META("cp-1") R"(,"labels":{"node-role.kubernetes.io/control-plane":"",
                     "node-role.kubernetes.io/":"","kubernetes.io/role":"etcd",
                     "kubernetes.io/hostname":"cp-1"}},
                   "status":{"conditions":[{"type":"MemoryPressure","status":"False"},
                                           {"type":"Ready","status":"True"}],
                     "addresses":[{"type":"Hostname","address":"cp-1"},
                                  {"type":"InternalIP","address":"10.0.0.1"},
                                  {"type":"InternalIP","address":"10.0.0.2"}],
                     "nodeInfo":{"kubeletVersion":"v1.32.0","osImage":"Debian GNU/Linux 12",
                       "kernelVersion":"6.1.0","containerRuntimeVersion":"converge://0.1"}}})",
                  R"(["cp-1","Ready","control-plane,etcd","60m","v1.32.0","10.0.0.1","<none>",
                      "Debian GNU/Linux 12","6.1.0","converge://0.1"])"},
        CellsCase{"NodeNotReadySchedulingDisabled", "", "nodes",
                  R"({"metadata":{"name":"n"},"spec":{"unschedulable":true},
                      "status":{"conditions":[{"type":"Ready","status":"Unknown"}],
                        "addresses":[{"type":"ExternalIP","address":"203.0.113.5"}]}})",
                  R"(["n","NotReady,SchedulingDisabled","<none>","<unknown>","","<none>",
                      "203.0.113.5","<unknown>","<unknown>","<unknown>"])"},
        CellsCase{"NodeWithoutReadyConditionIsUnknown", "", "nodes",
                  R"({"metadata":{"name":"n"},"status":{"conditions":[
                      {"type":"DiskPressure","status":"False"}]}})",
                  R"(["n","Unknown","<none>","<unknown>","","<none>","<none>","<unknown>",
                      "<unknown>","<unknown>"])"},
        CellsCase{"NamespaceTerminating", "", "namespaces",
                  "{" META("team-a") R"(},"status":{"phase":"Terminating"}})",
                  R"(["team-a","Terminating","60m"])"},
        CellsCase{"NamespaceWithoutPhaseIsActive", "", "namespaces",
                  R"({"metadata":{"name":"default"}})", R"(["default","Active","<unknown>"])"},
        CellsCase{
            "EventRepeated", "", "events", "{" META("web-1.17f3a") R"(,"namespace":"default"},
                   "involvedObject":{"kind":"Pod","name":"web-1","namespace":"default",
                                     "fieldPath":"spec.containers{nginx}"},
                   "reason":"BackOff","message":"  Back-off restarting failed container\n",
                   "source":{"component":"kubelet","host":"node-1"},
                   "firstTimestamp":"2025-01-01T11:00:00Z","lastTimestamp":"2025-01-01T11:55:00Z",
                   "count":3,"type":"Warning","eventTime":null})",
            R"(["5m","Warning","BackOff","pod/web-1","spec.containers{nginx}","kubelet, node-1",
                      "Back-off restarting failed container","60m",3,"web-1.17f3a"])"},
        CellsCase{"EventSeriesFromNewApi", "", "events",
                  R"({"metadata":{"name":"e"},"involvedObject":{"kind":"Deployment","name":"web"},
                      "reason":"ScalingReplicaSet","message":"Scaled up","type":"Normal",
                      "eventTime":"2025-01-01T11:58:00.000000Z",
                      "series":{"count":4,"lastObservedTime":"2025-01-01T11:59:30.000000Z"},
                      "reportingComponent":"deployment-controller","reportingInstance":"cm-0"})",
                  R"(["30s","Normal","ScalingReplicaSet","deployment/web","",
                      "deployment-controller, cm-0","Scaled up","2m",4,"e"])"},
        CellsCase{"EventWithoutTimesOrCount", "", "events",
                  R"({"metadata":{"name":"e"},"involvedObject":{"kind":"Node"},
                      "source":{"component":"kubelet"}})",
                  R"(["<unknown>","","","node","","kubelet","","<unknown>",1,"e"])"},
        CellsCase{"EventsK8sIoShape", "events.k8s.io", "events",
                  R"({"metadata":{"name":"e"},"regarding":{"kind":"Pod","name":"p","fieldPath":"x"},
                      "note":"pulled","reason":"Pulled","type":"Normal",
                      "deprecatedSource":{"component":"kubelet","host":"n1"},
                      "deprecatedFirstTimestamp":"2025-01-01T11:00:00Z",
                      "deprecatedLastTimestamp":"2025-01-01T11:50:00Z","deprecatedCount":2,
                      "reportingController":"kubelet"})",
                  R"(["10m","Normal","Pulled","pod/p","x","kubelet, n1","pulled","60m",2,"e"])"},
        CellsCase{
            "ServiceClusterIP", "", "services",
            "{" META("web") R"(},"spec":{"type":"ClusterIP","clusterIP":"10.96.0.10",
                     "clusterIPs":["10.96.0.10"],"selector":{"app":"web","tier":"fe"},
                     "ports":[{"port":80,"protocol":"TCP","targetPort":8080},
                              {"name":"dns","port":53,"protocol":"UDP"}]}})",
            R"(["web","ClusterIP","10.96.0.10","<none>","80/TCP,53/UDP","60m","app=web,tier=fe"])"},
        CellsCase{"ServiceNodePort", "", "services",
                  R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","clusterIP":"10.96.1.1",
                      "externalIPs":["198.51.100.1","198.51.100.2"],
                      "ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},
                               {"port":443,"nodePort":30443,"protocol":"TCP"}]}})",
                  R"(["np","NodePort","10.96.1.1","198.51.100.1,198.51.100.2",
                      "80:30080/TCP,443:30443/TCP","<unknown>","<none>"])"},
        CellsCase{
            "ServiceLoadBalancerPending", "", "services",
            R"({"metadata":{"name":"lb"},"spec":{"type":"LoadBalancer","clusterIPs":["10.96.2.2"],
                      "ports":[{"port":443,"nodePort":31443,"protocol":"TCP"}]}})",
            R"(["lb","LoadBalancer","10.96.2.2","<pending>","443:31443/TCP","<unknown>","<none>"])"},
        CellsCase{"ServiceLoadBalancerWithIngress", "", "services",
                  R"({"metadata":{"name":"lb"},"spec":{"type":"LoadBalancer",
                      "externalIPs":["198.51.100.9"]},
                      "status":{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"},
                        {"ip":"203.0.113.7"},{"ip":"203.0.113.7"}]}}})",
                  R"(["lb","LoadBalancer","<none>","203.0.113.7,lb.example.com,198.51.100.9",
                      "<none>","<unknown>","<none>"])"},
        CellsCase{
            "ServiceExternalName", "", "services",
            R"({"metadata":{"name":"db"},"spec":{"type":"ExternalName",
                      "externalName":"db.example.com"}})",
            R"(["db","ExternalName","<none>","db.example.com","<none>","<unknown>","<none>"])"},
        CellsCase{
            "ServiceHeadlessWithDefaults", "", "services",
            R"({"metadata":{"name":"h"},"spec":{"clusterIP":"None","ports":[{"port":5432}]}})",
            R"(["h","ClusterIP","None","<none>","5432/TCP","<unknown>","<none>"])"},
        CellsCase{"EndpointsFew", "", "endpoints",
                  "{" META("web") R"(},"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"fd00::2"}],
                     "ports":[{"port":8080}]}]})",
                  R"(["web","10.0.0.1:8080,[fd00::2]:8080","60m"])"},
        CellsCase{"EndpointsManyAreTruncated", "", "endpoints",
                  R"({"metadata":{"name":"web"},"subsets":[
                      {"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}],
                       "ports":[{"port":80},{"port":443}]},
                      {"addresses":[{"ip":"10.0.0.3"}]}]})",
                  R"(["web","10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...","<unknown>"])"},
        CellsCase{"EndpointsHeadlessWithoutPorts", "", "endpoints",
                  R"({"metadata":{"name":"h"},"subsets":[{"addresses":[{"ip":"10.0.0.1"}]}]})",
                  R"(["h","10.0.0.1","<unknown>"])"},
        CellsCase{"EndpointsNone", "", "endpoints", R"({"metadata":{"name":"e"}})",
                  R"(["e","<none>","<unknown>"])"},
        CellsCase{"ConfigMapCountsDataAndBinaryData", "", "configmaps",
                  "{" META("cfg") R"(},"data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}})",
                  R"(["cfg",3,"60m"])"},
        CellsCase{"SecretTls", "", "secrets", "{" META("tls") R"(},"type":"kubernetes.io/tls",
                     "data":{"tls.crt":"AA==","tls.key":"AA=="}})",
                  R"(["tls","kubernetes.io/tls",2,"60m"])"},
        CellsCase{"SecretDefaultsToOpaque", "", "secrets",
                  R"({"metadata":{"name":"s"},"data":{"a":"AA=="},"stringData":{"a":"x","b":"y"}})",
                  R"(["s","Opaque",2,"<unknown>"])"},
        CellsCase{"ServiceAccount", "", "serviceaccounts",
                  "{" META("default") R"(},"secrets":[{"name":"default-token"}]})",
                  R"(["default",1,"60m"])"},
        CellsCase{
            "PersistentVolumeClaimBound", "", "persistentvolumeclaims",
            "{" META("data") R"(},"spec":{"volumeName":"pv-1","storageClassName":"standard",
                     "volumeMode":"Filesystem","resources":{"requests":{"storage":"1Gi"}}},
                   "status":{"phase":"Bound","capacity":{"storage":"2048Mi"},
                     "accessModes":["ReadWriteMany","ReadWriteOnce","ReadWriteOnce"]}})",
            R"(["data","Bound","pv-1","2Gi","RWO,RWX","standard","<unset>","60m","Filesystem"])"},
        CellsCase{"PersistentVolumeClaimBoundWithoutCapacity", "", "persistentvolumeclaims",
                  R"({"metadata":{"name":"c"},"spec":{"volumeName":"pv-2"},
                      "status":{"phase":"Bound"}})",
                  R"(["c","Bound","pv-2","0","","","<unset>","<unknown>","<unset>"])"},
        CellsCase{"PersistentVolumeClaimPendingBetaClass", "", "persistentvolumeclaims",
                  R"({"metadata":{"name":"c","deletionTimestamp":"2025-01-01T11:59:00Z",
                      "annotations":{"volume.beta.kubernetes.io/storage-class":"fast"}},
                      "spec":{"storageClassName":"standard","volumeAttributesClassName":"gold"},
                      "status":{"phase":"Pending"}})",
                  R"(["c","Terminating","","","","fast","gold","<unknown>","<unset>"])"}),
    [](const ::testing::TestParamInfo<CellsCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Cluster, Cells,
    ::testing::Values(
        CellsCase{"RoleBinding", "rbac.authorization.k8s.io", "rolebindings",
                  "{" META("rb") R"(},"roleRef":{"apiGroup":"rbac.authorization.k8s.io",
                     "kind":"ClusterRole","name":"view"},
                   "subjects":[{"kind":"User","name":"alice"},{"kind":"Group","name":"devs"},
                     {"kind":"ServiceAccount","name":"builder","namespace":"ci"},
                     {"kind":"User","name":"bob"}]})",
                  R"(["rb","ClusterRole/view","60m","alice, bob","devs","ci/builder"])"},
        CellsCase{"ClusterRoleBindingWithoutSubjects", "rbac.authorization.k8s.io",
                  "clusterrolebindings",
                  R"({"metadata":{"name":"crb"},"roleRef":{"kind":"ClusterRole","name":"admin"}})",
                  R"(["crb","ClusterRole/admin","<unknown>","","",""])"},
        CellsCase{"RoleUsesCreatedAt", "rbac.authorization.k8s.io", "roles",
                  "{" META("reader") R"(},"rules":[]})", R"(["reader","2025-01-01T11:00:00Z"])"},
        CellsCase{
            "ClusterRoleUsesCreatedAt", "rbac.authorization.k8s.io", "clusterroles",
            R"({"metadata":{"name":"view","creationTimestamp":"2025-01-01T11:00:00.5+02:00"}})",
            R"(["view","2025-01-01T09:00:00Z"])"},
        CellsCase{"CustomResourceDefinitionUsesCreatedAt", "apiextensions.k8s.io",
                  "customresourcedefinitions", R"({"metadata":{"name":"foos.example.com"}})",
                  R"(["foos.example.com","0001-01-01T00:00:00Z"])"},
        CellsCase{"Lease", "coordination.k8s.io", "leases",
                  "{" META("node-1") R"(},"spec":{"holderIdentity":"node-1",
                     "leaseDurationSeconds":40}})",
                  R"(["node-1","node-1","60m"])"},
        CellsCase{"LeaseWithoutHolder", "coordination.k8s.io", "leases",
                  R"({"metadata":{"name":"l"},"spec":{}})", R"(["l","","<unknown>"])"},
        CellsCase{
            "ValidatingWebhookConfiguration", "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            "{" META(
                "policy") R"(},"webhooks":[{"name":"a.example.com"},{"name":"b.example.com"}]})",
            R"(["policy",2,"60m"])"},
        CellsCase{"MutatingWebhookConfiguration", "admissionregistration.k8s.io",
                  "mutatingwebhookconfigurations", R"({"metadata":{"name":"m"}})",
                  R"(["m",0,"<unknown>"])"}),
    [](const ::testing::TestParamInfo<CellsCase>& info) { return info.param.name; });

#undef META

}  // namespace
}  // namespace converge::apiserver
