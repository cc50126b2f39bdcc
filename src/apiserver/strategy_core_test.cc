#include "apiserver/strategy_core.h"

#include <gtest/gtest.h>

#include <functional>

#include "apiserver/strategy_podspec.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using testing::Create;
using testing::Info;
using testing::Json;
using testing::Obj;
using testing::StatusUpdate;
using testing::Update;
using Lines = std::vector<std::string>;

constexpr std::string_view kDnsLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

std::shared_ptr<const Strategy> PodsStrategy() {
  return MakeStrategy(Info("", "v1", "pods", "Pod", true, {"status", "binding", "log"}));
}

api::Object BasePod() {
  return Obj(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
    "spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80}]}]}})");
}

// ---- Pods: defaults ----

TEST(PodStrategyTest, CreateAppliesUpstreamDefaults) {
  auto s = PodsStrategy();
  api::Object pod = Obj(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"d"},
    "spec":{"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80}],
      "resources":{"limits":{"cpu":"1","memory":"1Gi"}},
      "livenessProbe":{"httpGet":{"port":80}}}],
      "initContainers":[{"name":"init","image":"busybox:1.36"}],
      "volumes":[{"name":"cache"},{"name":"cfg","configMap":{"name":"c"}}]},
    "status":{"phase":"Running"}})");
  EXPECT_EQ(Create(*s, pod), Lines{});
  EXPECT_EQ(Json(pod, {"spec", "restartPolicy"}), R"("Always")");
  EXPECT_EQ(Json(pod, {"spec", "terminationGracePeriodSeconds"}), "30");
  EXPECT_EQ(Json(pod, {"spec", "dnsPolicy"}), R"("ClusterFirst")");
  EXPECT_EQ(Json(pod, {"spec", "schedulerName"}), R"("default-scheduler")");
  EXPECT_EQ(Json(pod, {"spec", "securityContext"}), "{}");
  EXPECT_EQ(Json(pod, {"spec", "enableServiceLinks"}), "true");
  const json::object& c = api::Find(pod.doc(), {"spec", "containers"})->get_array()[0].get_object();
  EXPECT_EQ(json::serialize(c.at("imagePullPolicy")), R"("Always")");
  EXPECT_EQ(json::serialize(c.at("terminationMessagePath")), R"("/dev/termination-log")");
  EXPECT_EQ(json::serialize(c.at("terminationMessagePolicy")), R"("File")");
  EXPECT_EQ(json::serialize(c.at("ports")), R"([{"containerPort":80,"protocol":"TCP"}])");
  EXPECT_EQ(json::serialize(c.at("resources").at("requests")), R"({"cpu":"1","memory":"1Gi"})");
  EXPECT_EQ(json::serialize(c.at("livenessProbe")),
            R"({"httpGet":{"port":80,"path":"/","scheme":"HTTP"},"timeoutSeconds":1,)"
            R"("periodSeconds":10,"successThreshold":1,"failureThreshold":3})");
  const json::object& init =
      api::Find(pod.doc(), {"spec", "initContainers"})->get_array()[0].get_object();
  EXPECT_EQ(json::serialize(init.at("imagePullPolicy")), R"("IfNotPresent")");
  EXPECT_EQ(
      Json(pod, {"spec", "volumes"}),
      R"([{"name":"cache","emptyDir":{}},{"name":"cfg","configMap":{"name":"c","defaultMode":420}}])");
  // Status is the server's: Pending with the computed QoS class.
  EXPECT_EQ(Json(pod, {"status"}), R"({"phase":"Pending","qosClass":"Burstable"})");
}

TEST(PodStrategyTest, PullPolicyFollowsTheTag) {
  struct Case {
    const char* image;
    const char* policy;
  };
  const Case cases[] = {
      {"nginx", "Always"},
      {"nginx:latest", "Always"},
      {"nginx:1.27", "IfNotPresent"},
      {"registry.local:5000/team/app", "Always"},
      {"registry.local:5000/team/app:v2", "IfNotPresent"},
      {"nginx@sha256:0123456789abcdef", "IfNotPresent"},
      {"nginx:latest@sha256:0123456789abcdef", "Always"},
      {"", "IfNotPresent"},
  };
  for (const Case& c : cases) EXPECT_EQ(DefaultPullPolicy(c.image), c.policy) << c.image;
}

TEST(PodStrategyTest, QosClass) {
  struct Case {
    const char* name;
    const char* resources;  // JSON of containers[0].resources
    const char* qos;
  };
  const Case cases[] = {
      {"no resources", "{}", "BestEffort"},
      {"limits only (requests defaulted)", R"({"limits":{"cpu":"1","memory":"1Gi"}})",
       "Guaranteed"},
      {"equal requests and limits",
       R"({"limits":{"cpu":"500m","memory":"1Gi"},"requests":{"cpu":"0.5","memory":"1024Mi"}})",
       "Guaranteed"},
      {"requests below limits",
       R"({"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m","memory":"1Gi"}})",
       "Burstable"},
      {"cpu only", R"({"requests":{"cpu":"100m"}})", "Burstable"},
  };
  for (const Case& c : cases) {
    api::Object pod = BasePod();
    pod.mutable_doc()["spec"].get_object()["containers"].get_array()[0].get_object()["resources"] =
        json::parse(c.resources);
    auto s = PodsStrategy();
    EXPECT_EQ(Create(*s, pod), Lines{}) << c.name;
    EXPECT_EQ(Json(pod, {"status", "qosClass"}), "\"" + std::string(c.qos) + "\"") << c.name;
  }
}

