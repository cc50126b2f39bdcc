#include "api/strategic_merge_patch.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/merge_patch.h"
#include "api/schema_registry.h"

namespace converge::api {
namespace {

namespace json = boost::json;

json::value JsonValue(std::string_view text) {
  return json::parse(text);
}

// ---- Hand-built schemas -------------------------------------------------------------------------

FieldSchema Scalar(std::string name, ValueKind kind = ValueKind::kString) {
  return FieldSchema{.name = std::move(name), .value = {kind, nullptr}};
}
FieldSchema Struct(std::string name, const TypeSchema* type, std::string strategy = "") {
  return FieldSchema{.name = std::move(name),
                     .value = {ValueKind::kMessage, type},
                     .patch_strategy = std::move(strategy)};
}
FieldSchema List(std::string name, ValueType element, std::string strategy = "",
                 std::string merge_key = "") {
  return FieldSchema{.name = std::move(name),
                     .repeated = true,
                     .value = element,
                     .patch_strategy = std::move(strategy),
                     .patch_merge_key = std::move(merge_key)};
}
FieldSchema Map(std::string name, ValueType value) {
  return FieldSchema{.name = std::move(name), .is_map = true, .value = value};
}
ValueType Of(const TypeSchema* t) {
  return {ValueKind::kMessage, t};
}
constexpr ValueType kString{ValueKind::kString, nullptr};
constexpr ValueType kInt{ValueKind::kInt64, nullptr};

// Upstream's strategicpatch test type (MergeItem), rebuilt as schema data.
struct MergeItemSchemas {
  TypeSchema merge_item{.name = "MergeItem"};
  TypeSchema retain_keys_item{.name = "RetainKeysMergeItem"};

