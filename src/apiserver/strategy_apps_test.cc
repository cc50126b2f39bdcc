#include <gtest/gtest.h>

#include <functional>

#include "apiserver/strategy.h"
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

std::shared_ptr<const Strategy> Deployments() {
  return MakeStrategy(Info("apps", "v1", "deployments", "Deployment", true, {"status", "scale"}));
}

api::Object BaseDeployment() {
  return Obj(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}})");
}

TEST(DeploymentStrategyTest, CreateDefaults) {
  auto s = Deployments();
  api::Object d = BaseDeployment();
  d.mutable_doc()["status"] = json::parse(R"({"replicas":3})");
  EXPECT_EQ(Create(*s, d), Lines{});
  EXPECT_EQ(Json(d, {"spec", "replicas"}), "1");
  EXPECT_EQ(
      Json(d, {"spec", "strategy"}),
      R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}})");
  EXPECT_EQ(Json(d, {"spec", "revisionHistoryLimit"}), "10");
  EXPECT_EQ(Json(d, {"spec", "progressDeadlineSeconds"}), "600");
  EXPECT_EQ(Json(d, {"spec", "template", "spec", "restartPolicy"}), R"("Always")");
  EXPECT_EQ(Json(d, {"spec", "template", "spec", "terminationGracePeriodSeconds"}), "30");
  // Pod-only defaults do not apply to templates.
  EXPECT_EQ(Json(d, {"spec", "template", "spec", "enableServiceLinks"}), "<absent>");
  EXPECT_EQ(Json(d, {"metadata", "generation"}), "1");
  EXPECT_EQ(Json(d, {"status"}), "<absent>");
}

struct SpecCase {
  const char* name;
  std::function<void(json::object& spec)> mutate;
  Lines want;
};

json::object& Ru(json::object& spec) {
  json::object& st = spec["strategy"].emplace_object();
  st["type"] = "RollingUpdate";
  return st["rollingUpdate"].emplace_object();
}

const std::string kMismatch =
    R"(spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: )"
    "`selector` does not match template `labels`";

