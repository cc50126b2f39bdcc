#include "apiserver/fieldmanager.h"

#include <chrono>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "api/schema_registry.h"
#include "apiserver/managed_fields.h"
#include "util/time_format.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

const api::TypeSchema* Deployment() {
  return api::BuiltinSchemas().FindType("io.k8s.api.apps.v1.Deployment");
}

util::WallTime At(int seconds) {
  return *util::ParseRfc3339("2025-01-01T00:00:00Z") + std::chrono::seconds(seconds);
}

ManagedFieldsContext Ctx(std::string manager, int time, std::string subresource = {}) {
  return ManagedFieldsContext{std::move(manager), std::move(subresource), "apps/v1", At(time), {}};
}

api::Object ObjectOf(std::string_view text) {
  return api::Object(json::parse(text).as_object());
}

std::string ManagedFieldsJson(const api::Object& o) {
  const json::value* mf = api::Find(o.doc(), {"metadata", "managedFields"});
  return mf ? json::serialize(*mf) : "<none>";
}

// The fieldsV1 of the entry of `manager` (and operation), or "<none>".
std::string FieldsOf(const api::Object& o, std::string_view manager,
                     std::string_view operation = "Update") {
  const json::value* mf = api::Find(o.doc(), {"metadata", "managedFields"});
  if (mf == nullptr) return "<none>";
  for (const json::value& e : mf->as_array()) {
    if (e.at("manager").as_string() == manager && e.at("operation").as_string() == operation) {
      return json::serialize(e.at("fieldsV1"));
    }
  }
  return "<none>";
}

// `kubectl create deployment web --image=nginx:1.27` as stored (defaults applied).
constexpr std::string_view kCreated = R"({
  "apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","namespace":"default","uid":"u-1","resourceVersion":"1","generation":1,
    "creationTimestamp":"2025-01-01T00:00:00Z","labels":{"app":"web"}},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
    "template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27","resources":{},
          "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
          "imagePullPolicy":"IfNotPresent"}],
        "restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",
        "securityContext":{},"schedulerName":"default-scheduler"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
    "revisionHistoryLimit":10,"progressDeadlineSeconds":600},
  "status":{}})";

// What a real apiserver records for that create.
constexpr std::string_view kCreateFields =
    R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},)"
    R"("f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":)"
    R"({".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":)"
    R"({"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":)"
    R"({".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resourc)"
    R"(es":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},)"
    R"("f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},)"
    R"("f:terminationGracePeriodSeconds":{}}}}})";

api::Object Created(std::string manager = "kubectl-create") {
  api::Object obj = ObjectOf(kCreated);
  UpdateManagedFields(Deployment(), nullptr, obj, Ctx(std::move(manager), 0));
  return obj;
}

// Returns `o` with `path` (object keys) set to `value`.
api::Object With(api::Object o, std::initializer_list<std::string_view> path, json::value value) {
  json::object* cur = &o.mutable_doc();
  std::vector<std::string_view> keys(path);
  for (size_t i = 0; i + 1 < keys.size(); ++i) cur = &api::EnsureObject(*cur, keys[i]);
  (*cur)[keys.back()] = std::move(value);
  return o;
}

// ---- Updates ------------------------------------------------------------------------------------

TEST(UpdateManagedFields, CreateOwnsEveryFieldAsUpstreamRecordsIt) {
  api::Object obj = Created();
  EXPECT_EQ(ManagedFieldsJson(obj),
            R"([{"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1",)"
            R"("time":"2025-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":)" +
                std::string(kCreateFields) + "}]");
}

