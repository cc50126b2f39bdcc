#include "api/structured_merge.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/merge_patch.h"
#include "api/schema_registry.h"

namespace converge::api {
namespace {

namespace json = boost::json;

const TypeSchema* TypeNamed(std::string_view name) {
  const TypeSchema* t = BuiltinSchemas().FindType(name);
  EXPECT_NE(t, nullptr) << name;
  return t;
}
const TypeSchema* DeploymentType() {
  return TypeNamed("io.k8s.api.apps.v1.Deployment");
}
const TypeSchema* Pod() {
  return TypeNamed("io.k8s.api.core.v1.Pod");
}

std::string FieldSetV1(const FieldSet& s) {
  return json::serialize(s.ToFieldsV1());
}

// A Deployment as `kubectl create deployment web --image=nginx:1.27` stores it (after upstream's
// defaults).
constexpr std::string_view kCreatedDeployment = R"({
  "apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
    "template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27","resources":{},
          "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
          "imagePullPolicy":"IfNotPresent"}],
        "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
        "securityContext":{},"schedulerName":"default-scheduler"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
    "revisionHistoryLimit":10,"progressDeadlineSeconds":600},
  "status":{}})";

// ---- ToFieldSet ---------------------------------------------------------------------------------

struct SetCase {
  std::string name;
  const TypeSchema* (*schema)();
  std::string value;
  std::string fields_v1;
  friend void PrintTo(const SetCase& c, std::ostream* os) { *os << c.name; }
};

class ToFieldSetCases : public testing::TestWithParam<SetCase> {};

TEST_P(ToFieldSetCases, MatchesUpstream) {
  const SetCase& c = GetParam();
  EXPECT_EQ(FieldSetV1(ToFieldSet(json::parse(c.value), c.schema())), c.fields_v1);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ToFieldSetCases,
    testing::Values(
        // `kubectl apply --server-side` of FINDINGS 3.11's manifest: struct fields are not members,
        // list items are (with "." when they have fields), the port key gets its default protocol.
        SetCase{
            "ServerSideApplyManifest", DeploymentType,
            R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",)"
            R"("namespace":"default","labels":{"app":"web"}},"spec":{"replicas":3,"selector":)"
            R"({"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},)"
            R"("spec":{"containers":[{"name":"nginx","image":"nginx:1.27","ports":)"
            R"([{"containerPort":80}]}]}}}})",
            R"({"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:app":{}},"f:name":{},)"
            R"("f:namespace":{}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":)"
            R"({"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":)"
            R"({"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},"f:)"
            R"(ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort)"
            R"(":{}}}}}}}}})"},
        SetCase{"EmptyListsAndMapsHoldNothing", Pod,
                R"({"metadata":{"finalizers":[],"labels":{}},"spec":{"containers":[]}})", "{}"},
        SetCase{"AtomicListIsOneLeaf", Pod,
                R"({"spec":{"containers":[{"name":"a","command":["sh","-c","true"]}]}})",
                R"({"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:command":{},"f:na)"
                R"(me":{}}}}})"},
        SetCase{"FinalizersAreASet", Pod, R"({"metadata":{"finalizers":["b.io/y","a.io/x"]}})",
                R"({"f:metadata":{"f:finalizers":{"v:\"a.io/x\"":{},"v:\"b.io/y\"":{}}}})"},
        SetCase{
            "AtomicMapAndStruct", Pod,
            R"({"spec":{"nodeSelector":{"a":"b"},"affinity":{"nodeAffinity":)"
            R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}}})",
            R"({"f:spec":{"f:affinity":{"f:nodeAffinity":)"
            R"({"f:requiredDuringSchedulingIgnoredDuringExecution":{}}},"f:nodeSelector":{}}})"},
        // No schema: objects are granular maps (keys are members), arrays are atomic.
        SetCase{"Untyped", [] { return static_cast<const TypeSchema*>(nullptr); },
                R"({"spec":{"size":{"cpu":1},"items":[1,2]}})",
                R"({"f:spec":{".":{},"f:items":{},"f:size":{".":{},"f:cpu":{}}}})"}),
    [](const testing::TestParamInfo<SetCase>& info) { return info.param.name; });

// ---- Compare ------------------------------------------------------------------------------------

struct CompareCase {
  std::string name;
  std::string before, after;  // Deployments
  std::string added, modified, removed;
  friend void PrintTo(const CompareCase& c, std::ostream* os) { *os << c.name; }
};

class CompareCases : public testing::TestWithParam<CompareCase> {};

