// Table printers: upstream's column sets per kind, coverage of api/resources.json, robustness
// against malformed stored objects, and the shape of BuildTable output kubectl relies on. Cells
// per kind are in printers_cells_test.cc and printers_pod_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "api/builtin_resources.h"
#include "apiserver/table.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

const util::WallTime kPrintNow = *util::ParseRfc3339("2025-01-01T12:00:00Z");

api::ResourceInfo ResourceInfoFor(std::string group, std::string resource) {
  api::ResourceInfo info;
  info.gvr = {std::move(group), "v1", std::move(resource)};
  return info;
}

std::vector<std::string> ColumnSummary(const TablePrinter& p) {
  std::vector<std::string> out;
  for (const TableColumn& c : p.columns) {
    std::string s = c.name + ":" + c.type + ":" + std::to_string(c.priority);
    if (!c.format.empty()) s += ":" + c.format;
    out.push_back(s);
  }
  return out;
}

// --- Columns ---------------------------------------------------------------------------------

struct ColumnsCase {
  std::string group;
  std::string resource;
  std::vector<std::string> columns;  // "Name:type:priority[:format]"
};

void PrintTo(const ColumnsCase& c, std::ostream* os) {
  *os << c.group << "/" << c.resource;
}

class Columns : public ::testing::TestWithParam<ColumnsCase> {};

TEST_P(Columns, MatchUpstream) {
  const ColumnsCase& c = GetParam();
  EXPECT_EQ(ColumnSummary(PrinterFor(ResourceInfoFor(c.group, c.resource))), c.columns);
}

const std::vector<std::string> kCreatedAt = {"Name:string:0:name", "Created At:date:0"};
const std::vector<std::string> kBindings = {"Name:string:0:name", "Role:string:0",
                                            "Age:string:0",       "Users:string:1",
                                            "Groups:string:1",    "ServiceAccounts:string:1"};

