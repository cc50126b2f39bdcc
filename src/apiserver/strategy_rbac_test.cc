#include <gtest/gtest.h>

#include "apiserver/strategy.h"
#include "apiserver/strategy_test_util.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;
using testing::Create;
using testing::Info;
using testing::Json;
using testing::Obj;
using testing::Update;
using Lines = std::vector<std::string>;

constexpr const char* kGroup = "rbac.authorization.k8s.io";

TEST(RbacStrategyTest, RoleRules) {
  auto role = MakeStrategy(Info(kGroup, "v1", "roles", "Role"));
  auto cluster_role = MakeStrategy(Info(kGroup, "v1", "clusterroles", "ClusterRole", false));
  EXPECT_EQ(role->name_rule(), Strategy::NameRule::kPathSegment);
  struct Case {
    const char* name;
    bool namespaced;
    const char* rules;
    Lines want;
  };
  const Case cases[] = {
      {"pod reader",
       true,
       R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}])",
       {}},
      {"verbs required",
       true,
       R"([{"apiGroups":[""],"resources":["pods"]}])",
       {"rules[0].verbs: Required value: verbs must contain at least one value"}},
      {"groups and resources required",
       true,
       R"([{"verbs":["get"]}])",
       {"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource"}},
      {"namespaced non-resource URLs",
       true,
       R"([{"nonResourceURLs":["/healthz"],"verbs":["get"]}])",
       {R"(rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs)"}},
      {"cluster non-resource URLs",
       false,
       R"([{"nonResourceURLs":["/healthz"],"verbs":["get"]}])",
       {}},
      {"mixed",
       false,
       R"([{"nonResourceURLs":["/x"],"resources":["pods"],"verbs":["get"]}])",
       {R"(rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs)"}},
  };
  for (const Case& c : cases) {
    api::Object obj = Obj(c.namespaced ? R"({"metadata":{"name":"r","namespace":"d"}})"
                                       : R"({"metadata":{"name":"system:r"}})");
    obj.mutable_doc()["rules"] = json::parse(c.rules);
    EXPECT_EQ(Create(c.namespaced ? *role : *cluster_role, obj), c.want) << c.name;
  }
  api::Object slash = Obj(R"({"metadata":{"name":"a/b"}})");
  EXPECT_EQ(Create(*cluster_role, slash),
            Lines{R"(metadata.name: Invalid value: "a/b": may not contain '/')"});
  api::Object agg = Obj(R"({"metadata":{"name":"agg"},"aggregationRule":{}})");
  EXPECT_EQ(Create(*cluster_role, agg),
            Lines{"aggregationRule.clusterRoleSelectors: Required value: at least one "
                  "clusterRoleSelector required if aggregationRule is non-nil"});
}

TEST(RbacStrategyTest, BindingsDefaultsAndRoleRef) {
  auto rb = MakeStrategy(Info(kGroup, "v1", "rolebindings", "RoleBinding"));
  auto crb = MakeStrategy(Info(kGroup, "v1", "clusterrolebindings", "ClusterRoleBinding", false));
  api::Object b = Obj(
      R"({"metadata":{"name":"b","namespace":"d"},"roleRef":{"kind":"ClusterRole","name":"view"},
    "subjects":[{"kind":"User","name":"alice"},{"kind":"ServiceAccount","name":"default","namespace":"d"}]})");
  EXPECT_EQ(Create(*rb, b), Lines{});
  EXPECT_EQ(Json(b, {"roleRef", "apiGroup"}), R"("rbac.authorization.k8s.io")");
  EXPECT_EQ(Json(b, {"subjects"}),
            R"([{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"},)"
            R"({"kind":"ServiceAccount","name":"default","namespace":"d","apiGroup":""}])");

  struct Case {
    const char* name;
    bool cluster;
    const char* obj;
    Lines want;
  };
  const Case cases[] = {
      {"roleRef required",
       false,
       R"({"metadata":{"name":"b","namespace":"d"}})",
       {R"(roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole")",
        "roleRef.name: Required value"}},
      {"cluster bindings bind ClusterRoles",
       true,
       R"({"metadata":{"name":"b"},"roleRef":{"kind":"Role","name":"x"}})",
       {R"(roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole")"}},
      {"service accounts need a namespace in cluster bindings",
       true,
       R"({"metadata":{"name":"b"},"roleRef":{"kind":"ClusterRole","name":"x"},"subjects":[{"kind":"ServiceAccount","name":"sa"}]})",
       {"subjects[0].namespace: Required value"}},
      {"subject kind",
       false,
       R"({"metadata":{"name":"b","namespace":"d"},"roleRef":{"kind":"Role","name":"x"},"subjects":[{"kind":"Robot","name":"r"}]})",
       {R"(subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group")"}},
      {"wrong group",
       false,
       R"({"metadata":{"name":"b","namespace":"d"},"roleRef":{"apiGroup":"example.com","kind":"Role","name":"x"}})",
       {R"(roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io")"}},
  };
  for (const Case& c : cases) {
    api::Object obj = Obj(c.obj);
    EXPECT_EQ(Create(c.cluster ? *crb : *rb, obj), c.want) << c.name;
  }

  api::Object upd = b;
  upd.mutable_doc()["roleRef"].get_object()["name"] = "edit";
  EXPECT_EQ(Update(*rb, upd, b),
            Lines{"roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", "
                  "Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"});
  api::Object subjects = b;
  subjects.mutable_doc()["subjects"] = json::array();
  EXPECT_EQ(Update(*rb, subjects, b), Lines{});
}

}  // namespace
}  // namespace converge::apiserver