TEST_P(CompareCases, FindsChangedFields) {
  const CompareCase& c = GetParam();
  util::StatusOr<Comparison> cmp =
      Compare(json::parse(c.before), json::parse(c.after), DeploymentType());
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  EXPECT_EQ(FieldSetV1(cmp->added), c.added);
  EXPECT_EQ(FieldSetV1(cmp->modified), c.modified);
  EXPECT_EQ(FieldSetV1(cmp->removed), c.removed);
}

// The skipping overload equals Compare followed by ExcludeFields, for every case and skip set.
TEST_P(CompareCases, SkippingEqualsExcluding) {
  const CompareCase& c = GetParam();
  const json::value before = json::parse(c.before), after = json::parse(c.after);
  auto f = [](std::string_view s) { return PathElement::Field(std::string(s)); };
  const std::vector<std::vector<Path>> skips = {
      {},
      {{f("spec")}},
      {{f("spec"), f("replicas")}},
      {{f("spec"), f("template"), f("spec")}},
      {{f("spec"), f("template"), f("metadata"), f("labels")}},
      {{f("spec"), f("template"), f("spec"), f("containers")}},
      {{f("metadata")}, {f("spec"), f("template"), f("metadata")}},
      {{f("metadata"), f("managedFields")}, {f("status")}},
  };
  for (const std::vector<Path>& paths : skips) {
    const FieldSet skip = FieldSet::FromPaths(paths);
    SCOPED_TRACE(skip.ToString());
    util::StatusOr<Comparison> want = Compare(before, after, DeploymentType());
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    want->ExcludeFields(skip);
    util::StatusOr<Comparison> got =
        Compare(before.as_object(), after.as_object(), DeploymentType(), skip);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(FieldSetV1(got->added), FieldSetV1(want->added));
    EXPECT_EQ(FieldSetV1(got->modified), FieldSetV1(want->modified));
    EXPECT_EQ(FieldSetV1(got->removed), FieldSetV1(want->removed));
  }
}

const std::string kWeb = R"({"spec":{"replicas":1,"template":{"metadata":{"labels":{"app":"web",)"
                         R"("tier":"fe"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1",)"
                         R"("command":["a"]},{"name":"log","image":"busybox"}]}}}})";

INSTANTIATE_TEST_SUITE_P(
    DeploymentType, CompareCases,
    testing::Values(
        // A create compares against upstream's empty Go object, where spec, template and strategy
        // already exist and containers is null: only pointers, maps and items are added as nodes.
        CompareCase{
            "CreateAsKubectlCreate", "{}", std::string(kCreatedDeployment),
            R"({"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{".":{},"f:app":{}},)"
            R"("f:name":{},"f:namespace":{}},"f:spec":{"f:progressDeadlineSeconds":{},)"
            R"("f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":)"
            R"({"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},)"
            R"("f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":)"
            R"({"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:imagePullPoli)"
            R"(cy":{},"f:name":{},"f:resources":{},"f:terminationMessagePa)"
            R"(th":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},)"
            R"("f:schedulerName":{},"f:securityContext":{},)"
            R"("f:terminationGracePeriodSeconds":{}}}}})",
            "{}", "{}"},
        CompareCase{"Same", kWeb, kWeb, "{}", "{}", "{}"},
        CompareCase{
            "ScaleReplicas", kWeb,
            R"({"spec":{"replicas":3,"template":{"metadata":{"labels":{"app":"web","tier":"fe"}},)"
            R"("spec":{"containers":[{"name":"nginx","image":"nginx:1","command":["a"]},)"
            R"({"name":"log","image":"busybox"}]}}}})",
            "{}", R"({"f:spec":{"f:replicas":{}}})", "{}"},
        // Items are matched by key, so reordering changes nothing; atomic lists compare whole.
        CompareCase{
            "ReorderChangeImageAndCommand", kWeb,
            R"({"spec":{"replicas":1,"template":{"metadata":{"labels":{"app":"web","tier":"fe"}},)"
            R"("spec":{"containers":[{"name":"log","image":"busybox"},{"name":"nginx",)"
            R"("image":"nginx:2","command":["a","b"]}]}}}})",
            "{}",
            R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":)"
            R"({"f:command":{},"f:image":{}}}}}}})",
            "{}"},
        CompareCase{
            "AddAndRemoveItemsAndLabels", kWeb,
            R"({"spec":{"replicas":1,"template":{"metadata":{"labels":{"app":"web"}},)"
            R"("spec":{"containers":[{"name":"nginx","image":"nginx:1","command":["a"]},)"
            R"({"name":"proxy","image":"envoy","ports":[{"containerPort":80}]}]}}}})",
            R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"proxy\"}":)"
            R"({".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protoco)"
            R"(l\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}})",
            "{}",
            R"({"f:spec":{"f:template":{"f:metadata":{"f:labels":{"f:tier":{}}},"f:spec":)"
            R"({"f:containers":{"k:{\"name\":\"log\"}":{".":{},"f:image":{},"f:name":{}}}}}}})"},
        // One walk adding, changing and removing below shared prefixes (spec, spec.template):
        // each of the three sets gets the nodes of its own paths only.
        CompareCase{
            "AddChangeAndRemoveUnderOnePrefix", kWeb,
            R"({"spec":{"replicas":2,"template":{"metadata":{"labels":{"app":"web"}},)"
            R"("spec":{"containers":[{"name":"nginx","image":"nginx:2","command":["a"]},)"
            R"({"name":"log","image":"busybox"},{"name":"proxy","image":"envoy"}]}}}})",
            R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"proxy\"}":)"
            R"({".":{},"f:image":{},"f:name":{}}}}}}})",
            R"({"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":)"
            R"({"k:{\"name\":\"nginx\"}":{"f:image":{}}}}}}})",
            R"({"f:spec":{"f:template":{"f:metadata":{"f:labels":{"f:tier":{}}}}}})"},
        // For typed fields null is absent (a Go nil pointer); {} versus absent is a leaf change.
        CompareCase{"NullIsAbsentEmptyIsNot", R"({"spec":{"paused":null,"template":{}}})",
                    R"({"spec":{"template":{"spec":{"securityContext":{}}}}})",
                    R"({"f:spec":{"f:template":{"f:spec":{"f:securityContext":{}}}}})", "{}",
                    "{}"}),
    [](const testing::TestParamInfo<CompareCase>& info) { return info.param.name; });

