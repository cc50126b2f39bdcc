// The audit log end to end: `converge apiserver --audit-log-path` writes one audit.k8s.io/v1
// Event per request — who (the certificate's user and groups), what (verb, objectRef, URI), when
// and with what result (a 201 for a create, a 403 with its reason for a forbidden request).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <sstream>
#include <thread>

#include "apiserver/kubeconfig.h"
#include "apiserver/pki.h"
#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

namespace json = boost::json;
using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

std::vector<json::object> ReadEvents(const std::string& path) {
  std::vector<json::object> out;
  std::istringstream in(testing::ReadFile(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json::value v = json::parse(line);  // every line must be one JSON document
    out.push_back(v.as_object());
  }
  return out;
}

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : "";
}

// The first event matching `pred`, waiting for the asynchronous writer (up to 30 s).
std::optional<json::object> FindEvent(const std::string& path,
                                      const std::function<bool(const json::object&)>& pred) {
  for (int i = 0; i < 300; ++i) {
    for (const auto& ev : ReadEvents(path)) {
      if (pred(ev)) return ev;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

TEST(AuditLogTest, RecordsWhoDidWhatWithWhichResult) {
  TempDir dir;
  const std::string log = dir.path() + "/audit.log";
  ServerProcess server;
  ASSERT_TRUE(server.Start({.extra_args = {"--audit-log-path", log}}));
  Kubectl admin(server.kubeconfig_path(), dir.path() + "/cache-admin");
  CommandResult r = admin.Run({"create", "configmap", "audited", "--from-literal=k=v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // An unprivileged user with a client certificate from the cluster CA.
  auto pki = apiserver::LoadOrCreatePki({.dir = server.data_dir() + "/pki"});
  ASSERT_TRUE(pki.ok()) << pki.status().ToString();
  auto cert = pki->ClientCertificate("mallory", {"interns"});
  ASSERT_TRUE(cert.ok());
  const std::string kc_path = dir.path() + "/mallory.kubeconfig";
  ASSERT_TRUE(apiserver::WriteKubeconfig(kc_path, {.server = server.kubeconfig().server,
                                                   .user_name = "mallory",
                                                   .ca_pem = pki->ca.cert_pem,
                                                   .client_cert_pem = cert->cert_pem,
                                                   .client_key_pem = cert->key_pem})
                  .ok());
  Kubectl mallory(kc_path, dir.path() + "/cache-mallory");
  r = mallory.Run({"delete", "configmap", "audited"});
  ASSERT_NE(r.exit_code, 0);

  auto created = FindEvent(log, [](const json::object& ev) {
    return Str(ev, "verb") == "create" && ev.contains("objectRef") &&
           Str(ev.at("objectRef").as_object(), "resource") == "configmaps";
  });
  ASSERT_TRUE(created) << testing::ReadFile(log);
  EXPECT_EQ(Str(*created, "kind"), "Event");
  EXPECT_EQ(Str(*created, "apiVersion"), "audit.k8s.io/v1");
  EXPECT_EQ(Str(*created, "level"), "Metadata");
  EXPECT_EQ(Str(*created, "stage"), "ResponseComplete");
  EXPECT_EQ(Str(*created, "auditID").size(), 36u);
  EXPECT_EQ(Str(*created, "requestURI").rfind("/api/v1/namespaces/default/configmaps", 0), 0u)
      << Str(*created, "requestURI");
  EXPECT_EQ(Str(created->at("user").as_object(), "username"), "kubernetes-admin");
  EXPECT_EQ(Str(created->at("objectRef").as_object(), "namespace"), "default");
  EXPECT_EQ(Str(created->at("objectRef").as_object(), "apiVersion"), "v1");
  EXPECT_EQ(created->at("responseStatus").at("code").to_number<int>(), 201);
  EXPECT_EQ(created->at("sourceIPs").as_array().at(0).as_string(), "127.0.0.1");
  EXPECT_NE(Str(*created, "userAgent").find("kubectl"), std::string::npos);
  EXPECT_FALSE(Str(*created, "requestReceivedTimestamp").empty());
  EXPECT_FALSE(Str(*created, "stageTimestamp").empty());

  auto denied = FindEvent(log, [](const json::object& ev) {
    return Str(ev, "verb") == "delete" && Str(ev.at("user").as_object(), "username") == "mallory";
  });
  ASSERT_TRUE(denied) << testing::ReadFile(log);
  const json::object& user = denied->at("user").as_object();
  json::array groups = user.at("groups").as_array();
  EXPECT_NE(std::find(groups.begin(), groups.end(), json::value("interns")), groups.end());
  EXPECT_EQ(Str(denied->at("objectRef").as_object(), "name"), "audited");
  const json::object& status = denied->at("responseStatus").as_object();
  EXPECT_EQ(status.at("code").to_number<int>(), 403);
  EXPECT_EQ(Str(status, "status"), "Failure");
  EXPECT_EQ(Str(status, "reason"), "Forbidden");
  EXPECT_NE(Str(status, "message").find("User \"mallory\" cannot delete"), std::string::npos)
      << Str(status, "message");
}

}  // namespace
}  // namespace converge