TEST(DeploymentStrategyTest, ValidationTable) {
  const SpecCase cases[] = {
      {"valid", [](json::object&) {}, {}},
      {"negative replicas",
       [](json::object& s) { s["replicas"] = -1; },
       {"spec.replicas: Invalid value: -1: must be greater than or equal to 0"}},
      {"selector required",
       [](json::object& s) { s.erase("selector"); },
       {"spec.selector: Required value", kMismatch}},
      {"selector must match the template",
       [](json::object& s) { s["selector"] = json::parse(R"({"matchLabels":{"app":"other"}})"); },
       {kMismatch}},
      {"set-based selector must match too",
       [](json::object& s) {
         s["selector"] = json::parse(
             R"({"matchExpressions":[{"key":"app","operator":"NotIn","values":["web"]}]})");
       },
       {kMismatch}},
      {"empty selector",
       [](json::object& s) { s["selector"] = json::object(); },
       {"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
        "deployment"}},
      {"invalid selector operator",
       [](json::object& s) {
         s["selector"] = json::parse(
             R"({"matchExpressions":[{"key":"app","operator":"Near","values":["x"]}]})");
       },
       {R"(spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator)",
        "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
        "MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", "
        "Operator:\"Near\", Values:[]string{\"x\"}}}}: invalid label selector"}},
      {"strategy type enum",
       [](json::object& s) { s["strategy"] = json::parse(R"({"type":"Blue"})"); },
       {"spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"Blue\", "
        "RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", "
        "\"RollingUpdate\""}},
      {"Recreate with rollingUpdate",
       [](json::object& s) {
         s["strategy"] = json::parse(R"({"type":"Recreate","rollingUpdate":{"maxSurge":1}})");
       },
       {"spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
        "'Recreate'"}},
      {"maxUnavailable and maxSurge both zero",
       [](json::object& s) {
         json::object& ru = Ru(s);
         ru["maxUnavailable"] = 0;
         ru["maxSurge"] = "0%";
       },
       {"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, "
        "IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"}},
      {"maxUnavailable over 100%",
       [](json::object& s) { Ru(s)["maxUnavailable"] = "150%"; },
       {"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, "
        "IntVal:0, StrVal:\"150%\"}: must not be greater than 100%"}},
      {"maxSurge not a percent",
       [](json::object& s) { Ru(s)["maxSurge"] = "lots"; },
       {"spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, "
        "IntVal:0, StrVal:\"lots\"}: a valid percent string must be a numeric string followed by "
        "an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"}},
      {"negative maxSurge",
       [](json::object& s) { Ru(s)["maxSurge"] = -1; },
       {"spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal "
        "to 0"}},
      {"negative minReadySeconds",
       [](json::object& s) { s["minReadySeconds"] = -1; },
       {"spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"}},
      {"negative revisionHistoryLimit",
       [](json::object& s) { s["revisionHistoryLimit"] = -1; },
       {"spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"}},
      {"progressDeadlineSeconds not above minReadySeconds",
       [](json::object& s) {
         s["minReadySeconds"] = 10;
         s["progressDeadlineSeconds"] = 10;
       },
       {"spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds"}},
      {"template restartPolicy must be Always",
       [](json::object& s) {
         s["template"].get_object()["spec"].get_object()["restartPolicy"] = "Never";
       },
       {R"(spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always")"}},
      {"template activeDeadlineSeconds",
       [](json::object& s) {
         s["template"].get_object()["spec"].get_object()["activeDeadlineSeconds"] = 5;
       },
       {"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet "
        "is not Supported"}},
      {"template pod spec is validated",
       [](json::object& s) {
         s["template"]
             .get_object()["spec"]
             .get_object()["containers"]
             .get_array()[0]
             .get_object()
             .erase("image");
       },
       {"spec.template.spec.containers[0].image: Required value"}},
      {"template labels are validated",
       [](json::object& s) {
         s["template"].get_object()["metadata"].get_object()["labels"].get_object()["bad key!"] =
             "x";
       },
       {"spec.template.metadata.labels: Invalid value: \"bad key!\": name part must consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}},
  };
  auto s = Deployments();
  for (const SpecCase& c : cases) {
    api::Object d = BaseDeployment();
    c.mutate(d.mutable_doc()["spec"].get_object());
    EXPECT_EQ(Create(*s, d), c.want) << c.name;
  }
}

TEST(DeploymentStrategyTest, InvalidMessageMatchesKubectl) {
  auto s = Deployments();
  api::Object d = BaseDeployment();
  d.mutable_doc()["spec"].get_object()["replicas"] = -1;
  s->PrepareForCreate(d);
  s->Default(d);
  EXPECT_EQ(
      Invalid(d.Gvk(), d.name(), s->Validate(d)).message,
      R"(Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0)");
}

TEST(DeploymentStrategyTest, GenerationAndImmutableSelector) {
  auto s = Deployments();
  api::Object old = BaseDeployment();
  ASSERT_EQ(Create(*s, old), Lines{});

  struct Case {
    const char* name;
    std::function<void(api::Object&)> mutate;
    int64_t generation;
    Lines want;
  };
  const Case cases[] = {
      {"no change", [](api::Object&) {}, 1, {}},
      {"label only", [](api::Object& d) { d.SetLabel("team", "a"); }, 1, {}},
      {"annotation (copied to ReplicaSets)",
       [](api::Object& d) { d.SetAnnotation("note", "x"); },
       2,
       {}},
      {"spec change",
       [](api::Object& d) { d.mutable_doc()["spec"].get_object()["replicas"] = 3; },
       2,
       {}},
      {"defaulted fields omitted",
       [](api::Object& d) {
         json::object& spec = d.mutable_doc()["spec"].get_object();
         spec.erase("revisionHistoryLimit");
         spec.erase("strategy");
       },
       1,
       {}},
      {"status is ignored",
       [](api::Object& d) { d.mutable_doc()["status"] = json::parse(R"({"replicas":9})"); },
       1,
       {}},
      {"selector is immutable",
       [](api::Object& d) {
         json::object& spec = d.mutable_doc()["spec"].get_object();
         spec["selector"] = json::parse(R"({"matchLabels":{"app":"web2"}})");
         spec["template"].get_object()["metadata"] = json::parse(R"({"labels":{"app":"web2"}})");
       },
       2,
       {"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":"
        "\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"}},
  };
  for (const Case& c : cases) {
    api::Object d = old;
    c.mutate(d);
    EXPECT_EQ(Update(*s, d, old), c.want) << c.name;
    EXPECT_EQ(d.generation(), c.generation) << c.name;
    EXPECT_EQ(Json(d, {"status"}), "<absent>") << c.name;
  }
}

TEST(DeploymentStrategyTest, StatusUpdate) {
  auto s = Deployments();
  api::Object old = BaseDeployment();
  ASSERT_EQ(Create(*s, old), Lines{});
  old.mutable_doc()["status"] = json::parse(R"({"collisionCount":2})");
  api::Object upd = old;
  upd.mutable_doc()["spec"].get_object()["replicas"] = 7;
  upd.mutable_doc()["status"] = json::parse(
      R"({"replicas":1,"readyReplicas":2,"availableReplicas":3,"observedGeneration":-1})");
  EXPECT_EQ(
      StatusUpdate(*s, upd, old),
      (Lines{"status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
             "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
             "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
             "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
             "status.collisionCount: Invalid value: 0: cannot be decremented"}));
  EXPECT_EQ(Json(upd, {"spec", "replicas"}), "1");
  EXPECT_EQ(upd.generation(), 1);
}

TEST(DeploymentStrategyTest, StatusUpdateCarriesAnnotationsNotLabels) {
  // The Deployment controller records its revision through /status (upstream's
  // deploymentStatusStrategy resets only spec and labels); the generation does not move.
  auto s = Deployments();
  api::Object old = BaseDeployment();
  ASSERT_EQ(Create(*s, old), Lines{});
  api::Object upd = old;
  upd.SetAnnotation("deployment.kubernetes.io/revision", "2");
  upd.SetLabel("sneaky", "yes");
  upd.mutable_doc()["status"] = json::parse(R"({"observedGeneration":1})");
  EXPECT_EQ(StatusUpdate(*s, upd, old), Lines{});
  EXPECT_EQ(upd.annotation("deployment.kubernetes.io/revision"), "2");
  EXPECT_EQ(Json(upd, {"metadata", "labels", "sneaky"}), "<absent>");
  EXPECT_EQ(upd.generation(), 1);
}

// ---- ReplicaSets ----

TEST(ReplicaSetStrategyTest, StatusUpdateKeepsOnlyTheStatusAndTheResourceVersionItWasSent) {
  auto s = MakeStrategy(Info("apps", "v1", "replicasets", "ReplicaSet", true, {"status", "scale"}));
  api::Object old = Obj(R"({"apiVersion":"apps/v1","kind":"ReplicaSet",
    "metadata":{"name":"web","namespace":"default","resourceVersion":"5",
      "labels":{"app":"web"},"annotations":{"a":"1"}},
    "spec":{"replicas":2},"status":{"replicas":1}})");
  api::Object upd = Obj(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","extra":true,
    "metadata":{"name":"web","namespace":"default","resourceVersion":"4",
      "labels":{"app":"other"},"finalizers":["x"]},
    "spec":{"replicas":9},"status":{"replicas":2}})");
  s->PrepareForStatusUpdate(upd, old);
  api::Object want = old;
  want.mutable_doc()["status"] = json::parse(R"({"replicas":2})");
  want.set_resource_version("4");
  EXPECT_EQ(upd.doc(), want.doc()) << json::serialize(upd.doc());

  // A null status clears it, as a status left out does.
  api::Object cleared = old;
  cleared.mutable_doc()["status"] = nullptr;
  s->PrepareForStatusUpdate(cleared, old);
  EXPECT_EQ(Json(cleared, {"status"}), "<absent>");
  EXPECT_EQ(Json(cleared, {"spec", "replicas"}), "2");
}

TEST(ReplicaSetStrategyTest, DefaultsAndValidation) {
  auto s = MakeStrategy(Info("apps", "v1", "replicasets", "ReplicaSet", true, {"status", "scale"}));
  api::Object rs = BaseDeployment();
  rs.mutable_doc()["kind"] = "ReplicaSet";
  EXPECT_EQ(Create(*s, rs), Lines{});
  EXPECT_EQ(Json(rs, {"spec", "replicas"}), "1");
  EXPECT_EQ(Json(rs, {"spec", "strategy"}), "<absent>");

  api::Object empty = rs;
  empty.mutable_doc()["spec"].get_object()["selector"] = json::object();
  EXPECT_EQ(
      Create(*s, empty),
      Lines{"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid "
            "for deployment"});

  api::Object moved = rs;
  moved.mutable_doc()["spec"].get_object()["selector"] = json::parse(
      R"({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"DoesNotExist"}]})");
  Lines got = Update(*s, moved, rs);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].find("field is immutable"), std::string::npos);
  EXPECT_EQ(moved.generation(), 2);
}