  MergeItemSchemas() {
    merge_item.fields = {
        Scalar("name"),
        Scalar("value"),
        Scalar("other"),
        List("mergingList", Of(&merge_item), "merge", "name"),
        List("nonMergingList", Of(&merge_item)),
        List("mergingIntList", kInt, "merge"),
        List("nonMergingIntList", kInt),
        Map("simpleMap", kString),
        FieldSchema{.name = "replacingItem",
                    .value = {ValueKind::kAny, nullptr},
                    .patch_strategy = "replace"},
        Struct("retainKeysMap", &retain_keys_item, "retainKeys"),
        List("retainKeysMergingList", Of(&merge_item), "merge,retainKeys", "name"),
    };
    retain_keys_item.fields = {
        Scalar("name"),
        Scalar("value"),
        Scalar("other"),
        Map("simpleMap", kString),
        List("mergingIntList", kInt, "merge"),
        List("mergingList", Of(&merge_item), "merge", "name"),
        List("nonMergingList", Of(&merge_item)),
    };
    merge_item.BuildIndex();
    retain_keys_item.BuildIndex();
  }
};

// The parts of apps/v1 Deployment and core/v1 PodSpec the tests touch, with upstream's markers.
struct DeploymentSchemas {
  TypeSchema deployment{.name = "io.k8s.api.apps.v1.Deployment"};
  TypeSchema object_meta{.name = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"};
  TypeSchema owner_reference{.name = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"};
  TypeSchema deployment_spec{.name = "io.k8s.api.apps.v1.DeploymentSpec"};
  TypeSchema strategy{.name = "io.k8s.api.apps.v1.DeploymentStrategy"};
  TypeSchema rolling_update{.name = "io.k8s.api.apps.v1.RollingUpdateDeployment"};
  TypeSchema int_or_string{.name = "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                           .special = SpecialType::kIntOrString};
  TypeSchema template_spec{.name = "io.k8s.api.core.v1.PodTemplateSpec"};
  TypeSchema pod_spec{.name = "io.k8s.api.core.v1.PodSpec"};
  TypeSchema container{.name = "io.k8s.api.core.v1.Container"};
  TypeSchema container_port{.name = "io.k8s.api.core.v1.ContainerPort"};
  TypeSchema env_var{.name = "io.k8s.api.core.v1.EnvVar"};
  TypeSchema volume_mount{.name = "io.k8s.api.core.v1.VolumeMount"};
  TypeSchema volume{.name = "io.k8s.api.core.v1.Volume"};
  TypeSchema empty_dir{.name = "io.k8s.api.core.v1.EmptyDirVolumeSource"};
  TypeSchema host_path{.name = "io.k8s.api.core.v1.HostPathVolumeSource"};
  TypeSchema toleration{.name = "io.k8s.api.core.v1.Toleration"};

  DeploymentSchemas() {
    deployment.fields = {Scalar("apiVersion"), Scalar("kind"), Struct("metadata", &object_meta),
                         Struct("spec", &deployment_spec)};
    object_meta.fields = {Scalar("name"), Map("labels", kString), Map("annotations", kString),
                          List("finalizers", kString, "merge"),
                          List("ownerReferences", Of(&owner_reference), "merge", "uid")};
    owner_reference.fields = {Scalar("uid"), Scalar("name"), Scalar("kind")};
    deployment_spec.fields = {Scalar("replicas", ValueKind::kInt32),
                              Struct("strategy", &strategy, "retainKeys"),
                              Struct("template", &template_spec)};
    strategy.fields = {Scalar("type"), Struct("rollingUpdate", &rolling_update)};
    rolling_update.fields = {Struct("maxSurge", &int_or_string),
                             Struct("maxUnavailable", &int_or_string)};
    template_spec.fields = {Struct("metadata", &object_meta), Struct("spec", &pod_spec)};
    pod_spec.fields = {List("containers", Of(&container), "merge", "name"),
                       List("volumes", Of(&volume), "merge,retainKeys", "name"),
                       List("tolerations", Of(&toleration)), Map("nodeSelector", kString)};
    container.fields = {Scalar("name"),
                        Scalar("image"),
                        List("args", kString),
                        List("ports", Of(&container_port), "merge", "containerPort"),
                        List("env", Of(&env_var), "merge", "name"),
                        List("volumeMounts", Of(&volume_mount), "merge", "mountPath")};
    container_port.fields = {Scalar("containerPort", ValueKind::kInt32), Scalar("protocol"),
                             Scalar("name")};
    env_var.fields = {Scalar("name"), Scalar("value")};
    volume_mount.fields = {Scalar("name"), Scalar("mountPath")};
    volume.fields = {Scalar("name"), Struct("emptyDir", &empty_dir),
                     Struct("hostPath", &host_path)};
    empty_dir.fields = {Scalar("medium")};
    host_path.fields = {Scalar("path")};
    toleration.fields = {Scalar("key"), Scalar("operator"), Scalar("effect")};
    for (TypeSchema* t :
         {&deployment, &object_meta, &owner_reference, &deployment_spec, &strategy, &rolling_update,
          &int_or_string, &template_spec, &pod_spec, &container, &container_port, &env_var,
          &volume_mount, &volume, &empty_dir, &host_path, &toleration}) {
      t->BuildIndex();
    }
  }
};

const MergeItemSchemas& MergeItem() {
  static const MergeItemSchemas* schemas = new MergeItemSchemas();
  return *schemas;
}
const DeploymentSchemas& DeploymentSchemasForSmp() {
  static const DeploymentSchemas* schemas = new DeploymentSchemas();
  return *schemas;
}

// ---- Table
// ----------------------------------------------------------------------------------------

// kBuiltin*: the real schemas from the registry (api/schema data).
enum class SchemaChoice { kMergeItem, kDeployment, kNone, kBuiltinDeployment, kBuiltinPod };

struct SmpCase {
  std::string name;
  SchemaChoice schema;
  std::string original;
  std::string patch;
  std::string expected;  // empty: the patch must fail with `code`
  util::Code code = util::Code::kOk;
  std::string message = "";  // when set, a substring of the error message
};

const TypeSchema* SchemaFor(SchemaChoice choice) {
  switch (choice) {
    case SchemaChoice::kMergeItem: return &MergeItem().merge_item;
    case SchemaChoice::kDeployment: return &DeploymentSchemasForSmp().deployment;
    case SchemaChoice::kNone: return nullptr;
    case SchemaChoice::kBuiltinDeployment:
      return BuiltinSchemas().FindType("io.k8s.api.apps.v1.Deployment");
    case SchemaChoice::kBuiltinPod: return BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod");
  }
  return nullptr;
}

class StrategicMergePatchVectors : public testing::TestWithParam<SmpCase> {};

TEST_P(StrategicMergePatchVectors, Applies) {
  const SmpCase& c = GetParam();
  const json::value original = JsonValue(c.original);
  util::StatusOr<json::value> result =
      ApplyStrategicMergePatch(original, JsonValue(c.patch), SchemaFor(c.schema));
  if (c.expected.empty()) {
    ASSERT_FALSE(result.ok()) << "unexpectedly got " << json::serialize(*result);
    EXPECT_EQ(result.status().code(), c.code) << result.status().ToString();
    EXPECT_NE(result.status().message().find(c.message), std::string::npos)
        << result.status().message();
  } else {
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    // Exact comparison: list order matters, and member order is kept by the implementation.
    EXPECT_TRUE(JsonEqual(*result, JsonValue(c.expected)))
        << "got  " << json::serialize(*result) << "\nwant " << c.expected;
  }
  EXPECT_EQ(original, JsonValue(c.original)) << "the original must not change";
}

// Patching in place (the overload that consumes the original) gives the same answers.
TEST_P(StrategicMergePatchVectors, AppliesInPlace) {
  const SmpCase& c = GetParam();
  util::StatusOr<json::value> in_place =
      ApplyStrategicMergePatch(JsonValue(c.original), JsonValue(c.patch), SchemaFor(c.schema));
  util::StatusOr<json::value> copied =
      ApplyStrategicMergePatch(static_cast<const json::value&>(JsonValue(c.original)),
                               JsonValue(c.patch), SchemaFor(c.schema));
  ASSERT_EQ(in_place.ok(), copied.ok());
  if (in_place.ok()) {
    EXPECT_EQ(*in_place, *copied);
  } else {
    EXPECT_EQ(in_place.status(), copied.status());
  }
}

std::string SmpCaseName(const testing::TestParamInfo<SmpCase>& info) {
  return info.param.name;
}

constexpr SchemaChoice kItem = SchemaChoice::kMergeItem;
constexpr SchemaChoice kDeploy = SchemaChoice::kDeployment;
constexpr SchemaChoice kNoSchema = SchemaChoice::kNone;
constexpr util::Code kBadRequest = util::Code::kInvalidArgument;

INSTANTIATE_TEST_SUITE_P(
    Maps, StrategicMergePatchVectors,
    testing::Values(
        SmpCase{"ScalarsReplaceAndAdd", kItem, R"({"name":"a","value":"1"})",
                R"({"value":"2","other":"x"})", R"({"name":"a","value":"2","other":"x"})"},
        SmpCase{"NullDeletes", kItem, R"({"name":"a","value":"1"})", R"({"value":null})",
                R"({"name":"a"})"},
        SmpCase{"NullForMissingIsIgnored", kItem, R"({"name":"a"})", R"({"value":null})",
                R"({"name":"a"})"},
        SmpCase{"NestedMapMerges", kItem, R"({"simpleMap":{"k1":"1","k2":"2"}})",
                R"({"simpleMap":{"k2":"x","k3":"3","k1":null}})",
                R"({"simpleMap":{"k2":"x","k3":"3"}})"},
        SmpCase{"DeleteDirectiveEmptiesMap", kItem, R"({"simpleMap":{"key1":"1","key2":"1"}})",
                R"({"simpleMap":{"$patch":"delete"}})", R"({"simpleMap":{}})"},
        SmpCase{"ReplaceDirectiveOnWholeObject", kItem, R"({"name":"1","value":"1"})",
                R"({"$patch":"replace"})", R"({})"},
        SmpCase{"ReplaceDirectiveKeepsPatchMembers", kItem, R"({"name":"1","value":"1"})",
                R"({"other":"a","$patch":"replace"})", R"({"other":"a"})"},
        SmpCase{"ReplaceDirectiveOnLabels", kDeploy, R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
                R"({"metadata":{"labels":{"$patch":"replace","c":"3"}}})",
                R"({"metadata":{"labels":{"c":"3"}}})"},
        SmpCase{"MergeDirectiveIsRejected", kItem, R"({"simpleMap":{"a":"1"}})",
                R"({"simpleMap":{"$patch":"merge","b":"2"}})", "", kBadRequest,
                "unknown patch type: \"merge\""},
        SmpCase{"ReplaceStrategyField", kItem, R"({"replacingItem":{"a":1,"b":{"c":2}}})",
                R"({"replacingItem":{"b":{"d":3}}})", R"({"replacingItem":{"b":{"d":3}}})"},
        SmpCase{"TypeChangeReplaces", kItem, R"({"simpleMap":{"a":"1"}})", R"({"simpleMap":["x"]})",
                R"({"simpleMap":["x"]})"},
        SmpCase{"NewMemberLosesNulls", kItem, R"({})",
                R"({"retainKeysMap":{"name":null,"value":"v"}})",
                R"({"retainKeysMap":{"value":"v"}})"},
        SmpCase{"NullPatchChangesNothing", kItem, R"({"name":"a"})", "null", R"({"name":"a"})"},
        SmpCase{"ArrayPatchIsRejected", kItem, R"({"name":"a"})", "[]", "", kBadRequest,
                "cannot unmarshal array"}),
    SmpCaseName);

// Facts from upstream's strategicpatch tests (customStrategicMergePatchTestCaseData and the
// $setElementOrder raw cases), restated on the MergeItem schema.
INSTANTIATE_TEST_SUITE_P(
    MergingLists, StrategicMergePatchVectors,
    testing::Values(
        SmpCase{"UniqueScalars", kItem, R"({"mergingIntList":[1,2]})",
                R"({"mergingIntList":[2,3]})", R"({"mergingIntList":[1,2,3]})"},
        SmpCase{"ScalarsCompareByValue", kItem, R"({"mergingIntList":[1,2]})",
                R"({"mergingIntList":[2.0,3]})", R"({"mergingIntList":[1,2,3]})"},
        SmpCase{"ReplaceDirectiveEmptiesList", kItem,
                R"({"mergingList":[{"name":"1"},{"name":"2"}]})",
                R"({"mergingList":[{"$patch":"replace"}]})", R"({"mergingList":[]})"},
        SmpCase{"ReplaceDirectiveWithElements", kItem,
                R"({"mergingList":[{"name":"1","value":"a"},{"name":"2"}]})",
                R"({"mergingList":[{"name":"3"},{"$patch":"replace"},{"name":"1"}]})",
                R"({"mergingList":[{"name":"3"},{"name":"1"}]})"},
        SmpCase{"EmptyListsMerge", kItem, R"({"mergingList":[]})", R"({"mergingList":[]})",
                R"({"mergingList":[]})"},
        SmpCase{
            "DeleteRemovesAllDuplicates", kItem,
            R"({"mergingList":[{"name":"1"},{"name":"1"},{"name":"2","value":"a"},
                                   {"name":"3"},{"name":"3"}]})",
            R"({"mergingList":[{"name":"1","$patch":"delete"},{"name":"3","$patch":"delete"}]})",
            R"({"mergingList":[{"name":"2","value":"a"}]})"},
        SmpCase{"DeleteMissingElementIsNoop", kItem, R"({"mergingList":[{"name":"1"}]})",
                R"({"mergingList":[{"name":"9","$patch":"delete"}]})",
                R"({"mergingList":[{"name":"1"}]})"},
        SmpCase{"MergesIntoFirstDuplicate", kItem,
                R"({"mergingList":[{"name":"a","value":"1"},{"name":"a","value":"2"}]})",
                R"({"mergingList":[{"name":"a","value":"3"}]})",
                R"({"mergingList":[{"name":"a","value":"3"},{"name":"a","value":"2"}]})"},
        SmpCase{"DuplicateKeysInPatchMerge", kItem, R"({"mergingList":[]})",
                R"({"mergingList":[{"name":"a","value":"1"},{"name":"a","other":"2"}]})",
                R"({"mergingList":[{"name":"a","value":"1","other":"2"}]})"},
        SmpCase{"PatchOrderWins", kItem,
                R"({"mergingList":[{"name":"1"},{"name":"2","value":"b"},{"name":"3"}]})",
                R"({"mergingList":[{"name":"3","value":"c"},{"name":"1","value":"a"},
                                   {"name":"2","other":"x"}]})",
                R"({"mergingList":[{"name":"3","value":"c"},{"name":"1","value":"a"},
                                   {"name":"2","value":"b","other":"x"}]})"},
        SmpCase{"ServerOnlyKeepsRelativePlace", kItem,
                R"({"mergingList":[{"name":"1"},{"name":"2","value":"b"},{"name":"3"}]})",
                R"({"mergingList":[{"name":"3","value":"c"},{"name":"1","value":"a"}]})",
                R"({"mergingList":[{"name":"2","value":"b"},{"name":"3","value":"c"},
                                   {"name":"1","value":"a"}]})"},
        SmpCase{"IntListPatchOrder", kItem, R"({"mergingIntList":[1,2,3]})",
                R"({"mergingIntList":[3,1,2]})", R"({"mergingIntList":[3,1,2]})"},
        SmpCase{"IntListServerOnlyFirst", kItem, R"({"mergingIntList":[1,2,3]})",
                R"({"mergingIntList":[3,1]})", R"({"mergingIntList":[2,3,1]})"},
        // Upstream places new elements before the original's remaining ones when the patch has
        // no element the original already had (see the header's worked example).
        SmpCase{"NewElementsGoFirst", kItem,
                R"({"mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}]})",
                R"({"mergingList":[{"name":"d"}]})",
                R"({"mergingList":[{"name":"d"},{"name":"a"},{"name":"b"},{"name":"c"}]})"},
        SmpCase{"NewElementAfterAnchor", kItem,
                R"({"mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}]})",
                R"({"mergingList":[{"name":"c","value":"1"},{"name":"d"}]})",
                R"({"mergingList":[{"name":"a"},{"name":"b"},{"name":"c","value":"1"},
                                   {"name":"d"}]})"},
        SmpCase{"NewScalarsGoFirst", kItem, R"({"mergingIntList":[1,2]})",
                R"({"mergingIntList":[3]})", R"({"mergingIntList":[3,1,2]})"},
        SmpCase{"AppendedElementLosesNulls", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"mergingList":[{"name":"a"},{"name":"b","value":null}]})",
                R"({"mergingList":[{"name":"a"},{"name":"b"}]})"},
        SmpCase{"NestedMergingLists", kItem,
                R"({"mergingList":[{"name":"a","mergingList":[{"name":"x","value":"1"}]}]})",
                R"({"mergingList":[{"name":"a","mergingList":[{"name":"x","other":"2"},
                                                               {"name":"y"}]}]})",
                R"({"mergingList":[{"name":"a","mergingList":[{"name":"x","value":"1",
                                                                "other":"2"},{"name":"y"}]}]})"},
        SmpCase{"NonMergingListReplaced", kItem,
                R"({"nonMergingList":[{"name":"1","value":"a"},{"name":"2"}]})",
                R"({"nonMergingList":[{"name":"1","other":"b","value":null}]})",
                R"({"nonMergingList":[{"name":"1","other":"b"}]})"},
        SmpCase{"NonMergingIntListReplaced", kItem, R"({"nonMergingIntList":[1,2]})",
                R"({"nonMergingIntList":[2,3]})", R"({"nonMergingIntList":[2,3]})"},
        SmpCase{"MissingMergeKey", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"mergingList":[{"value":"x"}]})", "", kBadRequest,
                "does not contain declared merge key: name"},
        SmpCase{"DeleteWithoutMergeKey", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"mergingList":[{"$patch":"delete"}]})", "", kBadRequest,
                "does not contain declared merge key: name"},
        SmpCase{"OriginalElementWithoutMergeKey", kItem, R"({"mergingList":[{"value":"x"}]})",
                R"({"mergingList":[{"name":"a"}]})", "", kBadRequest,
                "does not contain declared merge key: name"},
        SmpCase{"MergeDirectiveInList", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"mergingList":[{"name":"a","$patch":"merge"}]})", "", kBadRequest,
                "merging lists cannot yet be specified in the patch"},
        SmpCase{"UnknownDirectiveInList", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"mergingList":[{"name":"a","$patch":"frob"}]})", "", kBadRequest,
                "unknown patch type"},
        SmpCase{"ListsOfLists", kItem, R"({"mergingIntList":[1]})", R"({"mergingIntList":[[2]]})",
                "", util::Code::kFailedPrecondition, "lists of lists are not supported"},
        SmpCase{"MixedElementTypes", kItem, R"({"mergingIntList":[1]})",
                R"({"mergingIntList":["a"]})", "", kBadRequest,
                "list element types are not identical"},
        SmpCase{"MapsInIntList", kItem, R"({"mergingIntList":[1]})",
                R"({"mergingIntList":[{"name":"a"}]})", "", kBadRequest,
                "list element types are not identical"}),
    SmpCaseName);