TEST(PodStrategyTest, SchedulingGatesAddTheGatedCondition) {
  auto s = PodsStrategy();
  api::Object pod = BasePod();
  pod.mutable_doc()["spec"].get_object()["schedulingGates"] = json::parse(R"([{"name":"wait"}])");
  EXPECT_EQ(Create(*s, pod), Lines{});
  EXPECT_EQ(Json(pod, {"status", "conditions"}),
            R"([{"type":"PodScheduled","status":"False","reason":"SchedulingGated",)"
            R"("message":"Scheduling is blocked due to non-empty scheduling gates"}])");
}

// ---- Pods: validation ----

struct PodCase {
  const char* name;
  std::function<void(json::object& spec)> mutate;
  Lines want;
};

json::object& Container(json::object& spec, size_t i) {
  return spec["containers"].get_array()[i].get_object();
}

TEST(PodStrategyTest, ValidationTable) {
  const PodCase cases[] = {
      {"valid", [](json::object&) {}, {}},
      {"duplicate container name",
       [](json::object& s) {
         s["containers"].get_array().push_back(json::parse(R"({"name":"web","image":"x:1"})"));
       },
       {R"(spec.containers[1].name: Duplicate value: "web")"}},
      {"init container reuses a container name",
       [](json::object& s) {
         s["initContainers"] = json::parse(R"([{"name":"web","image":"x:1"}])");
       },
       {R"(spec.initContainers[0].name: Duplicate value: "web")"}},
      {"image required",
       [](json::object& s) { Container(s, 0).erase("image"); },
       {"spec.containers[0].image: Required value"}},
      {"container name must be a DNS label",
       [](json::object& s) { Container(s, 0)["name"] = "Web"; },
       {"spec.containers[0].name: Invalid value: \"Web\": " + std::string(kDnsLabelMsg)}},
      {"no containers",
       [](json::object& s) { s["containers"] = json::array(); },
       {"spec.containers: Required value"}},
      {"container port out of range",
       [](json::object& s) {
         Container(s, 0)["ports"] = json::parse(R"([{"containerPort":70000}])");
       },
       {"spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and "
        "65535, inclusive"}},
      {"container port required",
       [](json::object& s) { Container(s, 0)["ports"] = json::parse(R"([{"name":"http"}])"); },
       {"spec.containers[0].ports[0].containerPort: Required value"}},
      {"protocol enum",
       [](json::object& s) {
         Container(s, 0)["ports"] = json::parse(R"([{"containerPort":1,"protocol":"ICMP"}])");
       },
       {R"(spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP")"}},
      {"duplicate port names",
       [](json::object& s) {
         Container(s, 0)["ports"] = json::parse(
             R"([{"name":"http","containerPort":80},{"name":"http","containerPort":81}])");
       },
       {R"(spec.containers[0].ports[1].name: Duplicate value: "http")"}},
      {"restartPolicy enum",
       [](json::object& s) { s["restartPolicy"] = "Sometimes"; },
       {R"(spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never")"}},
      {"dnsPolicy enum",
       [](json::object& s) { s["dnsPolicy"] = "Google"; },
       {R"(spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")"}},
      {"imagePullPolicy enum",
       [](json::object& s) { Container(s, 0)["imagePullPolicy"] = "Sometimes"; },
       {R"(spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never")"}},
      {"terminationMessagePolicy enum",
       [](json::object& s) { Container(s, 0)["terminationMessagePolicy"] = "Tail"; },
       {R"(spec.containers[0].terminationMessagePolicy: Unsupported value: "Tail": supported values: "File", "FallbackToLogsOnError")"}},
      {"requests above limits",
       [](json::object& s) {
         Container(s, 0)["resources"] =
             json::parse(R"({"limits":{"cpu":"1"},"requests":{"cpu":"2"}})");
       },
       {R"(spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1)"}},
      {"requests compare canonically",
       [](json::object& s) {
         Container(s, 0)["resources"] =
             json::parse(R"({"limits":{"memory":"1Gi"},"requests":{"memory":"1025Mi"}})");
       },
       {R"(spec.containers[0].resources.requests: Invalid value: "1025Mi": must be less than or equal to memory limit of 1Gi)"}},
      {"malformed quantity (requests default from limits)",
       [](json::object& s) {
         Container(s, 0)["resources"] = json::parse(R"({"limits":{"memory":"lots"}})");
       },
       {R"(spec.containers[0].resources.limits[memory]: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$')",
        R"(spec.containers[0].resources.requests[memory]: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$')"}},
      {"negative quantity",
       [](json::object& s) {
         Container(s, 0)["resources"] = json::parse(R"({"requests":{"cpu":"-1"}})");
       },
       {R"(spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0)"}},
      {"unknown unqualified resource",
       [](json::object& s) {
         Container(s, 0)["resources"] = json::parse(R"({"requests":{"gpu":"1"}})");
       },
       {R"(spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified)",
        R"(spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers)"}},
      {"extended resource requests need limits",
       [](json::object& s) {
         Container(s, 0)["resources"] = json::parse(R"({"requests":{"example.com/gpu":"1"}})");
       },
       {"spec.containers[0].resources.limits: Required value: Limit must be set for non "
        "overcommitable resources"}},
      {"extended resource requests must equal limits",
       [](json::object& s) {
         Container(s, 0)["resources"] = json::parse(
             R"({"limits":{"example.com/gpu":"2"},"requests":{"example.com/gpu":"1"}})");
       },
       {R"(spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2)"}},
      {"volume mount names a missing volume",
       [](json::object& s) {
         Container(s, 0)["volumeMounts"] = json::parse(R"([{"name":"data","mountPath":"/data"}])");
       },
       {R"(spec.containers[0].volumeMounts[0].name: Not found: "data")"}},
      {"duplicate volumes and a volume with two sources",
       [](json::object& s) {
         s["volumes"] = json::parse(
             R"([{"name":"a","emptyDir":{}},{"name":"a","emptyDir":{}},{"name":"b","emptyDir":{},"secret":{"secretName":"s"}}])");
       },
       {R"(spec.volumes[1].name: Duplicate value: "a")",
        "spec.volumes[2].secret: Forbidden: may not specify more than 1 volume type"}},
      {"env var name and sources",
       [](json::object& s) {
         Container(s, 0)["env"] = json::parse(
             R"([{"name":"A=B","value":"x"},{"name":"B","valueFrom":{}},{"name":"C","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"spec.secret"}}}])");
       },
       {R"(spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '=')",
        "spec.containers[0].env[1].valueFrom: Invalid value: \"\": must specify one of: "
        "`fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        R"(spec.containers[0].env[2].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.secret": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")"}},
      {"probe needs a handler and successThreshold 1",
       [](json::object& s) {
         Container(s, 0)["livenessProbe"] = json::parse(R"({"successThreshold":2})");
       },
       {"spec.containers[0].livenessProbe: Required value: must specify a handler type",
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"}},
      {"init container probes need restartPolicy Always",
       [](json::object& s) {
         s["initContainers"] = json::parse(
             R"([{"name":"init","image":"x:1","readinessProbe":{"exec":{"command":["true"]}}}])");
       },
       {"spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers "
        "without restartPolicy=Always"}},
      {"restartPolicy on a regular container",
       [](json::object& s) { Container(s, 0)["restartPolicy"] = "Always"; },
       {"spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"}},
      {"host port conflict",
       [](json::object& s) {
         Container(s, 0)["ports"] = json::parse(
             R"([{"containerPort":80,"hostPort":8080},{"containerPort":81,"hostPort":8080}])");
       },
       {R"(spec.containers[0].ports[1].hostPort: Duplicate value: "TCP//8080")"}},
      {"activeDeadlineSeconds range",
       [](json::object& s) { s["activeDeadlineSeconds"] = 0; },
       {"spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, "
        "inclusive"}},
      {"toleration without key must be Exists",
       [](json::object& s) {
         s["tolerations"] = json::parse(R"([{"operator":"Equal","value":"x"}])");
       },
       {"spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when "
        "`key` is empty, which means \"match all values and all keys\""}},
      {"image whitespace (pods only)",
       [](json::object& s) { Container(s, 0)["image"] = " nginx"; },
       {R"(spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace)"}},
      {"nodeName with scheduling gates",
       [](json::object& s) {
         s["nodeName"] = "n1";
         s["schedulingGates"] = json::parse(R"([{"name":"g"}])");
       },
       {"spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"}},
      {"dnsPolicy None needs dnsConfig",
       [](json::object& s) { s["dnsPolicy"] = "None"; },
       {"spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"}},
  };
  auto s = PodsStrategy();
  for (const PodCase& c : cases) {
    api::Object pod = BasePod();
    c.mutate(pod.mutable_doc()["spec"].get_object());
    EXPECT_EQ(Create(*s, pod), c.want) << c.name;
  }
}

TEST(PodStrategyTest, InvalidMessageMatchesKubectl) {
  auto s = PodsStrategy();
  api::Object pod = BasePod();
  Container(pod.mutable_doc()["spec"].get_object(), 0).erase("image");
  s->PrepareForCreate(pod);
  s->Default(pod);
  ApiError e = Invalid(pod.Gvk(), pod.name(), s->Validate(pod));
  EXPECT_EQ(e.code, 422);
  EXPECT_EQ(e.message, R"(Pod "p" is invalid: spec.containers[0].image: Required value)");
}

// ---- Pods: update ----

struct PodUpdateCase {
  const char* name;
  std::function<void(json::object& spec)> mutate;
  Lines want;
};

TEST(PodStrategyTest, UpdateTable) {
  const std::string kPrefix =
      "spec: Forbidden: pod updates may not change fields other than "
      "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
      "`spec.tolerations` (only additions to existing tolerations),"
      "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
      "negative)\n";
  auto s = PodsStrategy();
  api::Object old = BasePod();
  old.mutable_doc()["spec"].get_object()["activeDeadlineSeconds"] = 100;
  old.mutable_doc()["spec"].get_object()["tolerations"] = json::parse(
      R"([{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}])");
  ASSERT_EQ(Create(*s, old), Lines{});
  old.set_resource_version("5");

  const PodUpdateCase ok_cases[] = {
      {"image", [](json::object& sp) { Container(sp, 0)["image"] = "nginx:1.28"; }, {}},
      {"lower activeDeadlineSeconds",
       [](json::object& sp) { sp["activeDeadlineSeconds"] = 50; },
       {}},
      {"toleration seconds and a new toleration",
       [](json::object& sp) {
         sp["tolerations"] = json::parse(
             R"([{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":1},{"key":"x","operator":"Exists"}])");
       },
       {}},
      {"add or remove containers",
       [](json::object& sp) {
         sp["containers"].get_array().push_back(json::parse(R"({"name":"b","image":"b:1"})"));
       },
       {"spec.containers: Forbidden: pod updates may not add or remove containers"}},
      {"raise activeDeadlineSeconds",
       [](json::object& sp) { sp["activeDeadlineSeconds"] = 200; },
       {"spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous "
        "value"}},
      {"remove activeDeadlineSeconds",
       [](json::object& sp) { sp.erase("activeDeadlineSeconds"); },
       {"spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer "
        "to "
        "nil value"}},
      {"modify a toleration",
       [](json::object& sp) {
         sp["tolerations"] =
             json::parse(R"([{"key":"k","operator":"Exists","effect":"NoSchedule"}])");
       },
       {"spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds"}},
  };
  for (const PodUpdateCase& c : ok_cases) {
    api::Object pod = old;
    c.mutate(pod.mutable_doc()["spec"].get_object());
    EXPECT_EQ(Update(*s, pod, old), c.want) << c.name;
  }

  // Anything else is forbidden, with the list of updatable fields and a diff.
  api::Object pod = old;
  Container(pod.mutable_doc()["spec"].get_object(), 0)["command"] = json::parse(R"(["sh"])");
  Lines got = Update(*s, pod, old);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(0, kPrefix.size()), kPrefix);
  EXPECT_NE(got[0].find("containers"), std::string::npos);

  // Status sent through the main resource is ignored.
  api::Object with_status = old;
  with_status.mutable_doc()["status"] = json::parse(R"({"phase":"Failed"})");
  EXPECT_EQ(Update(*s, with_status, old), Lines{});
  EXPECT_EQ(Json(with_status, {"status", "phase"}), R"("Pending")");
}

TEST(PodStrategyTest, StatusUpdateKeepsSpecAndOwnersButTakesLabels) {
  auto s = PodsStrategy();
  api::Object old = Obj(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"d",
    "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u1","controller":true}]},
    "spec":{"containers":[{"name":"c","image":"x:1"}],"nodeName":"n1","restartPolicy":"Never"}})");
  ASSERT_EQ(Create(*s, old), Lines{});
  api::Object upd = old;
  upd.mutable_doc()["spec"].get_object()["nodeName"] = "n2";
  upd.mutable_metadata().erase("ownerReferences");
  upd.SetLabel("ready", "yes");
  upd.mutable_doc()["status"] = json::parse(
      R"({"phase":"Running","podIPs":[{"ip":"10.244.0.5"}],"conditions":[{"type":"Ready","status":"True"}]})");
  EXPECT_EQ(StatusUpdate(*s, upd, old), Lines{});
  EXPECT_EQ(Json(upd, {"spec", "nodeName"}), R"("n1")");
  EXPECT_NE(upd.owner_references(), nullptr);
  EXPECT_EQ(upd.label("ready").value_or(""), "yes");
  EXPECT_EQ(Json(upd, {"status", "phase"}), R"("Running")");
  // qosClass is backfilled from the stored pod when the client drops it.
  EXPECT_EQ(Json(upd, {"status", "qosClass"}), R"("BestEffort")");

  api::Object bad = old;
  bad.mutable_doc()["status"] = json::parse(
      R"({"qosClass":"Guaranteed","podIPs":[{"ip":"not-an-ip"}],"conditions":[{"type":"bad type","status":"True"}]})");
  EXPECT_EQ(
      StatusUpdate(*s, bad, old),
      (Lines{
          "metadata.conditions[0].Type: Invalid value: \"bad type\": name part must "
          "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
          "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
          "'123-abc', regex used for validation is "
          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
          R"(status.qosClass: Invalid value: "Guaranteed": field is immutable)",
          R"(status.podIPs[0]: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff))"}));
}

