// The /scale managedFields mapping, table-driven with upstream's cases (managedfields
// scalehandler_test.go: TestTransformManagedFieldsToSubresource,
// TestTransformingManagedFieldsToParent).
#include "apiserver/scale_managed_fields.h"

#include <gtest/gtest.h>

#include <string>

#include <boost/json.hpp>

namespace converge::apiserver {
namespace {

namespace json = boost::json;

ReplicasPaths AppsPaths() {
  const api::Path replicas{api::PathElement::Field("spec"), api::PathElement::Field("replicas")};
  return {{"apps/v1", replicas}, {"apps/v1beta1", replicas}, {"apps/v1beta2", replicas}};
}

ManagedFields Decode(const std::string& entries) {
  const json::value v = json::parse(entries);
  util::StatusOr<ManagedFields> m = DecodeManagedFields(&v);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ManagedFields{};
}

std::string Encode(const ManagedFields& m) {
  return json::serialize(EncodeManagedFields(m));
}

struct ToSubresourceCase {
  std::string name;
  std::string parent;
  std::string want;
};

class ToSubresourceTest : public ::testing::TestWithParam<ToSubresourceCase> {};

TEST_P(ToSubresourceTest, MapsReplicasOwners) {
  const ToSubresourceCase& c = GetParam();
  EXPECT_EQ(Encode(ScaleManagedFieldsFromParent(Decode(c.parent), AppsPaths())), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, ToSubresourceTest,
    ::testing::Values(
        ToSubresourceCase{
            "OnlyTheReplicasOwnerKeepingItsTime",
            R"([{"manager":"manager-1","operation":"Apply","apiVersion":"apps/v1",
                 "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:another-field":{}}}},
                {"manager":"manager-2","operation":"Apply","apiVersion":"apps/v1",
                 "time":"2013-02-03T00:00:00Z","fieldsType":"FieldsV1",
                 "fieldsV1":{"f:spec":{"f:replicas":{}}}}])",
            R"([{"manager":"manager-2","operation":"Apply","apiVersion":"autoscaling/v1",)"
            R"("time":"2013-02-03T00:00:00Z","fieldsType":"FieldsV1",)"
            R"("fieldsV1":{"f:spec":{"f:replicas":{}}}}])"},
        ToSubresourceCase{
            "EveryOwnerIncludingSubresourceEntries",
            R"([{"manager":"manager-1","operation":"Apply","apiVersion":"apps/v1",
                 "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},
                {"manager":"manager-3","operation":"Apply","apiVersion":"apps/v1",
                 "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},
                 "subresource":"scale"}])",
            R"([{"manager":"manager-1","operation":"Apply","apiVersion":"autoscaling/v1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},)"
            R"({"manager":"manager-3","operation":"Apply","apiVersion":"autoscaling/v1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},)"
            R"("subresource":"scale"}])"},
        ToSubresourceCase{"UnknownVersionIsSkipped",
                          R"([{"manager":"manager-1","operation":"Apply","apiVersion":"apps/v10",
                               "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}])",
                          "[]"}),
    [](const ::testing::TestParamInfo<ToSubresourceCase>& info) { return info.param.name; });

struct ToParentCase {
  std::string name;
  std::string parent;
  std::string scale;
  std::string want;
};

class ToParentTest : public ::testing::TestWithParam<ToParentCase> {};

TEST_P(ToParentTest, MapsTheScaleEntriesBack) {
  const ToParentCase& c = GetParam();
  EXPECT_EQ(Encode(ParentManagedFieldsFromScale(Decode(c.parent), Decode(c.scale), AppsPaths(),
                                                "apps/v1")),
            c.want);
}

constexpr char kParentApplyTest[] =
    R"([{"manager":"test","operation":"Apply","apiVersion":"apps/v1","fieldsType":"FieldsV1",
         "fieldsV1":{"f:spec":{"f:replicas":{},"f:selector":{}}}}])";
constexpr char kParentUpdateTest[] =
    R"([{"manager":"test","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1",
         "fieldsV1":{"f:spec":{"f:replicas":{},"f:selector":{}}}}])";

std::string ScaleEntry(const std::string& manager, const std::string& operation,
                       const std::string& fields = R"({"f:spec":{"f:replicas":{}}})") {
  return R"([{"manager":")" + manager + R"(","operation":")" + operation +
         R"(","apiVersion":"autoscaling/v1","fieldsType":"FieldsV1","fieldsV1":)" + fields +
         R"(,"subresource":"scale"}])";
}

std::string ParentEntry(const std::string& manager, const std::string& operation,
                        const std::string& fields, const std::string& subresource = "") {
  return R"({"manager":")" + manager + R"(","operation":")" + operation +
         R"(","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":)" + fields +
         (subresource.empty() ? "" : R"(,"subresource":")" + subresource + "\"") + "}";
}

constexpr char kReplicas[] = R"({"f:spec":{"f:replicas":{}}})";
constexpr char kSelector[] = R"({"f:spec":{"f:selector":{}}})";

