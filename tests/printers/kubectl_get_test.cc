// The real kubectl against a live apiserver: `kubectl get` shows only the columns our server-side
// Table printers produce (kubectl 1.32 has no client-side printers), so these checks read its
// output. Objects and their statuses are written through the API; no controllers run, so the
// statuses stay as written. Cells that depend on the wall clock (AGE, "(2m ago)") are not
// asserted beyond their shape.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <ctime>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge::testing {
namespace {

namespace json = boost::json;

// kubectl's human-readable table as rows of header → cell. Columns are left-aligned and separated
// by at least three spaces, while header names hold at most single spaces ("NOMINATED NODE"), so
// a header character after two or more spaces starts a column.
struct KubectlTable {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;

  static KubectlTable Parse(const std::string& out) {
    KubectlTable t;
    std::istringstream in(out);
    std::string line;
    std::vector<size_t> starts;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (starts.empty()) {
        for (size_t i = 0; i < line.size(); ++i) {
          if (line[i] != ' ' && (i == 0 || (i >= 2 && line[i - 1] == ' ' && line[i - 2] == ' '))) {
            starts.push_back(i);
          }
        }
        for (size_t c = 0; c < starts.size(); ++c) t.header.push_back(Cell(line, starts, c));
        continue;
      }
      std::map<std::string, std::string> row;
      for (size_t c = 0; c < starts.size(); ++c) row[t.header[c]] = Cell(line, starts, c);
      t.rows.push_back(std::move(row));
    }
    return t;
  }

  // The row whose NAME column is `name` (empty when absent).
  std::map<std::string, std::string> Row(const std::string& name) const {
    for (const auto& r : rows) {
      if (r.count("NAME") && r.at("NAME") == name) return r;
    }
    ADD_FAILURE() << "no row " << name;
    return {};
  }

 private:
  static std::string Cell(const std::string& line, const std::vector<size_t>& starts, size_t c) {
    if (starts[c] >= line.size()) return "";
    size_t end = c + 1 < starts.size() ? starts[c + 1] : line.size();
    std::string cell = line.substr(starts[c], end - starts[c]);
    while (!cell.empty() && cell.back() == ' ') cell.pop_back();
    return cell;
  }
};

class KubectlGet : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Kubectl::Available()) << "kubectl is not on PATH";
    ASSERT_TRUE(server_.Start());
    client_ = server_.Client();
    kubectl_ = std::make_unique<Kubectl>(server_.kubeconfig_path(), scratch_.path());
    Create("/api/v1/namespaces", R"({"metadata":{"name":"team-a"}})");
    CreateWithStatus("/api/v1/nodes",
                     R"({"metadata":{"name":"node-1",
                         "labels":{"node-role.kubernetes.io/control-plane":""}},
                         "spec":{"unschedulable":true}})",
                     R"({"conditions":[{"type":"Ready","status":"False","reason":"KubeletDown"}],
                         "addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                         "nodeInfo":{"kubeletVersion":"v1.32.0","osImage":"Debian GNU/Linux 12",
                           "kernelVersion":"6.1.0","containerRuntimeVersion":"converge://0.1",
                           "machineID":"m","systemUUID":"s","bootID":"b","kubeProxyVersion":"",
                           "operatingSystem":"linux","architecture":"amd64"}})");
    CreateWithStatus("/api/v1/namespaces/default/pods",
                     R"({"metadata":{"name":"web-1","labels":{"app":"web"}},
                         "spec":{"nodeName":"node-1",
                                 "containers":[{"name":"app","image":"nginx:1.27"}]}})",
                     R"({"phase":"Running","podIP":"10.244.0.5","podIPs":[{"ip":"10.244.0.5"}],
                         "containerStatuses":[{"name":"app","image":"nginx:1.27","imageID":"",
                           "ready":false,"restartCount":3,
                           "state":{"waiting":{"reason":"CrashLoopBackOff"}},
                           "lastState":{"terminated":{"exitCode":1,"reason":"Error",
                             "finishedAt":")" +
                         Rfc3339Ago(120) + R"("}}}]})");
    CreateWithStatus("/api/v1/namespaces/team-a/pods",
                     R"({"metadata":{"name":"init-1"},
                         "spec":{"initContainers":[{"name":"i1","image":"busybox"},
                                                   {"name":"i2","image":"busybox"}],
                                 "containers":[{"name":"app","image":"nginx:1.27"}]}})",
                     R"({"phase":"Pending","initContainerStatuses":[
                           {"name":"i1","image":"busybox","imageID":"","ready":false,"restartCount":0,
                            "state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
                           {"name":"i2","image":"busybox","imageID":"","ready":false,"restartCount":0,
                            "state":{"running":{}}}]})");
  }

  static std::string Rfc3339(std::time_t t) {
    char buf[32];
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
  }
  // The time `seconds` ago, as RFC 3339.
  static std::string Rfc3339Ago(int seconds) { return Rfc3339(std::time(nullptr) - seconds); }

  json::value Create(const std::string& collection, const std::string& body) {
    HttpResponse r = client_->Post(collection, body);
    EXPECT_EQ(r.status, 201) << collection << ": " << r.body;
    return r.Json();
  }

  void CreateWithStatus(const std::string& collection, const std::string& body,
                        const std::string& status) {
    json::value created = Create(collection, body);
    if (!created.is_object()) return;
    created.as_object()["status"] = json::parse(status);
    const std::string path =
        collection + "/" + std::string(created.at("metadata").at("name").as_string()) + "/status";
    HttpResponse r = client_->Put(path, json::serialize(created));
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
  }

  // Runs `kubectl get ...`, expects success and returns the parsed table.
  KubectlTable Get(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"get"};
    full.insert(full.end(), args.begin(), args.end());
    CommandResult r = kubectl_->Run(full);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return KubectlTable::Parse(r.out);
  }

  ServerProcess server_;
  std::unique_ptr<TestClient> client_;
  TempDir scratch_;  // kubectl's private discovery cache
  std::unique_ptr<Kubectl> kubectl_;
};

