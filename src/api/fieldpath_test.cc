#include "api/fieldpath.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/go_json.h"

namespace converge::api {
namespace {

namespace json = boost::json;

PathElement F(std::string name) {
  return PathElement::Field(std::move(name));
}
PathElement K(std::string_view key_json) {
  std::vector<PathElement::KeyField> fields;
  const json::value parsed = json::parse(key_json);
  for (const auto& kv : parsed.get_object()) {
    fields.emplace_back(std::string(kv.key()), kv.value());
  }
  return PathElement::Key(std::move(fields));
}
PathElement V(std::string_view value_json) {
  return PathElement::Value(json::parse(value_json));
}

FieldSet Parse(std::string_view fields_v1) {
  util::StatusOr<FieldSet> s = FieldSet::FromFieldsV1(json::parse(fields_v1));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : FieldSet();
}

std::string V1(const FieldSet& s) {
  return json::serialize(s.ToFieldsV1());
}

// ---- Path elements ------------------------------------------------------------------------------

struct ElementCase {
  std::string name;
  PathElement element;
  std::string serialized;  // the fieldsV1 key
  std::string string;      // as conflict messages print it
  friend void PrintTo(const ElementCase& c, std::ostream* os) { *os << c.name; }
};

class PathElementForms : public testing::TestWithParam<ElementCase> {};

TEST_P(PathElementForms, SerializeParseAndPrint) {
  const ElementCase& c = GetParam();
  EXPECT_EQ(c.element.Serialize(), c.serialized);
  EXPECT_EQ(c.element.ToString(), c.string);
  util::StatusOr<PathElement> parsed = PathElement::Parse(c.serialized);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, c.element);
  EXPECT_EQ(parsed->Serialize(), c.serialized);
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, PathElementForms,
    testing::Values(ElementCase{"Field", F("replicas"), "f:replicas", ".replicas"},
                    ElementCase{"FieldWithDots", F("deployment.kubernetes.io/revision"),
                                "f:deployment.kubernetes.io/revision",
                                ".deployment.kubernetes.io/revision"},
                    ElementCase{"KeyByName", K(R"({"name":"nginx"})"), R"(k:{"name":"nginx"})",
                                R"([name="nginx"])"},
                    // Keys are written sorted by name whatever order they were given in.
                    ElementCase{"KeyTwoFieldsSorted", K(R"({"protocol":"TCP","containerPort":80})"),
                                R"(k:{"containerPort":80,"protocol":"TCP"})",
                                R"([containerPort=80,protocol="TCP"])"},
                    ElementCase{"SetValue", V(R"("example.com/finalizer")"),
                                R"(v:"example.com/finalizer")", R"([="example.com/finalizer"])"},
                    ElementCase{"SetNumber", V("8080"), "v:8080", "[=8080]"},
                    ElementCase{"Index", PathElement::Index(3), "i:3", "[3]"},
                    // Go's encoding escapes HTML characters inside keys.
                    ElementCase{"KeyHtmlEscaped", K(R"({"name":"a<b>&c"})"),
                                R"(k:{"name":"a\u003cb\u003e\u0026c"})", R"([name="a<b>&c"])"}),
    [](const testing::TestParamInfo<ElementCase>& info) { return info.param.name; });

TEST(PathElement, OrdersLikeUpstream) {
  // Fields < keys < values < indexes; fields by name (bytewise: upper case first); keys by their
  // name/value lists; numbers before strings.
  std::vector<PathElement> sorted = {
      F("Z"), F("a"),   F("b"),      K(R"({"a":1})"), K(R"({"a":2})"),      K(R"({"b":0})"),
      V("1"), V("2.5"), V(R"("a")"), V("true"),       PathElement::Index(0)};
  for (size_t i = 0; i + 1 < sorted.size(); ++i) {
    EXPECT_LT(sorted[i], sorted[i + 1])
        << sorted[i].Serialize() << " vs " << sorted[i + 1].Serialize();
    EXPECT_FALSE(sorted[i + 1] < sorted[i]);
  }
  // Integers and floats compare numerically: k:{"port":80} parsed from fieldsV1 equals a key built
  // from an object whatever number type either side used.
  EXPECT_EQ(K(R"({"port":80})"), K(R"({"port":80.0})"));
}

TEST(PathElement, ParseErrors) {
  EXPECT_EQ(PathElement::Parse("f").status().code(), util::Code::kInvalidArgument);
  EXPECT_EQ(PathElement::Parse("fx").status().code(), util::Code::kInvalidArgument);
  EXPECT_EQ(PathElement::Parse("k:[1]").status().code(), util::Code::kInvalidArgument);
  EXPECT_EQ(PathElement::Parse("i:x").status().code(), util::Code::kInvalidArgument);
  EXPECT_EQ(PathElement::Parse("v:{").status().code(), util::Code::kInvalidArgument);
  // An element type from the future is recognisable, so that readers can skip it.
  EXPECT_EQ(PathElement::Parse("z:whatever").status().code(), util::Code::kUnimplemented);
}

// ---- fieldsV1 -----------------------------------------------------------------------------------

struct V1Case {
  std::string name;
  std::string input;                 // as stored
  std::string canonical;             // as upstream writes it (input if empty)
  std::vector<std::string> members;  // Iterate order
  friend void PrintTo(const V1Case& c, std::ostream* os) { *os << c.name; }
};

class FieldsV1RoundTrip : public testing::TestWithParam<V1Case> {};

TEST_P(FieldsV1RoundTrip, ParsesAndWritesBack) {
  const V1Case& c = GetParam();
  FieldSet s = Parse(c.input);
  EXPECT_EQ(V1(s), c.canonical.empty() ? c.input : c.canonical);
  std::vector<std::string> members;
  s.Iterate([&](const Path& p) { members.push_back(PathString(p)); });
  EXPECT_EQ(members, c.members);
  // Writing what was read and reading it again is stable.
  EXPECT_EQ(Parse(V1(s)), s);
}

// Entries a real apiserver wrote for `kubectl create deployment web --image=nginx:1.27`, the
// controller's status update, `kubectl scale --replicas=3` and `kubectl apply --server-side` of a
// manifest with a port: upstream writes "." first in a node that also has children.
INSTANTIATE_TEST_SUITE_P(
    Deployment, FieldsV1RoundTrip,
    testing::Values(
        V1Case{
            "KubectlCreate",
            R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},)"
            R"("f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpda)"
            R"(te":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadat)"
            R"(a":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{)"
            R"(".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMe)"
            R"(ssagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f)"
            R"(:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}})",
            "",
            {".metadata.labels",
             ".metadata.labels.app",
             ".spec.progressDeadlineSeconds",
             ".spec.replicas",
             ".spec.revisionHistoryLimit",
             ".spec.selector",
             ".spec.strategy.rollingUpdate",
             ".spec.strategy.type",
             ".spec.strategy.rollingUpdate.maxSurge",
             ".spec.strategy.rollingUpdate.maxUnavailable",
             ".spec.template.metadata.labels",
             ".spec.template.metadata.labels.app",
             ".spec.template.spec.dnsPolicy",
             ".spec.template.spec.restartPolicy",
             ".spec.template.spec.schedulerName",
             ".spec.template.spec.securityContext",
             ".spec.template.spec.terminationGracePeriodSeconds",
             R"(.spec.template.spec.containers[name="nginx"])",
             R"(.spec.template.spec.containers[name="nginx"].image)",
             R"(.spec.template.spec.containers[name="nginx"].imagePullPolicy)",
             R"(.spec.template.spec.containers[name="nginx"].name)",
             R"(.spec.template.spec.containers[name="nginx"].resources)",
             R"(.spec.template.spec.containers[name="nginx"].terminationMessagePath)",
             R"(.spec.template.spec.containers[name="nginx"].terminationMessagePolicy)"}},
        V1Case{
            "ControllerStatus",
            R"({"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:sta)"
            R"(tus":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":)"
            R"({},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:re)"
            R"(plicas":{}}})",
            "",
            {".metadata.annotations", ".metadata.annotations.deployment.kubernetes.io/revision",
             ".status.availableReplicas", ".status.conditions", ".status.observedGeneration",
             ".status.replicas", R"(.status.conditions[type="Available"])",
             R"(.status.conditions[type="Available"].lastTransitionTime)",
             R"(.status.conditions[type="Available"].status)",
             R"(.status.conditions[type="Available"].type)"}},
        V1Case{"KubectlScale", R"({"f:spec":{"f:replicas":{}}})", "", {".spec.replicas"}},
        V1Case{
            "KubectlServerSideApply",
            R"({"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:tem)"
            R"(plate":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\")"
            R"(nginx\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protoco)"
            R"(l\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}})",
            "",
            {".metadata.labels.app", ".spec.replicas", ".spec.selector",
             ".spec.template.metadata.labels.app",
             R"(.spec.template.spec.containers[name="nginx"])",
             R"(.spec.template.spec.containers[name="nginx"].image)",
             R"(.spec.template.spec.containers[name="nginx"].name)",
             R"(.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"])",
             R"(.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort)"}},
        // "." after the children (older structured-merge-diff releases wrote it there) reads
        // the same and is written back in upstream's order.
        V1Case{"DotLast",
               R"({"f:metadata":{"f:labels":{"f:app":{},".":{}}}})",
               R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}}})",
               {".metadata.labels", ".metadata.labels.app"}},
        V1Case{"FinalizerSet",
               R"({"f:metadata":{"f:finalizers":{"v:\"a.io/x\"":{},"v:\"b.io/y\"":{}}}})",
               "",
               {R"(.metadata.finalizers[="a.io/x"])", R"(.metadata.finalizers[="b.io/y"])"}},
        // Unknown element types are skipped; a node left without children is a member.
        V1Case{"UnknownElementSkipped",
               R"({"f:a":{"z:future":{}},"f:b":{}})",
               R"({"f:a":{},"f:b":{}})",
               {".a", ".b"}},
        V1Case{"Empty", "{}", "", {}}),
    [](const testing::TestParamInfo<V1Case>& info) { return info.param.name; });

