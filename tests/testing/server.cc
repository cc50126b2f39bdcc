#include "testing/server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace converge::testing {

ServerProcess::~ServerProcess() {
  Stop();
}

bool ServerProcess::Start(ServerOptions options) {
  options_ = std::move(options);
  if (options_.data_dir.empty()) {
    if (!temp_) temp_ = std::make_unique<TempDir>();
    data_dir_ = temp_->path();
  } else {
    data_dir_ = options_.data_dir;
  }
  std::filesystem::remove(kubeconfig_path());
  std::vector<std::string> argv = {CONVERGE_BINARY, options_.command, "--data-dir",
                                   data_dir_,       "--listen",       options_.listen};
  for (const auto& a : options_.extra_args) argv.push_back(a);
  if (!process_.Start(argv, log_path())) {
    ADD_FAILURE() << "cannot start " << CONVERGE_BINARY;
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_.Running()) {
      ADD_FAILURE() << "server exited during start-up; log:\n" << log();
      return false;
    }
    if (std::filesystem::exists(kubeconfig_path())) {
      auto kc = Kubeconfig::Load(kubeconfig_path());
      if (kc.ok()) {
        kubeconfig_ = *kc;
        TestClient c(kubeconfig_);
        if (c.Get("/readyz").status == 200) return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "server did not become ready; log:\n" << log();
  return false;
}

void ServerProcess::Stop() {
  process_.Stop();
}
void ServerProcess::Kill() {
  process_.Kill();
}

bool ServerProcess::Restart() {
  Stop();
  ServerOptions o = options_;
  o.data_dir = data_dir_;
  return Start(o);
}

std::unique_ptr<TestClient> ServerProcess::Client() const {
  return std::make_unique<TestClient>(kubeconfig_);
}

}  // namespace converge::testing
