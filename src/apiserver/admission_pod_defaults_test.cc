#include "apiserver/admission_pod_defaults.h"

#include <gtest/gtest.h>

namespace converge::apiserver {
namespace {

namespace json = boost::json;

class PodDefaultsTest : public ::testing::Test {
 protected:
  PodDefaultsTest() { info_.gvr = {"", "v1", "pods"}; }
  AdmissionAttributes Attrs(api::Object* pod) {
    AdmissionAttributes a;
    a.operation = "CREATE";
    a.resource = &info_;
    a.ns = "team";
    a.object = pod;
    return a;
  }
  static api::Object Pod(const std::string& spec_json) {
    api::Object pod;
    pod.SetGvk({"", "v1", "Pod"});
    pod.set_name("p");
    pod.mutable_doc()["spec"] = json::parse(spec_json);
    return pod;
  }
  api::ResourceInfo info_;
};

TEST_F(PodDefaultsTest, DefaultServiceAccountAndApiAccessVolume) {
  api::Object pod = Pod(R"({"initContainers":[{"name":"init"}],"containers":[{"name":"a"},
      {"name":"b","volumeMounts":[{"name":"mine","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}]})");
  ServiceAccountAdmission plugin(nullptr);
  AdmissionAttributes a = Attrs(&pod);
  ASSERT_FALSE(plugin.Admit(a).has_value());
  const json::object& spec = pod.doc().at("spec").as_object();
  EXPECT_EQ(spec.at("serviceAccountName"), "default");
  EXPECT_EQ(spec.at("serviceAccount"), "default");
  const json::array& volumes = spec.at("volumes").as_array();
  ASSERT_EQ(volumes.size(), 1u);
  std::string name(volumes[0].at("name").as_string());
  EXPECT_TRUE(name.starts_with("kube-api-access-")) << name;
  EXPECT_EQ(name.size(), std::string("kube-api-access-").size() + 5);
  EXPECT_EQ(spec.at("containers").at(0).at("volumeMounts").at(0).at("name"), name.c_str());
  EXPECT_EQ(spec.at("initContainers").at(0).at("volumeMounts").at(0).at("mountPath"),
            kServiceAccountMountPath.data());
  // A container that mounts the path itself is left alone.
  EXPECT_EQ(spec.at("containers").at(1).at("volumeMounts").as_array().size(), 1u);
}

// The volume upstream's plugin adds, whole; every pod gets its own copy of it.
TEST_F(PodDefaultsTest, ApiAccessVolumeIsUpstreamsProjectedVolume) {
  const json::value want = json::parse(R"({"defaultMode":420,"sources":[
      {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
      {"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},
      {"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},
                                "path":"namespace"}]}}]})");
  ServiceAccountAdmission plugin(nullptr);
  api::Object first = Pod(R"({"containers":[{"name":"a"}]})");
  AdmissionAttributes a = Attrs(&first);
  ASSERT_FALSE(plugin.Admit(a).has_value());
  json::object& volume =
      first.mutable_doc()["spec"].as_object()["volumes"].as_array()[0].as_object();
  ASSERT_EQ(volume.size(), 2u);  // name and projected
  EXPECT_EQ(volume.at("projected"), want);
  volume["projected"].as_object()["defaultMode"] = 384;  // a change to one pod's copy

  api::Object second = Pod(R"({"containers":[{"name":"a"}]})");
  AdmissionAttributes b = Attrs(&second);
  ASSERT_FALSE(plugin.Admit(b).has_value());
  EXPECT_EQ(second.doc().at("spec").at("volumes").at(0).at("projected"), want);
}

TEST_F(PodDefaultsTest, AutomountOffOnThePodOrItsServiceAccount) {
  api::Object off = Pod(R"({"automountServiceAccountToken":false,"containers":[{"name":"a"}]})");
  ServiceAccountAdmission plugin(
      [](const std::string&, const std::string& sa) -> std::optional<bool> {
        if (sa == "quiet") return false;
        return std::nullopt;
      });
  AdmissionAttributes a = Attrs(&off);
  ASSERT_FALSE(plugin.Admit(a).has_value());
  EXPECT_FALSE(off.doc().at("spec").as_object().contains("volumes"));

  api::Object quiet = Pod(R"({"serviceAccountName":"quiet","containers":[{"name":"a"}]})");
  AdmissionAttributes b = Attrs(&quiet);
  ASSERT_FALSE(plugin.Admit(b).has_value());
  EXPECT_EQ(quiet.doc().at("spec").at("serviceAccountName"), "quiet");
  EXPECT_FALSE(quiet.doc().at("spec").as_object().contains("volumes"));
}

TEST_F(PodDefaultsTest, OnlyNewPods) {
  api::Object pod = Pod(R"({"containers":[{"name":"a"}]})");
  ServiceAccountAdmission plugin(nullptr);
  AdmissionAttributes update = Attrs(&pod);
  update.operation = "UPDATE";
  ASSERT_FALSE(plugin.Admit(update).has_value());
  EXPECT_FALSE(pod.doc().at("spec").as_object().contains("serviceAccountName"));
}

TEST_F(PodDefaultsTest, TolerationsForNotReadyAndUnreachable) {
  api::Object pod = Pod(
      R"({"containers":[{"name":"a"}],"tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":10}]})");
  DefaultTolerationSeconds plugin;
  AdmissionAttributes a = Attrs(&pod);
  ASSERT_FALSE(plugin.Admit(a).has_value());
  const json::array& t = pod.doc().at("spec").at("tolerations").as_array();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].at("tolerationSeconds"), 10);  // the pod's own stays
  EXPECT_EQ(t[1].at("key"), "node.kubernetes.io/not-ready");
  EXPECT_EQ(t[1].at("tolerationSeconds"), 300);

  api::Object none = Pod(R"({"containers":[{"name":"a"}]})");
  AdmissionAttributes c = Attrs(&none);
  ASSERT_FALSE(plugin.Admit(c).has_value());
  EXPECT_EQ(none.doc().at("spec").at("tolerations"), json::parse(R"([
      {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",
       "tolerationSeconds":300},
      {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute",
       "tolerationSeconds":300}])"));

  api::Object all = Pod(R"({"containers":[{"name":"a"}],"tolerations":[{"operator":"Exists"}]})");
  AdmissionAttributes b = Attrs(&all);
  ASSERT_FALSE(plugin.Admit(b).has_value());
  EXPECT_EQ(all.doc().at("spec").at("tolerations").as_array().size(), 1u);
}

}  // namespace
}  // namespace converge::apiserver