TEST(UpdateManagedFields, ScaleTransfersReplicas) {
  // kubectl scale (PATCH /scale, no fieldManager: "kubectl" from the User-Agent): the Deployment
  // update is recorded on the parent with subresource "scale".
  const api::Object created = Created();
  api::Object scaled = With(created, {"spec", "replicas"}, 3);
  UpdateManagedFields(Deployment(), &created, scaled, Ctx("kubectl", 60, "scale"));
  EXPECT_EQ(FieldsOf(scaled, "kubectl"), R"({"f:spec":{"f:replicas":{}}})");
  const json::array& entries = api::Find(scaled.doc(), {"metadata", "managedFields"})->as_array();
  ASSERT_EQ(entries.size(), 2u);
  // Update entries sort by time: the creator first.
  EXPECT_EQ(entries[0].at("manager"), "kubectl-create");
  EXPECT_EQ(entries[0].at("time"), "2025-01-01T00:00:00Z");
  EXPECT_EQ(json::serialize(entries[1]),
            R"({"manager":"kubectl","operation":"Update","apiVersion":"apps/v1",)"
            R"("time":"2025-01-01T00:01:00Z","fieldsType":"FieldsV1","fieldsV1":)"
            R"({"f:spec":{"f:replicas":{}}},"subresource":"scale"})");
  EXPECT_EQ(FieldsOf(scaled, "kubectl-create").find("f:replicas"), std::string::npos);
}

struct TransferCase {
  std::string name;
  std::vector<std::string> path;
  std::string value;  // JSON
  std::string editor_fields;
  bool creator_loses;  // the creator's entry no longer lists the field
  friend void PrintTo(const TransferCase& c, std::ostream* os) { *os << c.name; }
};

class OwnershipTransfer : public testing::TestWithParam<TransferCase> {};

TEST_P(OwnershipTransfer, WriterGainsOthersLose) {
  const TransferCase& c = GetParam();
  const api::Object created = Created();
  api::Object edited = created;
  json::object* cur = &edited.mutable_doc();
  for (size_t i = 0; i + 1 < c.path.size(); ++i) cur = &api::EnsureObject(*cur, c.path[i]);
  if (c.value == "<delete>") {
    cur->erase(c.path.back());
  } else {
    (*cur)[c.path.back()] = json::parse(c.value);
  }
  UpdateManagedFields(Deployment(), &created, edited, Ctx("kubectl-edit", 30));
  EXPECT_EQ(FieldsOf(edited, "kubectl-edit"), c.editor_fields);
  const std::string creator = FieldsOf(edited, "kubectl-create");
  EXPECT_NE(creator, "<none>");
  EXPECT_EQ(creator != std::string(kCreateFields), c.creator_loses) << creator;
}

INSTANTIATE_TEST_SUITE_P(
    Updates, OwnershipTransfer,
    testing::Values(
        TransferCase{"ChangeImage",
                     {"spec", "template", "spec", "containers"},
                     R"([{"name":"nginx","image":"nginx:1.28","resources":{},)"
                     R"("terminationMessagePath":"/dev/termination-log",)"
                     R"("terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}])",
                     R"({"f:spec":{"f:template":{"f:spec":{"f:containers":)"
                     R"({"k:{\"name\":\"nginx\"}":{"f:image":{}}}}}}})",
                     true},
        TransferCase{"AddLabel",
                     {"metadata", "labels"},
                     R"({"app":"web","tier":"fe"})",
                     R"({"f:metadata":{"f:labels":{"f:tier":{}}}})",
                     false},
        // Removing a field takes it from its owner; the remover gains nothing.
        TransferCase{"RemoveRevisionHistoryLimit",
                     {"spec", "revisionHistoryLimit"},
                     "<delete>",
                     "<none>",
                     true},
        // Writing the same value changes nothing: no entry, no ownership change.
        TransferCase{"SameValue", {"spec", "replicas"}, "1", "<none>", false}),
    [](const testing::TestParamInfo<TransferCase>& info) { return info.param.name; });

TEST(UpdateManagedFields, UnchangedWriterKeepsItsTime) {
  const api::Object created = Created();
  api::Object again = created;
  UpdateManagedFields(Deployment(), &created, again, Ctx("kubectl-create", 99));
  EXPECT_EQ(ManagedFieldsJson(again), ManagedFieldsJson(created));
}