TEST_F(KubectlGet, PodsShowServerComputedStatusAndWideColumns) {
  KubectlTable plain = Get({"pods"});
  EXPECT_EQ(plain.header, (std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}));
  auto web = plain.Row("web-1");
  EXPECT_EQ(web["READY"], "0/1");
  EXPECT_EQ(web["STATUS"], "CrashLoopBackOff");
  EXPECT_EQ(web["RESTARTS"].rfind("3 (", 0), 0u) << web["RESTARTS"];  // "3 (2m ago)"

  KubectlTable wide = Get({"pods", "-o", "wide"});
  EXPECT_EQ(wide.header,
            (std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                                      "NOMINATED NODE", "READINESS GATES"}));
  web = wide.Row("web-1");
  EXPECT_EQ(web["IP"], "10.244.0.5");
  EXPECT_EQ(web["NODE"], "node-1");
  EXPECT_EQ(web["NOMINATED NODE"], "<none>");
  EXPECT_EQ(web["READINESS GATES"], "<none>");
}

TEST_F(KubectlGet, AllNamespacesFillsNamespaceFromRowObjects) {
  KubectlTable t = Get({"pods", "-A"});
  ASSERT_FALSE(t.header.empty());
  EXPECT_EQ(t.header[0], "NAMESPACE");
  EXPECT_EQ(t.Row("web-1")["NAMESPACE"], "default");
  auto init = t.Row("init-1");
  EXPECT_EQ(init["NAMESPACE"], "team-a");
  EXPECT_EQ(init["STATUS"], "Init:1/2");
}

TEST_F(KubectlGet, SortByUsesFullRowObjects) {
  // kubectl panics when includeObject=Object rows lack their object.
  KubectlTable t = Get({"pods", "-A", "--sort-by=.metadata.name"});
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0]["NAME"], "init-1");
  EXPECT_EQ(t.rows[1]["NAME"], "web-1");
  t = Get({"pods", "-A", "--sort-by=.status.podIP"});
  ASSERT_EQ(t.rows.size(), 2u);
}