TEST(PodStrategyTest, TerminatedContainersStayTerminated) {
  auto s = PodsStrategy();
  api::Object old = Obj(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"d"},
    "spec":{"containers":[{"name":"c","image":"x:1"}],"restartPolicy":"Never"}})");
  ASSERT_EQ(Create(*s, old), Lines{});
  old.mutable_doc()["status"].get_object()["containerStatuses"] =
      json::parse(R"([{"name":"c","state":{"terminated":{"exitCode":0}}}])");
  api::Object upd = old;
  upd.mutable_doc()["status"].get_object()["containerStatuses"] =
      json::parse(R"([{"name":"c","state":{"running":{}}}])");
  EXPECT_EQ(StatusUpdate(*s, upd, old),
            Lines{"status.containerStatuses[0].state: Forbidden: may not be transitioned to "
                  "non-terminated state"});
}

TEST(PodStrategyTest, GracePeriod) {
  struct Case {
    const char* name;
    const char* pod;
    std::optional<int64_t> requested;
    int64_t want;
  };
  const Case cases[] = {
      {"scheduled, spec value", R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}})",
       std::nullopt, 30},
      {"scheduled, requested wins",
       R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}})", 5, 5},
      {"requested zero", R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}})", 0, 0},
      {"unscheduled deletes now", R"({"spec":{"terminationGracePeriodSeconds":30}})", 10, 0},
      {"succeeded deletes now",
       R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":30},"status":{"phase":"Succeeded"}})",
       std::nullopt, 0},
      {"failed deletes now", R"({"spec":{"nodeName":"n"},"status":{"phase":"Failed"}})", 7, 0},
      {"negative becomes one", R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":30}})",
       -5, 1},
      {"no spec value", R"({"spec":{"nodeName":"n"}})", std::nullopt, 0},
  };
  auto s = PodsStrategy();
  for (const Case& c : cases) EXPECT_EQ(s->GracePeriod(Obj(c.pod), c.requested), c.want) << c.name;
  auto cm = MakeStrategy(Info("", "v1", "configmaps", "ConfigMap"));
  EXPECT_EQ(cm->GracePeriod(Obj(R"({"spec":{"nodeName":"n"}})"), 30), 0);
}

