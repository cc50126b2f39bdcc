// The real kubectl against a live Converge server: every command of the seed's walkthrough and
// the common editing commands, asserting on kubectl's own output and exit codes.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <thread>

#include "testing/kubectl.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

class KubectlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
    cache_ = new TempDir();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete cache_;
  }
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available()) << "kubectl is not on PATH";
    kubectl_ = std::make_unique<Kubectl>(server_->kubeconfig_path(), cache_->path());
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_ = "e2e-";
    for (char c : name)
      ns_ += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    ns_ = ns_.substr(0, 60);
    CommandResult r = K({"create", "namespace", ns_}, /*namespaced=*/false);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // kubectl <args> in the test's namespace.
  CommandResult K(std::vector<std::string> args, bool namespaced = true,
                  const std::string& stdin_data = "",
                  const std::map<std::string, std::string>& env = {}) {
    if (namespaced) args.insert(args.begin(), {"-n", ns_});  // before any "--"
    return kubectl_->Run(args, stdin_data, env);
  }

  static std::vector<std::string> Lines(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < s.size()) {
      size_t nl = s.find('\n', start);
      if (nl == std::string::npos) nl = s.size();
      out.push_back(s.substr(start, nl - start));
      start = nl + 1;
    }
    return out;
  }
  // Splits a table line on runs of spaces.
  static std::vector<std::string> Cells(const std::string& line) {
    std::vector<std::string> out;
    std::regex ws("\\s{2,}");
    std::sregex_token_iterator it(line.begin(), line.end(), ws, -1), end;
    for (; it != end; ++it) {
      if (!it->str().empty()) out.push_back(*it);
    }
    return out;
  }

  static ServerProcess* server_;
  static TempDir* cache_;
  std::unique_ptr<Kubectl> kubectl_;
  std::string ns_;
};

ServerProcess* KubectlTest::server_ = nullptr;
TempDir* KubectlTest::cache_ = nullptr;

constexpr char kDeployment[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web2
  labels:
    app: web2
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web2
  template:
    metadata:
      labels:
        app: web2
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
)";

TEST_F(KubectlTest, Version) {
  CommandResult r = kubectl_->Run({"version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Server Version: v1.32"), std::string::npos) << r.out;
}

