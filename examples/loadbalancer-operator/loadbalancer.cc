#include "loadbalancer.h"

#include <set>

namespace lboperator {

namespace json = boost::json;

util::StatusOr<LoadBalancerSpec> ParseSpec(const api::Object& obj) {
  LoadBalancerSpec spec;
  const json::array* ports = api::FindArray(obj.doc(), {"spec", "ports"});
  if (ports == nullptr || ports->empty()) {
    return util::InvalidArgument("spec.ports: at least one port is required");
  }
  std::set<std::pair<int32_t, std::string>> seen;
  for (const json::value& v : *ports) {
    const json::object* p = v.if_object();
    const json::value* port = p != nullptr ? p->if_contains("port") : nullptr;
    if (port == nullptr || !port->is_int64() || port->as_int64() < 1 || port->as_int64() > 65535) {
      return util::InvalidArgument("spec.ports[].port: must be an integer in 1..65535");
    }
    Port out{.port = static_cast<int32_t>(port->as_int64())};
    if (const json::value* proto = p->if_contains("protocol")) {
      if (!proto->is_string() || (proto->as_string() != "TCP" && proto->as_string() != "UDP")) {
        return util::InvalidArgument("spec.ports[].protocol: must be TCP or UDP");
      }
      out.protocol = std::string(proto->as_string());
    }
    if (!seen.emplace(out.port, out.protocol).second) {
      return util::InvalidArgument("spec.ports: duplicate port " + std::to_string(out.port) + "/" +
                                   out.protocol);
    }
    spec.ports.push_back(std::move(out));
  }
  if (const json::object* tags = api::FindObject(obj.doc(), {"spec", "tags"})) {
    for (const auto& [k, v] : *tags) {
      if (std::string_view(k).starts_with(kReservedTagPrefix)) {
        return util::InvalidArgument("spec.tags: " + std::string(k) + " is reserved");
      }
      if (!v.is_string()) return util::InvalidArgument("spec.tags: values must be strings");
      spec.tags[std::string(k)] = std::string(v.as_string());
    }
  }
  return spec;
}

LoadBalancerStatus ParseStatus(const api::Object& obj) {
  LoadBalancerStatus s;
  const json::object* status = api::FindObject(obj.doc(), {"status"});
  if (status == nullptr) return s;
  s.external_id = std::string(api::FindString(*status, {"externalID"}));
  s.address = std::string(api::FindString(*status, {"address"}));
  s.observed_generation = api::FindInt(*status, {"observedGeneration"});
  if (const json::array* conditions = api::FindArray(*status, {"conditions"})) {
    for (const json::value& v : *conditions) {
      const json::object* c = v.if_object();
      if (c == nullptr) continue;
      s.conditions.push_back({
          .type = std::string(api::FindString(*c, {"type"})),
          .status = std::string(api::FindString(*c, {"status"})),
          .reason = std::string(api::FindString(*c, {"reason"})),
          .message = std::string(api::FindString(*c, {"message"})),
          .last_transition_time = std::string(api::FindString(*c, {"lastTransitionTime"})),
          .observed_generation = api::FindInt(*c, {"observedGeneration"}),
      });
    }
  }
  return s;
}

json::object StatusToJson(const LoadBalancerStatus& s) {
  json::object out;
  if (!s.external_id.empty()) out["externalID"] = s.external_id;
  if (!s.address.empty()) out["address"] = s.address;
  if (s.observed_generation != 0) out["observedGeneration"] = s.observed_generation;
  json::array conditions;
  for (const Condition& c : s.conditions) {
    json::object o{{"type", c.type}, {"status", c.status}};
    if (!c.reason.empty()) o["reason"] = c.reason;
    if (!c.message.empty()) o["message"] = c.message;
    if (!c.last_transition_time.empty()) o["lastTransitionTime"] = c.last_transition_time;
    if (c.observed_generation != 0) o["observedGeneration"] = c.observed_generation;
    conditions.push_back(std::move(o));
  }
  if (!conditions.empty()) out["conditions"] = std::move(conditions);
  return out;
}

const Condition* FindCondition(const LoadBalancerStatus& status, std::string_view type) {
  for (const Condition& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace lboperator