// ---- Namespaces ----

std::shared_ptr<const Strategy> NamespacesStrategy() {
  return MakeStrategy(Info("", "v1", "namespaces", "Namespace", false, {"status", "finalize"}));
}

TEST(NamespaceStrategyTest, CreateAddsFinalizerPhaseAndNameLabel) {
  auto s = NamespacesStrategy();
  EXPECT_EQ(s->name_rule(), Strategy::NameRule::kDnsLabel);
  api::Object ns = Obj(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"},
    "spec":{"finalizers":["example.com/cleanup"]},"status":{"phase":"Terminating"}})");
  EXPECT_EQ(Create(*s, ns), Lines{});
  EXPECT_EQ(Json(ns, {"spec", "finalizers"}), R"(["example.com/cleanup","kubernetes"])");
  EXPECT_EQ(Json(ns, {"status"}), R"({"phase":"Active"})");
  EXPECT_EQ(ns.label("kubernetes.io/metadata.name").value_or(""), "team-a");
}

TEST(NamespaceStrategyTest, Validation) {
  struct Case {
    const char* name;
    const char* obj;
    Lines want;
  };
  const Case cases[] = {
      {"name must be a DNS label",
       R"({"metadata":{"name":"team.a"}})",
       {"metadata.name: Invalid value: \"team.a\": " + std::string(kDnsLabelMsg)}},
      {"namespace field is forbidden",
       R"({"metadata":{"name":"a","namespace":"b"}})",
       {"metadata.namespace: Forbidden: not allowed on this type"}},
      {"non-standard finalizer",
       R"({"metadata":{"name":"a"},"spec":{"finalizers":["cleanup"]}})",
       {"spec.finalizers: Invalid value: \"cleanup\": name is neither a standard finalizer name "
        "nor is it fully qualified"}},
  };
  auto s = NamespacesStrategy();
  for (const Case& c : cases) {
    api::Object ns = Obj(c.obj);
    EXPECT_EQ(Create(*s, ns), c.want) << c.name;
  }
}

