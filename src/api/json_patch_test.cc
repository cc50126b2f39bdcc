#include "api/json_patch.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/merge_patch.h"

namespace converge::api {
namespace {

namespace json = boost::json;

json::value J(std::string_view text) {
  return json::parse(text);
}

struct PatchCase {
  std::string name;
  std::string document;
  std::string patch;
  std::string expected;  // empty: the patch must fail with `code`
  util::Code code = util::Code::kOk;
  std::string message = "";  // when set, the exact error message
};

class JsonPatchVectors : public testing::TestWithParam<PatchCase> {};

TEST_P(JsonPatchVectors, Applies) {
  const PatchCase& c = GetParam();
  const json::value document = J(c.document);
  util::StatusOr<json::value> result = ApplyJsonPatch(document, J(c.patch));
  if (c.expected.empty()) {
    ASSERT_FALSE(result.ok()) << "unexpectedly got " << json::serialize(*result);
    EXPECT_EQ(result.status().code(), c.code) << result.status().ToString();
    if (!c.message.empty()) {
      EXPECT_EQ(result.status().message(), c.message);
    }
  } else {
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(JsonEqual(*result, J(c.expected)))
        << "got " << json::serialize(*result) << ", want " << c.expected;
  }
  EXPECT_EQ(document, J(c.document)) << "the input document must not change";
}

std::string CaseName(const testing::TestParamInfo<PatchCase>& info) {
  return info.param.name;
}

constexpr util::Code kUnprocessable = util::Code::kFailedPrecondition;  // upstream 422

// RFC 6902 appendix A, restated.
INSTANTIATE_TEST_SUITE_P(
    Rfc6902AppendixA, JsonPatchVectors,
    testing::Values(
        PatchCase{"A1AddObjectMember", R"({"foo":"bar"})",
                  R"([{"op":"add","path":"/baz","value":"qux"}])", R"({"baz":"qux","foo":"bar"})"},
        PatchCase{"A2AddArrayElement", R"({"foo":["bar","baz"]})",
                  R"([{"op":"add","path":"/foo/1","value":"qux"}])",
                  R"({"foo":["bar","qux","baz"]})"},
        PatchCase{"A3RemoveObjectMember", R"({"baz":"qux","foo":"bar"})",
                  R"([{"op":"remove","path":"/baz"}])", R"({"foo":"bar"})"},
        PatchCase{"A4RemoveArrayElement", R"({"foo":["bar","qux","baz"]})",
                  R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})"},
        PatchCase{"A5ReplaceValue", R"({"baz":"qux","foo":"bar"})",
                  R"([{"op":"replace","path":"/baz","value":"boo"}])",
                  R"({"baz":"boo","foo":"bar"})"},
        PatchCase{"A6MoveValue", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
                  R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
                  R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
        PatchCase{"A7MoveArrayElement", R"({"foo":["all","grass","cows","eat"]})",
                  R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
                  R"({"foo":["all","cows","eat","grass"]})"},
        PatchCase{"A8TestSucceeds", R"({"baz":"qux","foo":["a",2,"c"]})",
                  R"([{"op":"test","path":"/baz","value":"qux"},
                      {"op":"test","path":"/foo/1","value":2}])",
                  R"({"baz":"qux","foo":["a",2,"c"]})"},
        PatchCase{"A9TestFails", R"({"baz":"qux"})",
                  R"([{"op":"test","path":"/baz","value":"bar"}])", "", kUnprocessable,
                  "testing value /baz failed: test failed"},
        PatchCase{"A10AddNestedObject", R"({"foo":"bar"})",
                  R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
                  R"({"foo":"bar","child":{"grandchild":{}}})"},
        PatchCase{"A11IgnoresUnknownMembers", R"({"foo":"bar"})",
                  R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])",
                  R"({"foo":"bar","baz":"qux"})"},
        PatchCase{"A12AddToMissingTarget", R"({"foo":"bar"})",
                  R"([{"op":"add","path":"/baz/bat","value":"qux"}])", "", kUnprocessable,
                  "add operation does not apply: doc is missing path: \"/baz/bat\": missing value"},
        // A.13's duplicate "op" member: the parser keeps the last one, as Go does, and the
        // resulting remove fails.
        PatchCase{"A13DuplicateOpMember", R"({"foo":"bar"})",
                  R"([{"op":"add","path":"/baz","value":"qux","op":"remove"}])", "",
                  kUnprocessable},
        PatchCase{"A14EscapeOrdering", R"({"/":9,"~1":10})",
                  R"([{"op":"test","path":"/~01","value":10}])", R"({"/":9,"~1":10})"},
        PatchCase{"A15StringIsNotNumber", R"({"/":9,"~1":10})",
                  R"([{"op":"test","path":"/~01","value":"10"}])", "", kUnprocessable},
        PatchCase{"A16AddArrayValue", R"({"foo":["bar"]})",
                  R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])",
                  R"({"foo":["bar",["abc","def"]]})"}),
    CaseName);