// ---- StatefulSets ----

TEST(StatefulSetStrategyTest, DefaultsValidationAndUpdate) {
  auto s =
      MakeStrategy(Info("apps", "v1", "statefulsets", "StatefulSet", true, {"status", "scale"}));
  EXPECT_EQ(s->name_rule(), Strategy::NameRule::kDnsLabel);
  api::Object ss = BaseDeployment();
  ss.mutable_doc()["kind"] = "StatefulSet";
  ss.mutable_doc()["spec"].get_object()["serviceName"] = "web";
  ss.mutable_doc()["spec"].get_object()["volumeClaimTemplates"] =
      json::parse(R"([{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"]}}])");
  EXPECT_EQ(Create(*s, ss), Lines{});
  EXPECT_EQ(Json(ss, {"spec", "podManagementPolicy"}), R"("OrderedReady")");
  EXPECT_EQ(Json(ss, {"spec", "updateStrategy"}),
            R"({"type":"RollingUpdate","rollingUpdate":{"partition":0}})");
  EXPECT_EQ(Json(ss, {"spec", "persistentVolumeClaimRetentionPolicy"}),
            R"({"whenDeleted":"Retain","whenScaled":"Retain"})");
  EXPECT_EQ(Json(ss, {"spec", "replicas"}), "1");
  EXPECT_EQ(Json(ss, {"spec", "revisionHistoryLimit"}), "10");
  EXPECT_EQ(
      Json(ss, {"spec", "volumeClaimTemplates"}),
      R"([{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"volumeMode":"Filesystem"}}])");

  api::Object bad = ss;
  json::object& spec = bad.mutable_doc()["spec"].get_object();
  spec["podManagementPolicy"] = "Random";
  spec["updateStrategy"] = json::parse(
      R"({"type":"RollingUpdate","rollingUpdate":{"partition":-1,"maxUnavailable":0}})");
  EXPECT_EQ(
      Create(*s, bad),
      (Lines{
          R"(spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel')",
          "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater "
          "than or equal to 0",
          "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "
          "intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: cannot be 0"}));

  api::Object upd = ss;
  upd.mutable_doc()["spec"].get_object()["serviceName"] = "other";
  upd.mutable_doc()["spec"].get_object()["replicas"] = 3;
  EXPECT_EQ(
      Update(*s, upd, ss),
      Lines{"spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
            "'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
            "and 'minReadySeconds' are forbidden"});
  api::Object scaled = ss;
  scaled.mutable_doc()["spec"].get_object()["replicas"] = 3;
  EXPECT_EQ(Update(*s, scaled, ss), Lines{});
}