INSTANTIATE_TEST_SUITE_P(
    Directives, StrategicMergePatchVectors,
    testing::Values(
        SmpCase{"SetElementOrderWithAbsentItem", kItem,
                R"({"mergingList":[{"name":"1"},{"name":"3"}]})",
                R"({"$setElementOrder/mergingList":[{"name":"3"},{"name":"2"},{"name":"1"}],
                    "mergingList":[{"name":"3","value":"3"},{"name":"1","value":"1"}]})",
                R"({"mergingList":[{"name":"3","value":"3"},{"name":"1","value":"1"}]})"},
        SmpCase{"SetElementOrderAloneOnInts", kItem, R"({"mergingIntList":[1,3]})",
                R"({"$setElementOrder/mergingIntList":[3,2,1]})", R"({"mergingIntList":[3,1]})"},
        SmpCase{"SetElementOrderMustMatchPatch", kItem,
                R"({"mergingList":[{"name":"1"},{"name":"3"},{"name":"2"}]})",
                R"({"$setElementOrder/mergingList":[{"name":"1"},{"name":"2"},{"name":"3"}],
                    "mergingList":[{"name":"3","value":"3"},{"name":"1","value":"1"}]})",
                "", kBadRequest, "doesn't match $setElementOrder list"},
        SmpCase{"SetElementOrderPlacesServerOnly", kItem,
                R"({"mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}]})",
                R"({"$setElementOrder/mergingList":[{"name":"c"},{"name":"a"}],
                    "mergingList":[{"name":"c","value":"1"}]})",
                R"({"mergingList":[{"name":"b"},{"name":"c","value":"1"},{"name":"a"}]})"},
        SmpCase{"SetElementOrderWithDeletion", kItem,
                R"({"mergingList":[{"name":"a"},{"name":"b"}]})",
                R"({"$setElementOrder/mergingList":[{"name":"b"}],
                    "mergingList":[{"name":"a","$patch":"delete"}]})",
                R"({"mergingList":[{"name":"b"}]})"},
        SmpCase{"SetElementOrderForNewList", kItem, R"({})",
                R"({"$setElementOrder/mergingList":[{"name":"b"},{"name":"a"}],
                    "mergingList":[{"name":"b"},{"name":"a"}]})",
                R"({"mergingList":[{"name":"b"},{"name":"a"}]})"},
        SmpCase{"SetElementOrderNotAList", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"$setElementOrder/mergingList":{"name":"a"}})", "", kBadRequest,
                "invalid patch format of setElementOrder list"},
        SmpCase{"SetElementOrderBadPrefix", kItem, R"({"mergingList":[{"name":"a"}]})",
                R"({"$setElementOrderX/mergingList":[{"name":"a"}]})", "", kBadRequest,
                "invalid patch format of setElementOrder list"},
        SmpCase{"DeleteFromPrimitiveList", kItem, R"({"mergingIntList":[1,2,3,2]})",
                R"({"$deleteFromPrimitiveList/mergingIntList":[2,5]})",
                R"({"mergingIntList":[1,3]})"},
        SmpCase{"DeleteFromPrimitiveListWithAdditions", kItem, R"({"mergingIntList":[1,2,3]})",
                R"({"$deleteFromPrimitiveList/mergingIntList":[2],"mergingIntList":[4]})",
                R"({"mergingIntList":[4,1,3]})"},
        SmpCase{"DeleteFromMissingList", kItem, R"({})",
                R"({"$deleteFromPrimitiveList/mergingIntList":[2]})", R"({})"},
        SmpCase{"DeleteFromPrimitiveListNull", kItem, R"({"mergingIntList":[1]})",
                R"({"$deleteFromPrimitiveList/mergingIntList":null})", R"({})"},
        SmpCase{"DeleteFromPrimitiveListNotAList", kItem, R"({"mergingIntList":[1]})",
                R"({"$deleteFromPrimitiveList/mergingIntList":1})", "", kBadRequest,
                "invalid patch format of primitive list"},
        SmpCase{"DeleteFromPrimitiveListBadPrefix", kItem, R"({"mergingIntList":[1]})",
                R"({"$deleteFromPrimitiveListX/mergingIntList":[1]})", "", kBadRequest,
                "invalid patch format of primitive list"},
        SmpCase{"RetainKeysClearsUnlisted", kItem,
                R"({"retainKeysMap":{"name":"foo","value":"a","other":"b"}})",
                R"({"retainKeysMap":{"$retainKeys":["name","value"],"value":"c"}})",
                R"({"retainKeysMap":{"name":"foo","value":"c"}})"},
        SmpCase{"RetainKeysAllowsNullForUnlisted", kItem,
                R"({"retainKeysMap":{"name":"foo","value":"a"}})",
                R"({"retainKeysMap":{"$retainKeys":["name"],"value":null}})",
                R"({"retainKeysMap":{"name":"foo"}})"},
        SmpCase{"RetainKeysWithoutDirectiveMerges", kItem,
                R"({"retainKeysMap":{"name":"foo","value":"a"}})",
                R"({"retainKeysMap":{"value":"b"}})",
                R"({"retainKeysMap":{"name":"foo","value":"b"}})"},
        SmpCase{"RetainKeysRejectsUnlistedPatchMember", kItem,
                R"({"retainKeysMap":{"name":"foo"}})",
                R"({"retainKeysMap":{"$retainKeys":["name"],"value":"x"}})", "", kBadRequest,
                "invalid patch format of retainKeys"},
        SmpCase{"RetainKeysNotAList", kItem, R"({"retainKeysMap":{"name":"foo"}})",
                R"({"retainKeysMap":{"$retainKeys":"name"}})", "", kBadRequest,
                "invalid patch format of retainKeys"},
        SmpCase{"RetainKeysInListElement", kItem,
                R"({"retainKeysMergingList":[{"name":"a","value":"1","other":"2"},{"name":"b"}]})",
                R"({"retainKeysMergingList":[{"name":"a","$retainKeys":["name","other"],
                                              "other":"3"}]})",
                R"({"retainKeysMergingList":[{"name":"a","other":"3"},{"name":"b"}]})"}),
    SmpCaseName);

