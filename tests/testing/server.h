// A Converge server process for integration and e2e tests: started on an ephemeral loopback port
// with a temporary data dir, reached only through the kubeconfig it writes, stopped by its PID.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "testing/converge_binary.h"  // CONVERGE_BINARY (generated)
#include "testing/http_client.h"
#include "testing/process.h"

namespace converge::testing {

struct ServerOptions {
  std::string command = "apiserver";  // or "server"
  std::vector<std::string> extra_args;
  // Reuse an existing data dir (restart tests); empty = a fresh temporary one.
  std::string data_dir;
  // --listen; a fixed port lets processes holding the kubeconfig survive a restart.
  std::string listen = "127.0.0.1:0";
};

class ServerProcess {
 public:
  ~ServerProcess();
  // Starts the binary and waits until /readyz answers 200 (up to 60 s). Fails the current test
  // (ADD_FAILURE) and returns false when it does not come up.
  bool Start(ServerOptions options = {});
  void Stop();     // SIGTERM, then SIGKILL
  void Kill();     // SIGKILL (a crash)
  bool Restart();  // Stop + Start on the same data dir and options

  const std::string& data_dir() const { return data_dir_; }
  std::string kubeconfig_path() const { return data_dir_ + "/kubeconfig"; }
  const Kubeconfig& kubeconfig() const { return kubeconfig_; }
  std::string log_path() const { return data_dir_ + "/server.log"; }
  std::string log() const { return ReadFile(log_path()); }
  // A new client for this server.
  std::unique_ptr<TestClient> Client() const;
  pid_t pid() const { return process_.pid(); }

 private:
  std::unique_ptr<TempDir> temp_;
  std::string data_dir_;
  ServerOptions options_;
  Process process_;
  Kubeconfig kubeconfig_;
};

}  // namespace converge::testing