// ---- DaemonSets ----

TEST(DaemonSetStrategyTest, DefaultsTemplateGenerationAndRollingUpdate) {
  auto s = MakeStrategy(Info("apps", "v1", "daemonsets", "DaemonSet", true, {"status"}));
  api::Object ds = BaseDeployment();
  ds.mutable_doc()["kind"] = "DaemonSet";
  EXPECT_EQ(Create(*s, ds), Lines{});
  EXPECT_EQ(Json(ds, {"spec", "updateStrategy"}),
            R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}})");
  EXPECT_EQ(Json(ds, {"spec", "revisionHistoryLimit"}), "10");
  EXPECT_EQ(ds.annotation("deprecated.daemonset.template.generation").value_or(""), "1");

  api::Object relabel = ds;
  relabel.SetLabel("x", "y");
  EXPECT_EQ(Update(*s, relabel, ds), Lines{});
  EXPECT_EQ(relabel.annotation("deprecated.daemonset.template.generation").value_or(""), "1");
  api::Object retemplate = ds;
  retemplate.mutable_doc()["spec"]
      .get_object()["template"]
      .get_object()["spec"]
      .get_object()["containers"]
      .get_array()[0]
      .get_object()["image"] = "nginx:1.28";
  EXPECT_EQ(Update(*s, retemplate, ds), Lines{});
  EXPECT_EQ(retemplate.annotation("deprecated.daemonset.template.generation").value_or(""), "2");
  EXPECT_EQ(retemplate.generation(), 2);

  api::Object both = ds;
  both.mutable_doc()["spec"].get_object()["updateStrategy"] =
      json::parse(R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":1}})");
  EXPECT_EQ(Update(*s, both, ds),
            Lines{"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
                  "intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when "
                  "maxUnavailable is non-zero"});
  api::Object none = ds;
  none.mutable_doc()["spec"].get_object()["updateStrategy"] =
      json::parse(R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":0,"maxSurge":0}})");
  EXPECT_EQ(Update(*s, none, ds),
            Lines{"spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 "
                  "when maxSurge is 0"});
}

// ---- ControllerRevisions ----

TEST(ControllerRevisionStrategyTest, DataRequiredAndImmutable) {
  auto s = MakeStrategy(Info("apps", "v1", "controllerrevisions", "ControllerRevision"));
  api::Object cr = Obj(R"({"metadata":{"name":"web-1","namespace":"d"},"revision":-1})");
  EXPECT_EQ(Create(*s, cr),
            (Lines{"data: Required value: data is mandatory",
                   "revision: Invalid value: -1: must be greater than or equal to 0"}));
  api::Object ok =
      Obj(R"({"metadata":{"name":"web-1","namespace":"d"},"revision":1,"data":{"a":1}})");
  api::Object upd = ok;
  upd.mutable_doc()["data"] = json::parse(R"({"a":2})");
  EXPECT_EQ(Update(*s, upd, ok), Lines{R"(data: Invalid value: {"a":2}: field is immutable)"});
}

}  // namespace
}  // namespace converge::apiserver
