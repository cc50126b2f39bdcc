#include "controllers/rootcacert/publisher.h"

#include <gtest/gtest.h>

namespace converge::controllers::rootcacert {
namespace {

namespace json = boost::json;

const std::string kCa = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

api::Object Namespace(const std::string& name, const std::string& phase = "Active") {
  api::Object ns;
  ns.SetGvk({"", "v1", "Namespace"});
  ns.set_name(name);
  ns.mutable_doc()["status"] = json::object{{"phase", phase}};
  return ns;
}

TEST(RootCaConfigMapTest, ANamespaceWithoutOneGetsIt) {
  std::optional<api::Object> cm = DesiredRootCaConfigMap(Namespace("team"), nullptr, kCa);
  ASSERT_TRUE(cm.has_value());
  EXPECT_EQ(cm->kind(), "ConfigMap");
  EXPECT_EQ(cm->namespace_(), "team");
  EXPECT_EQ(cm->name(), "kube-root-ca.crt");
  EXPECT_TRUE(cm->resource_version().empty());
  EXPECT_EQ(json::value(cm->doc().at("data")), (json::object{{"ca.crt", kCa}}));
  ASSERT_NE(cm->annotations(), nullptr);
  EXPECT_TRUE(cm->annotations()->contains("kubernetes.io/description"));
}

TEST(RootCaConfigMapTest, ARightOneIsLeftAlone) {
  api::Object current = *DesiredRootCaConfigMap(Namespace("team"), nullptr, kCa);
  current.mutable_metadata()["resourceVersion"] = "7";
  EXPECT_FALSE(DesiredRootCaConfigMap(Namespace("team"), &current, kCa).has_value());
}

TEST(RootCaConfigMapTest, ChangedDataIsPutBackAndExtraKeysGo) {
  api::Object current = *DesiredRootCaConfigMap(Namespace("team"), nullptr, kCa);
  current.mutable_metadata()["resourceVersion"] = "7";
  current.SetAnnotation("kept", "yes");
  current.mutable_doc()["data"] = json::object{{"ca.crt", "forged"}, {"extra", "x"}};
  std::optional<api::Object> fixed = DesiredRootCaConfigMap(Namespace("team"), &current, kCa);
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(fixed->resource_version(), "7") << "an update of what was read";
  EXPECT_EQ(json::value(fixed->doc().at("data")), (json::object{{"ca.crt", kCa}}));
  EXPECT_EQ(fixed->annotation("kept"), "yes");

  // A new CA bundle replaces the old one.
  std::optional<api::Object> rotated = DesiredRootCaConfigMap(Namespace("team"), &*fixed, "new");
  ASSERT_TRUE(rotated.has_value());
  EXPECT_EQ(json::value(rotated->doc().at("data")), (json::object{{"ca.crt", "new"}}));
}

TEST(RootCaConfigMapTest, AMissingDescriptionIsAdded) {
  api::Object current = *DesiredRootCaConfigMap(Namespace("team"), nullptr, kCa);
  current.mutable_metadata().erase("annotations");
  std::optional<api::Object> fixed = DesiredRootCaConfigMap(Namespace("team"), &current, kCa);
  ASSERT_TRUE(fixed.has_value());
  ASSERT_NE(fixed->annotations(), nullptr);
  EXPECT_TRUE(fixed->annotations()->contains("kubernetes.io/description"));
}

TEST(RootCaConfigMapTest, ATerminatingNamespaceGetsNothing) {
  EXPECT_FALSE(DesiredRootCaConfigMap(Namespace("gone", "Terminating"), nullptr, kCa));
  api::Object deleting = Namespace("gone");
  deleting.mutable_metadata()["deletionTimestamp"] = "2026-11-30T08:00:00Z";
  EXPECT_FALSE(DesiredRootCaConfigMap(deleting, nullptr, kCa));
}

}  // namespace
}  // namespace converge::controllers::rootcacert
