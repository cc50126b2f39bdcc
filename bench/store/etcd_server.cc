#include "etcd_server.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "etcd_kv.grpc.pb.h"

namespace converge::bench {

namespace {

// A currently free loopback port (the kernel picks it; etcd binds it right after).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

struct EtcdServer::Stubs {
  std::vector<std::unique_ptr<etcdserverpb::KV::Stub>> kv;
};

util::Status EtcdServer::Start() {
  std::filesystem::create_directories(options_.data_dir);
  const int client_port = FreePort();
  const int peer_port = FreePort();
  const std::string client = "http://127.0.0.1:" + std::to_string(client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port);
  const std::string log = options_.data_dir + "/etcd.log";
  std::vector<std::string> args = {options_.binary,
                                   "--name=bench",
                                   "--data-dir=" + options_.data_dir + "/data",
                                   "--listen-client-urls=" + client,
                                   "--advertise-client-urls=" + client,
                                   "--listen-peer-urls=" + peer,
                                   "--initial-advertise-peer-urls=" + peer,
                                   "--initial-cluster=bench=" + peer,
                                   "--quota-backend-bytes=8589934592",
                                   "--logger=zap",
                                   "--log-level=error"};
  pid_ = ::fork();
  if (pid_ < 0) return util::Internal("fork failed");
  if (pid_ == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  stubs_ = std::make_shared<Stubs>();
  for (int i = 0; i < options_.channels; ++i) {
    grpc::ChannelArguments ch_args;
    ch_args.SetInt("grpc.channel_id", i);  // distinct channels get distinct connections
    ch_args.SetMaxSendMessageSize(16 << 20);
    channels_.push_back(grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(client_port),
                                                  grpc::InsecureChannelCredentials(), ch_args));
    stubs_->kv.push_back(etcdserverpb::KV::NewStub(channels_.back()));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return util::Unavailable("etcd exited at start; see " + log);
    }
    if (Put(0, "/bench/ready", "1").ok()) return util::Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return util::DeadlineExceeded("etcd did not become ready; see " + log);
}

void EtcdServer::Stop() {
  stubs_.reset();
  channels_.clear();
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }
  if (!options_.data_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(options_.data_dir, ec);
  }
}

util::Status EtcdServer::Put(int writer, const std::string& key, const std::string& value) {
  etcdserverpb::PutRequest req;
  req.set_key(key);
  req.set_value(value);
  etcdserverpb::PutResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status st =
      stubs_->kv[static_cast<size_t>(writer) % stubs_->kv.size()]->Put(&ctx, req, &resp);
  if (!st.ok()) return util::Unavailable("etcd put: " + st.error_message());
  return util::Status::Ok();
}

void EtcdServer::PutAsync(int writer, const std::string& key, const std::string& value,
                          std::function<void(util::Status)> done) {
  struct Call {
    etcdserverpb::PutRequest req;
    etcdserverpb::PutResponse resp;
    grpc::ClientContext ctx;
    std::function<void(util::Status)> done;
  };
  auto* call = new Call;
  call->req.set_key(key);
  call->req.set_value(value);
  call->done = std::move(done);
  call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  stubs_->kv[static_cast<size_t>(writer) % stubs_->kv.size()]->async()->Put(
      &call->ctx, &call->req, &call->resp, [call](grpc::Status st) {
        auto done = std::move(call->done);
        delete call;
        done(st.ok() ? util::Status::Ok() : util::Unavailable("etcd put: " + st.error_message()));
      });
}

}  // namespace converge::bench