// RFC 6902 rules beyond the appendix, and pointer escaping.
INSTANTIATE_TEST_SUITE_P(
    Rules, JsonPatchVectors,
    testing::Values(
        PatchCase{"EscapedSlashAndTilde", R"({"a/b":{"c~d":1}})",
                  R"([{"op":"replace","path":"/a~1b/c~0d","value":2}])", R"({"a/b":{"c~d":2}})"},
        PatchCase{"EmptyKey", R"({"":{"":1}})", R"([{"op":"replace","path":"//","value":2}])",
                  R"({"":{"":2}})"},
        PatchCase{"AppendWithDash", R"({"a":[1]})", R"([{"op":"add","path":"/a/-","value":2}])",
                  R"({"a":[1,2]})"},
        PatchCase{"AddAtEndIndex", R"({"a":[1]})", R"([{"op":"add","path":"/a/1","value":2}])",
                  R"({"a":[1,2]})"},
        PatchCase{"AddPastEnd", R"({"a":[1]})", R"([{"op":"add","path":"/a/2","value":2}])", "",
                  kUnprocessable,
                  "error in add for path: '/a/2': Unable to access invalid index: 2: invalid index "
                  "referenced"},
        PatchCase{"AddReplacesExistingMember", R"({"a":1})",
                  R"([{"op":"add","path":"/a","value":2}])", R"({"a":2})"},
        PatchCase{"RemoveMissingMember", R"({"a":1})", R"([{"op":"remove","path":"/b"}])", "",
                  kUnprocessable,
                  "error in remove for path: '/b': Unable to remove nonexistent key: b: missing "
                  "value"},
        PatchCase{"RemovePastEnd", R"({"a":[1]})", R"([{"op":"remove","path":"/a/1"}])", "",
                  kUnprocessable},
        PatchCase{"DashOnlyForAdd", R"({"a":[1]})", R"([{"op":"remove","path":"/a/-"}])", "",
                  kUnprocessable},
        PatchCase{"NonNumericIndex", R"({"a":[1]})", R"([{"op":"add","path":"/a/x","value":0}])",
                  "", kUnprocessable,
                  "error in add for path: '/a/x': value was not a proper array index: 'x': "
                  "strconv.Atoi: parsing \"x\": invalid syntax"},
        PatchCase{"ThroughScalarFails", R"({"a":1})", R"([{"op":"add","path":"/a/b","value":0}])",
                  "", kUnprocessable},
        PatchCase{"ThroughNullFails", R"({"a":null})", R"([{"op":"add","path":"/a/b","value":0}])",
                  "", kUnprocessable},
        PatchCase{"IndexIntoNestedArrays", R"({"a":[[0,1],[2,3]]})",
                  R"([{"op":"replace","path":"/a/1/0","value":9}])", R"({"a":[[0,1],[9,3]]})"},
        PatchCase{"MoveIntoOwnChildFails", R"({"a":{"b":{}}})",
                  R"([{"op":"move","from":"/a","path":"/a/b/c"}])", "", kUnprocessable},
        PatchCase{"MoveToSamePlace", R"({"a":1})", R"([{"op":"move","from":"/a","path":"/a"}])",
                  R"({"a":1})"},
        PatchCase{"CopyIntoOwnChild", R"({"a":{"b":1}})",
                  R"([{"op":"copy","from":"/a","path":"/a/c"}])", R"({"a":{"b":1,"c":{"b":1}}})"},
        PatchCase{"CopyArrayElement", R"({"a":[1,2]})",
                  R"([{"op":"copy","from":"/a/0","path":"/a/-"}])", R"({"a":[1,2,1]})"},
        PatchCase{"CopyFromMissingFails", R"({"a":1})",
                  R"([{"op":"copy","from":"/b","path":"/c"}])", "", kUnprocessable,
                  "copy operation does not apply: doc is missing from path: /b: missing value"},
        PatchCase{"TestWholeDocument", R"({"a":[1]})",
                  R"([{"op":"test","path":"","value":{"a":[1.0]}}])", R"({"a":[1]})"},
        PatchCase{"TestObjectsIgnoreMemberOrder", R"({"a":{"x":1,"y":2}})",
                  R"([{"op":"test","path":"/a","value":{"y":2,"x":1}}])", R"({"a":{"x":1,"y":2}})"},
        PatchCase{"UnknownOp", R"({})", R"([{"op":"frobnicate","path":"/a"}])", "", kUnprocessable,
                  "Unexpected kind: frobnicate"},
        PatchCase{"MissingOp", R"({})", R"([{"path":"/a"}])", "", kUnprocessable,
                  "Unexpected kind: unknown"},
        PatchCase{"MissingPath", R"({})", R"([{"op":"remove"}])", "", kUnprocessable,
                  "remove operation failed to decode path: missing value"},
        PatchCase{"NonStringPath", R"({})", R"([{"op":"replace","path":5,"value":1}])", "",
                  kUnprocessable,
                  "replace operation failed to decode path: json: cannot unmarshal number into Go "
                  "value of type string"},
        PatchCase{"MissingFrom", R"({})", R"([{"op":"move","path":"/a"}])", "", kUnprocessable,
                  "move operation failed to decode from: operation, missing from field: missing "
                  "value"},
        PatchCase{"PathWithoutLeadingSlash", R"({"a":1})",
                  R"([{"op":"replace","path":"x/a","value":2}])", "", kUnprocessable},
        PatchCase{"AddWholeDocumentFails", R"({"a":1})", R"([{"op":"add","path":"","value":{}}])",
                  "", kUnprocessable},
        PatchCase{"NullPatchIsEmpty", R"({"a":1})", "null", R"({"a":1})"},
        PatchCase{"EmptyPatch", R"({"a":1})", "[]", R"({"a":1})"},
        PatchCase{"ArrayDocument", R"([1,2])", R"([{"op":"remove","path":"/0"}])", "[2]"}),
    CaseName);