TEST(UpdateManagedFields, StatusSubresourceIgnoresRequestedManagedFields) {
  const api::Object created = Created();
  api::Object status =
      With(created, {"status"}, json::parse(R"({"replicas":1,"observedGeneration":1})"));
  // A status writer cannot rewrite managedFields through the subresource.
  api::EnsureObject(status.mutable_doc(), "metadata")["managedFields"] = json::array();
  UpdateManagedFields(Deployment(), &created, status, Ctx("kube-controller-manager", 5, "status"));
  EXPECT_EQ(FieldsOf(status, "kube-controller-manager"),
            R"({"f:status":{"f:observedGeneration":{},"f:replicas":{}}})");
  EXPECT_EQ(FieldsOf(status, "kubectl-create"), std::string(kCreateFields));
  const json::array& entries = api::Find(status.doc(), {"metadata", "managedFields"})->as_array();
  EXPECT_EQ(entries.back().at("subresource"), "status");
}

// A subresource write reads only the entries it touches (SetReading::kWhenNeeded): the others are
// carried over as stored; a touched one loses what the write changed or removed, as when every
// entry is decoded.
TEST(UpdateManagedFields, SubresourceWritesTakeFieldsFromTheEntriesTheyTouch) {
  const api::Object created = Created();
  api::Object first =
      With(created, {"status"}, json::parse(R"({"replicas":1,"observedGeneration":1})"));
  UpdateManagedFields(Deployment(), &created, first, Ctx("kube-controller-manager", 5, "status"));
  // Another status writer changes replicas and adds readyReplicas.
  api::Object second = With(
      first, {"status"}, json::parse(R"({"replicas":2,"observedGeneration":1,"readyReplicas":2})"));
  UpdateManagedFields(Deployment(), &first, second, Ctx("status-writer", 6, "status"));
  EXPECT_EQ(FieldsOf(second, "kubectl-create"), std::string(kCreateFields));
  EXPECT_EQ(FieldsOf(second, "kube-controller-manager"),
            R"({"f:status":{"f:observedGeneration":{}}})");
  EXPECT_EQ(FieldsOf(second, "status-writer"),
            R"({"f:status":{"f:readyReplicas":{},"f:replicas":{}}})");
  // The first writer removes observedGeneration: its last field. Its entry goes; the second
  // writer's entry, untouched, stays as it was.
  api::Object third = With(second, {"status"}, json::parse(R"({"replicas":2,"readyReplicas":2})"));
  UpdateManagedFields(Deployment(), &second, third, Ctx("kube-controller-manager", 7, "status"));
  EXPECT_EQ(FieldsOf(third, "kube-controller-manager"), "<none>");
  EXPECT_EQ(FieldsOf(third, "status-writer"), FieldsOf(second, "status-writer"));
  EXPECT_EQ(FieldsOf(third, "kubectl-create"), std::string(kCreateFields));
  // The same writer again, changing a field it owns: its entry is read, kept, and stamped.
  api::Object fourth = With(third, {"status"}, json::parse(R"({"replicas":3,"readyReplicas":2})"));
  UpdateManagedFields(Deployment(), &third, fourth, Ctx("status-writer", 9, "status"));
  EXPECT_EQ(FieldsOf(fourth, "status-writer"), FieldsOf(second, "status-writer"));
  const json::array& entries = api::Find(fourth.doc(), {"metadata", "managedFields"})->as_array();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.back().at("time"), "2025-01-01T00:00:09Z");
}

