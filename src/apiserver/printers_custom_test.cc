#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "apiserver/table.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

const char* kDoc = R"({
  "metadata": {"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
  "spec": {"port": 8080, "weight": 1.5, "on": true, "tags": ["a", "b"], "m": {"k": "v"},
           "dotted.key": "d"},
  "status": {"conditions": [{"type": "Ready", "status": "False"},
                            {"type": "Synced", "status": "True"}]}
})";

struct PathCase {
  const char* path;
  std::vector<std::string> want;  // serialized matches
};

class JsonPathTest : public ::testing::TestWithParam<PathCase> {};

TEST_P(JsonPathTest, Evaluates) {
  json::value doc = json::parse(kDoc);
  std::vector<std::string> got;
  for (const json::value* v : EvaluateJsonPath(doc, GetParam().path))
    got.push_back(json::serialize(*v));
  EXPECT_EQ(got, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonPathTest,
    ::testing::Values(PathCase{".spec.port", {"8080"}}, PathCase{"{.spec.port}", {"8080"}},
                      PathCase{".spec.missing", {}}, PathCase{".spec.tags[1]", {"\"b\""}},
                      PathCase{".spec.tags[-1]", {"\"b\""}},
                      PathCase{".spec.tags[*]", {"\"a\"", "\"b\""}},
                      PathCase{".spec['dotted.key']", {"\"d\""}},
                      PathCase{".status.conditions[?(@.type==\"Synced\")].status", {"\"True\""}},
                      PathCase{".status.conditions[?(@.type=='Ready')].status", {"\"False\""}},
                      PathCase{".status.conditions[?(@.status!=\"True\")].type", {"\"Ready\""}},
                      PathCase{".spec.port.deeper", {}}));

TEST(CustomColumnsPrinterTest, CellsFollowColumnTypes) {
  std::vector<api::CustomResourceColumn> cols = {
      {"Port", "integer", "", "", 0, ".spec.port"},
      {"Weight", "number", "", "", 0, ".spec.weight"},
      {"On", "boolean", "", "", 0, ".spec.on"},
      {"Tags", "string", "", "", 1, ".spec.tags"},
      {"Map", "string", "", "", 0, ".spec.m"},
      {"Ready", "string", "", "", 0, ".status.conditions[?(@.type==\"Ready\")].status"},
      {"Missing", "string", "", "", 0, ".status.address"},
      {"Age", "date", "", "", 0, ".metadata.creationTimestamp"},
      {"Bad", "date", "", "", 0, ".spec.m.k"},
  };
  TablePrinter p = CustomColumnsPrinter(cols);
  ASSERT_EQ(p.columns.size(), cols.size() + 1);
  EXPECT_EQ(p.columns[0].name, "Name");
  EXPECT_EQ(p.columns[0].format, "name");
  EXPECT_EQ(p.columns[4].priority, 1);
  api::Object obj(json::parse(kDoc).as_object());
  auto now = std::chrono::system_clock::from_time_t(1767225600 + 300);  // five minutes later
  json::array cells = p.cells(obj, now);
  EXPECT_EQ(json::serialize(cells),
            R"(["web",8080,1.5E0,true,"[a b]","map[k:v]","False",null,"5m","<invalid>"])");
}

}  // namespace
}  // namespace converge::apiserver
