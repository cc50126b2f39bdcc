#include "testing/kubectl.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <thread>

#include "testing/process.h"

extern char** environ;

namespace converge::testing {

namespace {

// Reads what is available from the fds into the strings, waiting up to timeout_ms for the first
// byte. Returns false once both are closed.
bool Pump(int out_fd, int err_fd, std::string* out, std::string* err, int timeout_ms) {
  pollfd fds[2];
  int n = 0;
  if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
  if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
  if (n == 0) return false;
  int r = poll(fds, n, timeout_ms);
  if (r <= 0) return true;
  char buf[65536];
  bool open = false;
  for (int i = 0; i < n; ++i) {
    if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
      open = true;
      continue;
    }
    ssize_t got = read(fds[i].fd, buf, sizeof(buf));
    if (got > 0) {
      (fds[i].fd == out_fd ? out : err)->append(buf, static_cast<size_t>(got));
      open = true;
    }
  }
  return open;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            int* in_fd, int* out_fd, int* err_fd) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
    return -1;
  }
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    if (!env.count(key)) envs.push_back(kv);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    DieWithParent(parent);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  *in_fd = in_pipe[1];
  *out_fd = out_pipe[0];
  *err_fd = err_pipe[0];
  return pid;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         const std::string& stdin_data, std::chrono::seconds timeout) {
  CommandResult result;
  int in_fd, out_fd, err_fd;
  pid_t pid = Spawn(argv, env, &in_fd, &out_fd, &err_fd);
  if (pid < 0) return result;
  if (!stdin_data.empty()) {
    size_t off = 0;
    while (off < stdin_data.size()) {
      ssize_t n = write(in_fd, stdin_data.data() + off, stdin_data.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  close(in_fd);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (Pump(out_fd, err_fd, &result.out, &result.err, 100)) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      break;
    }
  }
  close(out_fd);
  close(err_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

Kubectl::Kubectl(std::string kubeconfig, std::string cache_dir)
    : kubeconfig_(std::move(kubeconfig)), cache_dir_(std::move(cache_dir)) {}

std::vector<std::string> Kubectl::Argv(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"kubectl", "--kubeconfig", kubeconfig_, "--cache-dir",
                                   cache_dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

CommandResult Kubectl::Run(const std::vector<std::string>& args, const std::string& stdin_data,
                           const std::map<std::string, std::string>& env,
                           std::chrono::seconds timeout) const {
  return RunCommand(Argv(args), env, stdin_data, timeout);
}

std::unique_ptr<Kubectl::Background> Kubectl::Start(const std::vector<std::string>& args) const {
  auto bg = std::make_unique<Background>();
  int in_fd;
  bg->pid_ = Spawn(Argv(args), {}, &in_fd, &bg->out_fd_, &bg->err_fd_);
  close(in_fd);
  return bg;
}

void Kubectl::Background::Drain(int timeout_ms) {
  if (!Pump(out_fd_, err_fd_, &out_, &err_, timeout_ms)) {
    // both closed
  }
}

bool Kubectl::Background::WaitFor(const std::string& needle, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (out_.find(needle) != std::string::npos) return true;
    Drain(100);
  }
  return out_.find(needle) != std::string::npos;
}

std::string Kubectl::Background::out_so_far() {
  Drain(0);
  return out_;
}

CommandResult Kubectl::Background::Stop() {
  CommandResult r;
  if (pid_ > 0) {
    Drain(200);
    kill(pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      if (!Pump(out_fd_, err_fd_, &out_, &err_, 100)) break;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    pid_ = -1;
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
  out_fd_ = err_fd_ = -1;
  r.out = out_;
  r.err = err_;
  return r;
}

Kubectl::Background::~Background() {
  Stop();
}

bool Kubectl::Available() {
  return RunCommand({"kubectl", "version", "--client"}, {}, "", std::chrono::seconds(30))
             .exit_code == 0;
}

}  // namespace converge::testing