TEST(UpdateManagedFields, ExplicitManagedFieldsFollowUpstream) {
  const api::Object created = Created();
  // [{}] clears them; an existing object without managedFields is then not tracked by updates.
  api::Object cleared = created;
  api::EnsureObject(cleared.mutable_doc(), "metadata")["managedFields"] = json::parse("[{}]");
  UpdateManagedFields(Deployment(), &created, cleared, Ctx("kubectl-edit", 1));
  EXPECT_EQ(ManagedFieldsJson(cleared), "<none>");
  api::Object later = With(cleared, {"spec", "replicas"}, 5);
  UpdateManagedFields(Deployment(), &cleared, later, Ctx("kubectl-edit", 2));
  EXPECT_EQ(ManagedFieldsJson(later), "<none>");

  // A valid list replaces the stored one; garbage keeps the stored one.
  api::Object replaced = created;
  api::EnsureObject(replaced.mutable_doc(), "metadata")["managedFields"] =
      json::parse(R"([{"manager":"restore","operation":"Update","apiVersion":"apps/v1",)"
                  R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}])");
  UpdateManagedFields(Deployment(), &created, replaced, Ctx("kubectl-edit", 3));
  EXPECT_EQ(ManagedFieldsJson(replaced),
            R"([{"manager":"restore","operation":"Update","apiVersion":"apps/v1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}])");
  api::Object garbage = created;
  api::EnsureObject(garbage.mutable_doc(), "metadata")["managedFields"] =
      json::parse(R"([{"manager":"x","operation":"Delete"}])");
  UpdateManagedFields(Deployment(), &created, garbage, Ctx("kubectl-edit", 3));
  EXPECT_EQ(ManagedFieldsJson(garbage), ManagedFieldsJson(created));
}

TEST(UpdateManagedFields, ElevenUpdatersAreCappedIntoAncientChanges) {
  api::Object obj = Created();
  for (int i = 1; i <= 10; ++i) {
    api::Object next = obj;
    next.SetLabel("l" + std::to_string(i), "v");
    UpdateManagedFields(Deployment(), &obj, next, Ctx("writer-" + std::to_string(i), i));
    obj = std::move(next);
  }
  // kubectl-create (t=0) and writer-1 (t=1) are the oldest: they merge into one bucket entry
  // carrying writer-1's time.
  const json::array& entries = api::Find(obj.doc(), {"metadata", "managedFields"})->as_array();
  ASSERT_EQ(entries.size(), 10u);
  EXPECT_EQ(entries[0].at("manager"), "ancient-changes");
  EXPECT_EQ(entries[0].at("time"), "2025-01-01T00:00:01Z");
  EXPECT_NE(json::serialize(entries[0].at("fieldsV1")).find("f:l1"), std::string::npos);
  EXPECT_NE(json::serialize(entries[0].at("fieldsV1")).find("f:replicas"), std::string::npos);
}

TEST(UpdateManagedFields, UncomparableObjectsDropManagedFields) {
  const api::Object created = Created();
  api::Object bad = With(created, {"spec", "template", "spec", "containers"},
                         json::parse(R"([{"image":"no-name"}])"));
  UpdateManagedFields(Deployment(), &created, bad, Ctx("kubectl-edit", 1));
  EXPECT_EQ(ManagedFieldsJson(bad), "<none>");
}

// ---- Server-side apply: FINDINGS 3.11
// -------------------------------------------------------------

// The manifest `kubectl apply -f` (client-side) created the object from: no replicas.
constexpr std::string_view kLastApplied =
    R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"labels":)"
    R"({"app":"web"},"name":"web","namespace":"default"},"spec":{"selector":{"matchLabels":)"
    R"({"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":)"
    R"([{"image":"nginx:1.27","name":"nginx"}]}}}})"
    "\n";

// The same manifest with replicas: 3, as `kubectl apply --server-side` sends it.
constexpr std::string_view kApplied = R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},
  "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
    "template":{"metadata":{"labels":{"app":"web"}},
      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}})";

api::Object ClientSideApplied(std::string_view last_applied = kLastApplied) {
  api::Object obj = ObjectOf(kCreated);
  obj.SetAnnotation("kubectl.kubernetes.io/last-applied-configuration", last_applied);
  UpdateManagedFields(Deployment(), nullptr, obj, Ctx("kubectl-client-side-apply", 0));
  return obj;
}