// Without schema knowledge the patch behaves like a JSON merge patch.
INSTANTIATE_TEST_SUITE_P(
    Fallback, StrategicMergePatchVectors,
    testing::Values(SmpCase{"NoSchemaMergesMaps", kNoSchema, R"({"a":{"b":1,"c":2}})",
                            R"({"a":{"c":null,"d":3}})", R"({"a":{"b":1,"d":3}})"},
                    SmpCase{"NoSchemaReplacesLists", kNoSchema, R"({"a":[{"name":"x"}]})",
                            R"({"a":[{"name":"y"}]})", R"({"a":[{"name":"y"}]})"},
                    SmpCase{"UnknownFieldReplacesLists", kDeploy,
                            R"({"spec":{"unknownList":[1,2],"unknownMap":{"a":1}}})",
                            R"({"spec":{"unknownList":[3],"unknownMap":{"b":2}}})",
                            R"({"spec":{"unknownList":[3],"unknownMap":{"a":1,"b":2}}})"},
                    SmpCase{"DirectivesStillWorkWithoutSchema", kNoSchema, R"({"a":{"b":1,"c":2}})",
                            R"({"a":{"$retainKeys":["b"]}})", R"({"a":{"b":1}})"}),
    SmpCaseName);

// Real-kind shapes: what kubectl apply sends (reference/kubectl/FINDINGS.md section 3.10).
INSTANTIATE_TEST_SUITE_P(
    Deployment, StrategicMergePatchVectors,
    testing::Values(
        SmpCase{"KubectlApplyReordersContainers", kDeploy,
                R"({"spec":{"replicas":1,"template":{"spec":{"containers":[
                    {"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80}]}]}}}})",
                R"({"spec":{"template":{"spec":{
                    "$setElementOrder/containers":[{"name":"sidecar"},{"name":"nginx"}],
                    "containers":[{"args":["sleep","3600"],"image":"busybox:1.36","name":"sidecar"},
                                  {"name":"nginx","ports":null}]}}}})",
                R"({"spec":{"replicas":1,"template":{"spec":{"containers":[
                    {"args":["sleep","3600"],"image":"busybox:1.36","name":"sidecar"},
                    {"name":"nginx","image":"nginx:1.27"}]}}}})"},
        SmpCase{
            "KubectlApplyChangesImage", kDeploy,
            R"({"metadata":{"annotations":{"a":"1"}},"spec":{"replicas":1,"template":{"spec":
                    {"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}})",
            R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},
                    "spec":{"replicas":3,"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],
                    "containers":[{"image":"nginx:1.27.1","name":"nginx"}]}}}})",
            R"({"metadata":{"annotations":{"a":"1",
                    "kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},
                    "spec":{"replicas":3,"template":{"spec":
                    {"containers":[{"name":"nginx","image":"nginx:1.27.1"}]}}}})"},
        SmpCase{"PortsByContainerPortEnvByName", kDeploy,
                R"({"spec":{"template":{"spec":{"containers":[{"name":"c",
                    "ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443}],
                    "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]}}}})",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"c",
                    "ports":[{"containerPort":80.0,"name":"http"}],
                    "env":[{"name":"B","value":"3"},{"name":"A","$patch":"delete"}]}]}}}})",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"c",
                    "ports":[{"containerPort":80,"protocol":"TCP","name":"http"},{"containerPort":443}],
                    "env":[{"name":"B","value":"3"}]}]}}}})"},
        SmpCase{"ArgsAreAtomic", kDeploy,
                R"({"spec":{"template":{"spec":{"containers":[{"name":"c","args":["a","b"]}]}}}})",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"c","args":["b"]}]}}}})",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"c","args":["b"]}]}}}})"},
        SmpCase{"StrategyRetainKeys", kDeploy,
                R"({"spec":{"strategy":{"type":"RollingUpdate",
                    "rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}})",
                R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate",
                    "rollingUpdate":null}}})",
                R"({"spec":{"strategy":{"type":"Recreate"}}})"},
        SmpCase{"VolumeSourceSwitchedWithRetainKeys", kDeploy,
                R"({"spec":{"template":{"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x"}},
                    {"name":"w","emptyDir":{}}]}}}})",
                R"({"spec":{"template":{"spec":{
                    "$setElementOrder/volumes":[{"name":"v"},{"name":"w"}],
                    "volumes":[{"$retainKeys":["emptyDir","name"],"emptyDir":{},"name":"v"}]}}}})",
                R"({"spec":{"template":{"spec":{"volumes":[{"name":"v","emptyDir":{}},
                    {"name":"w","emptyDir":{}}]}}}})"},
        SmpCase{"FinalizersAsSet", kDeploy, R"({"metadata":{"finalizers":["a","b"]}})",
                R"({"metadata":{"$setElementOrder/finalizers":["a","b","c"],"finalizers":["c"],
                    "$deleteFromPrimitiveList/finalizers":["a"]}})",
                R"({"metadata":{"finalizers":["b","c"]}})"},
        SmpCase{"TolerationsReplaced", kDeploy,
                R"({"spec":{"template":{"spec":{"tolerations":[{"key":"a"},{"key":"b"}]}}}})",
                R"({"spec":{"template":{"spec":{"tolerations":[{"key":"c"}]}}}})",
                R"({"spec":{"template":{"spec":{"tolerations":[{"key":"c"}]}}}})"},
        SmpCase{
            "OwnerReferencesByUid", kDeploy,
            R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a"},{"uid":"2","name":"b"}]}})",
            R"({"metadata":{"ownerReferences":[{"uid":"2","$patch":"delete"}]}})",
            R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a"}]}})"},
        SmpCase{"IntOrStringIsAScalar", kDeploy,
                R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":1}}}})",
                R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":"50%"}}}})",
                R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":"50%"}}}})"}),
    SmpCaseName);