// Lists longer than the linear search's limit (16 items) find items through a map: matching by
// key, additions, removals and repeated keys behave the same on both sides of the limit.
// The pod spec {"containers":[items]}, as a Pod's spec or (`in_template`) a Deployment's.
std::string PodContainers(const std::vector<std::string>& items, bool in_template = false) {
  std::string list;
  for (size_t i = 0; i < items.size(); ++i) list += (i ? "," : "") + items[i];
  const std::string spec = R"({"containers":[)" + list + "]}";
  return in_template ? R"({"spec":{"template":{"spec":)" + spec + "}}}"
                     : R"({"spec":)" + spec + "}";
}
std::string Containers(const std::vector<std::string>& items) {
  return PodContainers(items, /*in_template=*/true);
}
std::string Container(int i, std::string_view image = "i") {
  return R"({"name":"c)" + std::to_string(i) + R"(","image":")" + std::string(image) + R"("})";
}

TEST(Compare, LongListsMatchItemsByKey) {
  for (int n : {5, 16, 17, 20, 40}) {
    std::vector<std::string> before, after;
    for (int i = 0; i < n; ++i) before.push_back(Container(i));
    for (int i = n - 1; i >= 0; --i) {
      if (i == 3) continue;  // removed
      after.push_back(Container(i, i == n - 1 ? "j" : "i"));
    }
    after.push_back(Container(n));  // added
    util::StatusOr<Comparison> cmp =
        Compare(json::parse(Containers(before)), json::parse(Containers(after)), DeploymentType());
    ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
    auto item = [](int i, std::string_view inner) {
      return R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"c)" +
             std::to_string(i) + R"(\"}":)" + std::string(inner) + "}}}}}";
    };
    EXPECT_EQ(FieldSetV1(cmp->modified), item(n - 1, R"({"f:image":{}})")) << n;
    EXPECT_EQ(FieldSetV1(cmp->added), item(n, R"({".":{},"f:image":{},"f:name":{}})")) << n;
    EXPECT_EQ(FieldSetV1(cmp->removed), item(3, R"({".":{},"f:image":{},"f:name":{}})")) << n;

    // A repeated key, wherever it is, makes the list one leaf.
    std::vector<std::string> repeated = before;
    repeated.push_back(Container(1, "k"));
    cmp = Compare(json::parse(Containers(before)), json::parse(Containers(repeated)),
                  DeploymentType());
    ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
    EXPECT_EQ(FieldSetV1(cmp->modified),
              R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{}}}}})")
        << n;
  }
}