TEST(ServerSideApply, ConflictWithClientSideApplyIsUpstreams) {
  const api::Object live = ClientSideApplied();
  ApiOr<api::Object> r =
      ServerSideApply(Deployment(), &live, ObjectOf(kApplied), Ctx("kubectl", 10),
                      /*force=*/false);
  ASSERT_FALSE(r.ok());
  const ApiError& e = r.error();
  EXPECT_EQ(e.code, 409);
  EXPECT_EQ(e.reason, "Conflict");
  EXPECT_EQ(e.message,
            R"(Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using )"
            R"(apps/v1: .spec.replicas)");
  EXPECT_EQ(json::serialize(e.ToStatus()),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using )"
            R"(apps/v1: .spec.replicas","reason":"Conflict","details":{"causes":[{"reason":)"
            R"("FieldManagerConflict","message":"conflict with \"kubectl-client-side-apply\" )"
            R"(using apps/v1","field":".spec.replicas"}]},"code":409})");
}

TEST(ServerSideApply, ForceTakesOwnership) {
  const api::Object live = ClientSideApplied();
  ApiOr<api::Object> r =
      ServerSideApply(Deployment(), &live, ObjectOf(kApplied), Ctx("kubectl", 10),
                      /*force=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(api::FindInt(r->doc(), {"spec", "replicas"}), 3);
  EXPECT_EQ(FieldsOf(*r, "kubectl", "Apply"),
            R"({"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},)"
            R"("f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":)"
            R"({"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}})");
  const std::string csa = FieldsOf(*r, "kubectl-client-side-apply");
  EXPECT_EQ(csa.find("f:replicas"), std::string::npos) << csa;
  EXPECT_NE(csa.find("f:revisionHistoryLimit"), std::string::npos) << csa;
  // Apply entries come first; the applier's entry carries the apply's time.
  const json::array& entries = api::Find(r->doc(), {"metadata", "managedFields"})->as_array();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].at("operation"), "Apply");
  EXPECT_EQ(entries[0].at("time"), "2025-01-01T00:00:10Z");
  EXPECT_EQ(entries[0].at("apiVersion"), "apps/v1");
  // kubectl's server-side apply keeps the client-side annotation in step.
  EXPECT_EQ(*r->annotation("kubectl.kubernetes.io/last-applied-configuration"),
            R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"web"},)"
            R"("name":"web","namespace":"default"},"spec":{"replicas":3,"selector":)"
            R"({"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},)"
            R"("spec":{"containers":[{"image":"nginx:1.27","name":"nginx"}]}}}})");
}

TEST(ServerSideApply, KubectlUpgradesFromClientSideApplyWithoutConflicts) {
  // The client-side manifest set replicas to the live value: upstream waives that conflict for
  // manager "kubectl" (the documented upgrade path), but not for other managers.
  std::string last(kLastApplied);
  last.replace(last.find(R"("spec":{)"), 8, R"("spec":{"replicas":1,)");
  const api::Object live = ClientSideApplied(last);
  ApiOr<api::Object> r =
      ServerSideApply(Deployment(), &live, ObjectOf(kApplied), Ctx("kubectl", 10), false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(api::FindInt(r->doc(), {"spec", "replicas"}), 3);
  ApiOr<api::Object> other =
      ServerSideApply(Deployment(), &live, ObjectOf(kApplied), Ctx("my-ctl", 10), false);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, 409);
}

TEST(ServerSideApply, CreatesWhenAbsent) {
  ApiOr<api::Object> r =
      ServerSideApply(Deployment(), nullptr, ObjectOf(kApplied), Ctx("kubectl", 7), false);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(ManagedFieldsJson(*r),
            R"([{"manager":"kubectl","operation":"Apply","apiVersion":"apps/v1",)"
            R"("time":"2025-01-01T00:00:07Z","fieldsType":"FieldsV1","fieldsV1":)"
            R"({"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},)"
            R"("f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":)"
            R"({"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{}}}}}}}}])");
  api::Object expected = ObjectOf(kApplied);
  json::object& meta = api::EnsureObject(expected.mutable_doc(), "metadata");
  meta["managedFields"] = *api::Find(r->doc(), {"metadata", "managedFields"});
  EXPECT_EQ(json::serialize(r->doc()), json::serialize(expected.doc()));
}

TEST(ServerSideApply, ApplyingTwiceChangesNothing) {
  ApiOr<api::Object> first =
      ServerSideApply(Deployment(), nullptr, ObjectOf(kApplied), Ctx("mgr", 1), false);
  ASSERT_TRUE(first.ok());
  ApiOr<api::Object> second =
      ServerSideApply(Deployment(), &*first, ObjectOf(kApplied), Ctx("mgr", 50), false);
  ASSERT_TRUE(second.ok()) << second.error().message;
  // Same object, same managedFields: a no-op apply does not touch the entry's time.
  EXPECT_EQ(json::serialize(second->doc()), json::serialize(first->doc()));
}

// Applies `config` (a Deployment patch body with apiVersion/kind/name added) by `manager`.
ApiOr<api::Object> ApplyAs(const api::Object* live, std::string_view manager,
                           std::string_view spec_and_meta, int time, bool force = false) {
  json::object config = json::parse(spec_and_meta).as_object();
  config["apiVersion"] = "apps/v1";
  config["kind"] = "Deployment";
  api::EnsureObject(config, "metadata")["name"] = "web";
  return ServerSideApply(Deployment(), live, api::Object(std::move(config)),
                         Ctx(std::string(manager), time), force);
}

const json::value* Get(const api::Object& o, std::initializer_list<std::string_view> path) {
  return api::Find(o.doc(), path);
}

TEST(ServerSideApply, OmittedFieldIsRemovedUnlessSomeoneElseOwnsIt) {
  ApiOr<api::Object> v1 = ApplyAs(nullptr, "mgr",
                                  R"({"metadata":{"labels":{"app":"web","tier":"fe","team":"a"}},)"
                                  R"("spec":{"paused":true}})",
                                  1);
  ASSERT_TRUE(v1.ok());
  // Another applier also sets team (same value: shared ownership).
  ApiOr<api::Object> v2 = ApplyAs(&*v1, "other", R"({"metadata":{"labels":{"team":"a"}}})", 2);
  ASSERT_TRUE(v2.ok()) << v2.error().message;
  ApiOr<api::Object> v3 = ApplyAs(&*v2, "mgr", R"({"metadata":{"labels":{"app":"web"}}})", 3);
  ASSERT_TRUE(v3.ok()) << v3.error().message;
  EXPECT_EQ(json::serialize(*Get(*v3, {"metadata", "labels"})), R"({"app":"web","team":"a"})");
  EXPECT_EQ(Get(*v3, {"spec", "paused"}), nullptr);
  EXPECT_EQ(FieldsOf(*v3, "mgr", "Apply"), R"({"f:metadata":{"f:labels":{"f:app":{}}}})");
}

TEST(ServerSideApply, ListMapsSetsAndAtomicLists) {
  // Two appliers own one container each, ports merge by containerPort+protocol, finalizers are a
  // set, command is atomic.
  ApiOr<api::Object> a = ApplyAs(nullptr, "a",
                                 R"({"metadata":{"finalizers":["a.io/x"]},"spec":{"template":)"
                                 R"({"spec":{"containers":[{"name":"app","image":"app:1",)"
                                 R"("command":["run"],"ports":[{"containerPort":80}]}]}}}})",
                                 1);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ApiOr<api::Object> b =
      ApplyAs(&*a, "b",
              R"({"metadata":{"finalizers":["b.io/y"]},"spec":{"template":)"
              R"({"spec":{"containers":[{"name":"app","ports":[{"containerPort":)"
              R"(53,"protocol":"UDP"}]},{"name":"proxy","image":"envoy"}]}}}})",
              2);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(json::serialize(*Get(*b, {"metadata", "finalizers"})), R"(["a.io/x","b.io/y"])");
  EXPECT_EQ(json::serialize(*Get(*b, {"spec", "template", "spec", "containers"})),
            R"([{"name":"app","image":"app:1","command":["run"],"ports":[{"containerPort":80},)"
            R"({"containerPort":53,"protocol":"UDP"}]},{"name":"proxy","image":"envoy"}])");
  // b changing the atomic command a applied conflicts with a (an Apply owner: no " using").
  ApiOr<api::Object> c = ApplyAs(
      &*b, "b", R"({"spec":{"template":{"spec":{"containers":[{"name":"app","command":["x"]}]}}}})",
      3);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, R"(Apply failed with 1 conflict: conflict with "a": )"
                               R"(.spec.template.spec.containers[name="app"].command)");
  // a dropping its finalizer and port removes them; b's stay.
  ApiOr<api::Object> d = ApplyAs(
      &*b, "a",
      R"({"spec":{"template":{"spec":{"containers":[{"name":"app","image":"app:1","command":["run"]}]}}}})",
      4);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(json::serialize(*Get(*d, {"metadata", "finalizers"})), R"(["b.io/y"])");
  EXPECT_EQ(json::serialize(*Get(*d, {"spec", "template", "spec", "containers"})),
            R"([{"name":"app","image":"app:1","command":["run"],"ports":[{"containerPort":53,)"
            R"("protocol":"UDP"}]},{"name":"proxy","image":"envoy"}])");
}

TEST(ServerSideApply, SeveralConflictsAreGroupedByManager) {
  api::Object live = Created("creator");
  ApiOr<api::Object> other = ApplyAs(&live, "other", R"({"spec":{"minReadySeconds":5}})", 1);
  ASSERT_TRUE(other.ok()) << other.error().message;
  ApiOr<api::Object> r = ApplyAs(
      &*other, "me",
      R"({"spec":{"replicas":4,"revisionHistoryLimit":2,"minReadySeconds":9,"paused":false}})", 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "Apply failed with 3 conflicts: conflicts with \"creator\" using apps/v1:\n"
            "- .spec.replicas\n"
            "- .spec.revisionHistoryLimit\n"
            "conflicts with \"other\":\n"
            "- .spec.minReadySeconds");
  ASSERT_EQ(r.error().causes.size(), 3u);
  EXPECT_EQ(r.error().causes[2].message, R"(conflict with "other")");
  EXPECT_EQ(r.error().causes[2].field, ".spec.minReadySeconds");
}

TEST(ServerSideApply, FirstApplyToUntrackedObjectAttributesExistingFields) {
  api::Object live = ObjectOf(kCreated);  // stored before managedFields existed
  ApiOr<api::Object> r = ApplyAs(&live, "mgr", R"({"spec":{"replicas":2}})", 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, R"(Apply failed with 1 conflict: conflict with )"
                               R"("before-first-apply" using apps/v1: .spec.replicas)");
}

TEST(ServerSideApply, StatusResetFieldsAreNotOwned) {
  ManagedFieldsContext ctx = Ctx("mgr", 1);
  ctx.reset_fields = DefaultResetFields(true, "");
  ApiOr<api::Object> r = ServerSideApply(
      Deployment(), nullptr,
      ObjectOf(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},)"
               R"("spec":{"paused":true},"status":{"replicas":3}})"),
      ctx, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(FieldsOf(*r, "mgr", "Apply"), R"({"f:spec":{"f:paused":{}}})");
}

struct BadApplyCase {
  std::string name;
  std::string body;
  int code;
  std::string message;
  friend void PrintTo(const BadApplyCase& c, std::ostream* os) { *os << c.name; }
};

class BadApply : public testing::TestWithParam<BadApplyCase> {};

TEST_P(BadApply, IsRefusedAsUpstreamDoes) {
  const BadApplyCase& c = GetParam();
  ApiOr<api::Object> r =
      ServerSideApply(Deployment(), nullptr, ObjectOf(c.body), Ctx("m", 0), false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, c.code);
  EXPECT_EQ(r.error().message, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadApply,
    testing::Values(
        BadApplyCase{"WrongVersion",
                     R"({"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"w"}})",
                     400,
                     "Incorrect version specified in apply patch. Specified patch version: "
                     "apps/v1beta1, expected: apps/v1"},
        BadApplyCase{"ManagedFieldsInBody",
                     R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w",)"
                     R"("managedFields":[]}})",
                     400, "metadata.managedFields must be nil"},
        BadApplyCase{"DuplicateContainers",
                     R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w",)"
                     R"("namespace":"ns"},"spec":{"template":{"spec":{"containers":[{"name":"a"},)"
                     R"({"name":"a"}]}}}})",
                     500,
                     "failed to create typed patch object (ns/w; apps/v1, Kind=Deployment): "
                     ".spec.template.spec.containers: duplicate entries for key [name=\"a\"]"}),
    [](const testing::TestParamInfo<BadApplyCase>& info) { return info.param.name; });

// ---- Request validation -------------------------------------------------------------------------

TEST(DefaultFieldManager, TakesTheUserAgentPrefix) {
  EXPECT_EQ(DefaultFieldManager("kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"), "kubectl");
  EXPECT_EQ(DefaultFieldManager("kube-controller-manager/v1.32.0 (linux/amd64)"),
            "kube-controller-manager");
  EXPECT_EQ(DefaultFieldManager("no-slash"), "no-slash");
  EXPECT_EQ(DefaultFieldManager(""), "");
  EXPECT_EQ(DefaultFieldManager("a\tb\x01"
                                "c/1"),
            "abc");
  EXPECT_EQ(DefaultFieldManager(std::string(200, 'x')), std::string(128, 'x'));
}

struct OptionsCase {
  std::string name;
  std::string kind;
  bool apply;
  std::string manager;
  bool force;
  std::string message;  // empty: valid
  friend void PrintTo(const OptionsCase& c, std::ostream* os) { *os << c.name; }
};

class FieldManagerOptions : public testing::TestWithParam<OptionsCase> {};

TEST_P(FieldManagerOptions, ValidateAsUpstream) {
  const OptionsCase& c = GetParam();
  std::optional<ApiError> e = ValidateFieldManagerOptions(c.kind, c.apply, c.manager, c.force);
  if (c.message.empty()) {
    EXPECT_FALSE(e.has_value()) << e->message;
    return;
  }
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 422);
  EXPECT_EQ(e->reason, "Invalid");
  EXPECT_EQ(e->message, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FieldManagerOptions,
    testing::Values(
        OptionsCase{"ApplyNeedsManager", "PatchOptions", true, "", false,
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                    "required for apply patch"},
        OptionsCase{"ApplyWithManager", "PatchOptions", true, "kubectl", true, ""},
        OptionsCase{"ForceOnlyForApply", "PatchOptions", false, "", true,
                    "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be "
                    "specified for non-apply patch"},
        OptionsCase{"TooLong", "CreateOptions", false, std::string(129, 'm'), false,
                    "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be "
                    "more than 128 bytes"},
        OptionsCase{"Unprintable", "UpdateOptions", false, "a\tb", false,
                    "UpdateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: "
                    "\"a\\tb\": invalid character U+0009 (at position 1)"},
        OptionsCase{"UpdateWithoutManager", "UpdateOptions", false, "", false, ""}),
    [](const testing::TestParamInfo<OptionsCase>& info) { return info.param.name; });

TEST(CheckObjectName, MatchesTheUrl) {
  api::Object o = ObjectOf(R"({"metadata":{"name":"web","namespace":"default"}})");
  EXPECT_FALSE(CheckObjectName(o, "web", "default").has_value());
  EXPECT_FALSE(CheckObjectName(ObjectOf(R"({"metadata":{"name":"web"}})"), "web", "default"));
  std::optional<ApiError> name = CheckObjectName(o, "other", "default");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->code, 400);
  EXPECT_EQ(name->message,
            "the name of the object (web) does not match the name on the URL (other)");
  std::optional<ApiError> ns = CheckObjectName(o, "web", "prod");
  ASSERT_TRUE(ns.has_value());
  EXPECT_EQ(ns->message,
            "the namespace of the object (default) does not match the namespace on the URL (prod)");
}

}  // namespace
}  // namespace converge::apiserver
