#include "apiserver/managed_fields.h"

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace converge::apiserver {
namespace {

namespace json = boost::json;

TEST(ManagerIdentifier, IsGoJsonOfTheEntryWithoutVersionForAppliers) {
  EXPECT_EQ(ManagerIdentifier("kubectl", "Apply", "apps/v1", ""),
            R"({"manager":"kubectl","operation":"Apply"})");
  EXPECT_EQ(ManagerIdentifier("kubectl-create", "Update", "apps/v1", ""),
            R"({"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1"})");
  EXPECT_EQ(ManagerIdentifier("kcm", "Update", "v1", "status"),
            R"({"manager":"kcm","operation":"Update","apiVersion":"v1","subresource":"status"})");
  std::optional<ManagerInfo> info =
      ParseManagerIdentifier(ManagerIdentifier("a<b", "Update", "v1", "scale"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->manager, "a<b");
  EXPECT_EQ(info->subresource, "scale");
  EXPECT_FALSE(ParseManagerIdentifier("not json").has_value());
}

// Plain identifiers are read without a JSON parser; everything else falls back to one. Both give
// what a JSON parser gives.
TEST(ManagerIdentifier, ParsesAsJsonDoes) {
  const std::vector<std::string> identifiers = {
      ManagerIdentifier("kubelet", "Update", "v1", "status"),
      ManagerIdentifier("kubectl", "Apply", "apps/v1", ""),
      ManagerIdentifier("", "Update", "v1", ""),
      ManagerIdentifier("a<b>&c", "Update", "v1", "scale"),         // Go escapes <, > and &
      ManagerIdentifier("caf\xc3\xa9", "Update", "v1", ""),         // non-ASCII
      ManagerIdentifier("quote\"back\\slash", "Update", "v1", ""),  // escaped by the writer
      "{}",
      R"({"operation":"Update","manager":"m"})",  // another order
      R"({ "manager" : "m" })",                   // whitespace
      R"({"manager":"m","manager":"n"})",         // a repeated key
      R"({"manager":"m","extra":"x"})",           // an unknown key
      R"({"manager":1})",                         // not a string
      R"({"manager":"m",})",
      R"({"manager":"m")",
      R"({"manager)",
      R"({"manager":"m"}x)",
      "",
      "not json",
  };
  for (const std::string& id : identifiers) {
    SCOPED_TRACE(id);
    std::optional<ManagerInfo> got = ParseManagerIdentifier(id);
    std::optional<ManagerInfo> want = ParseManagerIdentifierAsJson(id);
    ASSERT_EQ(got.has_value(), want.has_value());
    if (!got) continue;
    EXPECT_EQ(got->manager, want->manager);
    EXPECT_EQ(got->operation, want->operation);
    EXPECT_EQ(got->api_version, want->api_version);
    EXPECT_EQ(got->subresource, want->subresource);
  }
  std::optional<ManagerInfo> info =
      ParseManagerIdentifier(ManagerIdentifier("kubelet", "Update", "v1", "status"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->manager, "kubelet");
  EXPECT_EQ(info->operation, "Update");
  EXPECT_EQ(info->api_version, "v1");
  EXPECT_EQ(info->subresource, "status");
}

TEST(ManagedFields, RoundTripSortsAsUpstream) {
  // Apply entries first, then by time (no time first), manager, apiVersion, subresource; times
  // are normalized to UTC seconds; a repeated identifier keeps the last entry.
  const json::value in = json::parse(R"([
    {"manager":"b","operation":"Update","apiVersion":"v1","time":"2025-01-01T01:00:00+01:00",
     "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{}}}},
    {"manager":"a","operation":"Update","apiVersion":"v1","time":"2025-01-01T00:00:05.9Z",
     "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:y":{}}}},
    {"manager":"z","operation":"Apply","apiVersion":"v1","time":"2025-06-01T00:00:00Z",
     "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:z":{}}}},
    {"manager":"n","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",
     "fieldsV1":{"f:data":{"f:n":{}}},"subresource":"status"},
    {"manager":"a","operation":"Update","apiVersion":"v1","time":"2025-01-01T00:00:05Z",
     "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:w":{}}}}])");
  util::StatusOr<ManagedFields> m = DecodeManagedFields(&in);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->fields.size(), 4u);
  EXPECT_EQ(
      json::serialize(EncodeManagedFields(*m)),
      R"([{"manager":"z","operation":"Apply","apiVersion":"v1","time":"2025-06-01T00:00:00Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:z":{}}}},)"
      R"({"manager":"n","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{"f:n":{}}},"subresource":"status"},)"
      R"({"manager":"b","operation":"Update","apiVersion":"v1","time":"2025-01-01T00:00:00Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{}}}},)"
      R"({"manager":"a","operation":"Update","apiVersion":"v1","time":"2025-01-01T00:00:05Z",)"
      R"("fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:w":{}}}}])");
  EXPECT_TRUE(EncodeManagedFields(ManagedFields{}).empty());
}

struct DecodeErrorCase {
  std::string name;
  std::string entries;
  std::string message;
  friend void PrintTo(const DecodeErrorCase& c, std::ostream* os) { *os << c.name; }
};

class DecodeErrors : public testing::TestWithParam<DecodeErrorCase> {};

TEST_P(DecodeErrors, AreUpstreams) {
  const json::value in = json::parse(GetParam().entries);
  util::StatusOr<ManagedFields> m = DecodeManagedFields(&in);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DecodeErrors,
    testing::Values(DecodeErrorCase{"Operation", R"([{"manager":"m","operation":"Patch"}])",
                                    "operation must be `Apply` or `Update`"},
                    DecodeErrorCase{"ApiVersion", R"([{"manager":"m","operation":"Apply"}])",
                                    "apiVersion must not be empty"},
                    DecodeErrorCase{"MissingFieldsType",
                                    R"([{"manager":"m","operation":"Apply","apiVersion":"v1"}])",
                                    "missing fieldsType in managed fields entry 0"},
                    DecodeErrorCase{"BadFieldsType",
                                    R"([{"manager":"m","operation":"Apply","apiVersion":"v1",)"
                                    R"("fieldsType":"FieldsV2"}])",
                                    "invalid fieldsType \"FieldsV2\" in managed fields entry 0"},
                    DecodeErrorCase{
                        "BadFieldsV1",
                        R"([{"manager":"m","operation":"Apply","apiVersion":"v1",)"
                        R"("fieldsType":"FieldsV1","fieldsV1":{"f:a":1}}])",
                        "error decoding versioned set from managed fields entry 0: fieldsV1: the "
                        "value of f:a is not an object"}),
    [](const testing::TestParamInfo<DecodeErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace converge::apiserver
