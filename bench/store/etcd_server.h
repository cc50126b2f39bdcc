// EtcdServer: a throw-away single-member etcd (the Debian etcd-server binary) on loopback ports
// with a temporary data dir, and a minimal gRPC client for Put.
//
// Thread-safety: Put may be called from many threads at once; Start/Stop from one.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace grpc {
class Channel;
}

namespace converge::bench {

class EtcdServer {
 public:
  struct Options {
    std::string binary = "/usr/bin/etcd";
    std::string data_dir;  // created; removed by Stop
    int channels = 1;      // gRPC connections, used round-robin by writer index
  };
  explicit EtcdServer(Options options) : options_(std::move(options)) {}
  ~EtcdServer() { Stop(); }

  // Starts etcd and waits until it accepts a Put.
  util::Status Start();
  // SIGTERM, then SIGKILL after 10 s; waits for the process and removes the data dir.
  void Stop();

  // A durable put (etcd acknowledges after its WAL fsync), on channel writer % channels.
  util::Status Put(int writer, const std::string& key, const std::string& value);
  // The same through gRPC's callback API: `done` runs on a gRPC thread.
  void PutAsync(int writer, const std::string& key, const std::string& value,
                std::function<void(util::Status)> done);
  pid_t pid() const { return pid_; }

 private:
  Options options_;
  pid_t pid_ = -1;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  struct Stubs;
  std::shared_ptr<Stubs> stubs_;
};

}  // namespace converge::bench