TEST(NamespaceStrategyTest, UpdateStatusAndFinalize) {
  auto s = NamespacesStrategy();
  api::Object old = Obj(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}})");
  ASSERT_EQ(Create(*s, old), Lines{});

  // The main resource cannot change finalizers or status.
  api::Object upd = old;
  upd.mutable_doc()["spec"].get_object()["finalizers"] = json::array();
  upd.mutable_doc()["status"].get_object()["phase"] = "Terminating";
  upd.SetLabel("team", "x");
  EXPECT_EQ(Update(*s, upd, old), Lines{});
  EXPECT_EQ(Json(upd, {"spec", "finalizers"}), R"(["kubernetes"])");
  EXPECT_EQ(Json(upd, {"status", "phase"}), R"("Active")");
  EXPECT_EQ(upd.label("team").value_or(""), "x");

  // /status: the phase must agree with deletionTimestamp.
  api::Object st = old;
  st.mutable_doc()["status"].get_object()["phase"] = "Terminating";
  EXPECT_EQ(
      StatusUpdate(*s, st, old),
      Lines{
          R"(status.Phase: Invalid value: "Terminating": may only be 'Active' if `deletionTimestamp` is empty)"});
  api::Object deleting = old;
  deleting.mutable_metadata()["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  api::Object st2 = deleting;
  st2.mutable_doc()["status"].get_object()["phase"] = "Terminating";
  EXPECT_EQ(StatusUpdate(*s, st2, deleting), Lines{});

  // /finalize: finalizers move, status does not.
  api::Object fin = deleting;
  fin.mutable_doc()["spec"].get_object()["finalizers"] = json::parse(R"(["bad"])");
  fin.mutable_doc()["status"].get_object()["phase"] = "Gone";
  PrepareNamespaceFinalize(fin, deleting);
  EXPECT_EQ(Json(fin, {"status", "phase"}), R"("Active")");
  EXPECT_EQ(testing::Lines(ValidateNamespaceFinalize(fin, deleting)),
            Lines{"spec.finalizers[0]: Invalid value: \"bad\": name is neither a standard "
                  "finalizer name nor is it fully qualified"});
  fin.mutable_doc()["spec"].get_object()["finalizers"] = json::array();
  EXPECT_TRUE(ValidateNamespaceFinalize(fin, deleting).empty());
}

// ---- Services ----

std::shared_ptr<const Strategy> Services() {
  return MakeStrategy(Info("", "v1", "services", "Service", true, {"status"}));
}

TEST(ServiceStrategyTest, CreateDefaults) {
  auto s = Services();
  api::Object svc =
      Obj(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"d"},
    "spec":{"selector":{"app":"web"},"ports":[{"port":80},{"name":"https","port":443,"targetPort":"https"}]}})");
  svc.mutable_doc()["spec"].get_object()["ports"].get_array()[0].get_object()["name"] = "http";
  ASSERT_TRUE(ServiceNeedsClusterIp(svc));
  AssignClusterIp(svc, *AllocateClusterIp({}));
  EXPECT_EQ(Create(*s, svc), Lines{});
  EXPECT_EQ(
      Json(svc, {"spec"}),
      R"({"selector":{"app":"web"},"ports":[{"port":80,"name":"http","protocol":"TCP","targetPort":80},)"
      R"({"name":"https","port":443,"targetPort":"https","protocol":"TCP"}],"clusterIP":"10.96.0.1",)"
      R"("clusterIPs":["10.96.0.1"],"ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"],)"
      R"("sessionAffinity":"None","type":"ClusterIP","internalTrafficPolicy":"Cluster"})");
}

