// HTTP/2 end to end: the real kubectl negotiates h2 through ALPN and keeps working (get, apply,
// watch), and curl's HTTP/2 client multiplexes concurrent streams on one connection and follows
// a watch stream whose release the server observes when the client goes away.
//
// Evidence of the protocol comes from the server itself: apiserver_requests_by_protocol_total
// and apiserver_connections_total count what each connection negotiated.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <thread>

#include "testing/kubectl.h"
#include "testing/process.h"
#include "testing/server.h"

namespace converge {
namespace {

using testing::CommandResult;
using testing::Kubectl;
using testing::ServerProcess;
using testing::TempDir;

// The value of one sample of the Prometheus text exposition, e.g.
// apiserver_requests_by_protocol_total{protocol="HTTP/2.0"}; 0 when absent.
double Sample(const std::string& metrics, const std::string& series) {
  size_t pos = 0;
  while ((pos = metrics.find(series + " ", pos)) != std::string::npos) {
    if (pos == 0 || metrics[pos - 1] == '\n') {
      return std::stod(metrics.substr(pos + series.size() + 1));
    }
    pos += series.size();
  }
  return 0;
}

const char kH2Requests[] = "apiserver_requests_by_protocol_total{protocol=\"HTTP/2.0\"}";
const char kH2Connections[] = "apiserver_connections_total{protocol=\"HTTP/2.0\"}";

class Http2Test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess();
    ASSERT_TRUE(server_->Start());
    dir_ = new TempDir();
    // curl takes the kubeconfig's credentials as files.
    const auto& kc = server_->kubeconfig();
    std::ofstream(dir_->path() + "/ca.crt") << kc.ca_pem;
    std::ofstream(dir_->path() + "/client.crt") << kc.client_cert_pem;
    std::ofstream(dir_->path() + "/client.key") << kc.client_key_pem;
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  std::string Metrics() { return server_->Client()->Get("/metrics").body; }

  std::vector<std::string> Curl() {
    return {"curl",
            "--http2",
            "-sS",
            "--cacert",
            dir_->path() + "/ca.crt",
            "--cert",
            dir_->path() + "/client.crt",
            "--key",
            dir_->path() + "/client.key"};
  }

  static ServerProcess* server_;
  static TempDir* dir_;
};

ServerProcess* Http2Test::server_ = nullptr;
TempDir* Http2Test::dir_ = nullptr;

TEST_F(Http2Test, KubectlNegotiatesHttp2AndWorks) {
  ASSERT_TRUE(Kubectl::Available());
  TempDir cache;
  Kubectl kubectl(server_->kubeconfig_path(), cache.path());
  const double requests_before = Sample(Metrics(), kH2Requests);
  const double connections_before = Sample(Metrics(), kH2Connections);

  CommandResult r = kubectl.Run({"create", "namespace", "h2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto watch = kubectl.Start({"-n", "h2", "get", "configmaps", "-w", "--output-watch-events"});
  r = kubectl.Run({"-n", "h2", "apply", "-f", "-"},
                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: over-h2\ndata:\n  k: v\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("configmap/over-h2 created"), std::string::npos) << r.out;
  // The watch (a long-running stream on the same protocol) sees the object.
  EXPECT_TRUE(watch->WaitFor("over-h2", std::chrono::seconds(60))) << watch->out_so_far();
  r = kubectl.Run({"-n", "h2", "get", "configmap", "over-h2", "-o", "jsonpath={.data.k}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v");
  // A second apply goes through server-side merge and is a no-op.
  r = kubectl.Run({"-n", "h2", "apply", "-f", "-"},
                  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: over-h2\ndata:\n  k: v\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("unchanged"), std::string::npos) << r.out;
  watch->Stop();

  std::string after = Metrics();
  // Discovery, create namespace, the watch's list and watch, apply's get and create, get, apply:
  // well over eight requests, all over HTTP/2.
  EXPECT_GE(Sample(after, kH2Requests) - requests_before, 8) << after;
  EXPECT_GE(Sample(after, kH2Connections) - connections_before, 1) << after;
}

TEST_F(Http2Test, ConcurrentStreamsShareOneConnection) {
  const double connections_before = Sample(Metrics(), kH2Connections);
  const double requests_before = Sample(Metrics(), kH2Requests);
  const std::string url = server_->kubeconfig().server;
  std::vector<std::string> argv = Curl();
  // -Z: transfers in parallel; curl waits for the first connection and multiplexes on it.
  argv.insert(argv.end(), {"-Z", "--parallel-max", "20", "-w", "%{http_version} %{http_code}\n"});
  const int kStreams = 20;
  for (int i = 0; i < kStreams; ++i) {
    const char* paths[] = {"/api/v1/namespaces", "/apis/apps/v1", "/version",
                           "/api/v1/namespaces/default/configmaps"};
    argv.insert(argv.end(), {"-o", "/dev/null", url + paths[i % 4]});
  }
  CommandResult r = testing::RunCommand(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::regex line("2 200");
  auto begin = std::sregex_iterator(r.out.begin(), r.out.end(), line);
  EXPECT_EQ(std::distance(begin, std::sregex_iterator()), kStreams) << r.out;
  std::string after = Metrics();
  EXPECT_EQ(Sample(after, kH2Connections) - connections_before, 1) << after;
  EXPECT_EQ(Sample(after, kH2Requests) - requests_before, kStreams) << after;
}

TEST_F(Http2Test, WatchStreamDeliversEventsAndIsReleasedWhenTheClientGoes) {
  auto admin = server_->Client();
  ASSERT_EQ(admin->Post("/api/v1/namespaces", R"({"metadata":{"name":"h2-watch"}})").status, 201);
  const std::string open_watches =
      "apiserver_longrunning_requests{verb=\"WATCH\",group=\"\",version=\"v1\",resource="
      "\"configmaps\"}";
  const double watches_before = Sample(Metrics(), open_watches);
  // curl in the background, writing the stream to a file.
  std::string out = dir_->path() + "/watch.out";
  std::vector<std::string> argv = Curl();
  argv.insert(argv.end(),
              {"-N", "-o", out,
               server_->kubeconfig().server + "/api/v1/namespaces/h2-watch/configmaps?watch=1"});
  const pid_t parent = getpid();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    testing::DieWithParent(parent);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  // Until the watch is open (the server counts it), create objects; then wait for the events.
  bool seen = false;
  for (int i = 0; i < 600 && !seen; ++i) {
    if (Sample(Metrics(), open_watches) > watches_before) {
      for (const char* name : {"first", "second"}) {
        ASSERT_EQ(admin
                      ->Post("/api/v1/namespaces/h2-watch/configmaps",
                             std::string(R"({"metadata":{"name":")") + name + R"("}})")
                      .status,
                  201);
      }
      for (int j = 0; j < 600 && !seen; ++j) {
        std::string got = testing::ReadFile(out);
        seen = got.find("\"first\"") != std::string::npos &&
               got.find("\"second\"") != std::string::npos;
        if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(seen) << testing::ReadFile(out);
  std::string events = testing::ReadFile(out);
  EXPECT_NE(events.find("\"type\":\"ADDED\""), std::string::npos) << events;
  // The client goes away: the server releases the watch.
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  bool released = false;
  for (int i = 0; i < 600 && !released; ++i) {
    released = Sample(Metrics(), open_watches) == watches_before;
    if (!released) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(released) << Metrics();
}

}  // namespace
}  // namespace converge
