#include "kubelet/node_runtime.h"

#include <algorithm>

namespace converge::kubelet {

namespace {

constexpr int kFirstHost = 2;   // .1 is the node's bridge (cni0)
constexpr int kLastHost = 254;  // .255 is the broadcast address

std::string BlockPrefix(int node_index) {
  // 10.244.0.0 + node_index·256, wrapping inside 10/8.
  int block = (244 * 256 + node_index) % 65536;
  if (block < 0) block += 65536;
  return "10." + std::to_string(block / 256) + "." + std::to_string(block % 256) + ".";
}

}  // namespace

NodeRuntime::NodeRuntime(NodeRuntimeOptions options) : options_(std::move(options)) {}

std::string NodeRuntime::PodCidr() const {
  return BlockPrefix(options_.node_index) + "0/24";
}

bool NodeRuntime::ImagePresent(const std::string& image, WallTime now) const {
  auto it = images_.find(image);
  return it != images_.end() && it->second.ready_at <= now;
}

NodeRuntime::PullTicket NodeRuntime::SchedulePull(const std::string& image, Duration duration,
                                                  bool will_succeed, WallTime now) {
  if (will_succeed) {
    if (auto it = images_.find(image); it != images_.end()) {
      // Present, or being pulled by another pod: share it.
      WallTime done = std::max(now, it->second.ready_at);
      return {done, done};
    }
  }
  WallTime start = options_.serialize_image_pulls ? std::max(now, pull_queue_free_at_) : now;
  WallTime done = start + duration;
  if (options_.serialize_image_pulls) pull_queue_free_at_ = done;
  if (will_succeed) images_[image] = ImageState{done};
  return {start, done};
}

void NodeRuntime::EraseIfEmpty(boost::unordered_flat_map<std::string, PodHold>::iterator it) {
  if (it->second.host == 0 && !it->second.admitted) pods_.erase(it);
}

std::optional<std::string> NodeRuntime::AllocateIp(const std::string& uid) {
  if (auto it = pods_.find(uid); it != pods_.end() && it->second.host != 0) {
    return BlockPrefix(options_.node_index) + std::to_string(it->second.host);
  }
  const int range = kLastHost - kFirstHost + 1;
  for (int i = 0; i < range; ++i) {
    int host = next_host_;
    next_host_ = host == kLastHost ? kFirstHost : host + 1;
    if (used_hosts_.test(host)) continue;
    used_hosts_.set(host);
    pods_[uid].host = host;
    return BlockPrefix(options_.node_index) + std::to_string(host);
  }
  return std::nullopt;
}

bool NodeRuntime::ReserveIp(const std::string& uid, const std::string& ip) {
  std::string prefix = BlockPrefix(options_.node_index);
  if (ip.rfind(prefix, 0) != 0) return false;
  int host = 0;
  try {
    host = std::stoi(ip.substr(prefix.size()));
  } catch (...) {
    return false;
  }
  if (host < kFirstHost || host > kLastHost) return false;
  if (auto it = pods_.find(uid); it != pods_.end() && it->second.host != 0) {
    return it->second.host == host;
  }
  if (used_hosts_.test(host)) return false;
  used_hosts_.set(host);
  pods_[uid].host = host;
  return true;
}

void NodeRuntime::ReleaseIp(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || it->second.host == 0) return;
  used_hosts_.reset(it->second.host);
  it->second.host = 0;
  EraseIfEmpty(it);
}

std::optional<NodeRuntime::Rejection> NodeRuntime::Admit(const std::string& uid,
                                                         Requests requests) {
  if (auto it = pods_.find(uid); it != pods_.end() && it->second.admitted) return std::nullopt;
  const NodeAllocatable& a = options_.allocatable;
  auto reject = [](std::string resource, int64_t requested, int64_t used, int64_t capacity) {
    return Rejection{"OutOf" + resource, "Node didn't have enough resource: " + resource +
                                             ", requested: " + std::to_string(requested) +
                                             ", used: " + std::to_string(used) +
                                             ", capacity: " + std::to_string(capacity)};
  };
  const auto pods = static_cast<int64_t>(admitted_count_);
  if (pods + 1 > a.pods) return reject("pods", 1, pods, a.pods);
  if (requests.cpu_milli > 0 && used_.cpu_milli + requests.cpu_milli > a.cpu_milli) {
    return reject("cpu", requests.cpu_milli, used_.cpu_milli, a.cpu_milli);
  }
  if (requests.memory_bytes > 0 && used_.memory_bytes + requests.memory_bytes > a.memory_bytes) {
    return reject("memory", requests.memory_bytes, used_.memory_bytes, a.memory_bytes);
  }
  PodHold& hold = pods_[uid];
  hold.admitted = true;
  hold.requests = requests;
  ++admitted_count_;
  used_.cpu_milli += requests.cpu_milli;
  used_.memory_bytes += requests.memory_bytes;
  return std::nullopt;
}

void NodeRuntime::Release(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.admitted) return;
  used_.cpu_milli -= it->second.requests.cpu_milli;
  used_.memory_bytes -= it->second.requests.memory_bytes;
  it->second.admitted = false;
  it->second.requests = {};
  --admitted_count_;
  EraseIfEmpty(it);
}

}  // namespace converge::kubelet
