#include "api/field_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/schema_registry.h"

namespace converge::api {
namespace {

namespace json = boost::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const TypeSchema& Type(std::string_view name) {
  const TypeSchema* t = BuiltinSchemas().FindType(name);
  EXPECT_NE(t, nullptr) << name;
  return *t;
}
const TypeSchema& Deployment() {
  return Type("io.k8s.api.apps.v1.Deployment");
}

json::object Obj(std::string_view text) {
  return json::parse(text).as_object();
}

TEST(FindUnknownFields, ReportsPathsInDocumentOrderAndPrunes) {
  json::object d = Obj(R"({"apiVersion":"apps/v1","kind":"Deployment","foo":1,
    "metadata":{"name":"web","bar":{"x":1},"labels":{"any-key":"ok"}},
    "spec":{"replicas":1,"foo":true,
            "template":{"spec":{"containers":[{"name":"a"},{"name":"b","foo":"x",
                                                "ports":[{"containerPort":80,"bad":1}]}],
                                "volumes":[{"name":"v","emptyDir":{"nope":1}}]}}},
    "status":{}})");
  EXPECT_THAT(FindUnknownFields(d, Deployment(), /*prune=*/false),
              ElementsAre("foo", "metadata.bar", "spec.foo", "spec.template.spec.containers[1].foo",
                          "spec.template.spec.containers[1].ports[0].bad",
                          "spec.template.spec.volumes[0].emptyDir.nope"));
  json::object pruned = d;
  EXPECT_EQ(PruneUnknownFields(pruned, Deployment()).size(), 6u);
  EXPECT_EQ(json::value(pruned), json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","labels":{"any-key":"ok"}},
    "spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"a"},{"name":"b",
            "ports":[{"containerPort":80}]}],"volumes":[{"name":"v","emptyDir":{}}]}}},
    "status":{}})"));
  EXPECT_THAT(FindUnknownFields(pruned, Deployment(), false), IsEmpty());
}

// A patch applied to a clean object: the walk where the patch reaches finds what a whole walk
// finds, and leaves alone what the patch does not reach (here an unknown field planted in the
// base, which a stored object never has, shows that it is not looked at).
TEST(PruneUnknownFieldsWhere, LooksWherePatchReaches) {
  const json::object patch = Obj(R"({"$setElementOrder/x":[],"metadata":{"labels":{"new":"1"},
    "bad":2},"spec":{"paused":true,"nope":1,"selector":{"matchLabels":{"k":"v"}},
    "template":{"spec":{"containers":[{"name":"a","foo":1}]}},
    "strategy":{"rollingUpdate":{"maxSurge":1,"surge":2}}},"status":null,"extra":{"y":1}})");
  json::object patched = Obj(R"({"apiVersion":"apps/v1","kind":"Deployment","extra":{"y":1},
    "metadata":{"name":"web","labels":{"new":"1"},"bad":2},
    "spec":{"replicas":1,"paused":true,"nope":1,"planted":1,"selector":{"matchLabels":{"k":"v"}},
            "template":{"spec":{"containers":[{"name":"a","foo":1}]}},
            "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"surge":2}}}})");
  json::object whole = patched;
  std::vector<std::string> found = PruneUnknownFieldsWhere(patched, Deployment(), patch);
  SortFieldPaths(found);
  EXPECT_THAT(found,
              ElementsAre("extra", "metadata.bad", "spec.nope", "spec.strategy.rollingUpdate.surge",
                          "spec.template.spec.containers[0].foo"));
  std::vector<std::string> all = PruneUnknownFields(whole, Deployment());
  SortFieldPaths(all);
  EXPECT_THAT(all, ElementsAre("extra", "metadata.bad", "spec.nope", "spec.planted",
                               "spec.strategy.rollingUpdate.surge",
                               "spec.template.spec.containers[0].foo"));
  EXPECT_TRUE(patched.at("spec").as_object().contains("planted"));
  EXPECT_FALSE(patched.at("spec").as_object().contains("nope"));
  EXPECT_FALSE(patched.contains("extra"));
}