INSTANTIATE_TEST_SUITE_P(
    Printers, Columns,
    ::testing::Values(
        ColumnsCase{
            "apps",
            "deployments",
            {"Name:string:0:name", "Ready:string:0", "Up-to-date:string:0", "Available:string:0",
             "Age:string:0", "Containers:string:1", "Images:string:1", "Selector:string:1"}},
        ColumnsCase{
            "apps",
            "replicasets",
            {"Name:string:0:name", "Desired:integer:0", "Current:integer:0", "Ready:integer:0",
             "Age:string:0", "Containers:string:1", "Images:string:1", "Selector:string:1"}},
        ColumnsCase{"apps",
                    "statefulsets",
                    {"Name:string:0:name", "Ready:string:0", "Age:string:0", "Containers:string:1",
                     "Images:string:1"}},
        ColumnsCase{
            "apps",
            "daemonsets",
            {"Name:string:0:name", "Desired:integer:0", "Current:integer:0", "Ready:integer:0",
             "Up-to-date:integer:0", "Available:integer:0", "Node Selector:string:0",
             "Age:string:0", "Containers:string:1", "Images:string:1", "Selector:string:1"}},
        ColumnsCase{
            "apps",
            "controllerrevisions",
            {"Name:string:0:name", "Controller:string:0", "Revision:string:0", "Age:string:0"}},
        ColumnsCase{
            "batch",
            "jobs",
            {"Name:string:0:name", "Status:string:0", "Completions:string:0", "Duration:string:0",
             "Age:string:0", "Containers:string:1", "Images:string:1", "Selector:string:1"}},
        ColumnsCase{
            "batch",
            "cronjobs",
            {"Name:string:0:name", "Schedule:string:0", "Timezone:string:0", "Suspend:boolean:0",
             "Active:integer:0", "Last Schedule:string:0", "Age:string:0", "Containers:string:1",
             "Images:string:1", "Selector:string:1"}},
        ColumnsCase{"policy",
                    "poddisruptionbudgets",
                    {"Name:string:0:name", "Min Available:string:0", "Max Unavailable:string:0",
                     "Allowed Disruptions:integer:0", "Age:string:0"}},
        ColumnsCase{"",
                    "nodes",
                    {"Name:string:0:name", "Status:string:0", "Roles:string:0", "Age:string:0",
                     "Version:string:0", "Internal-IP:string:1", "External-IP:string:1",
                     "OS-Image:string:1", "Kernel-Version:string:1", "Container-Runtime:string:1"}},
        ColumnsCase{"", "namespaces", {"Name:string:0:name", "Status:string:0", "Age:string:0"}},
        ColumnsCase{"",
                    "events",
                    {"Last Seen:string:0", "Type:string:0", "Reason:string:0", "Object:string:0",
                     "Subobject:string:1", "Source:string:1", "Message:string:0",
                     "First Seen:string:1", "Count:string:1", "Name:string:1:name"}},
        ColumnsCase{"events.k8s.io",
                    "events",
                    {"Last Seen:string:0", "Type:string:0", "Reason:string:0", "Object:string:0",
                     "Subobject:string:1", "Source:string:1", "Message:string:0",
                     "First Seen:string:1", "Count:string:1", "Name:string:1:name"}},
        ColumnsCase{
            "",
            "services",
            {"Name:string:0:name", "Type:string:0", "Cluster-IP:string:0", "External-IP:string:0",
             "Port(s):string:0", "Age:string:0", "Selector:string:1"}},
        ColumnsCase{"", "endpoints", {"Name:string:0:name", "Endpoints:string:0", "Age:string:0"}},
        ColumnsCase{"", "configmaps", {"Name:string:0:name", "Data:string:0", "Age:string:0"}},
        ColumnsCase{"",
                    "secrets",
                    {"Name:string:0:name", "Type:string:0", "Data:string:0", "Age:string:0"}},
        ColumnsCase{
            "", "serviceaccounts", {"Name:string:0:name", "Secrets:string:0", "Age:string:0"}},
        ColumnsCase{"",
                    "persistentvolumeclaims",
                    {"Name:string:0:name", "Status:string:0", "Volume:string:0",
                     "Capacity:string:0", "Access Modes:string:0", "StorageClass:string:0",
                     "VolumeAttributesClass:string:0", "Age:string:0", "VolumeMode:string:1"}},
        ColumnsCase{"rbac.authorization.k8s.io", "rolebindings", kBindings},
        ColumnsCase{"rbac.authorization.k8s.io", "clusterrolebindings", kBindings},
        ColumnsCase{"rbac.authorization.k8s.io", "roles", kCreatedAt},
        ColumnsCase{"rbac.authorization.k8s.io", "clusterroles", kCreatedAt},
        ColumnsCase{"apiextensions.k8s.io", "customresourcedefinitions", kCreatedAt},
        ColumnsCase{"coordination.k8s.io",
                    "leases",
                    {"Name:string:0:name", "Holder:string:0", "Age:string:0"}},
        ColumnsCase{"admissionregistration.k8s.io",
                    "validatingwebhookconfigurations",
                    {"Name:string:0:name", "Webhooks:integer:0", "Age:string:0"}},
        ColumnsCase{"admissionregistration.k8s.io",
                    "mutatingwebhookconfigurations",
                    {"Name:string:0:name", "Webhooks:integer:0", "Age:string:0"}}),
    [](const ::testing::TestParamInfo<ColumnsCase>& info) {
      std::string n = info.param.group + "_" + info.param.resource;
      for (char& ch : n) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(Printers, CustomResourcesGetNameAndAge) {
  api::ResourceInfo info = ResourceInfoFor("example.com", "foos");
  info.custom = true;
  const TablePrinter& p = PrinterFor(info);
  EXPECT_EQ(ColumnSummary(p), (std::vector<std::string>{"Name:string:0:name", "Age:date:0"}));
  auto obj =
      api::Object::Parse(R"({"metadata":{"name":"f","creationTimestamp":"2025-01-01T11:57:30Z"}})");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(json::value(p.cells(*obj, kPrintNow)), json::parse(R"(["f","2m30s"])"));
}

// --- Every built-in resource -----------------------------------------------------------------

// The resources upstream serves through its default convertor (Name, Created At). Every other
// built-in resource must have a printer of its own: adding one to api/resources.json without
// a printer fails here.
const std::set<std::string> kDefaultConvertor = {
    "roles.rbac.authorization.k8s.io",
    "clusterroles.rbac.authorization.k8s.io",
    "customresourcedefinitions.apiextensions.k8s.io",
    "tokenreviews.authentication.k8s.io",
    "selfsubjectreviews.authentication.k8s.io",
    "subjectaccessreviews.authorization.k8s.io",
    "selfsubjectaccessreviews.authorization.k8s.io",
    "localsubjectaccessreviews.authorization.k8s.io",
    "selfsubjectrulesreviews.authorization.k8s.io",
};

TEST(Printers, EveryBuiltinResourceHasUpstreamsPrinter) {
  for (const api::ResourceInfo& info : api::BuiltinResources()) {
    const std::string gr = info.gvr.Gr().ToString();
    std::vector<std::string> cols = ColumnSummary(PrinterFor(info));
    if (kDefaultConvertor.contains(gr)) {
      EXPECT_EQ(cols, kCreatedAt) << gr;
    } else {
      EXPECT_NE(cols, kCreatedAt) << gr << " has no printer";
      EXPECT_THAT(cols, ::testing::Contains(::testing::StartsWith("Name:string:"))) << gr;
    }
  }
}

// Stored objects are printed as they are: missing or mistyped fields must neither crash nor
// shift the cells out of their columns.
TEST(Printers, MalformedObjectsStillFillEveryColumn) {
  const char* const kObjects[] = {
      R"({})",
      R"({"metadata":{"name":"x","creationTimestamp":"yesterday","labels":{"a":1},
          "ownerReferences":[7,{"controller":"yes"}],"deletionTimestamp":"now"},
          "spec":{"replicas":"three","selector":"app=x","containers":{"a":1},
                  "template":[],"ports":[1,{"port":"80"}],"type":5,"roleRef":[]},
          "status":{"conditions":"ok","containerStatuses":[null,{"state":"running"}],
                    "initContainerStatuses":[{"state":{"terminated":"yes"}}],
                    "podIPs":[{}],"addresses":{}},
          "subsets":[{"addresses":[1],"ports":"80"}],"subjects":[{"kind":3}],"data":[1,2],
          "involvedObject":"pod","series":{"count":"x"},"webhooks":{}})",
      R"({"metadata":null,"spec":null,"status":null})",
  };
  for (const api::ResourceInfo& info : api::BuiltinResources()) {
    const TablePrinter& p = PrinterFor(info);
    for (const char* text : kObjects) {
      auto obj = api::Object::Parse(text);
      ASSERT_TRUE(obj.ok());
      EXPECT_EQ(p.cells(*obj, kPrintNow).size(), p.columns.size())
          << info.gvr.Gr().ToString() << " " << text;
    }
  }
}