INSTANTIATE_TEST_SUITE_P(
    Upstream, ToParentTest,
    ::testing::Values(
        ToParentCase{"DifferentManagersApplyThenUpdate", kParentApplyTest,
                     ScaleEntry("scale", "Update"),
                     "[" + ParentEntry("test", "Apply", kSelector) + "," +
                         ParentEntry("scale", "Update", kReplicas, "scale") + "]"},
        ToParentCase{"DifferentManagersApplyThenApply", kParentApplyTest,
                     ScaleEntry("scale", "Apply"),
                     "[" + ParentEntry("scale", "Apply", kReplicas, "scale") + "," +
                         ParentEntry("test", "Apply", kSelector) + "]"},
        ToParentCase{"DifferentManagersUpdateThenUpdate", kParentUpdateTest,
                     ScaleEntry("scale", "Update"),
                     "[" + ParentEntry("scale", "Update", kReplicas, "scale") + "," +
                         ParentEntry("test", "Update", kSelector) + "]"},
        ToParentCase{"SameManagerApplyThenApply", kParentApplyTest, ScaleEntry("test", "Apply"),
                     "[" + ParentEntry("test", "Apply", kSelector) + "," +
                         ParentEntry("test", "Apply", kReplicas, "scale") + "]"},
        ToParentCase{"SameManagerUpdateThenApply", kParentUpdateTest, ScaleEntry("test", "Apply"),
                     "[" + ParentEntry("test", "Apply", kReplicas, "scale") + "," +
                         ParentEntry("test", "Update", kSelector) + "]"},
        ToParentCase{"SubresourceDoesNotOwnTheReplicasAnymore",
                     R"([{"manager":"test","operation":"Apply","apiVersion":"apps/v1",
                          "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:selector":{}}}}])",
                     ScaleEntry("scale", "Update", R"({"f:status":{"f:replicas":{}}})"),
                     "[" + ParentEntry("test", "Apply", kSelector) + "]"},
        ToParentCase{"ScaleTakesEveryFieldOfTheParentEntry",
                     R"([{"manager":"test","operation":"Apply","apiVersion":"apps/v1",
                          "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}])",
                     ScaleEntry("scale", "Update"),
                     "[" + ParentEntry("scale", "Update", kReplicas, "scale") + "]"},
        ToParentCase{"EntriesOfUnknownVersionsAreDropped",
                     R"([{"manager":"old","operation":"Update","apiVersion":"extensions/v1beta1",
                          "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:paused":{}}}}])",
                     "[]", "[]"}),
    [](const ::testing::TestParamInfo<ToParentCase>& info) { return info.param.name; });

TEST(ScaleManagedFieldsTest, KeptEntriesKeepTheirTimeAndNewOnesHaveNone) {
  // Upstream's ToParent takes times from the parent: a manager the parent already lists keeps
  // its time; one new to the parent has none (a real cluster shows `kubectl scale` entries
  // without a time).
  const ManagedFields parent = Decode(
      R"([{"manager":"creator","operation":"Update","apiVersion":"apps/v1",
           "time":"2025-01-01T00:00:00Z","fieldsType":"FieldsV1",
           "fieldsV1":{"f:spec":{"f:replicas":{},"f:selector":{}}}}])");
  ManagedFields scale = ScaleManagedFieldsFromParent(parent, AppsPaths());
  ASSERT_EQ(scale.times.size(), 1u);
  scale.fields.erase(scale.fields.begin()->first);  // the scaler took the field
  const ManagedFields scaler = Decode(ScaleEntry("kubectl", "Update"));
  scale.fields.insert(scaler.fields.begin(), scaler.fields.end());
  scale.times[scaler.fields.begin()->first] = "2025-01-01T00:05:00Z";
  // (Entries without a time sort first.)
  EXPECT_EQ(Encode(ParentManagedFieldsFromScale(parent, scale, AppsPaths(), "apps/v1")),
            "[" + ParentEntry("kubectl", "Update", kReplicas, "scale") +
                R"(,{"manager":"creator","operation":"Update","apiVersion":"apps/v1",)"
                R"("time":"2025-01-01T00:00:00Z","fieldsType":"FieldsV1",)"
                R"("fieldsV1":{"f:spec":{"f:selector":{}}}}])");
}

TEST(ScaleManagedFieldsTest, CustomResourcePaths) {
  const ReplicasPaths paths = {{"lb.converge.io/v1", ReplicasPathFromJsonPath(".spec.size")},
                               {"lb.converge.io/v1beta1", std::nullopt}};
  const ManagedFields parent = Decode(
      R"([{"manager":"a","operation":"Apply","apiVersion":"lb.converge.io/v1",
           "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:size":{},"f:port":{}}}},
          {"manager":"b","operation":"Apply","apiVersion":"lb.converge.io/v1beta1",
           "fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:size":{}}}}])");
  // Only the version with a scale subresource maps; the other keeps its entry untouched.
  ManagedFields scale = ScaleManagedFieldsFromParent(parent, paths);
  EXPECT_EQ(Encode(scale), R"([{"manager":"a","operation":"Apply","apiVersion":"autoscaling/v1",)"
                           R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}])");
  scale.fields.clear();
  const ManagedFields after =
      ParentManagedFieldsFromScale(parent, scale, paths, "lb.converge.io/v1");
  EXPECT_EQ(Encode(after),
            R"([{"manager":"a","operation":"Apply","apiVersion":"lb.converge.io/v1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:port":{}}}},)"
            R"({"manager":"b","operation":"Apply","apiVersion":"lb.converge.io/v1beta1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:size":{}}}}])");
}

}  // namespace
}  // namespace converge::apiserver
