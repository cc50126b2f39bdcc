#include "api/merge_patch.h"

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace converge::api {
namespace {

namespace json = boost::json;

json::value ParseJson(std::string_view text) {
  return json::parse(text);
}

struct MergeCase {
  std::string name;
  std::string original;
  std::string patch;
  std::string expected;
};

class MergePatchVectors : public testing::TestWithParam<MergeCase> {};

TEST_P(MergePatchVectors, Applies) {
  const MergeCase& c = GetParam();
  const json::value original = ParseJson(c.original);
  util::StatusOr<json::value> result = ApplyMergePatch(original, ParseJson(c.patch));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(JsonEqual(*result, ParseJson(c.expected)))
      << "got " << json::serialize(*result) << ", want " << c.expected;
  EXPECT_EQ(original, ParseJson(c.original)) << "the original must not change";
}

// RFC 7386 section 3 (the examples whose patch is an object or an array; upstream rejects null and
// scalar patches, see RejectsScalarAndNullPatches).
INSTANTIATE_TEST_SUITE_P(
    Rfc7386, MergePatchVectors,
    testing::Values(
        MergeCase{"ReplaceMember", R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
        MergeCase{"AddMember", R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
        MergeCase{"DeleteOnlyMember", R"({"a":"b"})", R"({"a":null})", R"({})"},
        MergeCase{"DeleteOneMember", R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
        MergeCase{"ScalarReplacesArray", R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
        MergeCase{"ArrayReplacesScalar", R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
        MergeCase{"NestedMergeAndDelete", R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})",
                  R"({"a":{"b":"d"}})"},
        MergeCase{"ArrayReplacesArray", R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
        MergeCase{"ArrayPatchReplacesArray", R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
        MergeCase{"ArrayPatchReplacesObject", R"({"a":"b"})", R"(["c"])", R"(["c"])"},
        MergeCase{"ExistingNullKept", R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
        MergeCase{"ObjectPatchOnArray", R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
        MergeCase{"NullsPrunedInNewObject", R"({})", R"({"a":{"bb":{"ccc":null}}})",
                  R"({"a":{"bb":{}}})"}),
    [](const testing::TestParamInfo<MergeCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Upstream, MergePatchVectors,
    testing::Values(
        // evanphx/json-patch prunes null members of objects inside arrays taken from the patch,
        // but keeps null array elements.
        MergeCase{"NullMembersPrunedInsideArrays", R"({})", R"({"a":[{"b":null,"c":1},null]})",
                  R"({"a":[{"c":1},null]})"},
        MergeCase{"NullMemberOfReplacedScalar", R"({"a":5})", R"({"a":{"b":null,"c":2}})",
                  R"({"a":{"c":2}})"},
        MergeCase{"DeleteMissingIsNoop", R"({"a":1})", R"({"zz":null})", R"({"a":1})"},
        MergeCase{"EmptyPatchIsNoop", R"({"a":{"b":[1,2]}})", R"({})", R"({"a":{"b":[1,2]}})"},
        MergeCase{"NumbersReplaceExactly", R"({"replicas":1})", R"({"replicas":3})",
                  R"({"replicas":3})"},
        MergeCase{"DeepMerge", R"({"spec":{"template":{"metadata":{"labels":{"a":"1"}}}}})",
                  R"({"spec":{"template":{"metadata":{"labels":{"b":"2","a":null}}}}})",
                  R"({"spec":{"template":{"metadata":{"labels":{"b":"2"}}}}})"}),
    [](const testing::TestParamInfo<MergeCase>& info) { return info.param.name; });

TEST(MergePatchTest, RejectsScalarAndNullPatches) {
  for (std::string_view patch : {"null", "\"bar\"", "5", "true"}) {
    util::StatusOr<json::value> result =
        ApplyMergePatch(ParseJson(R"({"a":"foo"})"), ParseJson(patch));
    ASSERT_FALSE(result.ok()) << patch;
    EXPECT_EQ(result.status().code(), util::Code::kInvalidArgument);
    EXPECT_EQ(result.status().message(), "Invalid JSON Patch");
  }
}

TEST(MergePatchTest, KeepsMemberOrder) {
  util::StatusOr<json::value> result = ApplyMergePatch(ParseJson(R"({"a":1,"b":2,"c":3,"d":4})"),
                                                       ParseJson(R"({"b":null,"e":5,"a":0})"));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(json::serialize(*result), R"({"a":0,"c":3,"d":4,"e":5})");
}

TEST(ParsePatchBodyTest, ReportsSyntaxErrors) {
  util::StatusOr<json::value> ok = ParsePatchBody(R"({"b":2})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, ParseJson(R"({"b":2})"));

  util::StatusOr<json::value> bad = ParsePatchBody(R"({"b":)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), util::Code::kInvalidArgument);
  EXPECT_TRUE(bad.status().message().starts_with("error decoding patch: "))
      << bad.status().message();
}

TEST(ParsePatchBodyTest, RejectsNumbersBeyondDouble) {
  for (std::string_view body : {R"({"a":1e999})", R"([-43E444444])", R"({"a":[{"b":1E400}]})"}) {
    util::StatusOr<json::value> parsed = ParsePatchBody(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.status().code(), util::Code::kInvalidArgument);
  }
  // Underflow is fine (it is zero), and so are large integers.
  EXPECT_TRUE(ParsePatchBody(R"({"a":1e-999,"b":18446744073709551615})").ok());
}

std::string Nested(int depth, std::string_view open, std::string_view close,
                   std::string_view inner) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  s += inner;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

TEST(MergePatchTest, NestingLimit) {
  // {"a":{"a":...{}...}} with exactly the limit is accepted, one more level is not.
  const std::string at_limit = Nested(kMaxPatchNestingDepth, R"({"a":)", "}", "1");
  const std::string over = Nested(kMaxPatchNestingDepth + 1, R"({"a":)", "}", "1");
  util::StatusOr<json::value> parsed = ParsePatchBody(at_limit);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(JsonNestingDepth(*parsed), kMaxPatchNestingDepth);
  util::StatusOr<json::value> too_deep = ParsePatchBody(over);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_EQ(too_deep.status().code(), util::Code::kInvalidArgument);

  // Merging a limit-deep patch into a limit-deep document recurses all the way down.
  util::StatusOr<json::value> merged = ApplyMergePatch(*parsed, *parsed);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_TRUE(JsonEqual(*merged, *parsed));

  json::value deeper(json::object_kind);
  deeper.get_object()["a"] = *parsed;
  util::StatusOr<json::value> rejected = ApplyMergePatch(ParseJson("{}"), deeper);
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.status().code(), util::Code::kInvalidArgument);
}

struct CreateCase {
  std::string name;
  std::string original;
  std::string modified;
  std::string expected_patch;
};

class CreateMergePatchVectors : public testing::TestWithParam<CreateCase> {};

TEST_P(CreateMergePatchVectors, RoundTrips) {
  const CreateCase& c = GetParam();
  util::StatusOr<json::value> patch =
      CreateMergePatch(ParseJson(c.original), ParseJson(c.modified));
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  EXPECT_TRUE(JsonEqual(*patch, ParseJson(c.expected_patch)))
      << "got " << json::serialize(*patch) << ", want " << c.expected_patch;
  util::StatusOr<json::value> applied = ApplyMergePatch(ParseJson(c.original), *patch);
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(JsonEqual(*applied, ParseJson(c.modified))) << json::serialize(*applied);
}

INSTANTIATE_TEST_SUITE_P(
    All, CreateMergePatchVectors,
    testing::Values(
        CreateCase{"Identical", R"({"a":{"b":[1]}})", R"({"a":{"b":[1]}})", R"({})"},
        CreateCase{"ScaleReplicas", R"({"spec":{"replicas":1,"selector":{}}})",
                   R"({"spec":{"replicas":3,"selector":{}}})", R"({"spec":{"replicas":3}})"},
        CreateCase{"AddAndRemove", R"({"a":1,"b":2})", R"({"b":2,"c":3})", R"({"a":null,"c":3})"},
        CreateCase{"ArraysWhole", R"({"a":[1,2,3]})", R"({"a":[1,3]})", R"({"a":[1,3]})"},
        CreateCase{"TypeChange", R"({"a":{"x":1}})", R"({"a":"s"})", R"({"a":"s"})"},
        CreateCase{"ObjectReplacesScalar", R"({"a":"s"})", R"({"a":{"x":1}})", R"({"a":{"x":1}})"},
        CreateCase{"NumbersByValue", R"({"a":1})", R"({"a":1.0})", R"({})"}),
    [](const testing::TestParamInfo<CreateCase>& info) { return info.param.name; });

TEST(CreateMergePatchTest, RequiresObjects) {
  EXPECT_EQ(CreateMergePatch(ParseJson("[1]"), ParseJson("{}")).status().code(),
            util::Code::kInvalidArgument);
  EXPECT_EQ(CreateMergePatch(ParseJson("{}"), ParseJson("3")).status().code(),
            util::Code::kInvalidArgument);
}

struct EqualCase {
  std::string name;
  std::string a;
  std::string b;
  bool equal;
};

class JsonEqualVectors : public testing::TestWithParam<EqualCase> {};

TEST_P(JsonEqualVectors, Compares) {
  const EqualCase& c = GetParam();
  EXPECT_EQ(JsonEqual(ParseJson(c.a), ParseJson(c.b)), c.equal);
  EXPECT_EQ(JsonEqual(ParseJson(c.b), ParseJson(c.a)), c.equal);
}

INSTANTIATE_TEST_SUITE_P(
    All, JsonEqualVectors,
    testing::Values(EqualCase{"IntAndDouble", "1", "1.0", true},
                    EqualCase{"IntAndFraction", "1", "1.5", false},
                    EqualCase{"BigUnsigned", "18446744073709551615", "18446744073709551615", true},
                    EqualCase{"NegativeAndUnsigned", "-1", "18446744073709551615", false},
                    EqualCase{"MemberOrder", R"({"a":1,"b":2})", R"({"b":2,"a":1})", true},
                    EqualCase{"ExtraMember", R"({"a":1})", R"({"a":1,"b":null})", false},
                    EqualCase{"ArrayOrder", "[1,2]", "[2,1]", false},
                    EqualCase{"StringAndNumber", R"("10")", "10", false},
                    EqualCase{"NullAndFalse", "null", "false", false},
                    EqualCase{"Nested", R"({"a":[{"b":[1,{"c":2}]}]})",
                              R"({"a":[{"b":[1.0,{"c":2}]}]})", true}),
    [](const testing::TestParamInfo<EqualCase>& info) { return info.param.name; });

TEST(JsonEqualTest, AnObjectEqualsEveryOrderOfItsMembersAndNoChangedOne) {
  const json::object pod =
      ParseJson(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web",)"
                R"("labels":{"app":"web","tier":"fe"}},"spec":{"nodeName":"n1",)"
                R"("containers":[{"name":"c","image":"i"}]},"status":{}})")
          .as_object();
  std::vector<std::string> keys;
  for (const auto& m : pod) keys.emplace_back(m.key());
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::shuffle(keys.begin(), keys.end(), rng);
    json::object shuffled;
    for (const std::string& k : keys) shuffled[k] = pod.at(k);
    EXPECT_TRUE(JsonEqual(pod, shuffled));
    EXPECT_TRUE(JsonEqual(json::value(pod), json::value(shuffled)));
    shuffled["spec"].as_object()["nodeName"] = "n2";
    EXPECT_FALSE(JsonEqual(pod, shuffled));
    shuffled["spec"].as_object()["nodeName"] = "n1";
    shuffled.erase("status");
    shuffled["state"] = json::object();  // as many members, one of another name
    EXPECT_FALSE(JsonEqual(pod, shuffled));
  }
}

TEST(RemoveNullMembersTest, PrunesObjectsEverywhereButKeepsArrayNulls) {
  json::value v = ParseJson(R"({"a":null,"b":{"c":null,"d":[null,{"e":null,"f":1}]},"g":2})");
  RemoveNullMembers(v);
  EXPECT_EQ(json::serialize(v), R"({"b":{"d":[null,{"f":1}]},"g":2})");
}

TEST(JsonNestingDepthTest, Counts) {
  EXPECT_EQ(JsonNestingDepth(ParseJson("1")), 0);
  EXPECT_EQ(JsonNestingDepth(ParseJson("{}")), 1);
  EXPECT_EQ(JsonNestingDepth(ParseJson("[[1],{\"a\":{\"b\":[]}}]")), 4);
  EXPECT_EQ(JsonNestingDepth(ParseJson("[[[[1]]]]"), 2), 3) << "stops at the cap";
}

}  // namespace
}  // namespace converge::api