TEST(FieldsV1, RejectsMalformedInput) {
  for (const char* bad : {R"("x")", R"({"f:a":"x"})", R"({"q":{}})", R"({"k:[1]":{}})"}) {
    EXPECT_FALSE(FieldSet::FromFieldsV1(json::parse(bad)).ok()) << bad;
  }
  EXPECT_TRUE(FieldSet::FromFieldsV1(json::value(nullptr)).ok());
  // Deep nesting is refused rather than recursed into without bound.
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += R"({"f:a":)";
  deep += "{}";
  for (int i = 0; i < 2000; ++i) deep += "}";
  json::parse_options opts;
  opts.max_depth = 3000;
  EXPECT_FALSE(FieldSet::FromFieldsV1(json::parse(deep, {}, opts)).ok());
}

// ---- Set algebra --------------------------------------------------------------------------------

struct AlgebraCase {
  std::string name;
  std::string a, b;  // fieldsV1
  std::string union_, intersection, difference, recursive_difference;
  friend void PrintTo(const AlgebraCase& c, std::ostream* os) { *os << c.name; }
};

class SetAlgebra : public testing::TestWithParam<AlgebraCase> {};

TEST_P(SetAlgebra, MatchesUpstream) {
  const AlgebraCase& c = GetParam();
  const FieldSet a = Parse(c.a), b = Parse(c.b);
  EXPECT_EQ(V1(a.Union(b)), c.union_) << "union";
  EXPECT_EQ(V1(a.Intersection(b)), c.intersection) << "intersection";
  EXPECT_EQ(V1(a.Difference(b)), c.difference) << "difference";
  EXPECT_EQ(V1(a.RecursiveDifference(b)), c.recursive_difference) << "recursive difference";
  FieldSet subtracted = a;
  subtracted.Subtract(b);
  EXPECT_EQ(V1(subtracted), c.difference) << "subtract";
  EXPECT_EQ(subtracted, a.Difference(b));
  EXPECT_EQ(a.Union(b), b.Union(a));
  EXPECT_EQ(a.Intersection(b), b.Intersection(a));
  // The walk over encoded sets agrees with the intersection of decoded ones, both ways round.
  EXPECT_EQ(a.IntersectsFieldsV1(json::parse(c.b).as_object()), c.intersection != "{}");
  EXPECT_EQ(b.IntersectsFieldsV1(json::parse(c.a).as_object()), c.intersection != "{}");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SetAlgebra,
    testing::Values(
        AlgebraCase{"Disjoint", R"({"f:a":{}})", R"({"f:b":{}})", R"({"f:a":{},"f:b":{}})", "{}",
                    R"({"f:a":{}})", R"({"f:a":{}})"},
        AlgebraCase{"SharedLeaf", R"({"f:s":{"f:r":{},"f:x":{}}})", R"({"f:s":{"f:r":{}}})",
                    R"({"f:s":{"f:r":{},"f:x":{}}})", R"({"f:s":{"f:r":{}}})",
                    R"({"f:s":{"f:x":{}}})", R"({"f:s":{"f:x":{}}})"},
        // parent - child = parent; a member parent in b removes a's children only recursively.
        AlgebraCase{"ParentAndChild", R"({"f:l":{".":{},"f:app":{}}})", R"({"f:l":{}})",
                    R"({"f:l":{".":{},"f:app":{}}})", R"({"f:l":{}})", R"({"f:l":{"f:app":{}}})",
                    "{}"},
        // Children b empties go; children b does not reach stay, before and after them.
        AlgebraCase{"EmptiedChildren", R"({"f:a":{"f:x":{}},"f:b":{"f:y":{}},"f:c":{"f:z":{}}})",
                    R"({"f:b":{"f:y":{}},"f:c":{"f:w":{}}})",
                    R"({"f:a":{"f:x":{}},"f:b":{"f:y":{}},"f:c":{"f:w":{},"f:z":{}}})",
                    R"({"f:b":{"f:y":{}}})", R"({"f:a":{"f:x":{}},"f:c":{"f:z":{}}})",
                    R"({"f:a":{"f:x":{}},"f:c":{"f:z":{}}})"},
        AlgebraCase{"ChildMinusParent", R"({"f:l":{}})", R"({"f:l":{"f:app":{}}})",
                    R"({"f:l":{".":{},"f:app":{}}})", "{}", R"({"f:l":{}})", R"({"f:l":{}})"},
        AlgebraCase{
            "ListItems",
            R"({"f:c":{"k:{\"name\":\"a\"}":{".":{},"f:image":{}},"k:{\"name\":\"b\"}":{".":{},"f:image":{}}}})",
            R"({"f:c":{"k:{\"name\":\"a\"}":{}}})",
            R"({"f:c":{"k:{\"name\":\"a\"}":{".":{},"f:image":{}},"k:{\"name\":\"b\"}":{".":{},"f:image":{}}}})",
            R"({"f:c":{"k:{\"name\":\"a\"}":{}}})",
            R"({"f:c":{"k:{\"name\":\"a\"}":{"f:image":{}},"k:{\"name\":\"b\"}":{".":{},"f:image":{}}}})",
            R"({"f:c":{"k:{\"name\":\"b\"}":{".":{},"f:image":{}}}})"}),
    [](const testing::TestParamInfo<AlgebraCase>& info) { return info.param.name; });

