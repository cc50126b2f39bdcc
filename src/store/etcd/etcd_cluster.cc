#include "store/etcd/etcd_cluster.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "etcd_rpc.grpc.pb.h"

namespace converge::store::etcd {

namespace {

// A currently free loopback port (the kernel picks it; etcd binds it right after).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

util::StatusOr<etcdserverpb::StatusResponse> MemberStatus(int client_port) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(client_port),
                                     grpc::InsecureChannelCredentials());
  auto stub = etcdserverpb::Maintenance::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  etcdserverpb::StatusResponse resp;
  grpc::Status st = stub->Status(&ctx, etcdserverpb::StatusRequest(), &resp);
  if (!st.ok()) return util::Unavailable("etcd status: " + st.error_message());
  return resp;
}

}  // namespace

EtcdCluster::~EtcdCluster() {
  Stop();
  if (!options_.dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(options_.dir, ec);
  }
}

std::string EtcdCluster::EndpointsFlag() const {
  std::string out;
  for (const auto& u : client_urls_) out += (out.empty() ? "" : ",") + u;
  return out;
}

util::Status EtcdCluster::Start() {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) return util::Unavailable("cannot create " + options_.dir + ": " + ec.message());
  for (int i = 0; i < options_.members; ++i) {
    Member m;
    m.name = "m" + std::to_string(i);
    m.data_dir = options_.dir + "/" + m.name;
    m.client_port = FreePort();
    m.peer_port = FreePort();
    if (m.client_port == 0 || m.peer_port == 0) return util::Unavailable("no free port");
    initial_cluster_ += (initial_cluster_.empty() ? "" : ",") + m.name +
                        "=http://127.0.0.1:" + std::to_string(m.peer_port);
    client_urls_.push_back("http://127.0.0.1:" + std::to_string(m.client_port));
    members_.push_back(m);
  }
  for (auto& m : members_) CONVERGE_RETURN_IF_ERROR(Spawn(m, /*new_cluster=*/true));
  for (int i = 0; i < options_.members; ++i) {
    CONVERGE_RETURN_IF_ERROR(WaitReady(i, std::chrono::seconds(30)));
  }
  return util::Status();
}

util::Status EtcdCluster::Spawn(Member& m, bool new_cluster) {
  const std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
  std::vector<std::string> args = {
      options_.binary,
      "--name=" + m.name,
      "--data-dir=" + m.data_dir,
      "--listen-client-urls=" + client,
      "--advertise-client-urls=" + client,
      "--listen-peer-urls=" + peer,
      "--initial-advertise-peer-urls=" + peer,
      "--initial-cluster=" + initial_cluster_,
      std::string("--initial-cluster-state=") + (new_cluster ? "new" : "existing"),
      "--initial-cluster-token=converge-test",
      "--heartbeat-interval=" + std::to_string(options_.heartbeat_ms),
      "--election-timeout=" + std::to_string(options_.election_ms),
      "--experimental-watch-progress-notify-interval=" +
          std::to_string(options_.progress_notify_interval.count()) + "ms",
      "--logger=zap",
      "--log-level=warn",
  };
  const std::string log = options_.dir + "/" + m.name + ".log";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return util::Unavailable("fork failed");
  if (pid == 0) {
    // Dies with the thread that started it; if that happened before prctl, exit now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(1);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  m.pid = pid;
  return util::Status();
}

util::Status EtcdCluster::WaitReady(int member, std::chrono::seconds timeout) const {
  const Member& m = members_[member];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(m.pid, &status, WNOHANG) == m.pid) {
      return util::Unavailable("etcd member " + m.name + " exited at start; see " + options_.dir +
                               "/" + m.name + ".log");
    }
    auto s = MemberStatus(m.client_port);
    if (s.ok() && s->leader() != 0) return util::Status();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return util::DeadlineExceeded("etcd member " + m.name + " has no leader; see " + options_.dir);
}

util::StatusOr<int> EtcdCluster::Leader() const {
  for (size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].pid <= 0) continue;
    auto s = MemberStatus(members_[i].client_port);
    if (!s.ok() || s->leader() == 0) continue;
    if (s->leader() == s->header().member_id()) return static_cast<int>(i);
  }
  return util::Unavailable("no etcd leader");
}

void EtcdCluster::Kill(int member) {
  Member& m = members_[member];
  if (m.pid <= 0) return;
  ::kill(m.pid, SIGKILL);
  int status = 0;
  ::waitpid(m.pid, &status, 0);
  m.pid = -1;
}

util::Status EtcdCluster::Restart(int member) {
  CONVERGE_RETURN_IF_ERROR(Spawn(members_[member], /*new_cluster=*/false));
  return WaitReady(member, std::chrono::seconds(30));
}

std::string EtcdCluster::Describe() const {
  std::string out;
  for (const auto& m : members_) {
    out += "etcd member " + m.name + " (client port " + std::to_string(m.client_port) +
           ", peer port " + std::to_string(m.peer_port) + "): ";
    siginfo_t info{};
    // WNOWAIT: an ended member stays unreaped, for Stop to reap by its PID.
    if (m.pid <= 0) {
      out += "stopped";
    } else if (::waitid(P_PID, m.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == m.pid) {
      out += info.si_code == CLD_EXITED ? "exited with " + std::to_string(info.si_status)
                                        : "killed by signal " + std::to_string(info.si_status);
    } else {
      out += "running as " + std::to_string(m.pid);
    }
    std::ifstream log(options_.dir + "/" + m.name + ".log");
    std::deque<std::string> tail;
    for (std::string line; std::getline(log, line);) {
      tail.push_back(std::move(line));
      if (tail.size() > 10) tail.pop_front();
    }
    out += tail.empty() ? "; its log is empty\n" : "; the end of its log:\n";
    for (const auto& line : tail) out += "  " + line + "\n";
  }
  return out;
}

void EtcdCluster::Stop() {
  for (auto& m : members_) {
    if (m.pid > 0) ::kill(m.pid, SIGTERM);
  }
  for (auto& m : members_) {
    if (m.pid <= 0) continue;
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::waitpid(m.pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(m.pid, SIGKILL);
        ::waitpid(m.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    m.pid = -1;
  }
}

}  // namespace converge::store::etcd
