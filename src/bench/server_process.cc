#include "bench/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/kubeconfig.h"

namespace converge::bench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

ServerProcess::~ServerProcess() {
  Stop();
  etcd_.reset();
  if (owns_data_dir_ && !data_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(data_dir_, ec);
  }
}

util::Status ServerProcess::Start() {
  if (pid_ > 0) return util::FailedPrecondition("server already running");
  if (data_dir_.empty()) {
    if (!options_.data_dir.empty()) {
      data_dir_ = options_.data_dir;
      std::error_code ec;
      fs::create_directories(data_dir_, ec);
    } else {
      std::string parent =
          options_.temp_parent.empty() ? fs::temp_directory_path().string() : options_.temp_parent;
      std::string tmpl = parent + "/converge-bench-XXXXXX";
      if (mkdtemp(tmpl.data()) == nullptr) {
        return util::Unavailable("cannot create a temporary dir under " + parent);
      }
      data_dir_ = tmpl;
      owns_data_dir_ = true;
    }
  }
  std::vector<std::string> store_args;
  if (options_.store == "etcd") {
    if (!etcd_) {
      etcd_ = std::make_unique<store::etcd::EtcdCluster>(store::etcd::EtcdClusterOptions{
          .binary = options_.etcd_binary, .dir = data_dir_ + "/etcd"});
      if (auto s = etcd_->Start(); !s.ok()) {
        etcd_.reset();
        return s.WithContext("starting etcd for the server");
      }
    }
    store_args = {"--store", "etcd", "--etcd-endpoints", etcd_->EndpointsFlag()};
  } else if (options_.store != "embedded") {
    return util::InvalidArgument("unknown store \"" + options_.store +
                                 "\" (want embedded or etcd)");
  }
  std::error_code ec;
  fs::remove(kubeconfig_path(), ec);
  std::string binary =
      options_.binary.empty() ? fs::read_symlink("/proc/self/exe", ec).string() : options_.binary;
  std::vector<std::string> argv = {binary,    options_.command, "--data-dir",
                                   data_dir_, "--listen",       "127.0.0.1:0"};
  argv.insert(argv.end(), store_args.begin(), store_args.end());
  argv.insert(argv.end(), options_.args.begin(), options_.args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string log = log_path();
  pid_t parent = getpid();

  Clock::time_point start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) return util::Unavailable("fork failed");
  if (pid == 0) {
    // The server dies with the bench; it must not inherit the bench's blocked signals.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  pid_ = pid;

  auto running = [this] {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  };
  const Clock::time_point deadline = start + options_.ready_timeout;
  std::unique_ptr<client::RestClient> client;
  while (Clock::now() < deadline) {
    if (!running()) {
      return util::Unavailable("the server exited during start-up; log " + log + ":\n" + LogTail());
    }
    if (!client && fs::exists(kubeconfig_path(), ec)) {
      auto c = ClientForKubeconfig(kubeconfig_path());
      // The file may still be half written: retry on the next round.
      if (c.ok()) client = std::move(*c);
    }
    if (client) {
      client::HttpRequest req;
      req.path = "/readyz";
      req.timeout = std::chrono::seconds(5);
      auto r = client->transport().Do(std::move(req));
      if (r.ok() && r->status == 200) {
        ready_after_ = Clock::now() - start;
        return util::Status::Ok();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return util::DeadlineExceeded("the server did not become ready; log " + log);
}

void ServerProcess::Stop(std::chrono::seconds grace) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const Clock::time_point deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string ServerProcess::LogTail() const {
  std::ifstream in(log_path());
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(std::move(line));
    if (lines.size() > 40) lines.erase(lines.begin());
  }
  std::ostringstream out;
  for (const std::string& l : lines) out << l << "\n";
  return out.str();
}

util::StatusOr<std::unique_ptr<client::RestClient>> ClientForKubeconfig(const std::string& path) {
  auto config = client::LoadRestConfig(path);
  if (!config.ok()) return config.status();
  return client::RestClient::ForConfig(*config);
}

util::Status WaitReady(client::RestClient& client, std::chrono::seconds timeout,
                       std::chrono::milliseconds interval) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    client::HttpRequest req;
    req.path = "/readyz";
    req.timeout = std::chrono::seconds(5);
    auto r = client.transport().Do(std::move(req));
    if (r.ok() && r->status == 200) return util::Status::Ok();
    std::this_thread::sleep_for(interval);
  }
  return util::DeadlineExceeded("/readyz did not answer 200");
}

}  // namespace converge::bench