TEST_F(KubectlTest, ApiResourcesListsEveryKind) {
  CommandResult r = kubectl_->Run({"api-resources"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(Cells(lines[0]),
            (std::vector<std::string>{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"}));
  for (const char* want :
       {"deployments", "replicasets", "pods", "events", "namespaces", "nodes", "jobs", "leases",
        "configmaps", "secrets", "services", "serviceaccounts"}) {
    bool found = false;
    for (const auto& l : lines) found |= l.rfind(std::string(want) + " ", 0) == 0;
    EXPECT_TRUE(found) << want << " missing from\n" << r.out;
  }
  EXPECT_NE(r.out.find("deploy       apps/v1"), std::string::npos) << r.out;
}

TEST_F(KubectlTest, CreateDeploymentGetAndScale) {
  CommandResult c = K({"create", "deployment", "web", "--image=nginx:1.27"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "deployment.apps/web created\n");

  CommandResult g = K({"get", "deployment", "web"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  std::vector<std::string> lines = Lines(g.out);
  ASSERT_EQ(lines.size(), 2u) << g.out;
  EXPECT_EQ(Cells(lines[0]),
            (std::vector<std::string>{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}));
  EXPECT_EQ(Cells(lines[1])[0], "web");

  CommandResult wide = K({"get", "deployment", "web", "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(Cells(Lines(wide.out)[0]),
            (std::vector<std::string>{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE",
                                      "CONTAINERS", "IMAGES", "SELECTOR"}));
  std::vector<std::string> row = Cells(Lines(wide.out)[1]);
  ASSERT_EQ(row.size(), 8u) << wide.out;
  EXPECT_EQ(row[5], "nginx");
  EXPECT_EQ(row[6], "nginx:1.27");
  EXPECT_EQ(row[7], "app=web");

  CommandResult s = K({"scale", "deployment", "web", "--replicas=3"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out, "deployment.apps/web scaled\n");
  CommandResult jp = K({"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"});
  EXPECT_EQ(jp.out, "3");

  // --current-replicas is checked client-side against the Scale the server returns.
  CommandResult bad = K({"scale", "deployment", "web", "--current-replicas=7", "--replicas=5"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("Expected replicas to be 7, was 3"), std::string::npos) << bad.err;
  CommandResult ok = K({"scale", "deployment", "web", "--current-replicas=3", "--replicas=5"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(K({"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"}).out, "5");
}

TEST_F(KubectlTest, GetOutputFormats) {
  ASSERT_EQ(K({"create", "configmap", "one", "--from-literal=a=1"}).exit_code, 0);
  ASSERT_EQ(K({"create", "configmap", "two", "--from-literal=a=2", "--from-literal=b=3"}).exit_code,
            0);
  ASSERT_EQ(K({"label", "configmap", "two", "tier=back"}).exit_code, 0);

  CommandResult yaml = K({"get", "configmap", "one", "-o", "yaml"});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  EXPECT_NE(yaml.out.find("kind: ConfigMap"), std::string::npos);
  EXPECT_NE(yaml.out.find("  a: \"1\""), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("resourceVersion:"), std::string::npos);

  CommandResult json = K({"get", "configmap", "one", "-o", "json"});
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_NE(json.out.find("\"kind\": \"ConfigMap\""), std::string::npos) << json.out;

  CommandResult l = K({"get", "configmaps", "-l", "tier=back", "-o", "name"});
  EXPECT_EQ(l.out, "configmap/two\n") << l.err;

  CommandResult table = K({"get", "configmaps"});
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_EQ(Cells(Lines(table.out)[0]), (std::vector<std::string>{"NAME", "DATA", "AGE"}));

  CommandResult all = kubectl_->Run({"get", "configmaps", "-A"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(Cells(Lines(all.out)[0]),
            (std::vector<std::string>{"NAMESPACE", "NAME", "DATA", "AGE"}));
  EXPECT_NE(all.out.find(ns_), std::string::npos) << "namespace column from row objects";

  CommandResult sorted = K({"get", "configmaps", "--sort-by=.metadata.name", "-o", "name"});
  ASSERT_EQ(sorted.exit_code, 0) << sorted.err;
  EXPECT_NE(sorted.out.find("configmap/one\nconfigmap/two"), std::string::npos) << sorted.out;
  CommandResult sorted_table = K({"get", "configmaps", "--sort-by=.metadata.name"});
  ASSERT_EQ(sorted_table.exit_code, 0) << sorted_table.err;

  CommandResult cc = K({"get", "configmaps", "-o", "custom-columns=NAME:.metadata.name,A:.data.a"});
  ASSERT_EQ(cc.exit_code, 0) << cc.err;
  std::vector<std::string> lines = Lines(cc.out);
  ASSERT_GE(lines.size(), 3u) << cc.out;
  EXPECT_EQ(Cells(lines[1]), (std::vector<std::string>{"one", "1"}));
  EXPECT_EQ(Cells(lines[2]), (std::vector<std::string>{"two", "2"}));
}

TEST_F(KubectlTest, ApplyTwiceClientSide) {
  CommandResult a = K({"apply", "-f", "-"}, true, kDeployment);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, "deployment.apps/web2 created\n");
  std::string changed =
      std::regex_replace(std::string(kDeployment), std::regex("nginx:1.27"), "nginx:1.27.1");
  changed =
      std::regex_replace(changed, std::regex("        ports:\n        - containerPort: 80\n"), "");
  CommandResult b = K({"apply", "-f", "-"}, true, changed);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, "deployment.apps/web2 configured\n");
  EXPECT_EQ(
      K({"get", "deploy", "web2", "-o", "jsonpath={.spec.template.spec.containers[0].image}"}).out,
      "nginx:1.27.1");
  EXPECT_EQ(
      K({"get", "deploy", "web2", "-o", "jsonpath={.spec.template.spec.containers[0].ports}"}).out,
      "");
  CommandResult again = K({"apply", "-f", "-"}, true, changed);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "deployment.apps/web2 unchanged\n");
}

TEST_F(KubectlTest, CreateReplaceAndErrors) {
  CommandResult c = K({"create", "-f", "-"}, true, kDeployment);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "deployment.apps/web2 created\n");

  CommandResult dup = K({"create", "-f", "-"}, true, kDeployment);
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_EQ(dup.err,
            "Error from server (AlreadyExists): error when creating \"STDIN\": deployments.apps "
            "\"web2\" already exists\n");

  CommandResult dup2 = K({"create", "deployment", "web2", "--image=nginx"});
  EXPECT_EQ(dup2.exit_code, 1);
  EXPECT_EQ(dup2.err,
            "error: failed to create deployment: deployments.apps \"web2\" already exists\n");

  CommandResult missing = K({"get", "deployment", "nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "Error from server (NotFound): deployments.apps \"nope\" not found\n");

  // replace with the current object works; with a stale resourceVersion it conflicts.
  CommandResult cur = K({"get", "deployment", "web2", "-o", "yaml"});
  ASSERT_EQ(cur.exit_code, 0);
  std::string edited = std::regex_replace(cur.out, std::regex("replicas: 2"), "replicas: 4");
  CommandResult rep = K({"replace", "-f", "-"}, true, edited);
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(rep.out, "deployment.apps/web2 replaced\n");
  CommandResult stale = K({"replace", "-f", "-"}, true, edited);
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_EQ(stale.err,
            "Error from server (Conflict): error when replacing \"STDIN\": Operation cannot be "
            "fulfilled on deployments.apps \"web2\": the object has been modified; please apply "
            "your changes to the latest version and try again\n");

  std::string invalid =
      std::regex_replace(std::string(kDeployment), std::regex("replicas: 2"), "replicas: -1");
  invalid = std::regex_replace(invalid, std::regex("name: web2\n  labels"), "name: web3\n  labels");
  CommandResult inv = K({"create", "-f", "-"}, true, invalid);
  EXPECT_EQ(inv.exit_code, 1);
  EXPECT_EQ(inv.err,
            "The Deployment \"web3\" is invalid: spec.replicas: Invalid value: -1: must be greater "
            "than or equal to 0\n");
}

TEST_F(KubectlTest, PatchLabelAnnotate) {
  ASSERT_EQ(K({"create", "-f", "-"}, true, kDeployment).exit_code, 0);
  CommandResult merge =
      K({"patch", "deployment", "web2", "--type=merge", "-p", R"({"spec":{"replicas":5}})"});
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  EXPECT_EQ(merge.out, "deployment.apps/web2 patched\n");
  EXPECT_EQ(K({"get", "deploy", "web2", "-o", "jsonpath={.spec.replicas}"}).out, "5");

  CommandResult jp = K({"patch", "deployment", "web2", "--type=json", "-p",
                        R"([{"op":"replace","path":"/spec/replicas","value":1}])"});
  ASSERT_EQ(jp.exit_code, 0) << jp.err;
  EXPECT_EQ(K({"get", "deploy", "web2", "-o", "jsonpath={.spec.replicas}"}).out, "1");

  CommandResult smp = K(
      {"patch", "deployment", "web2", "-p",
       R"({"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}})"});
  ASSERT_EQ(smp.exit_code, 0) << smp.err;
  EXPECT_EQ(
      K({"get", "deploy", "web2", "-o", "jsonpath={.spec.template.spec.containers[0].image}"}).out,
      "nginx:1.28");
  // The strategic merge kept the container's port.
  EXPECT_EQ(K({"get", "deploy", "web2", "-o",
               "jsonpath={.spec.template.spec.containers[0].ports[0].containerPort}"})
                .out,
            "80");

  CommandResult unchanged =
      K({"patch", "deployment", "web2", "--type=merge", "-p", R"({"spec":{"replicas":1}})"});
  ASSERT_EQ(unchanged.exit_code, 0) << unchanged.err;
  EXPECT_EQ(unchanged.out, "deployment.apps/web2 patched (no change)\n");

  CommandResult lab = K({"label", "deployment", "web2", "team=blue"});
  ASSERT_EQ(lab.exit_code, 0) << lab.err;
  EXPECT_EQ(lab.out, "deployment.apps/web2 labeled\n");
  CommandResult ann = K({"annotate", "deployment", "web2", "note=hello"});
  ASSERT_EQ(ann.exit_code, 0) << ann.err;
  EXPECT_EQ(ann.out, "deployment.apps/web2 annotated\n");
  EXPECT_EQ(K({"get", "deploy", "web2", "-o",
               "jsonpath={.metadata.labels.team}/{.metadata.annotations.note}"})
                .out,
            "blue/hello");
  EXPECT_EQ(K({"get", "deploy", "-l", "team=blue", "-o", "name"}).out, "deployment.apps/web2\n");
}

// Repeated keys under fieldValidation (kubectl sends Strict from manifests, but reads them into
// objects first, so only --raw bodies and patches reach the server with them).
TEST_F(KubectlTest, DuplicateFieldsUnderEachFieldValidation) {
  TempDir dir;
  const std::string file = dir.path() + "/cm.json";
  {
    std::ofstream f(file);
    f << R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},)"
      << R"("data":{"a":"1","a":"2"}})";
  }
  const std::string collection = "/api/v1/namespaces/" + ns_ + "/configmaps";
  CommandResult r =
      K({"create", "--raw", collection + "?fieldValidation=Strict", "-f", file}, false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Error from server (BadRequest): ConfigMap in version \"v1\" cannot be handled as a "
            "ConfigMap: strict decoding error: duplicate field \"data.a\"\n");
  EXPECT_EQ(K({"get", "configmap", "dup"}).exit_code, 1);

  r = K({"create", "--raw", collection + "?fieldValidation=Warn", "-f", file}, false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "Warning: duplicate field \"data.a\"\n");
  EXPECT_EQ(K({"get", "configmap", "dup", "-o", "jsonpath={.data.a}"}).out, "2");

  r = K({"replace", "--raw", collection + "/dup?fieldValidation=Strict", "-f", file}, false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("strict decoding error: duplicate field \"data.a\""), std::string::npos)
      << r.err;
  r = K({"replace", "--raw", collection + "/dup?fieldValidation=Ignore", "-f", file}, false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");

  // kubectl patch sends no fieldValidation: the server's default (Warn) answers with warnings.
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27"}).exit_code, 0);
  r = K({"patch", "deployment", "web", "--type=merge", "-p",
         R"({"spec":{"replicas":2,"replicas":3,"bogus":1}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "deployment.apps/web patched\n");
  EXPECT_EQ(r.err,
            "Warning: duplicate field \"spec.replicas\"\nWarning: unknown field \"spec.bogus\"\n");
  EXPECT_EQ(K({"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"}).out, "3");
  // (kubectl re-encodes a JSON patch, so its repeated "value" arrives once.)
  r = K({"patch", "deployment", "web", "--type=json", "-p",
         R"([{"op":"replace","path":"/spec/replicas","value":4,"value":5,"extra":1}])"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "Warning: json patch unknown field \"[0].extra\"\n");
  EXPECT_EQ(K({"get", "deployment", "web", "-o", "jsonpath={.spec.replicas}"}).out, "5");

  // A YAML body (not something kubectl sends): go-yaml's wording, with lines.
  std::unique_ptr<testing::TestClient> client = server_->Client();
  testing::HttpResponse resp = client->Do(
      "POST", collection + "?fieldValidation=Strict",
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\n  name: yaml2\ndata:\n  b: x\n",
      {{"Content-Type", "application/yaml"}});
  EXPECT_EQ(resp.status, 400) << resp.body;
  EXPECT_EQ(resp.Json().at("message"),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: "
            "yaml: unmarshal errors:\n  line 5: key \"name\" already set in map");
  EXPECT_EQ(K({"get", "configmap", "yaml2"}).exit_code, 1);
}

TEST_F(KubectlTest, EditThroughEditorScript) {
  ASSERT_EQ(K({"create", "configmap", "ed", "--from-literal=k=before"}).exit_code, 0);
  TempDir dir;
  std::string editor = dir.path() + "/editor.sh";
  {
    std::ofstream f(editor);
    f << "#!/bin/sh\nsed -i 's/k: before/k: after/' \"$1\"\n";
  }
  chmod(editor.c_str(), 0755);
  CommandResult e =
      K({"edit", "configmap", "ed"}, true, "", {{"KUBE_EDITOR", editor}, {"EDITOR", editor}});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out, "configmap/ed edited\n");
  EXPECT_EQ(K({"get", "configmap", "ed", "-o", "jsonpath={.data.k}"}).out, "after");
}

TEST_F(KubectlTest, CreateNamespaceConfigMapSecretJob) {
  CommandResult ns = kubectl_->Run({"create", "namespace", ns_ + "-x"});
  ASSERT_EQ(ns.exit_code, 0) << ns.err;
  EXPECT_EQ(ns.out, "namespace/" + ns_ + "-x created\n");
  CommandResult cm = K({"create", "configmap", "cfg", "--from-literal=a=b"});
  ASSERT_EQ(cm.exit_code, 0) << cm.err;
  EXPECT_EQ(cm.out, "configmap/cfg created\n");
  CommandResult sec = K({"create", "secret", "generic", "s", "--from-literal=password=hunter2"});
  ASSERT_EQ(sec.exit_code, 0) << sec.err;
  EXPECT_EQ(sec.out, "secret/s created\n");
  EXPECT_EQ(K({"get", "secret", "s", "-o", "jsonpath={.data.password}"}).out, "aHVudGVyMg==");
  CommandResult job = K({"create", "job", "once", "--image=busybox:1.36", "--", "echo", "hi"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(job.out, "job.batch/once created\n");
  EXPECT_EQ(K({"get", "job", "once", "-o", "jsonpath={.spec.template.spec.restartPolicy}"}).out,
            "Never");
  CommandResult svc = K({"create", "service", "clusterip", "svc", "--tcp=80:8080"});
  ASSERT_EQ(svc.exit_code, 0) << svc.err;
  std::string ip = K({"get", "svc", "svc", "-o", "jsonpath={.spec.clusterIP}"}).out;
  EXPECT_EQ(ip.rfind("10.", 0), 0u) << ip;
}

TEST_F(KubectlTest, WatchSeesChangesFromAnotherKubectl) {
  ASSERT_EQ(K({"create", "deployment", "web", "--image=nginx:1.27"}).exit_code, 0);
  auto watch = kubectl_->Start({"get", "deployment", "web", "-w", "-n", ns_, "-o",
                                "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas"});
  ASSERT_TRUE(watch->WaitFor("web ", std::chrono::seconds(30))) << watch->out_so_far();
  ASSERT_EQ(K({"scale", "deployment", "web", "--replicas=4"}).exit_code, 0);
  EXPECT_TRUE(watch->WaitFor("4\n", std::chrono::seconds(30))) << watch->out_so_far();
  watch->Stop();

  auto table_watch = kubectl_->Start({"get", "deployments", "-w", "-n", ns_});
  ASSERT_TRUE(table_watch->WaitFor("web", std::chrono::seconds(30)));
  ASSERT_EQ(K({"create", "deployment", "second", "--image=nginx:1.27"}).exit_code, 0);
  EXPECT_TRUE(table_watch->WaitFor("second", std::chrono::seconds(30)))
      << table_watch->out_so_far();
  table_watch->Stop();
}

TEST_F(KubectlTest, EventsListWatchAndDescribe) {
  // The watch cache keeps no Events (they are read from the store, as upstream): get, get -w and
  // describe's lookup by involvedObject fields must all still find them.
  ASSERT_EQ(K({"run", "p", "--image=nginx:1.27"}).exit_code, 0);
  std::string uid = K({"get", "pod", "p", "-o", "jsonpath={.metadata.uid}"}).out;
  ASSERT_FALSE(uid.empty());
  auto event = [&](const std::string& name, const std::string& message) {
    return K({"create", "-f", "-"}, true,
             R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
                 R"("},"involvedObject":{"kind":"Pod","apiVersion":"v1","name":"p","namespace":")" +
                 ns_ + R"(","uid":")" + uid + R"("},"reason":"Tested","message":")" + message +
                 R"(","type":"Normal","count":1,"source":{"component":"e2e"}})");
  };
  CommandResult first = event("first", "the first event");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto watch = kubectl_->Start({"get", "events", "-w", "-n", ns_});
  EXPECT_TRUE(watch->WaitFor("the first event", std::chrono::seconds(30))) << watch->out_so_far();
  CommandResult second = event("second", "the second event");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(watch->WaitFor("the second event", std::chrono::seconds(30))) << watch->out_so_far();
  watch->Stop();

  CommandResult describe = K({"describe", "pod", "p"});
  ASSERT_EQ(describe.exit_code, 0) << describe.err;
  size_t events_at = describe.out.find("Events:");
  ASSERT_NE(events_at, std::string::npos) << describe.out;
  EXPECT_NE(describe.out.find("the first event", events_at), std::string::npos) << describe.out;
  EXPECT_NE(describe.out.find("the second event", events_at), std::string::npos) << describe.out;
  std::string listed = K({"get", "events"}).out;
  EXPECT_NE(listed.find("the first event"), std::string::npos) << listed;
  EXPECT_NE(listed.find("the second event"), std::string::npos) << listed;
}

TEST_F(KubectlTest, ExplainDeploymentStrategy) {
  CommandResult r = kubectl_->Run({"explain", "deployment.spec.strategy"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("KIND:       Deployment"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rollingUpdate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("type"), std::string::npos);
}

TEST_F(KubectlTest, DeleteWithoutCascadeWait) {
  ASSERT_EQ(K({"create", "configmap", "gone", "--from-literal=a=b"}).exit_code, 0);
  CommandResult d = K({"delete", "configmap", "gone"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, "configmap \"gone\" deleted\n");
  CommandResult again = K({"delete", "configmap", "gone"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(again.err, "Error from server (NotFound): configmaps \"gone\" not found\n");
}

// The Service default/kubernetes (10.96.0.1:443) and its Endpoints name the API server, as
// upstream's; after a restart on another port the Endpoints follow. User Services get the next
// addresses.
TEST(KubernetesServiceTest, TheApiServerIsAServiceInDefault) {
  ServerProcess server;
  ASSERT_TRUE(server.Start());
  TempDir cache;
  Kubectl kubectl(server.kubeconfig_path(), cache.path());
  auto port_of = [](const std::string& url) { return url.substr(url.rfind(':') + 1); };

  CommandResult svc =
      kubectl.Run({"get", "service", "kubernetes", "-n", "default", "--no-headers"});
  ASSERT_EQ(svc.exit_code, 0) << svc.err;
  EXPECT_TRUE(
      std::regex_search(svc.out, std::regex("^kubernetes\\s+ClusterIP\\s+10\\.96\\.0\\.1\\s+"
                                            "<none>\\s+443/TCP\\s")))
      << svc.out;
  const std::vector<std::string> endpoints = {"get", "endpoints", "kubernetes",
                                              "-n",  "default",   "--no-headers"};
  CommandResult eps = kubectl.Run(endpoints);
  EXPECT_TRUE(std::regex_search(
      eps.out, std::regex("^kubernetes\\s+127\\.0\\.0\\.1:" + port_of(server.kubeconfig().server))))
      << eps.out << eps.err;
  ASSERT_EQ(kubectl.Run({"create", "service", "clusterip", "web", "--tcp=80:80"}).exit_code, 0);
  EXPECT_EQ(kubectl.Run({"get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"}).out,
            "10.96.0.2");

  ASSERT_TRUE(server.Restart());
  eps = kubectl.Run(endpoints);
  EXPECT_TRUE(std::regex_search(
      eps.out, std::regex("^kubernetes\\s+127\\.0\\.0\\.1:" + port_of(server.kubeconfig().server))))
      << eps.out << eps.err;
  EXPECT_EQ(kubectl
                .Run({"get", "service", "kubernetes", "-n", "default", "-o",
                      "jsonpath={.spec.ports[0].targetPort}"})
                .out,
            port_of(server.kubeconfig().server));
}

// Events expire --event-ttl after their last write (upstream's flag; an etcd lease there): kubectl
// sees one, then no longer. A ConfigMap created beside it stays.
TEST(EventTtlTest, AnEventIsGoneAfterTheTtl) {
  ServerProcess server;
  ASSERT_TRUE(server.Start({.command = "apiserver", .extra_args = {"--event-ttl", "2s"}}));
  TempDir cache;
  Kubectl kubectl(server.kubeconfig_path(), cache.path());
  CommandResult created =
      kubectl.Run({"create", "-f", "-"},
                  R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"short-lived"},)"
                  R"("involvedObject":{"kind":"ConfigMap","name":"c","namespace":"default"},)"
                  R"("reason":"Tested","message":"an event that expires","type":"Normal"})");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_EQ(kubectl.Run({"create", "configmap", "c"}).exit_code, 0);
  EXPECT_NE(kubectl.Run({"get", "events"}).out.find("an event that expires"), std::string::npos);

  CommandResult got;
  for (int attempt = 0; attempt < 600; ++attempt) {
    got = kubectl.Run({"get", "event", "short-lived", "--ignore-not-found", "-o", "name"});
    if (got.exit_code == 0 && got.out.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(got.out, "") << "the Event outlived its TTL";
  EXPECT_EQ(kubectl.Run({"get", "configmap", "c", "-o", "name"}).out, "configmap/c\n");

  // A TTL of zero is refused, as upstream refuses it.
  CommandResult zero = testing::RunCommand(
      {CONVERGE_BINARY, "apiserver", "--data-dir", cache.path() + "/never", "--event-ttl", "0s"},
      {}, "", std::chrono::seconds(30));
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE((zero.out + zero.err).find("--event-ttl"), std::string::npos) << zero.out << zero.err;
}

}  // namespace
}  // namespace converge