TEST(ServiceStrategyTest, AllocateClusterIp) {
  EXPECT_EQ(AllocateClusterIp({}), "10.96.0.1");
  EXPECT_EQ(AllocateClusterIp({"10.96.0.1", "10.96.0.2", "10.96.0.4"}), "10.96.0.3");
  EXPECT_EQ(AllocateClusterIp({}, "192.168.7.0/30"), "192.168.7.1");
  EXPECT_EQ(AllocateClusterIp({"192.168.7.1", "192.168.7.2"}, "192.168.7.0/30"), std::nullopt);
  EXPECT_EQ(AllocateClusterIp({}, "garbage"), std::nullopt);
  EXPECT_FALSE(ServiceNeedsClusterIp(Obj(R"({"spec":{"clusterIP":"None"}})")));
  EXPECT_FALSE(ServiceNeedsClusterIp(Obj(R"({"spec":{"type":"ExternalName"}})")));
}

TEST(ServiceStrategyTest, Validation) {
  struct Case {
    const char* name;
    const char* spec;
    Lines want;
  };
  const Case cases[] = {
      {"valid headless", R"({"clusterIP":"None","selector":{"app":"x"}})", {}},
      {"ports required", R"({"selector":{"app":"x"}})", {"spec.ports: Required value"}},
      {"type enum",
       R"({"type":"Weird","ports":[{"port":80}]})",
       {R"(spec.type: Unsupported value: "Weird": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort")"}},
      {"port range",
       R"({"ports":[{"port":0,"targetPort":80}]})",
       {"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"}},
      {"multiple ports need names",
       R"({"ports":[{"port":80},{"port":81}]})",
       {"spec.ports[0].name: Required value", "spec.ports[1].name: Required value"}},
      {"nodePort on ClusterIP",
       R"({"ports":[{"port":80,"nodePort":30080}]})",
       {"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"}},
      {"selector labels",
       R"({"ports":[{"port":80}],"selector":{"app":"-x"}})",
       {"spec.selector: Invalid value: \"-x\": a valid label must be an empty string or consist "
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"}},
      {"bad cluster IP",
       R"({"ports":[{"port":80}],"clusterIP":"10.96.0.300"})",
       {R"(spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff))"}},
      {"external name needs a name",
       R"({"type":"ExternalName"})",
       {"spec.externalName: Required value"}},
      {"session affinity enum",
       R"({"ports":[{"port":80}],"sessionAffinity":"Sticky"})",
       {R"(spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None")"}},
  };
  auto s = Services();
  for (const Case& c : cases) {
    api::Object svc =
        Obj(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"d"}})");
    svc.mutable_doc()["spec"] = json::parse(c.spec);
    EXPECT_EQ(Create(*s, svc), c.want) << c.name;
  }
  api::Object bad_name =
      Obj(R"({"metadata":{"name":"1web","namespace":"d"},"spec":{"clusterIP":"None"}})");
  Lines got = Create(*s, bad_name);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].substr(0, 60), "metadata.name: Invalid value: \"1web\": a DNS-1035 label must ");
}

TEST(ServiceStrategyTest, UpdateKeepsAllocatedValuesAndClusterIpIsImmutable) {
  auto s = Services();
  api::Object old =
      Obj(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"d"},
    "spec":{"type":"NodePort","ports":[{"name":"http","port":80,"nodePort":30080}]}})");
  AssignClusterIp(old, "10.96.0.7");
  ASSERT_EQ(Create(*s, old), Lines{});

  // A client that sends the spec without allocated values keeps them.
  api::Object upd =
      Obj(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"d"},
    "spec":{"type":"NodePort","ports":[{"name":"http","port":80}],"selector":{"app":"v2"}}})");
  EXPECT_EQ(Update(*s, upd, old), Lines{});
  EXPECT_EQ(Json(upd, {"spec", "clusterIP"}), R"("10.96.0.7")");
  EXPECT_EQ(Json(upd, {"spec", "clusterIPs"}), R"(["10.96.0.7"])");
  EXPECT_EQ(Json(upd, {"spec", "ports"}),
            R"([{"name":"http","port":80,"nodePort":30080,"protocol":"TCP","targetPort":80}])");

  api::Object moved = old;
  moved.mutable_doc()["spec"].get_object()["clusterIP"] = "10.96.0.9";
  EXPECT_EQ(
      Update(*s, moved, old),
      Lines{
          R"(spec.clusterIPs[0]: Invalid value: []string{"10.96.0.9"}: may not change once set)"});
}

// ---- ConfigMaps and Secrets ----