TEST_F(KubectlGet, NodesShowReadinessCordonRolesAndVersion) {
  KubectlTable t = Get({"nodes", "-o", "wide"});
  EXPECT_EQ(t.header, (std::vector<std::string>{"NAME", "STATUS", "ROLES", "AGE", "VERSION",
                                                "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                                                "KERNEL-VERSION", "CONTAINER-RUNTIME"}));
  auto node = t.Row("node-1");
  EXPECT_EQ(node["STATUS"], "NotReady,SchedulingDisabled");
  EXPECT_EQ(node["ROLES"], "control-plane");
  EXPECT_EQ(node["VERSION"], "v1.32.0");
  EXPECT_EQ(node["INTERNAL-IP"], "10.0.0.1");
  EXPECT_EQ(node["EXTERNAL-IP"], "<none>");
  EXPECT_EQ(node["OS-IMAGE"], "Debian GNU/Linux 12");
}

TEST_F(KubectlGet, WorkloadsServicesJobsAndEvents) {
  CreateWithStatus("/apis/apps/v1/namespaces/default/deployments",
                   R"({"metadata":{"name":"web"},"spec":{"replicas":3,
          "selector":{"matchLabels":{"app":"web"}},
          "template":{"metadata":{"labels":{"app":"web"}},
                      "spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}})",
                   R"({"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":2,
          "availableReplicas":2,"unavailableReplicas":1})");
  Create("/api/v1/namespaces/default/services",
         R"({"metadata":{"name":"web"},"spec":{"type":"NodePort","selector":{"app":"web"},
             "ports":[{"port":80,"targetPort":8080,"nodePort":30080,"protocol":"TCP"}]}})");
  Create("/api/v1/namespaces/default/events",
         R"({"metadata":{"name":"web-1.17f3a"},
             "involvedObject":{"kind":"Pod","namespace":"default","name":"web-1"},
             "reason":"BackOff","message":"Back-off restarting failed container","type":"Warning",
             "source":{"component":"kubelet","host":"node-1"},"count":3,
             "firstTimestamp":")" +
             Rfc3339Ago(600) + R"(","lastTimestamp":")" + Rfc3339Ago(60) + R"("})");

  // One base instant, so the job ran exactly 42 s whatever the clock does meanwhile.
  const std::time_t base = std::time(nullptr);
  const std::string started = Rfc3339(base - 100), finished = Rfc3339(base - 58);
  CreateWithStatus("/apis/batch/v1/namespaces/default/jobs",
                   R"({"metadata":{"name":"pi"},"spec":{"template":{"spec":{"restartPolicy":"Never",
                       "containers":[{"name":"pi","image":"perl:5.34"}]}}}})",
                   R"({"succeeded":1,"ready":0,"terminating":0,"uncountedTerminatedPods":{},
                       "startTime":")" +
                       started + R"(","completionTime":")" + finished +
                       R"(","conditions":[
                         {"type":"SuccessCriteriaMet","status":"True","lastProbeTime":")" +
                       finished + R"(","lastTransitionTime":")" + finished + R"("},
                         {"type":"Complete","status":"True","lastProbeTime":")" +
                       finished + R"(","lastTransitionTime":")" + finished + R"("}]})");

  KubectlTable jobs = Get({"jobs"});
  EXPECT_EQ(jobs.header,
            (std::vector<std::string>{"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"}));
  auto pi = jobs.Row("pi");
  EXPECT_EQ(pi["STATUS"], "Complete");
  EXPECT_EQ(pi["COMPLETIONS"], "1/1");
  EXPECT_EQ(pi["DURATION"], "42s");  // completionTime - startTime, not the wall clock

  KubectlTable deploy = Get({"deployments", "-o", "wide"});
  EXPECT_EQ(deploy.header, (std::vector<std::string>{"NAME", "READY", "UP-TO-DATE", "AVAILABLE",
                                                     "AGE", "CONTAINERS", "IMAGES", "SELECTOR"}));
  auto web = deploy.Row("web");
  EXPECT_EQ(web["READY"], "2/3");
  EXPECT_EQ(web["UP-TO-DATE"], "3");
  EXPECT_EQ(web["AVAILABLE"], "2");
  EXPECT_EQ(web["IMAGES"], "nginx:1.27");
  EXPECT_EQ(web["SELECTOR"], "app=web");

  KubectlTable svc = Get({"services"});
  auto s = svc.Row("web");
  EXPECT_EQ(s["TYPE"], "NodePort");
  EXPECT_EQ(s["PORT(S)"], "80:30080/TCP");

  KubectlTable events = Get({"events", "-o", "wide"});
  EXPECT_EQ(events.header,
            (std::vector<std::string>{"LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT",
                                      "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"}));
  ASSERT_EQ(events.rows.size(), 1u);
  auto e = events.rows[0];
  EXPECT_EQ(e["OBJECT"], "pod/web-1");
  EXPECT_EQ(e["REASON"], "BackOff");
  EXPECT_EQ(e["SOURCE"], "kubelet, node-1");
  EXPECT_EQ(e["COUNT"], "3");
  EXPECT_EQ(e["MESSAGE"], "Back-off restarting failed container");
}

}  // namespace
}  // namespace converge::testing