// IntersectsFieldsV1 reads fieldsV1 as FromFieldsV1 does: a node is a member when it says so
// (".") or has no children of a known type (an empty object, null, only unknown keys).
TEST(FieldSet, IntersectsFieldsV1ReadsMembersAsDecodingDoes) {
  const std::vector<std::string> sets = {
      R"({"f:a":{}})",
      R"({"f:a":null})",
      R"({"f:a":{"x:future":{}}})",
      R"({"f:a":{".":{},"f:b":{}}})",
      R"({"f:a":{"f:b":{}}})",
      R"({"f:a":{"f:b":{"f:c":{}}}})",
      R"({"f:l":{"v:\"x\"":{},"v:3":{}}})",
      R"({"f:l":{"v:3":{}}})",
      R"({"f:c":{"k:{\"name\":\"a\",\"port\":80}":{".":{},"f:image":{}}}})",
      R"({"f:c":{"k:{\"name\":\"a\",\"port\":80}":{}}})",
      R"({"f:c":{"k:{\"name\":\"a\",\"port\":81}":{}}})",
      R"({"f:c":{"k:{\"name\":\"a\",\"port\":80}":{"f:image":{}}}})",
      R"({"i:0":{}})",
  };
  for (const std::string& a_text : sets) {
    const FieldSet a = Parse(a_text);
    for (const std::string& b_text : sets) {
      const FieldSet b = Parse(b_text);
      EXPECT_EQ(a.IntersectsFieldsV1(json::parse(b_text).as_object()), !a.Intersection(b).Empty())
          << a_text << " and " << b_text;
    }
  }
  EXPECT_FALSE(Parse(R"({"f:a":{}})").IntersectsFieldsV1(json::object()));
  EXPECT_FALSE(FieldSet().IntersectsFieldsV1(json::parse(R"({"f:a":{}})").as_object()));
}

