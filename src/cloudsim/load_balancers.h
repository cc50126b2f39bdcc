// LoadBalancerStore: the state of the simulated cloud — load balancers with tags, ports, a fake
// address and a provisioning state — and the idempotency keys that map repeated creates to the
// load balancer the first one made.
//
// Contracts the operator tests rely on:
//   - Create with an idempotency key that already names a live load balancer returns that load
//     balancer (created = false) and creates nothing. Once that load balancer is deleted the key
//     is free again: "same key, same live load balancer".
//   - List is strongly consistent: a load balancer is listed from the moment Create returns
//     until Delete returns.
//   - State is "provisioning" until `provisioning_delay` has passed since creation, then
//     "active" (computed when read, from the clock).
//
// Thread-safety: safe for concurrent use (one mutex).
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/clock.h"
#include "util/status.h"

namespace converge::cloudsim {

struct Port {
  int32_t port = 0;              // 1..65535
  std::string protocol = "TCP";  // TCP or UDP

  friend bool operator==(const Port&, const Port&) = default;
};

using Tags = std::map<std::string, std::string>;

struct LoadBalancer {
  std::string id;  // "lb-" + 16 hex digits
  std::string name;
  Tags tags;
  std::vector<Port> ports;
  std::string address;          // a fake IPv4 address from 100.64.0.0/10
  std::string state;            // "provisioning" or "active"
  std::string created_at;       // RFC 3339
  std::string idempotency_key;  // "" when created without one
};

boost::json::object ToJson(const LoadBalancer& lb);
// Parses {"name": ..., "tags": {...}, "ports": [{"port": 80, "protocol": "TCP"}]}: the body of a
// create. InvalidArgument names the offending field.
util::StatusOr<LoadBalancer> ParseCreateBody(const boost::json::object& body);
// Parses a ports array (create and update bodies).
util::StatusOr<std::vector<Port>> ParsePorts(const boost::json::value& ports);

struct LoadBalancerStoreOptions {
  // How long a new load balancer stays "provisioning".
  util::Clock::Duration provisioning_delay{0};
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
};

class LoadBalancerStore {
 public:
  explicit LoadBalancerStore(LoadBalancerStoreOptions options);

  struct CreateResult {
    LoadBalancer lb;
    bool created = false;  // false: an idempotent replay of an earlier create
  };
  // `spec` supplies name, tags and ports; the store assigns id, address and timestamps.
  CreateResult Create(const LoadBalancer& spec, const std::string& idempotency_key);
  std::optional<LoadBalancer> Get(const std::string& id) const;
  // Every load balancer carrying all of `tag_filter`, in creation order.
  std::vector<LoadBalancer> List(const Tags& tag_filter) const;
  // Replaces the ports. nullopt when the load balancer does not exist.
  std::optional<LoadBalancer> UpdatePorts(const std::string& id, std::vector<Port> ports);
  // Removes the load balancer; false when it does not exist.
  bool Delete(const std::string& id);

  struct Counters {
    int64_t creates = 0;             // load balancers actually created
    int64_t idempotent_replays = 0;  // creates answered with an existing load balancer
    int64_t deletes = 0;             // load balancers actually deleted
    int64_t live = 0;                // load balancers that exist now
  };
  Counters counters() const;

 private:
  struct Entry {
    LoadBalancer lb;  // state is filled in when read
    uint64_t seq = 0;
    util::Clock::TimePoint created;
  };
  LoadBalancer ViewLocked(const Entry& e) const;

  util::Clock* const clock_;
  const util::Clock::Duration provisioning_delay_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> lbs_;  // guarded by mu_; by id
  // guarded by mu_. Idempotency key → id of the live load balancer it created. Every value is a
  // key of lbs_ (Delete erases the mapping with the load balancer).
  std::unordered_map<std::string, std::string> keys_;
  uint64_t next_seq_ = 1;  // guarded by mu_; also numbers the addresses
  Counters counters_;      // guarded by mu_ (live is computed)
};

}  // namespace converge::cloudsim
