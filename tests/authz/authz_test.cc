// Authorization end to end with the real kubectl: users with client certificates issued by the
// server's CA are allowed exactly what RBAC grants them (403 elsewhere, with nothing changed),
// cannot escalate, get truthful `kubectl auth can-i` answers, can ask `kubectl auth whoami`, and a
// node identity can touch only its own pods.
#include <gtest/gtest.h>

#include "apiserver/kubeconfig.h"
#include "apiserver/pki.h"
#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

class AuthzTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
    dir_ = new TempDir();
    admin_ = new Kubectl(server_->kubeconfig_path(), dir_->path() + "/cache-admin");
    // Two namespaces; alice may read pods and manage configmaps and roles in team-a only.
    ASSERT_EQ(Admin({"create", "namespace", "team-a"}).exit_code, 0);
    ASSERT_EQ(Admin({"create", "namespace", "team-b"}).exit_code, 0);
    CommandResult r = Admin({"apply", "-f", "-"}, R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: team-a-dev, namespace: team-a}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, create]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-dev, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: team-a-dev}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
)");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete admin_;
    delete server_;
    delete dir_;
  }

  static CommandResult Admin(const std::vector<std::string>& args, const std::string& in = "") {
    return admin_->Run(args, in);
  }

  // kubectl acting as `user` in `groups`, with a client certificate from the cluster CA.
  static std::unique_ptr<Kubectl> As(const std::string& user,
                                     const std::vector<std::string>& groups = {}) {
    auto pki = apiserver::LoadOrCreatePki({.dir = server_->data_dir() + "/pki"});
    EXPECT_TRUE(pki.ok()) << pki.status().ToString();
    auto cert = pki->ClientCertificate(user, groups);
    EXPECT_TRUE(cert.ok());
    std::string safe;
    for (char c : user) safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    std::string path = dir_->path() + "/" + safe + ".kubeconfig";
    apiserver::KubeconfigOptions kc{.server = server_->kubeconfig().server,
                                    .user_name = user,
                                    .ca_pem = pki->ca.cert_pem,
                                    .client_cert_pem = cert->cert_pem,
                                    .client_key_pem = cert->key_pem};
    EXPECT_TRUE(apiserver::WriteKubeconfig(path, kc).ok());
    return std::make_unique<Kubectl>(path, dir_->path() + "/cache-" + safe);
  }

  static ServerProcess* server_;
  static TempDir* dir_;
  static Kubectl* admin_;
};
ServerProcess* AuthzTest::server_ = nullptr;
TempDir* AuthzTest::dir_ = nullptr;
Kubectl* AuthzTest::admin_ = nullptr;

