#include "controllers/endpoint/decide.h"

#include <gtest/gtest.h>

#include <memory>

namespace converge::controllers::endpoint {
namespace {

namespace json = boost::json;

api::Object Service(json::object spec, json::object labels = {}) {
  api::Object svc;
  svc.SetGvk({"", "v1", "Service"});
  svc.set_namespace("ns");
  svc.set_name("web");
  for (const auto& [k, v] : labels) svc.SetLabel(k, v.as_string());
  svc.mutable_doc()["spec"] = std::move(spec);
  return svc;
}

json::object WebSpec() {
  return {
      {"selector", {{"app", "web"}}},
      {"ports",
       json::array{{{"name", "http"}, {"port", 80}, {"protocol", "TCP"}, {"targetPort", 8080}}}}};
}

api::ObjectPtr Pod(const std::string& name, const std::string& ip, bool ready,
                   json::object labels = {{"app", "web"}}, std::string_view phase = "Running") {
  auto pod = std::make_shared<api::Object>();
  pod->SetGvk({"", "v1", "Pod"});
  pod->set_namespace("ns");
  pod->set_name(name);
  pod->mutable_metadata()["uid"] = "uid-" + name;
  pod->mutable_metadata()["labels"] = std::move(labels);
  pod->mutable_doc()["spec"] =
      json::object{{"nodeName", "node-1"},
                   {"containers", json::array{{{"name", "c"},
                                               {"ports", json::array{{{"name", "metrics"},
                                                                      {"containerPort", 9090},
                                                                      {"protocol", "TCP"}}}}}}}};
  json::object status{{"phase", phase}};
  if (!ip.empty()) status["podIP"] = ip;
  status["conditions"] = json::array{{{"type", "Ready"}, {"status", ready ? "True" : "False"}}};
  pod->mutable_doc()["status"] = std::move(status);
  return pod;
}

std::string Ips(const json::value& addresses) {
  std::string out;
  for (const json::value& a : addresses.as_array()) {
    out += std::string(a.at("ip").as_string()) + " ";
  }
  return out;
}

TEST(EndpointsSubsetsTest, ReadyAndNotReadyPodsOfTheSelectorSortedByIp) {
  const api::Object svc = Service(WebSpec());
  json::array subsets = Subsets(
      svc, {Pod("b", "10.0.0.9", true), Pod("a", "10.0.0.10", true), Pod("c", "10.0.0.3", false),
            Pod("other", "10.0.0.4", true, {{"app", "db"}}), Pod("no-ip", "", true),
            Pod("done", "10.0.0.5", true, {{"app", "web"}}, "Succeeded")});
  ASSERT_EQ(subsets.size(), 1u) << json::serialize(subsets);
  const json::object& s = subsets[0].as_object();
  // In byte order of the text, as upstream compares them.
  EXPECT_EQ(Ips(s.at("addresses")), "10.0.0.10 10.0.0.9 ");
  EXPECT_EQ(Ips(s.at("notReadyAddresses")), "10.0.0.3 ");
  EXPECT_EQ(json::serialize(s.at("ports")), R"([{"name":"http","port":8080,"protocol":"TCP"}])");
  const json::object& a = s.at("addresses").as_array()[0].as_object();
  EXPECT_EQ(a.at("nodeName"), "node-1");
  EXPECT_EQ(json::serialize(a.at("targetRef")),
            R"({"kind":"Pod","namespace":"ns","name":"a","uid":"uid-a"})");
}

TEST(EndpointsSubsetsTest, PodsBeingDeletedAreLeftOutUnlessNotReadyAddressesArePublished) {
  api::ObjectPtr going = Pod("going", "10.0.0.1", true);
  std::const_pointer_cast<api::Object>(going)->mutable_metadata()["deletionTimestamp"] =
      "2026-11-30T08:00:00Z";
  EXPECT_TRUE(Subsets(Service(WebSpec()), {going}).empty());

  json::object spec = WebSpec();
  spec["publishNotReadyAddresses"] = true;
  json::array subsets = Subsets(Service(spec), {going, Pod("slow", "10.0.0.2", false)});
  ASSERT_EQ(subsets.size(), 1u);
  EXPECT_EQ(Ips(subsets[0].at("addresses")), "10.0.0.1 10.0.0.2 ");
  EXPECT_FALSE(subsets[0].as_object().contains("notReadyAddresses"));
}

TEST(EndpointsSubsetsTest, NamedTargetPortsResolvePerPodAndDefaultToThePort) {
  json::object spec = WebSpec();
  spec["ports"] = json::array{
      {{"name", "metrics"}, {"port", 9000}, {"protocol", "TCP"}, {"targetPort", "metrics"}},
      {{"name", "plain"}, {"port", 81}, {"protocol", "TCP"}}};
  api::ObjectPtr without = Pod("without", "10.0.0.2", true);
  std::const_pointer_cast<api::Object>(without)->mutable_doc()["spec"].as_object()["containers"] =
      json::array{{{"name", "c"}}};
  json::array subsets = Subsets(Service(spec), {Pod("with", "10.0.0.1", true), without});
  ASSERT_EQ(subsets.size(), 2u) << json::serialize(subsets);
  // One subset per set of ports: the pod without the named port has only the other one.
  EXPECT_EQ(Ips(subsets[0].at("addresses")), "10.0.0.1 ");
  EXPECT_EQ(json::serialize(subsets[0].at("ports")),
            R"([{"name":"metrics","port":9090,"protocol":"TCP"},)"
            R"({"name":"plain","port":81,"protocol":"TCP"}])");
  EXPECT_EQ(Ips(subsets[1].at("addresses")), "10.0.0.2 ");
  EXPECT_EQ(json::serialize(subsets[1].at("ports")),
            R"([{"name":"plain","port":81,"protocol":"TCP"}])");
}

TEST(EndpointsDesiredTest, CreatedWithTheServiceLabelsThenLeftAloneUntilSomethingChanges) {
  const api::Object svc = Service(WebSpec(), {{"team", "a"}});
  std::optional<api::Object> created = DesiredEndpoints(svc, nullptr, {Pod("a", "10.0.0.1", true)});
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(created->kind(), "Endpoints");
  EXPECT_EQ(created->name(), "web");
  EXPECT_EQ(created->namespace_(), "ns");
  EXPECT_EQ(api::Serialize(created->labels()), R"({"team":"a"})");

  api::Object stored = *created;
  stored.mutable_metadata()["resourceVersion"] = "5";
  EXPECT_FALSE(DesiredEndpoints(svc, &stored, {Pod("a", "10.0.0.1", true)}).has_value());

  std::optional<api::Object> emptied = DesiredEndpoints(svc, &stored, {});
  ASSERT_TRUE(emptied.has_value());
  EXPECT_EQ(emptied->resource_version(), "5");
  EXPECT_FALSE(emptied->doc().contains("subsets"));
}

TEST(EndpointsDesiredTest, SelectorsAndHeadlessServices) {
  EXPECT_FALSE(HasSelector(Service({{"ports", json::array{}}})));
  EXPECT_FALSE(HasSelector(Service({{"selector", json::object{}}})));
  EXPECT_TRUE(HasSelector(Service(WebSpec())));
  json::object spec = WebSpec();
  spec["clusterIP"] = "None";
  std::optional<api::Object> eps = DesiredEndpoints(Service(spec), nullptr, {});
  ASSERT_TRUE(eps.has_value());
  EXPECT_TRUE(eps->labels()->contains("service.kubernetes.io/headless"));
}

}  // namespace
}  // namespace converge::controllers::endpoint
