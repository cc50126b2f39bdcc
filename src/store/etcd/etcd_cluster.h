// EtcdCluster: throw-away etcd members (the Debian etcd-server binary) on loopback ports with
// temporary data dirs, for tests and benchmarks. Each member is a child process stopped by its
// PID; it also dies with the thread that started it (PR_SET_PDEATHSIG), so a killed test leaves
// no etcd behind. Start members from a thread that lives as long as they should.
//
// Thread-safety: not thread-safe; one thread drives a cluster.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "util/status.h"

namespace converge::store::etcd {

struct EtcdClusterOptions {
  std::string binary = "/usr/bin/etcd";
  // Parent of the members' data dirs; created, and removed by the destructor.
  std::string dir;
  int members = 1;
  // etcd's per-watcher progress notifications (etcd_store.h, "Progress"); etcd's default is 10m.
  std::chrono::milliseconds progress_notify_interval{100};
  // Raft timing: tight for quick elections, loose enough for a loaded 2-core machine.
  int heartbeat_ms = 50;
  int election_ms = 500;
};

class EtcdCluster {
 public:
  explicit EtcdCluster(EtcdClusterOptions options) : options_(std::move(options)) {}
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // Starts every member and waits until the cluster has a leader and serves reads.
  util::Status Start();
  // SIGTERM to every member (SIGKILL after 10 s), waiting for each.
  void Stop();

  // The members' client URLs ("http://127.0.0.1:PORT").
  const std::vector<std::string>& endpoints() const { return client_urls_; }
  // "URL,URL,..." for --etcd-endpoints.
  std::string EndpointsFlag() const;
  pid_t pid(int member) const { return members_[member].pid; }
  // The index of the member that leads, or an error while there is none.
  util::StatusOr<int> Leader() const;
  // SIGKILL to one member, waiting for it to exit.
  void Kill(int member);
  // Starts a killed member again with its data.
  util::Status Restart(int member);
  // For a failure message: each member's ports, whether its process still runs (or how it
  // ended), and the last lines of its log.
  std::string Describe() const;

 private:
  struct Member {
    std::string name;
    std::string data_dir;
    int client_port = 0;
    int peer_port = 0;
    pid_t pid = -1;
  };
  util::Status Spawn(Member& m, bool new_cluster);
  util::Status WaitReady(int member, std::chrono::seconds timeout) const;

  const EtcdClusterOptions options_;
  std::vector<Member> members_;
  std::vector<std::string> client_urls_;
  std::string initial_cluster_;
};

}  // namespace converge::store::etcd