constexpr SchemaChoice kRealDeployment = SchemaChoice::kBuiltinDeployment;
constexpr SchemaChoice kRealPod = SchemaChoice::kBuiltinPod;

TEST(StrategicMergePatchTest, BuiltinSchemasExist) {
  EXPECT_NE(SchemaFor(kRealDeployment), nullptr);
  EXPECT_NE(SchemaFor(kRealPod), nullptr);
}

// The same rules on the real built-in schemas (the registry's data, derived from upstream).
INSTANTIATE_TEST_SUITE_P(
    BuiltinKinds, StrategicMergePatchVectors,
    testing::Values(
        SmpCase{"PodContainersPortsEnvVolumes", kRealPod,
                R"({"metadata":{"name":"p","labels":{"app":"a","tier":"x"}},
                    "spec":{"containers":[
                      {"name":"app","image":"app:1","ports":[{"containerPort":8080,"protocol":"TCP"}],
                       "env":[{"name":"MODE","value":"a"},{"name":"DEBUG","value":"1"}],
                       "volumeMounts":[{"name":"data","mountPath":"/data"}]},
                      {"name":"log","image":"log:1"}],
                    "volumes":[{"name":"data","emptyDir":{}}]}})",
                R"({"metadata":{"labels":{"tier":null,"team":"t"}},
                    "spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"log"}],
                    "containers":[{"name":"app",
                      "$setElementOrder/ports":[{"containerPort":8080},{"containerPort":9090}],
                      "ports":[{"containerPort":9090,"name":"metrics"}],
                      "env":[{"name":"MODE","value":"b"},{"name":"DEBUG","$patch":"delete"}]}],
                    "volumes":[{"name":"cache","emptyDir":{"medium":"Memory"}}]}})",
                R"({"metadata":{"name":"p","labels":{"app":"a","team":"t"}},
                    "spec":{"containers":[
                      {"name":"app","image":"app:1","ports":[{"containerPort":8080,"protocol":"TCP"},
                                                            {"containerPort":9090,"name":"metrics"}],
                       "env":[{"name":"MODE","value":"b"}],
                       "volumeMounts":[{"name":"data","mountPath":"/data"}]},
                      {"name":"log","image":"log:1"}],
                    "volumes":[{"name":"cache","emptyDir":{"medium":"Memory"}},
                               {"name":"data","emptyDir":{}}]}})"},
        SmpCase{"PodVolumeSourceSwitch", kRealPod,
                R"({"spec":{"volumes":[{"name":"v","hostPath":{"path":"/x","type":""}}]}})",
                R"({"spec":{"$setElementOrder/volumes":[{"name":"v"}],
                    "volumes":[{"$retainKeys":["configMap","name"],"configMap":{"name":"cm"},
                                "name":"v"}]}})",
                R"({"spec":{"volumes":[{"name":"v","configMap":{"name":"cm"}}]}})"},
        SmpCase{"PodTolerationsAreAtomic", kRealPod,
                R"({"spec":{"tolerations":[{"key":"a","operator":"Exists"}]}})",
                R"({"spec":{"tolerations":[{"key":"b","operator":"Exists"}]}})",
                R"({"spec":{"tolerations":[{"key":"b","operator":"Exists"}]}})"},
        SmpCase{"PodImagePullSecretsByName", kRealPod,
                R"({"spec":{"imagePullSecrets":[{"name":"a"}]}})",
                R"({"spec":{"imagePullSecrets":[{"name":"a"},{"name":"b"}]}})",
                R"({"spec":{"imagePullSecrets":[{"name":"a"},{"name":"b"}]}})"},
        SmpCase{"PodFinalizersAndOwners", kRealPod,
                R"({"metadata":{"finalizers":["x/a","x/b"],
                    "ownerReferences":[{"uid":"u1","kind":"ReplicaSet","name":"rs"}]}})",
                R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["x/a"],
                    "ownerReferences":[{"uid":"u1","$patch":"delete"}]}})",
                R"({"metadata":{"finalizers":["x/b"],"ownerReferences":[]}})"},
        SmpCase{"DeploymentKubectlApply", kRealDeployment,
                R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web2"},
                    "spec":{"replicas":1,"template":{"spec":{"containers":[
                      {"name":"nginx","image":"nginx:1.27","ports":[{"containerPort":80}]}]}}}})",
                R"({"spec":{"replicas":3,"template":{"spec":{
                    "$setElementOrder/containers":[{"name":"sidecar"},{"name":"nginx"}],
                    "containers":[{"args":["sleep","3600"],"image":"busybox:1.36","name":"sidecar"},
                                  {"name":"nginx","ports":null}]}}}})",
                R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web2"},
                    "spec":{"replicas":3,"template":{"spec":{"containers":[
                      {"args":["sleep","3600"],"image":"busybox:1.36","name":"sidecar"},
                      {"name":"nginx","image":"nginx:1.27"}]}}}})"},
        SmpCase{"DeploymentStrategyRecreate", kRealDeployment,
                R"({"spec":{"strategy":{"type":"RollingUpdate",
                    "rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}})",
                R"({"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}})",
                R"({"spec":{"strategy":{"type":"Recreate"}}})"},
        SmpCase{"DeploymentMissingMergeKey", kRealDeployment,
                R"({"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}})",
                R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})", "", kBadRequest,
                "does not contain declared merge key: name"}),
    SmpCaseName);