TEST(FindUnknownFields, ArbitraryJsonIsNeverUnknown) {
  json::object rev = Obj(R"({"metadata":{"name":"r"},"data":{"anything":{"goes":[1]}}})");
  EXPECT_THAT(FindUnknownFields(rev, Type("io.k8s.api.apps.v1.ControllerRevision"), false),
              IsEmpty());
  json::object crd = Obj(R"({"spec":{"group":"g","versions":[{"name":"v1","schema":{
    "openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})");
  EXPECT_THAT(FindUnknownFields(crd,
                                Type("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
                                     "CustomResourceDefinition"),
                                false),
              IsEmpty());
  TypeSchema open;
  open.name = "test.Open";
  open.preserve_unknown_fields = true;
  json::object any = Obj(R"({"x":{"y":1}})");
  EXPECT_THAT(FindUnknownFields(any, open, false), IsEmpty());
}

TEST(FindDuplicateFields, PathsOfRepeatedKeys) {
  auto dups = FindDuplicateFields(R"({"kind":"Deployment","kind":"Deployment",
    "spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"a"},
            {"name":"b","image":"x","image":"y"}]}},"replicas":2},
    "metadata":{"labels":{"a":"1","a":"2"}}})");
  ASSERT_TRUE(dups.ok());
  EXPECT_THAT(*dups, ElementsAre("kind", "spec.template.spec.containers[1].image", "spec.replicas",
                                 "metadata.labels.a"));
  EXPECT_THAT(*FindDuplicateFields(R"({"a":[{"b":1},{"b":1}],"c":{"b":1}})"), IsEmpty());
  EXPECT_FALSE(FindDuplicateFields("{").ok());
}

// Objects past the linear scan's size (their keys go into a hash set), nested arrays, a root
// array, escaped keys, and the keys below a repeated key.
TEST(FindDuplicateFields, LargeObjectsNestedArraysAndEscapes) {
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  many += R"("k3":0,"k39":1,"k40":{"x":1,"x":2}})";
  EXPECT_THAT(*FindDuplicateFields(many), ElementsAre("k3", "k39", "k40.x"));
  EXPECT_THAT(*FindDuplicateFields(R"({"a":[[{"b":1}],[{"c":1},{"b":1,"b":2}]]})"),
              ElementsAre("a[1][1].b"));
  EXPECT_THAT(*FindDuplicateFields(R"([{"a":1},{"a":1,"a":2}])"), ElementsAre("[1].a"));
  EXPECT_THAT(*FindDuplicateFields(R"({"a\u0062":1,"ab":2})"), ElementsAre("ab"));
  EXPECT_THAT(*FindDuplicateFields(R"({"m":{"n":1},"m":{"n":2,"n":3}})"), ElementsAre("m", "m.n"));
  auto keys = ScanJsonKeys(R"({"a":{"b":[{"c":1,"c":2}]},"d":1})");
  ASSERT_TRUE(keys.ok());
  std::vector<std::string> paths;
  for (const JsonKey& k : *keys) paths.push_back(k.path + (k.duplicate ? "!" : ""));
  EXPECT_THAT(paths, ElementsAre("a", "a.b", "a.b[0].c", "a.b[0].c!", "d"));
}

// One pass finds what json::parse and FindDuplicateFields find in two: the same document (last
// repeated key wins), the same paths, the same errors.
TEST(ParseJsonFindingDuplicates, MatchesParseAndFindDuplicateFields) {
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  many += R"("k3":0,"k40":{"x":1,"x":[2,-3,4.5e1,true,null,"s\n"]}})";
  const std::vector<std::string> documents = {
      R"({"kind":"Pod","kind":"Pod","spec":{"containers":[{"name":"a","name":"b"}]}})",
      R"({"a\u0062":"v\u00e9","ab":2,"long key with an \"escape\"":{"k":1,"k":2}})",
      R"([{"a":1},{"a":1,"a":2}])",
      R"({"n":18446744073709551615,"m":-9223372036854775808,"d":1e308})",
      many,
      "{}",
      "  \"just a string\"  ",
  };
  json::parse_options options;
  for (const std::string& text : documents) {
    boost::system::error_code ec;
    std::vector<std::string> found = {"kept"};
    json::value v = ParseJsonFindingDuplicates(text, options, ec, &found);
    ASSERT_FALSE(ec) << text << ": " << ec.message();
    EXPECT_EQ(v, json::parse(text)) << text;
    util::StatusOr<std::vector<std::string>> separately = FindDuplicateFields(text);
    ASSERT_TRUE(separately.ok()) << text;
    std::vector<std::string> want = {"kept"};
    want.insert(want.end(), separately->begin(), separately->end());
    EXPECT_EQ(found, want) << text;
    // Without a list to fill, the document alone.
    EXPECT_EQ(ParseJsonFindingDuplicates(text, options, ec, nullptr), json::parse(text)) << text;
  }
  for (std::string_view bad : {"{", "{} {}", "[1,]", "{\"a\":1}x", ""}) {
    boost::system::error_code want;
    json::parse(bad, want, {}, options);
    boost::system::error_code ec;
    std::vector<std::string> found;
    EXPECT_TRUE(ParseJsonFindingDuplicates(bad, options, ec, &found).is_null()) << bad;
    EXPECT_EQ(ec, want) << bad;
  }
  json::parse_options shallow;
  shallow.max_depth = 2;
  boost::system::error_code ec;
  ParseJsonFindingDuplicates(R"({"a":{"b":{"c":1}}})", shallow, ec, nullptr);
  EXPECT_EQ(ec, json::error::too_deep);
}