// Where upstream (evanphx/json-patch v4) departs from the RFC, we follow upstream; see the header.
INSTANTIATE_TEST_SUITE_P(
    Upstream, JsonPatchVectors,
    testing::Values(
        PatchCase{"ReplaceMissingMemberAdds", R"({"metadata":{}})",
                  R"([{"op":"replace","path":"/metadata/labels","value":{"a":"b"}}])",
                  R"({"metadata":{"labels":{"a":"b"}}})"},
        PatchCase{"ReplaceMissingIndexFails", R"({"a":[1]})",
                  R"([{"op":"replace","path":"/a/3","value":2}])", "", kUnprocessable,
                  "replace operation does not apply: doc is missing key: /a/3: missing value"},
        PatchCase{"TestMissingAgainstNull", R"({"a":1})",
                  R"([{"op":"test","path":"/b","value":null}])", R"({"a":1})"},
        PatchCase{"TestMissingAgainstValueFails", R"({"a":1})",
                  R"([{"op":"test","path":"/b","value":1}])", "", kUnprocessable},
        PatchCase{"AddWithoutValueAddsNull", R"({})", R"([{"op":"add","path":"/a"}])",
                  R"({"a":null})"},
        PatchCase{"NegativeIndexGet", R"({"a":[1,2,3]})",
                  R"([{"op":"replace","path":"/a/-1","value":9}])", R"({"a":[1,2,9]})"},
        PatchCase{"NegativeIndexRemove", R"({"a":[1,2,3]})", R"([{"op":"remove","path":"/a/-3"}])",
                  R"({"a":[2,3]})"},
        PatchCase{"NegativeIndexTooSmall", R"({"a":[1,2,3]})",
                  R"([{"op":"remove","path":"/a/-4"}])", "", kUnprocessable},
        PatchCase{"NegativeIndexAddAppends", R"({"a":[1,2]})",
                  R"([{"op":"add","path":"/a/-1","value":3}])", R"({"a":[1,2,3]})"},
        PatchCase{"SignedAndZeroPaddedIndex", R"({"a":[1,2,3]})",
                  R"([{"op":"replace","path":"/a/+01","value":9}])", R"({"a":[1,9,3]})"},
        PatchCase{"HugeIndex", R"({"a":[1]})",
                  R"([{"op":"remove","path":"/a/99999999999999999999"}])", "", kUnprocessable,
                  "error in remove for path: '/a/99999999999999999999': strconv.Atoi: parsing "
                  "\"99999999999999999999\": value out of range"},
        PatchCase{"ReplaceWholeDocument", R"({"a":1})",
                  R"([{"op":"replace","path":"","value":{"b":2}}])", R"({"b":2})"},
        PatchCase{"NullOperationIsUnknown", R"({})", "[null]", "", kUnprocessable,
                  "Unexpected kind: unknown"}),
    CaseName);