TEST(FieldSet, InsertHasAndEmptyPath) {
  FieldSet s;
  EXPECT_TRUE(s.Empty());
  s.Insert({});  // nobody owns the whole object
  EXPECT_TRUE(s.Empty());
  const Path replicas{F("spec"), F("replicas")};
  s.Insert(replicas);
  EXPECT_TRUE(s.Has(replicas));
  EXPECT_FALSE(s.Has({F("spec")}));  // parents are not members
  EXPECT_EQ(s.Size(), 1u);
  EXPECT_EQ(s.ToString(), ".spec.replicas");
  EXPECT_EQ(s.WithPrefix(F("spec")).ToString(), ".replicas");
  EXPECT_TRUE(s.WithPrefix(F("status")).Empty());
}

TEST(GoJson, MarshalsLikeEncodingJson) {
  EXPECT_EQ(GoJsonMarshal(json::parse(R"({"b":1,"a":[true,null,"<x>"],"c":1.5})"), true),
            R"({"a":[true,null,"\u003cx\u003e"],"b":1,"c":1.5})");
  EXPECT_EQ(GoJsonMarshal(json::parse(R"({"b":1,"a":2})"), false), R"({"b":1,"a":2})");
  EXPECT_EQ(GoJsonMarshal(json::value(1e21), false), "1e+21");
  EXPECT_EQ(GoJsonMarshal(json::value(1e-7), false), "1e-7");
  EXPECT_EQ(GoJsonMarshal(json::value(100.0), false), "100");
  EXPECT_EQ(GoJsonMarshal(json::value("tab\there\u2028"), false), R"("tab\there\u2028")");
  EXPECT_EQ(GoQuote("a\"b\n\x01"), R"("a\"b\n\x01")");
  EXPECT_EQ(GoValueString(json::value(1e6)), "1e+06");
  EXPECT_EQ(GoValueString(json::value(80.0)), "80");
}

}  // namespace
}  // namespace converge::api