TEST(StrategicMergePatchTest, KeepsMemberOrder) {
  util::StatusOr<json::value> result = ApplyStrategicMergePatch(
      JsonValue(R"({"a":1,"b":2,"c":3})"), JsonValue(R"({"a":null,"d":4,"b":5})"), nullptr);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(json::serialize(*result), R"({"b":5,"c":3,"d":4})");
}

TEST(StrategicMergePatchTest, MergesDeepObjectsWithoutSchema) {
  std::string deep;
  for (int i = 0; i < kMaxPatchNestingDepth; ++i) deep += R"({"a":)";
  deep += "1";
  for (int i = 0; i < kMaxPatchNestingDepth; ++i) deep += "}";
  util::StatusOr<json::value> document = ParsePatchBody(deep);
  ASSERT_TRUE(document.ok());
  util::StatusOr<json::value> result = ApplyStrategicMergePatch(*document, *document, nullptr);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(JsonEqual(*result, *document));
}

TEST(StrategicMergePatchTest, RequiresObjectOriginal) {
  EXPECT_EQ(ApplyStrategicMergePatch(JsonValue("[1]"), JsonValue("{}"), nullptr).status().code(),
            util::Code::kInvalidArgument);
}

// Found by the fuzzer: a map and a $deleteFromPrimitiveList list under one field name; the map's
// merge replaced the list the delete was queued for (the merge then read an object as an array).
TEST(StrategicMergePatchTest, AListDirectiveAndAMapForTheSameFieldAreAnError) {
  const TypeSchema* pod = BuiltinSchemas().FindType("io.k8s.api.core.v1.Pod");
  ASSERT_NE(pod, nullptr);
  const json::value patch =
      JsonValue(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],)"
                R"("finalizers":{"$retainKeys":["type"],"type":"Recreate"}}})");
  const json::value original = JsonValue(R"({"metadata":{"finalizers":["a","b"]}})");
  for (const TypeSchema* schema : {pod, static_cast<const TypeSchema*>(nullptr)}) {
    util::StatusOr<json::value> result = ApplyStrategicMergePatch(original, patch, schema);
    EXPECT_FALSE(result.ok()) << (schema ? "pod: " : "no schema: ") << json::serialize(*result);
  }
}