// Errors that are the request's fault (400) or its size (413).
INSTANTIATE_TEST_SUITE_P(
    Malformed, JsonPatchVectors,
    testing::Values(
        PatchCase{"ObjectPatch", R"({})", R"({"op":"add","path":"/a","value":1})", "",
                  util::Code::kInvalidArgument,
                  "json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
        PatchCase{"StringPatch", R"({})", R"("x")", "", util::Code::kInvalidArgument,
                  "json: cannot unmarshal string into Go value of type jsonpatch.Patch"},
        PatchCase{"NumberOperation", R"({})", R"([1])", "", util::Code::kInvalidArgument,
                  "json: cannot unmarshal number into Go value of type jsonpatch.Operation"}),
    CaseName);

TEST(JsonPatchTest, AllOrNothing) {
  // The first two operations succeed; the third fails, so nothing of them may show.
  const json::value document = J(R"({"a":1,"list":[1,2]})");
  util::StatusOr<json::value> result = ApplyJsonPatch(document, J(R"([
      {"op":"replace","path":"/a","value":2},
      {"op":"remove","path":"/list/0"},
      {"op":"test","path":"/a","value":1}])"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), util::Code::kFailedPrecondition);
  EXPECT_EQ(document, J(R"({"a":1,"list":[1,2]})"));
}

TEST(JsonPatchTest, OperationsSeeEarlierOperations) {
  util::StatusOr<json::value> result = ApplyJsonPatch(J(R"({})"), J(R"([
      {"op":"add","path":"/a","value":{}},
      {"op":"add","path":"/a/b","value":[]},
      {"op":"add","path":"/a/b/-","value":1},
      {"op":"copy","from":"/a/b","path":"/c"},
      {"op":"move","from":"/a","path":"/d"},
      {"op":"test","path":"/d/b/0","value":1}])"));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(json::serialize(*result), R"({"c":[1],"d":{"b":[1]}})");
}

json::array Operations(std::size_t n) {
  json::array ops;
  for (std::size_t i = 0; i < n; ++i) {
    ops.push_back(J(R"({"op":"test","path":"/a","value":1})"));
  }
  return ops;
}

TEST(JsonPatchTest, OperationCap) {
  const json::value document = J(R"({"a":1})");
  util::StatusOr<json::value> at_cap =
      ApplyJsonPatch(document, json::value(Operations(kMaxJsonPatchOperations)));
  EXPECT_TRUE(at_cap.ok()) << at_cap.status().ToString();

  util::StatusOr<json::value> over =
      ApplyJsonPatch(document, json::value(Operations(kMaxJsonPatchOperations + 1)));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), util::Code::kResourceExhausted);
  EXPECT_EQ(over.status().message(),
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
            "got 10001");
}

