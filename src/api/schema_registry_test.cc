#include "api/schema_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "api/embedded_data.h"

namespace converge::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const TypeSchema& RegistryType(std::string_view name) {
  const TypeSchema* t = BuiltinSchemas().FindType(name);
  EXPECT_NE(t, nullptr) << name;
  static const TypeSchema kEmpty;
  return t ? *t : kEmpty;
}

const FieldSchema& Field(std::string_view type, std::string_view field) {
  const FieldSchema* f = RegistryType(type).Field(field);
  EXPECT_NE(f, nullptr) << type << "." << field;
  static const FieldSchema kEmpty;
  return f ? *f : kEmpty;
}

constexpr std::string_view kApps = "io.k8s.api.apps.v1.";
constexpr std::string_view kCore = "io.k8s.api.core.v1.";
constexpr std::string_view kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.";

std::string N(std::string_view pkg, std::string_view name) {
  return std::string(pkg) + std::string(name);
}

TEST(EmbeddedData, HoldsSchemaOverridesAndResources) {
  EXPECT_TRUE(FindEmbeddedApiFile("overrides.json").has_value());
  EXPECT_TRUE(FindEmbeddedApiFile("resources.json").has_value());
  EXPECT_TRUE(FindEmbeddedApiFile("schema/core_v1.json").has_value());
  EXPECT_TRUE(FindEmbeddedApiFile("schema/apiextensions_v1.json").has_value());
  EXPECT_FALSE(FindEmbeddedApiFile("nope.json").has_value());
}

TEST(BuiltinSchemas, DeploymentFieldsNumbersAndReferences) {
  const TypeSchema& d = RegistryType(N(kApps, "Deployment"));
  EXPECT_EQ(d.name, "io.k8s.api.apps.v1.Deployment");
  const FieldSchema& spec = Field(N(kApps, "Deployment"), "spec");
  EXPECT_EQ(spec.number, 2);
  EXPECT_EQ(spec.value.kind, ValueKind::kMessage);
  EXPECT_EQ(spec.value.message, &RegistryType(N(kApps, "DeploymentSpec")));
  EXPECT_EQ(d.FieldByNumber(1), d.Field("metadata"));
  EXPECT_EQ(Field(N(kApps, "Deployment"), "metadata").value.message,
            &RegistryType(N(kMeta, "ObjectMeta")));

  const FieldSchema& replicas = Field(N(kApps, "DeploymentSpec"), "replicas");
  EXPECT_EQ(replicas.value.kind, ValueKind::kInt32);
  EXPECT_TRUE(replicas.nullable_scalar);
  EXPECT_FALSE(Field(N(kApps, "DeploymentSpec"), "minReadySeconds").nullable_scalar);
  EXPECT_EQ(Field(N(kApps, "DeploymentSpec"), "strategy").patch_strategy, "retainKeys");
  EXPECT_TRUE(Field(N(kApps, "DeploymentSpec"), "strategy").PatchStrategyIs("retainKeys"));
}

TEST(BuiltinSchemas, PatchAndApplyMarkers) {
  const FieldSchema& containers = Field(N(kCore, "PodSpec"), "containers");
  EXPECT_TRUE(containers.repeated);
  EXPECT_EQ(containers.patch_strategy, "merge");
  EXPECT_EQ(containers.patch_merge_key, "name");
  EXPECT_EQ(containers.list_type, ListType::kMap);
  EXPECT_THAT(containers.list_map_keys, ElementsAre("name"));

  const FieldSchema& volumes = Field(N(kCore, "PodSpec"), "volumes");
  EXPECT_TRUE(volumes.PatchStrategyIs("merge"));
  EXPECT_TRUE(volumes.PatchStrategyIs("retainKeys"));
  EXPECT_FALSE(volumes.PatchStrategyIs("replace"));

  EXPECT_THAT(Field(N(kCore, "Container"), "ports").list_map_keys,
              ElementsAre("containerPort", "protocol"));
  EXPECT_EQ(Field(N(kCore, "PodSpec"), "nodeSelector").map_type, MapType::kAtomic);
  EXPECT_EQ(Field(N(kCore, "PodSpec"), "tolerations").list_type, ListType::kAtomic);
  EXPECT_EQ(Field(N(kMeta, "ObjectMeta"), "finalizers").list_type, ListType::kSet);
  EXPECT_TRUE(RegistryType(N(kCore, "ObjectReference")).atomic_struct);
  EXPECT_EQ(Field(N(kCore, "ContainerPort"), "protocol").default_json, "\"TCP\"");
  EXPECT_TRUE(Field(N(kApps, "DeploymentSpec"), "selector").required);
}

