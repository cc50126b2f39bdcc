// ServerProcess: a Converge server that a bench scenario starts itself — the converge binary
// (by default the running one, /proc/self/exe) with a subcommand, on an ephemeral loopback port,
// with a data dir of its own, reached only through the kubeconfig it writes, stopped by its PID.
// The child dies with the bench (PR_SET_PDEATHSIG), so an interrupted bench leaves no server.
//
// Thread-safety: not thread-safe; one thread starts and stops it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "store/etcd/etcd_cluster.h"
#include "util/status.h"

namespace converge::bench {

struct ServerProcessOptions {
  std::string binary;                 // empty: the running executable
  std::string command = "apiserver";  // "apiserver" or "server"
  std::vector<std::string> args;      // extra flags, e.g. {"--nodes", "100"}
  // The data dir. Empty: a fresh temporary dir under `temp_parent`, removed by the destructor.
  // A given dir is kept (reopen measurements start the server on it again).
  std::string data_dir;
  std::string temp_parent;  // empty: the system temp dir
  std::chrono::seconds ready_timeout{300};
  // The server's store: "embedded" (in its data dir) or "etcd": a one-member etcd 3.4 started on
  // loopback ports before the server (data in DATA_DIR/etcd), kept across Stop/Start, stopped by
  // its PID when the ServerProcess is destroyed.
  std::string store = "embedded";
  std::string etcd_binary = "/usr/bin/etcd";
};

class ServerProcess {
 public:
  explicit ServerProcess(ServerProcessOptions options) : options_(std::move(options)) {}
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the process (and, the first time with store "etcd", etcd: not counted in ready_after)
  // and waits until its kubeconfig exists and GET /readyz answers 200.
  // DeadlineExceeded after ready_timeout; Unavailable when the process exits (the error names
  // the log). Starting again after Stop reuses the same data dir.
  util::Status Start();
  // SIGTERM, then SIGKILL after `grace`; reaps the child. Safe to call twice.
  void Stop(std::chrono::seconds grace = std::chrono::seconds(30));

  // From fork to the first 200 from /readyz (the kubeconfig is polled every millisecond, then
  // /readyz every millisecond).
  std::chrono::nanoseconds ready_after() const { return ready_after_; }
  pid_t pid() const { return pid_; }
  // With store "etcd": the etcd the server runs on (null before Start).
  const store::etcd::EtcdCluster* etcd() const { return etcd_.get(); }
  const std::string& data_dir() const { return data_dir_; }
  std::string kubeconfig_path() const { return data_dir_ + "/kubeconfig"; }
  std::string log_path() const { return data_dir_ + "/server.log"; }
  // The last lines of the server's log, for error messages.
  std::string LogTail() const;

 private:
  const ServerProcessOptions options_;
  std::string data_dir_;
  bool owns_data_dir_ = false;
  pid_t pid_ = -1;
  std::chrono::nanoseconds ready_after_{0};
  std::unique_ptr<store::etcd::EtcdCluster> etcd_;  // with store "etcd", once started
};

// A REST client for the server a kubeconfig points at (its current context).
util::StatusOr<std::unique_ptr<client::RestClient>> ClientForKubeconfig(const std::string& path);

// Waits until GET /readyz answers 200, polling every `interval`.
util::Status WaitReady(client::RestClient& client, std::chrono::seconds timeout,
                       std::chrono::milliseconds interval = std::chrono::milliseconds(100));

}  // namespace converge::bench