TEST(ConfigMapStrategyTest, KeysSizeAndImmutability) {
  auto s = MakeStrategy(Info("", "v1", "configmaps", "ConfigMap"));
  struct Case {
    const char* name;
    std::string obj;
    Lines want;
  };
  const std::string big(1024 * 1024 + 1, 'x');
  const Case cases[] = {
      {"valid", R"({"metadata":{"name":"c","namespace":"d"},"data":{"a.txt":"1","B_2":"2"}})", {}},
      {"bad key",
       R"({"metadata":{"name":"c","namespace":"d"},"data":{"a b":"1"}})",
       {"data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric "
        "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
        "used for validation is '[-._a-zA-Z0-9]+')"}},
      {"key in both bags",
       R"({"metadata":{"name":"c","namespace":"d"},"data":{"k":"1"},"binaryData":{"k":"AA=="}})",
       {R"(data[k]: Invalid value: "k": duplicate of key present in binaryData)"}},
      {"too big",
       R"({"metadata":{"name":"c","namespace":"d"},"data":{"k":")" + big + R"("}})",
       {"Too long: may not be more than 1048576 bytes"}},
  };
  for (const Case& c : cases) {
    api::Object cm = Obj(c.obj);
    EXPECT_EQ(Create(*s, cm), c.want) << c.name;
  }
  api::Object old =
      Obj(R"({"metadata":{"name":"c","namespace":"d"},"data":{"k":"1"},"immutable":true})");
  api::Object upd = Obj(R"({"metadata":{"name":"c","namespace":"d"},"data":{"k":"2"}})");
  EXPECT_EQ(Update(*s, upd, old),
            (Lines{"immutable: Forbidden: field is immutable when `immutable` is set",
                   "data: Forbidden: field is immutable when `immutable` is set"}));
  api::Object same = old;
  same.SetLabel("a", "b");
  EXPECT_EQ(Update(*s, same, old), Lines{});
}

TEST(SecretStrategyTest, DefaultsAndValidation) {
  auto s = MakeStrategy(Info("", "v1", "secrets", "Secret"));
  api::Object sec = Obj(
      R"({"metadata":{"name":"s","namespace":"d"},"data":{"a":"eA=="},"stringData":{"b":"hello","a":"yy"}})");
  EXPECT_EQ(Create(*s, sec), Lines{});
  EXPECT_EQ(Json(sec, {"type"}), R"("Opaque")");
  EXPECT_EQ(Json(sec, {"data"}), R"({"a":"eXk=","b":"aGVsbG8="})");
  EXPECT_EQ(Json(sec, {"stringData"}), "<absent>");

  api::Object tls = Obj(
      R"({"metadata":{"name":"s","namespace":"d"},"type":"kubernetes.io/tls","data":{"tls.crt":"eA=="}})");
  EXPECT_EQ(Create(*s, tls), Lines{"data[tls.key]: Required value"});
  api::Object bad = Obj(R"({"metadata":{"name":"s","namespace":"d"},"data":{"k":"not base64!"}})");
  EXPECT_EQ(Create(*s, bad),
            Lines{R"(data[k]: Invalid value: "<secret contents redacted>": illegal base64 data)"});

  api::Object old = sec;
  api::Object retyped = sec;
  retyped.mutable_doc()["type"] = "kubernetes.io/basic-auth";
  // The new object is validated as a whole too (basic-auth needs a username or a password).
  EXPECT_EQ(Update(*s, retyped, old),
            (Lines{R"(type: Invalid value: "kubernetes.io/basic-auth": field is immutable)",
                   "data[username]: Required value", "data[password]: Required value"}));
}

// ---- Nodes ----

TEST(NodeStrategyTest, CreateKeepsStatusAndUpdateRules) {
  auto s = MakeStrategy(Info("", "v1", "nodes", "Node", false, {"status"}));
  api::Object node = Obj(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},
    "spec":{"podCIDRs":["10.244.1.0/24"],"taints":[{"key":"k","effect":"Sometimes"}]},
    "status":{"capacity":{"cpu":"4","pods":"110"}}})");
  EXPECT_EQ(
      Create(*s, node),
      Lines{
          R"(metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"});
  EXPECT_EQ(Json(node, {"status", "allocatable"}), R"({"cpu":"4","pods":"110"})");
  node.mutable_doc()["spec"].get_object().erase("taints");
  api::Object upd = node;
  upd.mutable_doc()["spec"].get_object()["podCIDRs"] = json::parse(R"(["10.244.2.0/24"])");
  EXPECT_EQ(
      Update(*s, upd, node),
      Lines{
          R"(spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid)"});
}

// ---- Events ----

TEST(CoreEventStrategyTest, LegacyValidation) {
  auto s = MakeStrategy(Info("", "v1", "events", "Event"));
  EXPECT_EQ(s->name_rule(), Strategy::NameRule::kNone);
  api::Object ok = Obj(
      R"({"metadata":{"name":"web.1","namespace":"d"},"involvedObject":{"kind":"Pod","namespace":"d"},"reason":"Pulled"})");
  EXPECT_EQ(Create(*s, ok), Lines{});
  api::Object bad = Obj(
      R"({"metadata":{"name":"web.1","namespace":"d"},"involvedObject":{"kind":"Pod","namespace":"e"}})");
  EXPECT_EQ(
      Create(*s, bad),
      Lines{R"(involvedObject.namespace: Invalid value: "e": does not match event.namespace)"});
  api::Object series = Obj(
      R"({"metadata":{"name":"web.1","namespace":"d"},"eventTime":"2026-01-01T00:00:00.000000Z","involvedObject":{"namespace":"d"}})");
  EXPECT_EQ(Create(*s, series),
            (Lines{"reportingComponent: Required value",
                   R"(reportingComponent: Invalid value: "": name part must be non-empty)",
                   "reportingInstance: Required value", "action: Required value",
                   "reason: Required value"}));
}

// ---- Dispatch ----

TEST(MakeStrategyTest, GenericForUnknownAndCustom) {
  auto cm = MakeStrategy(Info("", "v1", "configmaps", "ConfigMap"));
  auto sa = MakeStrategy(Info("", "v1", "serviceaccounts", "ServiceAccount"));
  api::Object obj = Obj(R"({"metadata":{"name":"x","namespace":"d"}})");
  EXPECT_EQ(Create(*sa, obj), Lines{});
  auto info =
      std::const_pointer_cast<api::ResourceInfo>(Info("example.com", "v1", "widgets", "Widget"));
  info->custom = true;
  auto custom = MakeStrategy(info);
  EXPECT_TRUE(custom->TracksGeneration());
}

}  // namespace
}  // namespace converge::apiserver