TEST(BuiltinSchemas, MapsAndSpecialTypes) {
  const FieldSchema& labels = Field(N(kMeta, "ObjectMeta"), "labels");
  EXPECT_TRUE(labels.is_map);
  EXPECT_FALSE(labels.repeated);
  EXPECT_EQ(labels.value.kind, ValueKind::kString);

  const FieldSchema& limits = Field(N(kCore, "ResourceRequirements"), "limits");
  EXPECT_TRUE(limits.is_map);
  ASSERT_EQ(limits.value.kind, ValueKind::kMessage);
  EXPECT_EQ(limits.value.message->special, SpecialType::kQuantity);

  EXPECT_EQ(Field(N(kMeta, "ObjectMeta"), "creationTimestamp").value.message->special,
            SpecialType::kTime);
  EXPECT_EQ(RegistryType(N(kMeta, "MicroTime")).special, SpecialType::kMicroTime);
  EXPECT_EQ(RegistryType(N(kMeta, "Duration")).special, SpecialType::kDuration);
  EXPECT_EQ(RegistryType(N(kMeta, "FieldsV1")).special, SpecialType::kFieldsV1);
  EXPECT_EQ(RegistryType("io.k8s.apimachinery.pkg.util.intstr.IntOrString").special,
            SpecialType::kIntOrString);
  EXPECT_EQ(RegistryType("io.k8s.apimachinery.pkg.runtime.RawExtension").special,
            SpecialType::kRawExtension);
  EXPECT_EQ(RegistryType("io.k8s.api.authentication.v1.ExtraValue").special,
            SpecialType::kStringList);
  EXPECT_EQ(RegistryType(N(kApps, "Deployment")).special, SpecialType::kNone);
}

TEST(BuiltinSchemas, InlineEmbedsAreFlattened) {
  const TypeSchema& volume = RegistryType(N(kCore, "Volume"));
  const FieldSchema* empty_dir = volume.Field("emptyDir");
  ASSERT_NE(empty_dir, nullptr);
  EXPECT_EQ(empty_dir->number, 0);  // lives in the embedded VolumeSource on the wire
  EXPECT_TRUE(empty_dir->nullable_scalar);
  EXPECT_EQ(volume.Field("volumeSource"), nullptr);
  EXPECT_EQ(volume.FieldByNumber(2), nullptr);
  const TypeSchema::InlineEmbed* embed = volume.InlineEmbedByNumber(2);
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->type, &RegistryType(N(kCore, "VolumeSource")));
  EXPECT_EQ(volume.FieldByNumber(1), volume.Field("name"));

  EXPECT_NE(RegistryType(N(kCore, "Probe")).Field("httpGet"), nullptr);
  EXPECT_NE(RegistryType(N(kCore, "SecretKeySelector")).Field("name"), nullptr);
  EXPECT_NE(
      RegistryType("io.k8s.api.admissionregistration.v1.RuleWithOperations").Field("apiGroups"),
      nullptr);
}

TEST(BuiltinSchemas, HandwrittenGroups) {
  const std::string crd = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.";
  EXPECT_EQ(Field(crd + "CustomResourceValidation", "openAPIV3Schema").value.kind, ValueKind::kAny);
  EXPECT_TRUE(Field(crd + "CustomResourceSubresources", "status").nullable_scalar);
  EXPECT_EQ(Field(crd + "CustomResourceDefinitionSpec", "versions").value.message,
            &RegistryType(crd + "CustomResourceDefinitionVersion"));
  EXPECT_EQ(Field(crd + "CustomResourceDefinitionStatus", "conditions").list_type, ListType::kMap);
}

// The indexes must agree with a linear scan for every field of every type.
TEST(BuiltinSchemas, IndexesAgreeWithLinearScan) {
  size_t fields = 0;
  for (const TypeSchema& t : BuiltinSchemas().types()) {
    for (const FieldSchema& f : t.fields) {
      ++fields;
      EXPECT_EQ(t.Field(f.name), &f) << t.name << "." << f.name;
      if (f.number > 0) {
        EXPECT_EQ(t.FieldByNumber(f.number), &f) << t.name << "." << f.name;
      }
      if (f.value.kind == ValueKind::kMessage) {
        EXPECT_NE(f.value.message, nullptr);
      }
    }
    EXPECT_EQ(t.Field("noSuchField"), nullptr);
    EXPECT_EQ(t.Field(""), nullptr);
    for (const FieldSchema& f : t.fields) {
      // A name one byte off, or a prefix of one, is another field or none.
      std::string near = f.name + "x";
      const FieldSchema* found = t.Field(near);
      EXPECT_TRUE(found == nullptr || found->name == near) << t.name << "." << near;
      near = f.name.substr(0, f.name.size() - 1);
      found = t.Field(near);
      EXPECT_TRUE(found == nullptr || found->name == near) << t.name << "." << near;
    }
    EXPECT_EQ(t.FieldByNumber(9999), nullptr);
  }
  EXPECT_GT(BuiltinSchemas().types().size(), 400u);
  EXPECT_GT(fields, 1800u);
}

