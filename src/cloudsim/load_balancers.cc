#include "cloudsim/load_balancers.h"

#include <boost/json.hpp>

#include <algorithm>

#include "util/ids.h"
#include "util/time_format.h"

namespace converge::cloudsim {

namespace json = boost::json;

json::object ToJson(const LoadBalancer& lb) {
  json::object tags;
  for (const auto& [k, v] : lb.tags) tags[k] = v;
  json::array ports;
  for (const Port& p : lb.ports)
    ports.push_back(json::object{{"port", p.port}, {"protocol", p.protocol}});
  return json::object{{"id", lb.id},
                      {"name", lb.name},
                      {"tags", std::move(tags)},
                      {"ports", std::move(ports)},
                      {"address", lb.address},
                      {"state", lb.state},
                      {"createdAt", lb.created_at}};
}

util::StatusOr<std::vector<Port>> ParsePorts(const json::value& v) {
  if (!v.is_array()) return util::InvalidArgument("ports: must be an array");
  std::vector<Port> out;
  for (const json::value& item : v.as_array()) {
    const json::object* o = item.if_object();
    const json::value* port = o != nullptr ? o->if_contains("port") : nullptr;
    if (port == nullptr || !port->is_int64() || port->as_int64() < 1 || port->as_int64() > 65535) {
      return util::InvalidArgument("ports[].port: must be an integer in 1..65535");
    }
    Port p{.port = static_cast<int32_t>(port->as_int64())};
    if (const json::value* proto = o->if_contains("protocol")) {
      if (!proto->is_string() || (proto->as_string() != "TCP" && proto->as_string() != "UDP")) {
        return util::InvalidArgument("ports[].protocol: must be TCP or UDP");
      }
      p.protocol = std::string(proto->as_string());
    }
    out.push_back(std::move(p));
  }
  return out;
}

util::StatusOr<LoadBalancer> ParseCreateBody(const json::object& body) {
  LoadBalancer lb;
  const json::value* name = body.if_contains("name");
  if (name == nullptr || !name->is_string() || name->as_string().empty()) {
    return util::InvalidArgument("name: required");
  }
  lb.name = std::string(name->as_string());
  if (const json::value* tags = body.if_contains("tags")) {
    if (!tags->is_object()) return util::InvalidArgument("tags: must be an object");
    for (const auto& [k, v] : tags->as_object()) {
      if (!v.is_string()) return util::InvalidArgument("tags: values must be strings");
      lb.tags[std::string(k)] = std::string(v.as_string());
    }
  }
  if (const json::value* ports = body.if_contains("ports")) {
    util::StatusOr<std::vector<Port>> p = ParsePorts(*ports);
    if (!p.ok()) return p.status();
    lb.ports = std::move(*p);
  }
  return lb;
}

LoadBalancerStore::LoadBalancerStore(LoadBalancerStoreOptions options)
    : clock_(options.clock != nullptr ? options.clock : &util::RealClock()),
      provisioning_delay_(options.provisioning_delay) {}

LoadBalancer LoadBalancerStore::ViewLocked(const Entry& e) const {
  LoadBalancer lb = e.lb;
  lb.state = clock_->Now() - e.created >= provisioning_delay_ ? "active" : "provisioning";
  return lb;
}

LoadBalancerStore::CreateResult LoadBalancerStore::Create(const LoadBalancer& spec,
                                                          const std::string& idempotency_key) {
  std::lock_guard lock(mu_);
  if (!idempotency_key.empty()) {
    if (auto it = keys_.find(idempotency_key); it != keys_.end()) {
      ++counters_.idempotent_replays;
      return {ViewLocked(lbs_.at(it->second)), false};
    }
  }
  Entry e;
  e.seq = next_seq_++;
  e.created = clock_->Now();
  e.lb = spec;
  e.lb.id = "lb-" + util::RandomString(16, "0123456789abcdef");
  // 100.64.0.0/10 (shared address space): 4M addresses before the numbers repeat.
  const uint64_t n = e.seq & 0x3fffff;
  e.lb.address = "100." + std::to_string(64 + (n >> 16)) + "." + std::to_string((n >> 8) & 255) +
                 "." + std::to_string(n & 255);
  e.lb.created_at = util::FormatRfc3339(clock_->WallNow());
  e.lb.idempotency_key = idempotency_key;
  if (!idempotency_key.empty()) keys_[idempotency_key] = e.lb.id;
  ++counters_.creates;
  LoadBalancer view = ViewLocked(e);
  lbs_.emplace(e.lb.id, std::move(e));
  return {std::move(view), true};
}

std::optional<LoadBalancer> LoadBalancerStore::Get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = lbs_.find(id);
  if (it == lbs_.end()) return std::nullopt;
  return ViewLocked(it->second);
}

std::vector<LoadBalancer> LoadBalancerStore::List(const Tags& tag_filter) const {
  std::vector<const Entry*> matched;
  std::lock_guard lock(mu_);
  for (const auto& [id, e] : lbs_) {
    bool all = std::all_of(tag_filter.begin(), tag_filter.end(), [&](const auto& kv) {
      auto t = e.lb.tags.find(kv.first);
      return t != e.lb.tags.end() && t->second == kv.second;
    });
    if (all) matched.push_back(&e);
  }
  std::sort(matched.begin(), matched.end(),
            [](const Entry* a, const Entry* b) { return a->seq < b->seq; });
  std::vector<LoadBalancer> out;
  out.reserve(matched.size());
  for (const Entry* e : matched) out.push_back(ViewLocked(*e));
  return out;
}

std::optional<LoadBalancer> LoadBalancerStore::UpdatePorts(const std::string& id,
                                                           std::vector<Port> ports) {
  std::lock_guard lock(mu_);
  auto it = lbs_.find(id);
  if (it == lbs_.end()) return std::nullopt;
  it->second.lb.ports = std::move(ports);
  return ViewLocked(it->second);
}

bool LoadBalancerStore::Delete(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = lbs_.find(id);
  if (it == lbs_.end()) return false;
  if (!it->second.lb.idempotency_key.empty()) keys_.erase(it->second.lb.idempotency_key);
  lbs_.erase(it);
  ++counters_.deletes;
  return true;
}

LoadBalancerStore::Counters LoadBalancerStore::counters() const {
  std::lock_guard lock(mu_);
  Counters c = counters_;
  c.live = static_cast<int64_t>(lbs_.size());
  return c;
}

}  // namespace converge::cloudsim
