#include "api/structural_schema.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/custom_resource.h"

namespace converge::api {
namespace {

namespace json = boost::json;

// A LoadBalancer-like schema exercising every keyword the validator enforces.
constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["port"],
      "properties": {
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "weight": {"type": "number", "exclusiveMinimum": true, "minimum": 0,
                   "exclusiveMaximum": true, "maximum": 1.5},
        "size": {"type": "string", "enum": ["small", "large"], "default": "small"},
        "name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[a-z]+$"},
        "replicas": {"type": "integer", "default": 1},
        "tags": {"type": "array", "maxItems": 2, "minItems": 1,
                 "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"},
                                           "port": {"type": "integer", "default": 80}}}},
        "target": {"x-kubernetes-int-or-string": true,
                   "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "mode": {"type": "integer", "enum": [1, 2]},
        "nullableNote": {"type": "string", "nullable": true},
        "options": {"type": "object", "default": {},
                    "properties": {"retries": {"type": "integer", "default": 3}}}
      }
    },
    "status": {
      "type": "object",
      "properties": {"address": {"type": "string"}}
    }
  }
})";

std::shared_ptr<const JsonSchema> Schema() {
  auto s = ParseJsonSchema(json::parse(kSchema));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

json::object Resource(std::string_view spec_json) {
  json::object o;
  o["apiVersion"] = "lb.converge.io/v1";
  o["kind"] = "LoadBalancer";
  o["metadata"] = json::object{{"name", "lb"}};
  o["spec"] = json::parse(spec_json);
  return o;
}

std::string Render(const std::vector<SchemaError>& errs) {
  std::string out;
  for (const auto& e : errs) out += e.field + ": " + e.message + " [" + e.reason + "]\n";
  return out;
}

struct ValidationCase {
  const char* name;
  const char* spec;
  std::vector<SchemaError> want;
};

class ValidationTest : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(ValidationTest, MatchesUpstreamWording) {
  const ValidationCase& c = GetParam();
  auto errs = ValidateCustomResource(*Schema(), Resource(c.spec));
  EXPECT_EQ(Render(errs), Render(c.want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidationTest,
    ::testing::Values(
        ValidationCase{"valid", R"({"port": 80, "name": "abc", "tags": ["a"]})", {}},
        ValidationCase{
            "wrong_type",
            R"({"port": "eighty"})",
            {{"FieldValueTypeInvalid", "spec.port",
              R"(Invalid value: "string": spec.port in body must be of type integer: "string")"}}},
        ValidationCase{
            "float_for_integer",
            R"({"port": 1.5})",
            {{"FieldValueTypeInvalid", "spec.port",
              R"(Invalid value: "number": spec.port in body must be of type integer: "number")"}}},
        ValidationCase{"integral_float_is_an_integer", R"({"port": 80.0})", {}},
        ValidationCase{"required",
                       R"({"name": "abc"})",
                       {{"FieldValueRequired", "spec.port", "Required value"}}},
        ValidationCase{"maximum",
                       R"({"port": 70000})",
                       {{"FieldValueInvalid", "spec.port",
                         "Invalid value: 70000: spec.port in body should be less than or equal "
                         "to 65535"}}},
        ValidationCase{"minimum",
                       R"({"port": 0})",
                       {{"FieldValueInvalid", "spec.port",
                         "Invalid value: 0: spec.port in body should be greater than or equal to "
                         "1"}}},
        ValidationCase{"exclusive_minimum",
                       R"({"port": 1, "weight": 0})",
                       {{"FieldValueInvalid", "spec.weight",
                         "Invalid value: 0: spec.weight in body should be greater than 0"}}},
        ValidationCase{"exclusive_maximum_float",
                       R"({"port": 1, "weight": 1.5})",
                       {{"FieldValueInvalid", "spec.weight",
                         "Invalid value: 1.5: spec.weight in body should be less than 1.5"}}},
        ValidationCase{"enum",
                       R"({"port": 1, "size": "huge"})",
                       {{"FieldValueNotSupported", "spec.size",
                         R"(Unsupported value: "huge": supported values: "small", "large")"}}},
        ValidationCase{"numeric_enum",
                       R"({"port": 1, "mode": 3})",
                       {{"FieldValueNotSupported", "spec.mode",
                         R"(Unsupported value: 3: supported values: "1", "2")"}}},
        ValidationCase{
            "max_length",
            R"({"port": 1, "name": "abcdef"})",
            {{"FieldValueTooLong", "spec.name", "Too long: may not be more than 5 bytes"}}},
        ValidationCase{
            "min_length_and_pattern",
            R"({"port": 1, "name": "A1"})",
            {{"FieldValueInvalid", "spec.name",
              R"(Invalid value: "A1": spec.name in body should be at least 3 chars long)"},
             {"FieldValueInvalid", "spec.name",
              R"(Invalid value: "A1": spec.name in body should match '^[a-z]+$')"}}},
        ValidationCase{
            "max_items",
            R"({"port": 1, "tags": ["a", "b", "c"]})",
            {{"FieldValueTooMany", "spec.tags", "Too many: 3: must have at most 2 items"}}},
        ValidationCase{"min_items",
                       R"({"port": 1, "tags": []})",
                       {{"FieldValueInvalid", "spec.tags",
                         "Invalid value: 0: spec.tags in body should have at least 1 items"}}},
        ValidationCase{
            "array_item_paths_use_dots",
            R"({"port": 1, "tags": [1]})",
            {{"FieldValueTypeInvalid", "spec.tags.0",
              R"(Invalid value: "integer": spec.tags.0 in body must be of type string: "integer")"}}},
        ValidationCase{"nested_required_in_list",
                       R"({"port": 1, "ports": [{"port": 1}]})",
                       {{"FieldValueRequired", "spec.ports.0.name", "Required value"}}},
        ValidationCase{"list_type_set",
                       R"({"port": 1, "tags": ["a", "a"]})",
                       {{"FieldValueDuplicate", "spec.tags[1]", R"(Duplicate value: "a")"}}},
        ValidationCase{"list_type_map",
                       R"({"port": 1, "ports": [{"name": "http"}, {"name": "http", "port": 8}]})",
                       {{"FieldValueDuplicate", "spec.ports[1]",
                         R"(Duplicate value: map[string]interface {}{"name":"http"})"}}},
        ValidationCase{"int_or_string", R"({"port": 1, "target": "http"})", {}},
        ValidationCase{
            "int_or_string_wrong",
            R"({"port": 1, "target": true})",
            {{"FieldValueTypeInvalid", "spec.target",
              R"(Invalid value: "boolean": spec.target in body must be of type integer: "boolean")"}}},
        ValidationCase{
            "additional_properties",
            R"({"port": 1, "labels": {"a": 1}})",
            {{"FieldValueTypeInvalid", "spec.labels.a",
              R"(Invalid value: "integer": spec.labels.a in body must be of type string: "integer")"}}},
        ValidationCase{"nullable", R"({"port": 1, "nullableNote": null})", {}},
        ValidationCase{"preserved_fields_are_not_checked",
                       R"({"port": 1, "extra": {"anything": [1, {"x": true}]}})",
                       {}}),
    [](const ::testing::TestParamInfo<ValidationCase>& info) { return info.param.name; });

TEST(StructuralSchemaTest, WrongTypeForTheWholeSpec) {
  json::object o = Resource("{}");
  o["spec"] = "oops";
  auto errs = ValidateCustomResource(*Schema(), o);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "spec");
  EXPECT_EQ(errs[0].message,
            R"(Invalid value: "string": spec in body must be of type object: "string")");
}

TEST(StructuralSchemaTest, DefaultsFillAbsentFieldsAndRecurse) {
  json::object o = Resource(R"({"port": 1, "ports": [{"name": "a"}], "size": null})");
  DefaultCustomResource(*Schema(), o);
  const json::object& spec = o["spec"].get_object();
  EXPECT_EQ(spec.at("size"), json::value("small"));  // a non-nullable null is defaulted
  EXPECT_EQ(spec.at("replicas"), json::value(1));
  EXPECT_EQ(json::serialize(spec.at("ports")), R"([{"name":"a","port":80}])");
  // The defaulted object gets its own fields' defaults.
  EXPECT_EQ(json::serialize(spec.at("options")), R"({"retries":3})");
}

TEST(StructuralSchemaTest, NonNullableNullsWithoutDefaultsAreDropped) {
  json::object o = Resource(R"({"port": 1, "name": null, "nullableNote": null})");
  DefaultCustomResource(*Schema(), o);
  const json::object& spec = o["spec"].get_object();
  EXPECT_FALSE(spec.contains("name"));
  EXPECT_TRUE(spec.contains("nullableNote"));
}

TEST(StructuralSchemaTest, PruningDropsUnknownFieldsAndReportsPaths) {
  json::object o = Resource(
      R"({"port": 1, "bogus": 1, "ports": [{"name": "a", "x": 2}], "extra": {"kept": 1},
          "labels": {"free": "form"}})");
  o["unknownTop"] = true;
  o["metadata"].get_object()["bogusMeta"] = 1;
  std::vector<std::string> pruned = PruneCustomResource(*Schema(), o);
  EXPECT_EQ(pruned, (std::vector<std::string>{"spec.bogus", "spec.ports[0].x", "unknownTop"}));
  const json::object& spec = o["spec"].get_object();
  EXPECT_FALSE(spec.contains("bogus"));
  EXPECT_EQ(json::serialize(spec.at("extra")), R"({"kept":1})");
  EXPECT_EQ(json::serialize(spec.at("labels")), R"({"free":"form"})");
  EXPECT_TRUE(o.contains("apiVersion"));
  EXPECT_TRUE(o.contains("kind"));
  // metadata is ObjectMeta's business.
  EXPECT_EQ(PruneObjectMeta(o), (std::vector<std::string>{"metadata.bogusMeta"}));
  EXPECT_EQ(json::serialize(o["metadata"]), R"({"name":"lb"})");
}

TEST(StructuralSchemaTest, PreserveUnknownFieldsAtTheRootStillPrunesDeclaredChildren) {
  auto s = ParseJsonSchema(json::parse(R"({"type": "object",
      "x-kubernetes-preserve-unknown-fields": true,
      "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}})"));
  ASSERT_TRUE(s.ok());
  json::object o = Resource(R"({"a": "x", "b": 1})");
  o["free"] = 1;
  EXPECT_EQ(PruneCustomResource(**s, o), (std::vector<std::string>{"spec.b"}));
  EXPECT_TRUE(o.contains("free"));
}

TEST(StructuralSchemaTest, BadPatternIsAParseError) {
  auto s = ParseJsonSchema(json::parse(R"({"type": "string", "pattern": "(("})"));
  EXPECT_FALSE(s.ok());
}

TEST(StructuralSchemaTest, GoFloatMatchesGoFormatting) {
  EXPECT_EQ(GoFloat(1), "1");
  EXPECT_EQ(GoFloat(1.5), "1.5");
  EXPECT_EQ(GoFloat(100000), "100000");
  EXPECT_EQ(GoFloat(1e21), "1e+21");
  EXPECT_EQ(GoFloat(0.0001), "0.0001");
  EXPECT_EQ(GoFloat(0.00001), "1e-05");
  EXPECT_EQ(GoFloat(-2.25), "-2.25");
}

TEST(StructuralSchemaTest, TypeSchemasCarryListTypesAndMaps) {
  auto types = BuildTypeSchemas(Schema().get(), "io.converge.lb.v1.LoadBalancer",
                                "io.converge.lb.v1.LoadBalancerList");
  const TypeSchema* root = types->root;
  ASSERT_NE(root->Field("metadata"), nullptr);
  EXPECT_EQ(root->Field("metadata")->value.message->name,
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  const FieldSchema* spec = root->Field("spec");
  ASSERT_NE(spec, nullptr);
  const TypeSchema* spec_type = spec->value.message;
  ASSERT_NE(spec_type, nullptr);
  const FieldSchema* ports = spec_type->Field("ports");
  ASSERT_NE(ports, nullptr);
  EXPECT_TRUE(ports->repeated);
  EXPECT_EQ(ports->list_type, ListType::kMap);
  EXPECT_EQ(ports->list_map_keys, std::vector<std::string>{"name"});
  EXPECT_TRUE(spec_type->Field("labels")->is_map);
  EXPECT_EQ(spec_type->Field("target")->value.message->special, SpecialType::kIntOrString);
  EXPECT_TRUE(spec_type->Field("extra")->value.kind == ValueKind::kAny);
  EXPECT_EQ(types->list->Field("items")->value.message, root);
}

TEST(CustomResourceTest, TypeNameReversesTheGroup) {
  EXPECT_EQ(CustomResourceTypeName("lb.converge.io", "v1", "LoadBalancer"),
            "io.converge.lb.v1.LoadBalancer");
}

TEST(CustomResourceTest, InfosPerServedVersionPreferredFirst) {
  json::object crd = json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "loadbalancers.lb.converge.io", "uid": "u1"},
    "spec": {"group": "lb.converge.io", "scope": "Namespaced",
      "names": {"plural": "loadbalancers", "kind": "LoadBalancer"},
      "versions": [
        {"name": "v1beta1", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object"}}},
        {"name": "v1", "served": true, "storage": true,
         "schema": {"openAPIV3Schema": {"type": "object"}},
         "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                  "statusReplicasPath": ".status.replicas"}},
         "additionalPrinterColumns": [{"name": "Port", "type": "integer",
                                       "jsonPath": ".spec.port"}]},
        {"name": "v0", "served": false, "storage": false}]}})")
                         .as_object();
  json::object names = json::parse(
                           R"({"plural": "loadbalancers", "singular": "loadbalancer",
                               "kind": "LoadBalancer", "listKind": "LoadBalancerList",
                               "shortNames": ["lb"], "categories": ["all"]})")
                           .as_object();
  auto infos = CustomResourceInfos(crd, names, false);
  ASSERT_TRUE(infos.ok()) << infos.status().ToString();
  ASSERT_EQ(infos->size(), 2u);
  const ResourceInfo& v1 = (*infos)[0];
  EXPECT_EQ(v1.gvr.version, "v1");
  EXPECT_EQ((*infos)[1].gvr.version, "v1beta1");
  EXPECT_EQ(v1.storage_prefix, "/registry/lb.converge.io/loadbalancers");
  EXPECT_EQ((*infos)[1].storage_version, "v1");
  EXPECT_TRUE(v1.namespaced);
  EXPECT_EQ(v1.short_names, std::vector<std::string>{"lb"});
  EXPECT_EQ(v1.categories, std::vector<std::string>{"all"});
  ASSERT_NE(v1.Subresource("status"), nullptr);
  ASSERT_NE(v1.Subresource("scale"), nullptr);
  EXPECT_EQ(v1.Subresource("scale")->response_kind.kind, "Scale");
  EXPECT_EQ((*infos)[1].Subresource("status"), nullptr);
  ASSERT_EQ(v1.crd->columns.size(), 1u);
  EXPECT_EQ(v1.crd->columns[0].name, "Port");
  // A version without columns prints Age.
  ASSERT_EQ((*infos)[1].crd->columns.size(), 1u);
  EXPECT_EQ((*infos)[1].crd->columns[0].name, "Age");
  EXPECT_EQ(v1.schema->name, "io.converge.lb.v1.LoadBalancer");
}

TEST(CustomResourceTest, VersionPriority) {
  std::vector<std::string> v = {"v1alpha1", "foo", "v1beta2", "v2", "v1", "v1beta10"};
  std::sort(v.begin(), v.end(),
            [](const std::string& a, const std::string& b) { return KubeVersionPrecedes(a, b); });
  EXPECT_EQ(v, (std::vector<std::string>{"v2", "v1", "v1beta10", "v1beta2", "v1alpha1", "foo"}));
}

}  // namespace
}  // namespace converge::api