namespace converge::apiserver {
namespace {

TEST(NamespaceStrategyTest, DeletionWaitsForBothFinalizerLists) {
  auto s = MakeStrategy(
      testing::Info("", "v1", "namespaces", "Namespace", false, {"status", "finalize"}));
  api::Object ns = testing::Obj(R"({"metadata":{"name":"a"}})");
  ASSERT_EQ(testing::Create(*s, ns), Lines{});
  s->PrepareForDelete(ns);
  EXPECT_EQ(testing::Json(ns, {"status", "phase"}), R"("Terminating")");
  EXPECT_FALSE(s->ReadyToDelete(ns));  // spec.finalizers: ["kubernetes"]
  ns.mutable_doc()["spec"].get_object()["finalizers"] = boost::json::array();
  EXPECT_TRUE(s->ReadyToDelete(ns));
  ns.AddFinalizer("example.com/keep");
  EXPECT_FALSE(s->ReadyToDelete(ns));
}

TEST(PodBindingTest, BindPod) {
  auto s = PodsStrategy();
  api::Object pod = BasePod();
  ASSERT_EQ(testing::Create(*s, pod), Lines{});
  pod.set_uid("u1");
  pod.set_resource_version("7");
  const std::string kNow = "2026-01-01T00:00:00Z";

  struct Case {
    const char* name;
    const char* binding;
    std::function<void(api::Object&)> prepare;
    int code;  // 0: success
    std::string message;
  };
  const Case cases[] = {
      {"target name required", R"({"metadata":{"name":"web"},"target":{"kind":"Node"}})", nullptr,
       422, R"(Binding "web" is invalid: target.name: Required value)"},
      {"target kind", R"({"metadata":{"name":"web"},"target":{"kind":"Pod","name":"n1"}})", nullptr,
       422,
       R"(Binding "web" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>")"},
      {"uid precondition", R"({"metadata":{"name":"p","uid":"other"},"target":{"name":"n1"}})",
       nullptr, 409,
       R"(Operation cannot be fulfilled on pods/binding "p": UID in precondition: other, UID in object meta: u1)"},
      {"already assigned", R"({"metadata":{"name":"p"},"target":{"name":"n2"}})",
       [](api::Object& p) { p.mutable_doc()["spec"].get_object()["nodeName"] = "n1"; }, 409,
       R"(Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1")"},
      {"being deleted", R"({"metadata":{"name":"p"},"target":{"name":"n2"}})",
       [](api::Object& p) { p.mutable_metadata()["deletionTimestamp"] = "2026-01-01T00:00:00Z"; },
       409,
       R"(Operation cannot be fulfilled on pods/binding "p": pod p is being deleted, cannot be assigned to a host)"},
      {"gated", R"({"metadata":{"name":"p"},"target":{"name":"n2"}})",
       [](api::Object& p) {
         p.mutable_doc()["spec"].get_object()["schedulingGates"] =
             boost::json::parse(R"([{"name":"g"}])");
       },
       409,
       R"(Operation cannot be fulfilled on pods/binding "p": pod p has non-empty .spec.schedulingGates)"},
  };
  for (const Case& c : cases) {
    api::Object target = pod;
    if (c.prepare) c.prepare(target);
    api::Object before = target;
    std::optional<ApiError> err = BindPod(target, testing::Obj(c.binding), kNow);
    ASSERT_TRUE(err.has_value()) << c.name;
    EXPECT_EQ(err->code, c.code) << c.name;
    EXPECT_EQ(err->message, c.message) << c.name;
    EXPECT_EQ(target.doc(), before.doc()) << c.name;
  }

  api::Object ok = pod;
  auto err = BindPod(
      ok,
      testing::Obj(
          R"({"metadata":{"name":"p","uid":"u1","annotations":{"a":"b"}},"target":{"kind":"Node","name":"n1"}})"),
      kNow);
  ASSERT_FALSE(err.has_value());
  EXPECT_EQ(testing::Json(ok, {"spec", "nodeName"}), R"("n1")");
  EXPECT_EQ(ok.annotation("a").value_or(""), "b");
  EXPECT_EQ(
      testing::Json(ok, {"status", "conditions"}),
      R"([{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-01-01T00:00:00Z"}])");
}

}  // namespace
}  // namespace converge::apiserver

namespace converge::apiserver {
namespace {

TEST(PodStrategyTest, StatusUpdateCannotDropServerManagedMetadata) {
  auto s = PodsStrategy();
  api::Object old = BasePod();
  ASSERT_EQ(testing::Create(*s, old), Lines{});
  old.set_uid("u1");
  old.mutable_metadata()["creationTimestamp"] = "2026-01-01T00:00:00Z";
  old.mutable_metadata()["deletionTimestamp"] = "2026-01-02T00:00:00Z";
  api::Object upd =
      testing::Obj(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
    "status":{"phase":"Running"}})");
  EXPECT_EQ(testing::StatusUpdate(*s, upd, old), Lines{});
  EXPECT_EQ(upd.uid(), "u1");
  EXPECT_EQ(upd.creation_timestamp(), "2026-01-01T00:00:00Z");
  EXPECT_EQ(upd.deletion_timestamp(), "2026-01-02T00:00:00Z");
  EXPECT_EQ(testing::Json(upd, {"status", "phase"}), R"("Running")");
}

}  // namespace
}  // namespace converge::apiserver