struct TypeCase {
  std::string name;
  std::string body;
  std::string want;  // empty: OK
};

class CheckTypes : public ::testing::TestWithParam<TypeCase> {};

TEST_P(CheckTypes, WordsMismatchesAsGoDoes) {
  util::Status st = CheckFieldTypes(Obj(GetParam().body), Deployment());
  if (GetParam().want.empty()) {
    EXPECT_TRUE(st.ok()) << st.ToString();
    return;
  }
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), util::Code::kInvalidArgument);
  EXPECT_EQ(st.message(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Deployment, CheckTypes,
    ::testing::Values(
        TypeCase{"Valid",
                 R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w",
                    "creationTimestamp":"2024-05-06T07:08:09Z","labels":{"a":"b"}},
                    "spec":{"replicas":3,"paused":false,"selector":{"matchLabels":{"a":"b"}},
                    "strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},
                    "template":{"spec":{"containers":[{"name":"c","image":"i",
                      "resources":{"limits":{"cpu":"500m","memory":"1Gi","x":1.5}},
                      "ports":[{"containerPort":80}]}],
                      "volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi"}}]}}}})",
                 ""},
        TypeCase{"NullsAreUnset",
                 R"({"metadata":null,"spec":{"replicas":null,"template":{"spec":{"containers":
                    [{"name":null,"ports":null}]}}}})",
                 ""},
        TypeCase{"StringIntoInt32", R"({"spec":{"replicas":"3"}})",
                 "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas "
                 "of type int32"},
        TypeCase{"FractionIntoInt32", R"({"spec":{"replicas":1.5}})",
                 "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec."
                 "replicas of type int32"},
        TypeCase{"OverflowInt32", R"({"spec":{"replicas":3000000000}})",
                 "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec."
                 "spec.replicas of type int32"},
        TypeCase{"NumberIntoStringInList",
                 R"({"spec":{"template":{"spec":{"containers":[{"name":"a"},{"image":5}]}}}})",
                 "json: cannot unmarshal number into Go struct field Container.spec.template.spec."
                 "containers.image of type string"},
        TypeCase{"ObjectIntoList", R"({"spec":{"template":{"spec":{"containers":{}}}}})",
                 "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec."
                 "containers of type []v1.Container"},
        TypeCase{"NumberIntoMapOfStrings", R"({"metadata":{"labels":{"a":1}}})",
                 "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
                 "type string"},
        TypeCase{"ArrayIntoMap", R"({"metadata":{"labels":[]}})",
                 "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of "
                 "type map[string]string"},
        TypeCase{"NumberKind", R"({"kind":5})",
                 "json: cannot unmarshal number into Go struct field Deployment.kind of type "
                 "string"},
        TypeCase{"StringIntoBool", R"({"spec":{"paused":"yes"}})",
                 "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of "
                 "type bool"},
        TypeCase{"StringIntoStruct", R"({"spec":{"selector":"app=web"}})",
                 "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.selector "
                 "of type v1.LabelSelector"},
        TypeCase{"InlineEmbeddedField",
                 R"({"spec":{"template":{"spec":{"volumes":[{"name":"v","emptyDir":"x"}]}}}})",
                 "json: cannot unmarshal string into Go struct field Volume.spec.template.spec."
                 "volumes.emptyDir of type v1.EmptyDirVolumeSource"},
        TypeCase{"BadTime", R"({"metadata":{"creationTimestamp":"yesterday"}})",
                 "parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
                 "\"yesterday\" as \"2006\""},
        TypeCase{"BadQuantity",
                 R"({"spec":{"template":{"spec":{"containers":[{"resources":{"limits":
                    {"cpu":"lots"}}}]}}}})",
                 "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        TypeCase{"BadQuantitySuffix",
                 R"({"spec":{"template":{"spec":{"containers":[{"resources":{"limits":
                    {"cpu":"1Ki2"}}}]}}}})",
                 "unable to parse quantity's suffix"},
        TypeCase{"TwoDecimalPoints",
                 R"({"spec":{"template":{"spec":{"containers":[{"resources":{"limits":
                    {"cpu":"1.2.3"}}}]}}}})",
                 "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        TypeCase{"BoolIntoIntOrString",
                 R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}})",
                 "json: cannot unmarshal bool into Go value of type int32"},
        TypeCase{"FirstErrorWins", R"({"spec":{"paused":1,"replicas":"x"}})",
                 "json: cannot unmarshal number into Go struct field DeploymentSpec.spec.paused of "
                 "type bool"}),
    [](const auto& info) { return info.param.name; });