TEST(Merge, LongListsMergeByKeyAndRejectRepeats) {
  std::vector<std::string> live, config;
  for (int i = 0; i < 20; ++i) live.push_back(Container(i));
  config = {Container(18, "j"), Container(25)};
  util::StatusOr<json::value> merged =
      Merge(json::parse(PodContainers(live)), json::parse(PodContainers(config)), Pod());
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  std::vector<std::string> want;
  for (int i = 0; i < 20; ++i) want.push_back(Container(i, i == 18 ? "j" : "i"));
  want.push_back(Container(25));
  EXPECT_EQ(json::serialize(*merged), json::serialize(json::parse(PodContainers(want))));
  config.clear();
  for (int i = 0; i < 18; ++i) config.push_back(Container(i));
  config.push_back(Container(17));
  merged = Merge(json::parse(PodContainers(live)), json::parse(PodContainers(config)), Pod());
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(),
            R"(.spec.containers: duplicate entries for key [name="c17"])");
}

TEST(Compare, LiveItemWithoutKeyIsAnError) {
  util::StatusOr<Comparison> cmp =
      Compare(json::parse(R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})"),
              json::parse("{}"), DeploymentType());
  ASSERT_FALSE(cmp.ok());
  EXPECT_EQ(cmp.status().message(),
            ".spec.template.spec.containers: element 0: associative list with keys has an element "
            "that omits key field \"name\" (and doesn't have default value)");
}

// What the skipping overload does not walk, it does not check either.
TEST(Compare, SkippedSubtreeIsNotWalked) {
  const json::value before =
      json::parse(R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})");
  const json::value after = json::parse(R"({"status":{"replicas":1}})");
  const FieldSet skip = FieldSet::FromPaths({{PathElement::Field("spec")}});
  util::StatusOr<Comparison> cmp =
      Compare(before.as_object(), after.as_object(), DeploymentType(), skip);
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  EXPECT_EQ(FieldSetV1(cmp->added), R"({"f:status":{"f:replicas":{}}})");
  EXPECT_EQ(FieldSetV1(cmp->removed), "{}");
  EXPECT_FALSE(Compare(before.as_object(), after.as_object(), DeploymentType(), FieldSet()).ok());
}

// ---- Merge --------------------------------------------------------------------------------------

struct StructuredMergeCase {
  std::string name;
  std::string live, config, merged;  // Pods
  friend void PrintTo(const StructuredMergeCase& c, std::ostream* os) { *os << c.name; }
};

class MergeCases : public testing::TestWithParam<StructuredMergeCase> {};

TEST_P(MergeCases, MergesPerSchema) {
  const StructuredMergeCase& c = GetParam();
  util::StatusOr<json::value> merged = Merge(json::parse(c.live), json::parse(c.config), Pod());
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  // Order matters for lists, so compare serializations of the whole value.
  EXPECT_EQ(json::serialize(*merged), json::serialize(json::parse(c.merged)));
}