TEST_F(AuthzTest, NamespacedRoleAllowsExactlyItsRules) {
  auto alice = As("alice", {"developers"});
  CommandResult r = alice->Run({"get", "pods", "-n", "team-a"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = alice->Run({"get", "pods", "-n", "team-b"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("pods is forbidden: User \"alice\" cannot list resource \"pods\" in API "
                       "group \"\" in the namespace \"team-b\""),
            std::string::npos)
      << r.err;
  r = alice->Run({"get", "pods", "-A"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("at the cluster scope"), std::string::npos) << r.err;

  r = alice->Run({"create", "configmap", "mine", "-n", "team-a", "--from-literal=k=v"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = alice->Run({"create", "configmap", "theirs", "-n", "team-b", "--from-literal=k=v"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("configmaps is forbidden: User \"alice\" cannot create resource "
                       "\"configmaps\" in API group \"\" in the namespace \"team-b\""),
            std::string::npos)
      << r.err;
  r = alice->Run({"delete", "configmap", "mine", "-n", "team-a"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("configmaps \"mine\" is forbidden: User \"alice\" cannot delete"),
            std::string::npos)
      << r.err;
  r = alice->Run({"create", "deployment", "web", "-n", "team-a", "--image=nginx"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("deployments.apps is forbidden"), std::string::npos) << r.err;

  // Nothing changed behind the refusals.
  EXPECT_EQ(Admin({"get", "configmap", "mine", "-n", "team-a"}).exit_code, 0);
  EXPECT_NE(Admin({"get", "configmap", "theirs", "-n", "team-b"}).exit_code, 0);
  EXPECT_NE(Admin({"get", "deployment", "web", "-n", "team-a"}).exit_code, 0);

  // Another user with no bindings gets nothing.
  auto bob = As("bob");
  r = bob->Run({"get", "pods", "-n", "team-a"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("User \"bob\" cannot list"), std::string::npos) << r.err;
}

TEST_F(AuthzTest, EscalationIsForbidden) {
  auto alice = As("alice", {"developers"});
  // A Role with more than alice holds (delete pods, secrets).
  CommandResult r = alice->Run({"create", "role", "too-much", "-n", "team-a", "--verb=get,delete",
                                "--resource=pods,secrets"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("roles.rbac.authorization.k8s.io \"too-much\" is forbidden: user "
                       "\"alice\" (groups=[\"developers\" \"system:authenticated\"]) is "
                       "attempting to grant RBAC permissions not currently held:"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}"),
            std::string::npos)
      << r.err;
  EXPECT_NE(Admin({"get", "role", "too-much", "-n", "team-a"}).exit_code, 0);

  // A Role within what she holds is fine.
  r = alice->Run(
      {"create", "role", "pod-viewer", "-n", "team-a", "--verb=get,list", "--resource=pods"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // Binding herself (or anyone) to cluster-admin is an escalation too.
  r = alice->Run({"create", "rolebinding", "grab", "-n", "team-a", "--clusterrole=cluster-admin",
                  "--user=alice"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("rolebindings.rbac.authorization.k8s.io \"grab\" is forbidden: user "
                       "\"alice\""),
            std::string::npos)
      << r.err;
  EXPECT_NE(Admin({"get", "rolebinding", "grab", "-n", "team-a"}).exit_code, 0);
  r = alice->Run({"get", "secrets", "-n", "team-a"});
  EXPECT_NE(r.exit_code, 0) << "the refused binding must not have taken effect";

  // Binding a role she holds entirely is allowed.
  r = alice->Run(
      {"create", "rolebinding", "share", "-n", "team-a", "--role=pod-viewer", "--user=carol"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(AuthzTest, AuthCanIAnswersTruthfully) {
  auto alice = As("alice", {"developers"});
  CommandResult r = alice->Run({"auth", "can-i", "list", "pods", "-n", "team-a"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = alice->Run({"auth", "can-i", "delete", "pods", "-n", "team-a"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "no\n");
  r = alice->Run({"auth", "can-i", "list", "pods", "-n", "team-b"});
  EXPECT_EQ(r.out, "no\n");
  r = alice->Run({"auth", "can-i", "get", "/healthz"});
  EXPECT_EQ(r.out, "yes\n");

  r = alice->Run({"auth", "can-i", "--list", "-n", "team-a"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pods "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("configmaps "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("selfsubjectaccessreviews.authorization.k8s.io"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("secrets"), std::string::npos) << r.out;

  // The administrator asks on alice's behalf (impersonation).
  r = Admin({"auth", "can-i", "list", "pods", "-n", "team-a", "--as=alice"});
  EXPECT_EQ(r.out, "yes\n") << r.err;
  r = Admin({"auth", "can-i", "list", "pods", "-n", "team-b", "--as=alice"});
  EXPECT_EQ(r.out, "no\n") << r.err;
  r = Admin({"get", "pods", "-n", "team-b", "--as=alice"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("User \"alice\" cannot list"), std::string::npos) << r.err;

  // alice may not impersonate.
  r = alice->Run({"get", "pods", "-n", "team-a", "--as=admin"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("users \"admin\" is forbidden: User \"alice\" cannot impersonate resource "
                       "\"users\" in API group \"\" at the cluster scope"),
            std::string::npos)
      << r.err;
}

// Each controller's identity (upstream's system:controller:<name> roles, bound to the
// kube-system ServiceAccounts the all-in-one controllers act as) is allowed its job and nothing
// more: the deployment controller may manage ReplicaSets but not touch a Secret.
TEST_F(AuthzTest, ControllerIdentitiesAreBoundByTheirRoles) {
  const std::string deployment_controller =
      "--as=system:serviceaccount:kube-system:deployment-controller";
  ASSERT_EQ(Admin({"create", "secret", "generic", "keep-me", "-n", "team-a", "--from-literal=k=v"})
                .exit_code,
            0);
  CommandResult r = Admin({"delete", "secret", "keep-me", "-n", "team-a", deployment_controller});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("secrets \"keep-me\" is forbidden: User "
                       "\"system:serviceaccount:kube-system:deployment-controller\" cannot delete "
                       "resource \"secrets\" in API group \"\" in the namespace \"team-a\""),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Admin({"get", "secret", "keep-me", "-n", "team-a", "-o", "name"}).out,
            "secret/keep-me\n")
      << "the refused delete must not have happened";

  struct Case {
    std::string as;
    std::vector<std::string> question;
    std::string want;
  };
  const std::string sa = "--as=system:serviceaccount:kube-system:";
  const Case cases[] = {
      {sa + "deployment-controller", {"create", "replicasets.apps"}, "yes"},
      {sa + "deployment-controller", {"update", "deployments.apps", "--subresource=status"}, "yes"},
      {sa + "deployment-controller", {"create", "pods"}, "no"},
      {sa + "replicaset-controller", {"create", "pods"}, "yes"},
      {sa + "replicaset-controller", {"delete", "replicasets.apps"}, "no"},
      {sa + "job-controller", {"create", "pods"}, "yes"},
      {sa + "job-controller", {"get", "secrets"}, "no"},
      {sa + "generic-garbage-collector", {"delete", "configmaps"}, "yes"},
      {sa + "generic-garbage-collector", {"create", "pods"}, "no"},
      {sa + "namespace-controller", {"deletecollection", "pods"}, "yes"},
      {sa + "namespace-controller", {"create", "pods"}, "no"},
      {sa + "node-controller", {"update", "nodes", "--subresource=status"}, "yes"},
      {sa + "node-controller", {"create", "pods"}, "no"},
      {sa + "ttl-after-finished-controller", {"delete", "jobs.batch"}, "yes"},
      {sa + "service-account-controller", {"create", "serviceaccounts"}, "yes"},
      {sa + "service-account-controller", {"delete", "serviceaccounts"}, "no"},
      // The controller-manager's own identity reads everything but writes little.
      {"--as=system:kube-controller-manager", {"watch", "pods"}, "yes"},
      {"--as=system:kube-controller-manager", {"create", "pods"}, "no"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"auth", "can-i"};
    args.insert(args.end(), c.question.begin(), c.question.end());
    args.push_back("-n");
    args.push_back("team-a");
    args.push_back(c.as);
    r = Admin(args);
    EXPECT_EQ(r.out, c.want + "\n")
        << c.as << " " << c.question[0] << " " << c.question[1] << ": " << r.err;
  }
}

TEST_F(AuthzTest, AuthWhoami) {
  auto alice = As("alice", {"developers"});
  CommandResult r = alice->Run({"auth", "whoami", "-o",
                                "jsonpath={.status.userInfo.username} "
                                "{.status.userInfo.groups}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "alice [\"developers\",\"system:authenticated\"]");
  r = Admin({"auth", "whoami"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("system:masters"), std::string::npos) << r.out;
}

TEST_F(AuthzTest, NodeTouchesOnlyItsOwnPods) {
  for (const char* node : {"n1", "n2"}) {
    CommandResult r = Admin({"apply", "-f", "-"}, std::string(R"(
apiVersion: v1
kind: Pod
metadata: {name: pod-on-)") + node + R"(, namespace: default}
spec:
  nodeName: )" + node + R"(
  containers: [{name: c, image: nginx}]
)");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto n1 = As("system:node:n1", {"system:nodes"});
  CommandResult r = n1->Run({"get", "pod", "pod-on-n1", "-n", "default"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = n1->Run({"label", "pod", "pod-on-n1", "-n", "default", "seen=yes"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = n1->Run({"get", "pod", "pod-on-n2", "-n", "default"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("pods \"pod-on-n2\" is forbidden: User \"system:node:n1\" cannot get "
                       "resource \"pods\" in API group \"\" in the namespace \"default\": no "
                       "relationship found between node 'n1' and this object"),
            std::string::npos)
      << r.err;
  r = n1->Run({"delete", "pod", "pod-on-n2", "-n", "default", "--wait=false"});
  EXPECT_NE(r.exit_code, 0);
  r = n1->Run({"label", "pod", "pod-on-n2", "-n", "default", "seen=yes"});
  EXPECT_NE(r.exit_code, 0);
  r = n1->Run({"get", "pods", "-A"});
  EXPECT_NE(r.exit_code, 0) << "listing every node's pods";
  r = n1->Run({"get", "pods", "-A", "--field-selector=spec.nodeName=n1", "-o", "name"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "pod/pod-on-n1\n");
  r = n1->Run({"get", "node", "n2"});
  EXPECT_NE(r.exit_code, 0);

  // Nothing happened to n2's pod.
  r = Admin({"get", "pod", "pod-on-n2", "-n", "default", "-o", "jsonpath={.metadata.labels}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(AuthzTest, BootstrapRolesExist) {
  for (const char* role :
       {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
        "system:public-info-viewer", "system:kube-controller-manager", "system:kube-scheduler",
        "system:node"}) {
    CommandResult r = Admin({"get", "clusterrole", role, "-o", "name"});
    EXPECT_EQ(r.exit_code, 0) << role << ": " << r.err;
  }
  // view's rules are aggregated into edit and admin.
  CommandResult r =
      Admin({"auth", "can-i", "list", "deployments.apps", "-n", "team-a", "--as=viewer"});
  EXPECT_EQ(r.out, "no\n");
  ASSERT_EQ(Admin({"create", "rolebinding", "viewer", "-n", "team-a", "--clusterrole=view",
                   "--user=viewer"})
                .exit_code,
            0);
  r = Admin({"auth", "can-i", "list", "deployments.apps", "-n", "team-a", "--as=viewer"});
  EXPECT_EQ(r.out, "yes\n") << r.err;
  r = Admin({"auth", "can-i", "create", "deployments.apps", "-n", "team-a", "--as=viewer"});
  EXPECT_EQ(r.out, "no\n") << r.err;
  r = Admin({"get", "clusterrolebinding", "cluster-admin", "-o", "jsonpath={.subjects[0].name}"});
  EXPECT_EQ(r.out, "system:masters");
}

}  // namespace
}  // namespace converge