TEST(CheckFieldTypes, BytesMustBeBase64) {
  util::Status st =
      CheckFieldTypes(Obj(R"({"data":{"k":"not base64!"}})"), Type("io.k8s.api.core.v1.Secret"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "illegal base64 data at input byte 3");
  EXPECT_TRUE(
      CheckFieldTypes(Obj(R"({"data":{"k":"czNjcjN0"}})"), Type("io.k8s.api.core.v1.Secret")).ok());
}

TEST(DecodeJsonBody, StrictRejectsUnknownAndDuplicateFields) {
  auto got = DecodeJsonBody(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "spec":{"replicas":1,"replicas":2,"foo":1}})",
                            Deployment(), FieldValidation::kStrict);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), util::Code::kInvalidArgument);
  // sigs.k8s.io/json reports in document order: the repeated replicas come before foo.
  EXPECT_EQ(got.status().message(),
            "strict decoding error: duplicate field \"spec.replicas\", unknown field \"spec.foo\"");
}

TEST(DecodeJsonBody, WarnListsProblemsAndPrunes) {
  auto got = DecodeJsonBody(R"({"kind":"Deployment","spec":{"replicas":1,"replicas":2,"foo":1}})",
                            Deployment(), FieldValidation::kWarn);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_THAT(got->warnings,
              ElementsAre("duplicate field \"spec.replicas\"", "unknown field \"spec.foo\""));
  EXPECT_EQ(json::value(got->object),
            json::parse(R"({"kind":"Deployment","spec":{"replicas":2}})"));
}

TEST(DecodeJsonBody, IgnorePrunesSilently) {
  auto got = DecodeJsonBody(R"({"spec":{"foo":1}})", Deployment(), FieldValidation::kIgnore);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(got->warnings, IsEmpty());
  EXPECT_EQ(json::value(got->object), json::parse(R"({"spec":{}})"));
}

TEST(DecodeJsonBody, TypeErrorsWinOverStrictProblems) {
  auto got = DecodeJsonBody(R"({"foo":1,"spec":{"replicas":"1"}})", Deployment(),
                            FieldValidation::kStrict);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), ::testing::StartsWith("json: cannot unmarshal string"));
}

TEST(DecodeJsonBody, MalformedOrNotAnObject) {
  EXPECT_FALSE(DecodeJsonBody("{", Deployment(), FieldValidation::kStrict).ok());
  auto arr = DecodeJsonBody("[]", Deployment(), FieldValidation::kStrict);
  ASSERT_FALSE(arr.ok());
  EXPECT_EQ(arr.status().message(),
            "json: cannot unmarshal array into Go value of type v1.Deployment");
}

TEST(ParseFieldValidation, UpstreamValues) {
  EXPECT_EQ(*ParseFieldValidation(""), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Warn"), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Strict"), FieldValidation::kStrict);
  EXPECT_EQ(*ParseFieldValidation("Ignore"), FieldValidation::kIgnore);
  auto bad = ParseFieldValidation("strict");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", "
            "\"Warn\"");
}