INSTANTIATE_TEST_SUITE_P(
    Pod, MergeCases,
    testing::Values(
        StructuredMergeCase{
            "ContainersMergeByName",
            R"({"spec":{"containers":[{"name":"nginx","image":"nginx:1","resources":{}},)"
            R"({"name":"log","image":"busybox"}]}})",
            R"({"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}})",
            R"({"spec":{"containers":[{"name":"nginx","image":"nginx:2","resources":{}},)"
            R"({"name":"log","image":"busybox"}]}})"},
        // Ports are keyed by containerPort and protocol (default TCP): {80} is {80,TCP}.
        StructuredMergeCase{
            "PortsMergeByPortAndProtocol",
            R"({"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"protocol":"TCP"},)"
            R"({"containerPort":53,"protocol":"UDP"}]}]}})",
            R"({"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"name":"http"},)"
            R"({"containerPort":53,"protocol":"TCP"}]}]}})",
            R"({"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"protocol":"TCP",)"
            R"("name":"http"},{"containerPort":53,"protocol":"UDP"},{"containerPort":53,)"
            R"("protocol":"TCP"}]}]}})"},
        StructuredMergeCase{"FinalizersUnion", R"({"metadata":{"finalizers":["a","b"]}})",
                            R"({"metadata":{"finalizers":["c","a"]}})",
                            R"({"metadata":{"finalizers":["c","a","b"]}})"},
        StructuredMergeCase{
            "CommandReplacedWhole",
            R"({"spec":{"containers":[{"name":"c","command":["sh","-c"],"args":["x"]}]}})",
            R"({"spec":{"containers":[{"name":"c","command":["bash"]}]}})",
            R"({"spec":{"containers":[{"name":"c","command":["bash"],"args":["x"]}]}})"},
        StructuredMergeCase{
            "LabelsGranularNodeSelectorAtomic",
            R"({"metadata":{"labels":{"app":"a","tier":"t"}},"spec":{"nodeSelector":{"a":"1","b":"2"}}})",
            R"({"metadata":{"labels":{"app":"b"}},"spec":{"nodeSelector":{"a":"1"}}})",
            R"({"metadata":{"labels":{"app":"b","tier":"t"}},"spec":{"nodeSelector":{"a":"1"}}})"},
        StructuredMergeCase{"NullClears", R"({"spec":{"nodeName":"n1","hostname":"h"}})",
                            R"({"spec":{"nodeName":null}})", R"({"spec":{"hostname":"h"}})"},
        // Upstream's order: shared items follow the config's order, live-only items keep their
        // place among them: live [a,b,c] + config [c,a] -> [b,c,a].
        StructuredMergeCase{"OrderFollowsConfigForSharedItems",
                            R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})",
                            R"({"spec":{"containers":[{"name":"c"},{"name":"a"}]}})",
                            R"({"spec":{"containers":[{"name":"b"},{"name":"c"},{"name":"a"}]}})"},
        StructuredMergeCase{"ConfigOnlyItemsWhereConfigPutsThem",
                            R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
                            R"({"spec":{"containers":[{"name":"x"},{"name":"b"}]}})",
                            R"({"spec":{"containers":[{"name":"a"},{"name":"x"},{"name":"b"}]}})"},
        StructuredMergeCase{
            "CreateFromNothing", "{}",
            R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"i"}]}})",
            R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"i"}]}})"}),
    [](const testing::TestParamInfo<StructuredMergeCase>& info) { return info.param.name; });

TEST(Merge, DuplicateConfigItemsAreRejected) {
  util::StatusOr<json::value> merged =
      Merge(json::parse("{}"),
            json::parse(R"({"spec":{"containers":[{"name":"a"},{"name":"a"}]}})"), Pod());
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().message(), R"(.spec.containers: duplicate entries for key [name="a"])");
}

// ---- ValidateApplied ----------------------------------------------------------------------------

TEST(ValidateApplied, ReportsUpstreamMessages) {
  EXPECT_TRUE(ValidateApplied(json::parse(std::string(kCreatedDeployment)), DeploymentType()).ok());
  util::Status dup = ValidateApplied(
      json::parse(
          R"({"spec":{"template":{"spec":{"containers":[{"name":"nginx"},{"name":"nginx"}]}}}})"),
      DeploymentType());
  EXPECT_EQ(dup.message(),
            R"(.spec.template.spec.containers: duplicate entries for key [name="nginx"])");
  util::Status two = ValidateApplied(
      json::parse(R"({"metadata":{"finalizers":[{"a":1}]},"spec":{"containers":[{"image":"x"}]}})"),
      Pod());
  EXPECT_EQ(two.message(),
            "errors:\n"
            "  .metadata.finalizers: element 0: associative list without keys has an element "
            "that's a map type\n"
            "  .spec.containers: element 0: associative list with keys has an element that omits "
            "key field \"name\" (and doesn't have default value)");
}

// ---- RemoveItems --------------------------------------------------------------------------------

TEST(RemoveItems, RemovesMembersAndEmptiedParents) {
  json::value v = json::parse(
      R"({"metadata":{"labels":{"a":"1"},"finalizers":["x","y"]},"spec":{"nodeName":"n",)"
      R"("containers":[{"name":"a","image":"i","ports":[{"containerPort":80}]},{"name":"b"}]}})");
  FieldSet items =
      FieldSet::FromFieldsV1(
          json::parse(R"({"f:metadata":{"f:labels":{"f:a":{}},"f:finalizers":{"v:\"x\"":{}}},)"
                      R"("f:spec":{"f:containers":{"k:{\"name\":\"b\"}":{},"k:{\"name\":\"a\"}":)"
                      R"({"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{}}}}}})"))
          .value();
  RemoveItems(v, items, Pod());
  EXPECT_EQ(
      json::serialize(v),
      R"({"metadata":{"finalizers":["y"]},"spec":{"nodeName":"n","containers":[{"name":"a","image":"i"}]}})");
}

}  // namespace
}  // namespace converge::api