// --- BuildTable ------------------------------------------------------------------------------

class PodListTable : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* text : {
             R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"default",
                 "uid":"u-a","resourceVersion":"40","creationTimestamp":"2025-01-01T11:00:00Z",
                 "labels":{"app":"web"},"managedFields":[{"manager":"kubectl"}]},
                 "spec":{"containers":[{"name":"c","image":"nginx"}],"nodeName":"n1"},
                 "status":{"phase":"Running"}})",
             R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"kube-system",
                 "uid":"u-b","resourceVersion":"41","creationTimestamp":"2025-01-01T11:30:00Z"},
                 "spec":{"containers":[{"name":"c","image":"nginx"}]},
                 "status":{"phase":"Pending"}})"}) {
      auto obj = api::Object::Parse(text);
      ASSERT_TRUE(obj.ok());
      pods_.push_back(std::move(*obj));
    }
  }

  json::object Build(IncludeObject include) {
    TableOptions opts;
    opts.include_object = include;
    opts.resource_version = "42";
    opts.now = kPrintNow;
    std::vector<const api::Object*> ptrs;
    for (const api::Object& p : pods_) ptrs.push_back(&p);
    return BuildTable(PrinterFor(ResourceInfoFor("", "pods")), ptrs, opts);
  }

  std::vector<api::Object> pods_;
};

TEST_F(PodListTable, HeaderColumnsAndCells) {
  json::object t = Build(IncludeObject::kMetadata);
  EXPECT_EQ(t["kind"], "Table");
  EXPECT_EQ(t["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(t["metadata"].at("resourceVersion"), "42");  // where `get -w` starts watching
  const json::array& cols = t["columnDefinitions"].as_array();
  ASSERT_EQ(cols.size(), 9u);
  std::vector<int64_t> priorities;
  for (const json::value& c : cols) priorities.push_back(c.at("priority").to_number<int64_t>());
  EXPECT_EQ(priorities, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(cols[0].at("format"), "name");
  const json::array& rows = t["rows"].as_array();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("cells"),
            json::parse(R"(["a","0/1","Running","0","60m","<none>","n1","<none>","<none>"])"));
  EXPECT_EQ(rows[1].at("cells"), json::parse(R"(["b","0/1","Pending","0","30m","<none>",
                                                 "<none>","<none>","<none>"])"));
}

TEST_F(PodListTable, IncludeMetadataGivesPartialObjectMetadataWithNamespace) {
  json::object t = Build(IncludeObject::kMetadata);
  const json::array& rows = t["rows"].as_array();
  ASSERT_EQ(rows.size(), 2u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const json::object& obj = rows[i].at("object").as_object();
    EXPECT_EQ(obj.at("kind"), "PartialObjectMetadata");
    EXPECT_EQ(obj.at("apiVersion"), "meta.k8s.io/v1");
    const json::object& meta = obj.at("metadata").as_object();
    // -A prints NAMESPACE from here.
    EXPECT_EQ(meta.at("namespace"), pods_[i].doc().at("metadata").at("namespace"));
    EXPECT_EQ(meta.at("uid"), pods_[i].doc().at("metadata").at("uid"));
    EXPECT_FALSE(meta.contains("managedFields"));
    EXPECT_FALSE(obj.contains("spec"));
  }
  EXPECT_EQ(rows[0].at("object").at("metadata").at("labels"), json::parse(R"({"app":"web"})"));
}

TEST_F(PodListTable, IncludeObjectGivesTheFullObjectForSortBy) {
  json::object t = Build(IncludeObject::kObject);
  const json::array& rows = t["rows"].as_array();
  ASSERT_EQ(rows.size(), 2u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].at("object"), json::value(pods_[i].doc()));
  }
}

TEST_F(PodListTable, IncludeNoneOmitsTheObject) {
  json::object t = Build(IncludeObject::kNone);
  for (const json::value& row : t["rows"].as_array()) {
    EXPECT_FALSE(row.as_object().contains("object"));
    EXPECT_EQ(row.at("cells").as_array().size(), 9u);
  }
}

}  // namespace
}  // namespace converge::apiserver