TEST(DecodeJsonBody, AnUnknownFieldGivenTwiceIsReportedOnceAndItsValueNotLookedInto) {
  auto got = DecodeJsonBody(R"({"kind":"Deployment","spec":{"foo":{"a":1,"a":2},"foo":1,
    "replicas":1,"replicas":2},"metadata":{"labels":{"x":"1","x":"2"}}})",
                            Deployment(), FieldValidation::kWarn);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_THAT(got->warnings,
              ElementsAre("unknown field \"spec.foo\"", "duplicate field \"spec.replicas\"",
                          "duplicate field \"metadata.labels.x\""));
}

TEST(DecodeJsonBody, YamlBodiesReportGoYamlLinesThenSortedUnknownFields) {
  const std::vector<std::string> yaml = {"line 4: key \"replicas\" already set in map"};
  auto got = DecodeJsonBody(R"({"kind":"Deployment","spec":{"zzz":1,"replicas":2,"aaa":1}})",
                            Deployment(), FieldValidation::kStrict, &yaml);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "strict decoding error: yaml: unmarshal errors:\n"
            "  line 4: key \"replicas\" already set in map, unknown field \"spec.aaa\", "
            "unknown field \"spec.zzz\"");
  got = DecodeJsonBody(R"({"kind":"Deployment","spec":{"zzz":1,"replicas":2,"aaa":1}})",
                       Deployment(), FieldValidation::kWarn, &yaml);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_THAT(got->warnings,
              ElementsAre("line 4: key \"replicas\" already set in map",
                          "unknown field \"spec.aaa\"", "unknown field \"spec.zzz\""));
}

TEST(TypedStrictProblems, DocumentOrderWithoutDuplicatesBelowUnknownFields) {
  const std::string text =
      R"({"a":{"x":1,"x":2},"b":1,"b":2,"c":[{"d":1,"d":1,"e":{"f":1,"f":1}}],"a":3})";
  auto got = TypedStrictProblems(text, {"a", "c[0].e"}, {"a.x", "b", "c[0].d", "c[0].e.f", "a"});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_THAT(*got, ElementsAre("unknown field \"a\"", "duplicate field \"b\"",
                                "duplicate field \"c[0].d\"", "unknown field \"c[0].e\""));
}

TEST(SortFieldPaths, KeysSortedPerLevelAndIndicesNumerically) {
  std::vector<std::string> paths = {"spec.unknownDupe",
                                    "spec.unknown1",
                                    "metadata.x",
                                    "spec.template.spec.containers[10].a",
                                    "spec.template.spec.containers[2].b",
                                    "spec.a-b",
                                    "spec.a.c"};
  SortFieldPaths(paths);
  EXPECT_THAT(
      paths,
      ElementsAre("metadata.x", "spec.a.c", "spec.a-b", "spec.template.spec.containers[2].b",
                  "spec.template.spec.containers[10].a", "spec.unknown1", "spec.unknownDupe"));
}

TEST(JsonPatchStrictProblems, OperationFieldsAndValues) {
  auto got = JsonPatchStrictProblems(R"([
    {"op":"add","path":"/a","value":"v","foo":"bar","foo":"baz"},
    {"op":"add","path":"/b","path":"/c","value":{"k":1,"k":2}},
    {"op":"remove","path":"/d","Op":"x"}])");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_THAT(*got, ElementsAre("json patch unknown field \"[0].foo\"",
                                "json patch duplicate field \"[1].path\"",
                                "json patch duplicate field \"[1].value.k\"",
                                "json patch unknown field \"[2].Op\""));
}

TEST(StrictReport, YamlDuplicatesAreOneErrorButOneWarningEach) {
  StrictReport r;
  r.AddYamlDuplicates({"line 2: key \"a\" already set in map", "line 3: key 1 already set in map"});
  r.Add("unknown field \"b\"");
  EXPECT_EQ(r.Message(),
            "strict decoding error: yaml: unmarshal errors:\n  line 2: key \"a\" already set in "
            "map\n  line 3: key 1 already set in map, unknown field \"b\"");
  EXPECT_THAT(r.warnings, ElementsAre("line 2: key \"a\" already set in map",
                                      "line 3: key 1 already set in map", "unknown field \"b\""));
}

}  // namespace
}  // namespace converge::api