std::string NestedMergingLists(int levels) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += R"({"name":"n","mergingList":[)";
  s += R"({"name":"leaf"})";
  for (int i = 0; i < levels; ++i) s += "]}";
  return s;
}

TEST(StrategicMergePatchTest, MergesAtTheNestingLimit) {
  // Each level is an object and a merging list, so every kind of pending work in the merge is
  // queued once per level, down to the limit.
  const int levels = (kMaxPatchNestingDepth - 1) / 2;
  util::StatusOr<json::value> document = ParsePatchBody(NestedMergingLists(levels));
  ASSERT_TRUE(document.ok()) << document.status().ToString();
  ASSERT_LE(JsonNestingDepth(*document), kMaxPatchNestingDepth);
  util::StatusOr<json::value> result =
      ApplyStrategicMergePatch(*document, *document, &MergeItem().merge_item);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(JsonEqual(*result, *document));

  util::StatusOr<json::value> plain = ParsePatchBody(std::string(kMaxPatchNestingDepth, '[') +
                                                     std::string(kMaxPatchNestingDepth, ']'));
  ASSERT_TRUE(plain.ok());
  json::value too_deep(json::object_kind);
  too_deep.get_object()["a"] = *plain;
  EXPECT_EQ(ApplyStrategicMergePatch(JsonValue("{}"), too_deep, nullptr).status().code(),
            util::Code::kInvalidArgument);
}

}  // namespace
}  // namespace converge::api