TEST(TypeSchema, LookupsWorkWithoutIndex) {
  TypeSchema t;
  t.fields.push_back({.name = "b", .number = 2});
  t.fields.push_back({.name = "a", .number = 1});
  EXPECT_EQ(t.Field("a"), &t.fields[1]);
  EXPECT_EQ(t.FieldByNumber(2), &t.fields[0]);
  t.BuildIndex();
  EXPECT_EQ(t.Field("a"), &t.fields[1]);
  EXPECT_EQ(t.Field("b"), &t.fields[0]);
  EXPECT_EQ(t.FieldByNumber(1), &t.fields[1]);
  EXPECT_EQ(t.FieldByNumber(3), nullptr);
  EXPECT_EQ(t.FieldByNumber(0), nullptr);
  EXPECT_EQ(t.Field("c"), nullptr);
  TypeSchema empty;
  empty.BuildIndex();
  EXPECT_EQ(empty.Field("a"), nullptr);
  // Fields added after BuildIndex are found by scanning until the index is rebuilt.
  t.fields.push_back({.name = "c", .number = 3});
  EXPECT_EQ(t.Field("c"), &t.fields[2]);
}

struct ParseErrorCase {
  std::string name;
  std::string schema;
  std::string overrides;
  std::string want;
};

class SchemaRegistryParseError : public ::testing::TestWithParam<ParseErrorCase> {};

TEST_P(SchemaRegistryParseError, Rejects) {
  const ParseErrorCase& c = GetParam();
  std::vector<std::string_view> docs = {c.schema};
  auto reg = SchemaRegistry::Parse(docs, c.overrides);
  ASSERT_FALSE(reg.ok());
  EXPECT_EQ(reg.status().code(), util::Code::kInvalidArgument);
  EXPECT_THAT(reg.status().message(), HasSubstr(c.want));
}

const char kGood[] =
    R"({"package":"p","types":{"A":{"fields":[{"name":"b","number":1,"type":"p.B"}]},)"
    R"("B":{"fields":[{"name":"x","number":1,"type":"int32"}]}}})";

INSTANTIATE_TEST_SUITE_P(
    Cases, SchemaRegistryParseError,
    ::testing::Values(
        ParseErrorCase{"NotJson", "{", "{}", "schema document"},
        ParseErrorCase{"UnknownRef",
                       R"({"package":"p","types":{"A":{"fields":[{"name":"b","number":1,)"
                       R"("type":"p.Missing"}]}}})",
                       "{}", "unknown type p.Missing"},
        ParseErrorCase{"DuplicateNumber",
                       R"({"package":"p","types":{"A":{"fields":[{"name":"a","number":1,)"
                       R"("type":"int32"},{"name":"b","number":1,"type":"int32"}]}}})",
                       "{}", "duplicate field number 1"},
        ParseErrorCase{"NullableUnknownField", kGood, R"({"nullable":{"p.B":["nope"]}})",
                       "p.B has no field nope"},
        ParseErrorCase{"NullableUnknownType", kGood, R"({"nullable":{"p.C":["x"]}})",
                       "unknown type p.C"},
        ParseErrorCase{"BadSpecial", kGood, R"({"special":{"p.B":"Nope"}})", "bad entry p.B"},
        ParseErrorCase{"InlineScalar", kGood, R"({"inline":{"p.B":["x"]}})",
                       "no single message field"}),
    [](const auto& info) { return info.param.name; });

TEST(SchemaRegistry, ParsesAndFlattensSmallDocument) {
  std::vector<std::string_view> docs = {kGood};
  auto reg = SchemaRegistry::Parse(docs, R"({"inline":{"p.A":["b"]},"nullable":{"p.B":["*"]}})");
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  const TypeSchema* a = (*reg)->FindType("p.A");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a->Field("x"), nullptr);
  EXPECT_TRUE(a->Field("x")->nullable_scalar);
  EXPECT_EQ(a->InlineEmbedByNumber(1)->type, (*reg)->FindType("p.B"));
}

}  // namespace
}  // namespace converge::api