TEST(JsonPatchTest, CopyAmplificationIsBounded) {
  // Each copy doubles the document; upstream stops at 3 MiB of copied bytes.
  json::array ops;
  ops.push_back(
      J(R"({"op":"add","path":"/a","value":"0123456789012345678901234567890123456789"})"));
  for (int i = 0; i < 40; ++i) {
    ops.push_back(J(R"({"op":"copy","from":"/a","path":"/b"})"));
    ops.push_back(J(R"({"op":"add","path":"/a","value":[]})"));
    ops.push_back(J(R"({"op":"add","path":"/a/-","value":null})"));
    ops.push_back(J(R"({"op":"copy","from":"/b","path":"/a/0"})"));
    ops.push_back(J(R"({"op":"copy","from":"/b","path":"/a/1"})"));
  }
  util::StatusOr<json::value> result = ApplyJsonPatch(J("{}"), json::value(std::move(ops)));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), util::Code::kFailedPrecondition);
  EXPECT_TRUE(result.status().message().starts_with(
      "Unable to complete the copy, the accumulated size increase of copy is "))
      << result.status().message();
}

std::string NestedObjects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += R"({"a":)";
  s += "1";
  for (int i = 0; i < depth; ++i) s += "}";
  return s;
}

TEST(JsonPatchTest, DocumentsStayWithinNestingLimit) {
  // A document at the limit can be patched...
  util::StatusOr<json::value> deep = ParsePatchBody(NestedObjects(kMaxPatchNestingDepth));
  ASSERT_TRUE(deep.ok());
  util::StatusOr<json::value> replaced =
      ApplyJsonPatch(*deep, J(R"([{"op":"replace","path":"/a/a/a","value":2}])"));
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(JsonNestingDepth(*replaced), 3);

  // ...but nothing may push it past the limit: copying a subtree into itself would double the
  // nesting each time. A copy beside it is fine.
  util::StatusOr<json::value> beside =
      ApplyJsonPatch(*deep, J(R"([{"op":"copy","from":"/a","path":"/b"}])"));
  EXPECT_TRUE(beside.ok()) << beside.status().ToString();
  // Moves may not deepen it past the limit either; moving sideways is always fine.
  json::value pair(json::object_kind);
  pair.get_object()["a"] = ParsePatchBody(NestedObjects(kMaxPatchNestingDepth - 1)).value();
  pair.get_object()["b"] = json::object();
  EXPECT_TRUE(ApplyJsonPatch(pair, J(R"([{"op":"move","from":"/a","path":"/c"}])")).ok());
  EXPECT_EQ(ApplyJsonPatch(pair, J(R"([{"op":"move","from":"/a","path":"/b/c"}])")).status().code(),
            util::Code::kFailedPrecondition);

  for (std::string_view op : {R"([{"op":"copy","from":"/a","path":"/a/b"}])",
                              R"([{"op":"add","path":"/a/a/a/b","value":null}])"}) {
    json::value patch = J(op);
    if (patch.get_array()[0].get_object().contains("value")) {
      // The deepest value a patch may carry (the patch itself is then at the limit), placed
      // deep enough to cross it.
      util::StatusOr<json::value> value = ParsePatchBody(NestedObjects(kMaxPatchNestingDepth - 2));
      ASSERT_TRUE(value.ok());
      patch.get_array()[0].get_object()["value"] = *value;
    }
    util::StatusOr<json::value> result = ApplyJsonPatch(*deep, patch);
    ASSERT_FALSE(result.ok()) << op;
    EXPECT_EQ(result.status().code(), util::Code::kFailedPrecondition);
    EXPECT_NE(result.status().message().find("would nest deeper than 10000 levels"),
              std::string::npos)
        << result.status().message();
  }
}

}  // namespace
}  // namespace converge::api
