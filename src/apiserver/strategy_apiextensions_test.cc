#include <gtest/gtest.h>

#include <functional>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using testing::Create;
using testing::Info;
using testing::Json;
using testing::Obj;
using testing::StatusUpdate;
using testing::Update;
using Lines = std::vector<std::string>;

std::shared_ptr<const Strategy> Crds() {
  return MakeStrategy(Info("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                           "CustomResourceDefinition", false, {"status"}));
}

api::Object CrdObject() {
  return Obj(R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced",
      "names":{"plural":"widgets","kind":"Widget","shortNames":["wd"]},
      "versions":[{"name":"v1","served":true,"storage":true,
        "schema":{"openAPIV3Schema":{"type":"object"}}}]}})");
}

TEST(CrdStrategyTest, CreateDefaultsAndStatus) {
  auto s = Crds();
  api::Object crd = CrdObject();
  EXPECT_EQ(Create(*s, crd), Lines{});
  EXPECT_EQ(
      Json(crd, {"spec", "names"}),
      R"({"plural":"widgets","kind":"Widget","shortNames":["wd"],"singular":"widget","listKind":"WidgetList"})");
  EXPECT_EQ(Json(crd, {"spec", "conversion"}), R"({"strategy":"None"})");
  EXPECT_EQ(Json(crd, {"status"}),
            R"({"acceptedNames":{"plural":"","kind":""},"storedVersions":["v1"]})");
  EXPECT_EQ(crd.generation(), 1);
}

TEST(CrdStrategyTest, ValidationTable) {
  struct Case {
    const char* name;
    std::function<void(api::Object&)> mutate;
    Lines want;
  };
  auto spec = [](api::Object& c) -> json::object& { return c.mutable_doc()["spec"].get_object(); };
  auto version = [&](api::Object& c) -> json::object& {
    return spec(c)["versions"].get_array()[0].get_object();
  };
  const Case cases[] = {
      {"valid", [](api::Object&) {}, {}},
      {"name must be plural.group",
       [](api::Object& c) { c.set_name("widget.example.com"); },
       {R"(metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group)"}},
      {"group needs a dot",
       [&](api::Object& c) {
         spec(c)["group"] = "example";
         c.set_name("widgets.example");
       },
       {R"(spec.group: Invalid value: "example": should be a domain with at least one dot)"}},
      {"scope enum",
       [&](api::Object& c) { spec(c)["scope"] = "Global"; },
       {R"(spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced")"}},
      {"one storage version",
       [&](api::Object& c) { version(c)["storage"] = false; },
       {"spec.versions: Invalid value: "
        R"([{"name":"v1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}])"
        ": must have exactly one version marked as storage version"}},
      {"schema required",
       [&](api::Object& c) { version(c).erase("schema"); },
       {"spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"}},
      {"kind required",
       [&](api::Object& c) { spec(c)["names"].get_object().erase("kind"); },
       {"spec.names.kind: Required value", "spec.names.listKind: Required value"}},
      {"bad plural",
       [&](api::Object& c) {
         spec(c)["names"].get_object()["plural"] = "Widgets";
         c.set_name("Widgets.example.com");
       },
       {"metadata.name: Invalid value: \"Widgets.example.com\": a lowercase RFC 1123 subdomain "
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "spec.names.plural: Invalid value: \"Widgets\": a DNS-1035 label must consist of lower "
        "case alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')"}},
  };
  auto s = Crds();
  for (const Case& c : cases) {
    api::Object crd = CrdObject();
    c.mutate(crd);
    EXPECT_EQ(Create(*s, crd), c.want) << c.name;
  }
}

TEST(CrdStrategyTest, UpdateAndStatus) {
  auto s = Crds();
  api::Object old = CrdObject();
  ASSERT_EQ(Create(*s, old), Lines{});

  // A new storage version is recorded; v1 stays stored.
  api::Object upd = old;
  json::array& versions = upd.mutable_doc()["spec"].get_object()["versions"].get_array();
  versions[0].get_object()["storage"] = false;
  versions.push_back(json::parse(
      R"({"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}})"));
  EXPECT_EQ(Update(*s, upd, old), Lines{});
  EXPECT_EQ(Json(upd, {"status", "storedVersions"}), R"(["v1","v2"])");
  EXPECT_EQ(upd.generation(), 2);

  api::Object rescoped = old;
  rescoped.mutable_doc()["spec"].get_object()["scope"] = "Cluster";
  EXPECT_EQ(Update(*s, rescoped, old),
            Lines{R"(spec.scope: Invalid value: "Cluster": field is immutable)"});

  api::Object st = old;
  st.mutable_doc()["status"] = json::parse(R"({"storedVersions":["v0"]})");
  EXPECT_EQ(
      StatusUpdate(*s, st, old),
      Lines{
          R"(status.storedVersions: Invalid value: []string{"v0"}: must have the storage version v1)"});
}

}  // namespace
}  // namespace converge::apiserver
