// core/v1 Service strategy and cluster IP helpers. See strategy_core.h.
#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <map>
#include <set>

#include "apiserver/strategy.h"
#include "apiserver/strategy_core.h"
#include "apiserver/strategy_kinds.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::CopyField;
using sv::Get;
using sv::Index;
using sv::Key;
using sv::Spec;
using sv::Status;
using sv::Truthy;

namespace {

// ---------------------------------------------------------------------------------------------
// Services

bool IsHeadless(const json::object& spec) {
  const json::array* ips = AsArray(Get(spec, "clusterIPs"));
  if (ips && !ips->empty()) return AsString(&(*ips)[0]) == "None";
  return api::Object::GetString(spec, "clusterIP") == "None";
}

// NormalizeClusterIPs: keep the singular and plural fields in step.
void NormalizeClusterIps(json::object& spec, const json::object* old_spec) {
  std::string_view ip = api::Object::GetString(spec, "clusterIP");
  const json::array* ips = AsArray(Get(spec, "clusterIPs"));
  if (!old_spec) {
    if (!ip.empty() && (!ips || ips->empty())) spec["clusterIPs"] = json::array{json::string(ip)};
    return;
  }
  std::string_view old_ip = api::Object::GetString(*old_spec, "clusterIP");
  const json::array* old_ips = AsArray(Get(*old_spec, "clusterIPs"));
  bool single_changed = ip != old_ip;
  bool plural_changed = (ips ? *ips : json::array()) != (old_ips ? *old_ips : json::array());
  if (single_changed && !plural_changed) {
    if (ip.empty()) {
      spec.erase("clusterIPs");
    } else if (ips && !ips->empty()) {
      json::array copy = *ips;
      copy[0] = json::string(ip);
      spec["clusterIPs"] = std::move(copy);
    } else {
      spec["clusterIPs"] = json::array{json::string(ip)};
    }
  }
}

// patchAllocatedValues: an update that leaves allocated values empty keeps the old ones.
void PatchAllocatedValues(json::object& spec, const json::object& old_spec) {
  auto needs_ip = [](const json::object& s) {
    return api::Object::GetString(s, "type") != "ExternalName";
  };
  if (needs_ip(old_spec) && needs_ip(spec)) {
    if (api::Object::GetString(spec, "clusterIP").empty()) CopyField(spec, old_spec, "clusterIP");
    const json::array* ips = AsArray(Get(spec, "clusterIPs"));
    const json::array* old_ips = AsArray(Get(old_spec, "clusterIPs"));
    if ((!ips || ips->empty()) && old_ips && !old_ips->empty()) spec["clusterIPs"] = *old_ips;
  }
  auto needs_node_port = [](const json::object& s) {
    std::string_view t = api::Object::GetString(s, "type");
    return t == "NodePort" || t == "LoadBalancer";
  };
  if (needs_node_port(old_spec) && needs_node_port(spec)) {
    // Ports match by name, protocol (TCP when unset: defaulting runs after this) and port.
    auto port_key = [](const json::object& p) {
      std::string_view proto = api::Object::GetString(p, "protocol");
      return std::string(api::Object::GetString(p, "name")) + "/" +
             std::string(proto.empty() ? "TCP" : proto) + "/" +
             std::to_string(AsInt(Get(p, "port")).value_or(0));
    };
    auto node_ports = [](const json::object& s) {
      std::set<int64_t> used;
      if (const json::array* ps = AsArray(Get(s, "ports"))) {
        for (const json::value& pv : *ps) {
          const json::object* p = AsObject(&pv);
          int64_t np = p ? AsInt(Get(*p, "nodePort")).value_or(0) : 0;
          if (np > 0) used.insert(np);
        }
      }
      return used;
    };
    std::map<std::string, int64_t> by_key;
    if (const json::array* op = AsArray(Get(old_spec, "ports"))) {
      for (const json::value& pv : *op) {
        if (const json::object* p = AsObject(&pv)) {
          by_key[port_key(*p)] = AsInt(Get(*p, "nodePort")).value_or(0);
        }
      }
    }
    // Values both versions use cannot be patched in.
    std::set<int64_t> old_used = node_ports(old_spec);
    std::set<int64_t> new_used = node_ports(spec);
    std::set<int64_t> used;
    std::set_intersection(old_used.begin(), old_used.end(), new_used.begin(), new_used.end(),
                          std::inserter(used, used.begin()));
    json::value* ports = spec.if_contains("ports");
    if (ports && ports->is_array()) {
      for (json::value& pv : ports->get_array()) {
        if (!pv.is_object()) continue;
        json::object& p = pv.get_object();
        if (AsInt(Get(p, "nodePort")).value_or(0) != 0) continue;
        auto it = by_key.find(port_key(p));
        if (it != by_key.end() && it->second > 0 && !used.count(it->second)) {
          p["nodePort"] = it->second;
        }
      }
    }
  }
  if (api::Object::GetString(spec, "externalTrafficPolicy") == "Local" &&
      AsInt(Get(spec, "healthCheckNodePort")).value_or(0) == 0) {
    CopyField(spec, old_spec, "healthCheckNodePort");
  }
}

Causes ValidateServiceSpec(const api::Object& svc) {
  Causes out;
  const json::object& spec = Spec(svc);
  std::string_view type = api::Object::GetString(spec, "type");
  const json::array* ports = AsArray(Get(spec, "ports"));
  bool headless = IsHeadless(spec);
  if ((!ports || ports->empty()) && !headless && type != "ExternalName") {
    out.push_back(FieldRequired("spec.ports"));
  }
  const json::array* cluster_ips = AsArray(Get(spec, "clusterIPs"));
  if (type == "LoadBalancer" || type == "NodePort") {
    if (headless) {
      out.push_back(
          FieldInvalidString("spec.clusterIPs[0]", "None",
                             "may not be set to 'None' for " + std::string(type) + " services"));
    }
  } else if (type == "ExternalName") {
    if (cluster_ips && !cluster_ips->empty()) {
      out.push_back(FieldForbidden("spec.clusterIPs", "may not be set for ExternalName services"));
    }
    const json::array* fams = AsArray(Get(spec, "ipFamilies"));
    if (fams && !fams->empty()) {
      out.push_back(FieldForbidden("spec.ipFamilies", "may not be set for ExternalName services"));
    }
    if (sv::IsSet(Get(spec, "ipFamilyPolicy"))) {
      out.push_back(
          FieldForbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"));
    }
    std::string_view cname = api::Object::GetString(spec, "externalName");
    if (!cname.empty() && cname.back() == '.') cname.remove_suffix(1);
    if (cname.empty()) {
      out.push_back(FieldRequired("spec.externalName"));
    } else {
      sv::Append(out, sv::ValidateDns1123Subdomain("spec.externalName", cname));
    }
  }
  std::set<std::string> port_names;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const json::object* p = AsObject(&(*ports)[i]);
    if (!p) continue;
    std::string pp = Index("spec.ports", i);
    std::string_view name = api::Object::GetString(*p, "name");
    if (ports->size() > 1 && name.empty()) {
      out.push_back(FieldRequired(Child(pp, "name")));
    } else if (!name.empty()) {
      sv::Append(out, sv::ValidateDns1123Label(Child(pp, "name"), name));
      if (!port_names.insert(std::string(name)).second) {
        out.push_back(FieldDuplicate(Child(pp, "name"), json::value(name)));
      }
    }
    int64_t port = AsInt(Get(*p, "port")).value_or(0);
    for (auto& m : sv::IsValidPortNum(port))
      out.push_back(sv::InvalidInt(Child(pp, "port"), port, m));
    std::string_view proto = api::Object::GetString(*p, "protocol");
    if (proto.empty()) {
      out.push_back(FieldRequired(Child(pp, "protocol")));
    } else if (proto != "TCP" && proto != "UDP" && proto != "SCTP") {
      out.push_back(
          FieldNotSupported(Child(pp, "protocol"), json::value(proto), {"SCTP", "TCP", "UDP"}));
    }
    const json::value* tp = Get(*p, "targetPort");
    std::string tpp = Child(pp, "targetPort");
    if (tp && tp->is_string()) {
      for (auto& m : sv::IsValidPortName(tp->get_string())) {
        out.push_back(FieldInvalidString(tpp, tp->get_string(), m));
      }
    } else {
      int64_t n = AsInt(tp).value_or(0);
      for (auto& m : sv::IsValidPortNum(n)) out.push_back(sv::InvalidInt(tpp, n, m));
    }
    if (const json::value* ap = Get(*p, "appProtocol"); sv::IsSet(ap)) {
      sv::Append(out, sv::ValidateQualifiedNameField(Child(pp, "appProtocol"), AsString(ap)));
    }
  }
  sv::Append(out, sv::ValidateLabelsField("spec.selector", Get(spec, "selector")));
  std::string_view affinity = api::Object::GetString(spec, "sessionAffinity");
  if (affinity.empty()) {
    out.push_back(FieldRequired("spec.sessionAffinity"));
  } else if (affinity != "ClientIP" && affinity != "None") {
    out.push_back(
        FieldNotSupported("spec.sessionAffinity", json::value(affinity), {"ClientIP", "None"}));
  }
  if (affinity == "ClientIP") {
    const json::value* timeout =
        api::Find(spec, {"sessionAffinityConfig", "clientIP", "timeoutSeconds"});
    if (!sv::IsSet(timeout)) {
      out.push_back(FieldRequired("spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                                  "when session affinity type is ClientIP"));
    } else {
      int64_t t = AsInt(timeout).value_or(0);
      if (t <= 0 || t > 86400) {
        out.push_back(sv::InvalidInt("spec.sessionAffinityConfig.clientIP.timeoutSeconds", t,
                                     "must be greater than 0 and less than 86400"));
      }
    }
  } else if (affinity == "None" && sv::IsSet(Get(spec, "sessionAffinityConfig"))) {
    out.push_back(FieldForbidden("spec.sessionAffinityConfig",
                                 "must not be set when session affinity is None"));
  }

  // ValidateServiceClusterIPsRelatedFields.
  std::string_view ip = api::Object::GetString(spec, "clusterIP");
  size_t nips = cluster_ips ? cluster_ips->size() : 0;
  if (!ip.empty()) {
    if (nips == 0) {
      out.push_back(FieldRequired("spec.clusterIPs"));
    } else if (AsString(&(*cluster_ips)[0]) != ip) {
      out.push_back(sv::InvalidRendered("spec.clusterIPs",
                                        sv::GoStringSlice(Get(spec, "clusterIPs")),
                                        "first value must match `clusterIP`"));
    }
  } else if (nips != 0) {
    out.push_back(sv::InvalidRendered("spec.clusterIPs", sv::GoStringSlice(Get(spec, "clusterIPs")),
                                      "must be empty when `clusterIP` is not specified"));
  }
  const json::array* families = AsArray(Get(spec, "ipFamilies"));
  std::set<std::string> seen_families;
  for (size_t i = 0; families && i < families->size(); ++i) {
    std::string f(AsString(&(*families)[i]));
    if (f != "IPv4" && f != "IPv6") {
      out.push_back(
          FieldNotSupported(Index("spec.ipFamilies", i), (*families)[i], {"IPv4", "IPv6"}));
    }
    if (!seen_families.insert(f).second) {
      out.push_back(FieldDuplicate(Index("spec.ipFamilies", i), (*families)[i]));
    }
  }
  if (const json::value* pol = Get(spec, "ipFamilyPolicy"); sv::IsSet(pol)) {
    std::string_view p = AsString(pol);
    if (p != "SingleStack" && p != "PreferDualStack" && p != "RequireDualStack") {
      out.push_back(FieldNotSupported("spec.ipFamilyPolicy", *pol,
                                      {"PreferDualStack", "RequireDualStack", "SingleStack"}));
    }
  }
  bool bad_ips = false;
  for (size_t i = 0; i < nips; ++i) {
    std::string_view v = AsString(&(*cluster_ips)[i]);
    if (i == 0 && v == "None") {
      if (nips > 1) {
        bad_ips = true;
        out.push_back(sv::InvalidRendered("spec.clusterIPs",
                                          sv::GoStringSlice(Get(spec, "clusterIPs")),
                                          "'None' must be the first and only value"));
      }
      continue;
    }
    for (auto& m : sv::IsValidIp(v)) {
      bad_ips = true;
      out.push_back(FieldInvalidString(Index("spec.clusterIPs", i), v, m));
    }
  }
  if (nips > 2) {
    out.push_back(sv::InvalidRendered("spec.clusterIPs", sv::GoStringSlice(Get(spec, "clusterIPs")),
                                      "may only hold up to 2 values"));
  }
  if (!bad_ips && nips == 2 &&
      sv::IsIpv6(AsString(&(*cluster_ips)[0])) == sv::IsIpv6(AsString(&(*cluster_ips)[1]))) {
    out.push_back(sv::InvalidRendered("spec.clusterIPs", sv::GoStringSlice(Get(spec, "clusterIPs")),
                                      "may specify no more than one IP for each IP family"));
  }
  if (!bad_ips && !headless && families) {
    for (size_t i = 0; i < nips && i < families->size(); ++i) {
      std::string_view v = AsString(&(*cluster_ips)[i]);
      std::string_view f = AsString(&(*families)[i]);
      if (f == "IPv4" && sv::IsIpv6(v)) {
        out.push_back(FieldInvalidString(
            Index("spec.clusterIPs", i), v,
            "expected an IPv4 value as indicated by `ipFamilies[" + std::to_string(i) + "]`"));
      }
      if (f == "IPv6" && !sv::IsIpv6(v)) {
        out.push_back(FieldInvalidString(
            Index("spec.clusterIPs", i), v,
            "expected an IPv6 value as indicated by `ipFamilies[" + std::to_string(i) + "]`"));
      }
    }
  }

  if (type.empty()) {
    out.push_back(FieldRequired("spec.type"));
  } else if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" &&
             type != "ExternalName") {
    out.push_back(FieldNotSupported("spec.type", json::value(type),
                                    {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  }
  std::set<std::string> node_ports;
  std::set<std::string> port_keys;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const json::object* p = AsObject(&(*ports)[i]);
    if (!p) continue;
    std::string pp = Index("spec.ports", i);
    int64_t np = AsInt(Get(*p, "nodePort")).value_or(0);
    std::string_view proto = api::Object::GetString(*p, "protocol");
    if (type == "ClusterIP" && np != 0) {
      out.push_back(
          FieldForbidden(Child(pp, "nodePort"), "may not be used when `type` is 'ClusterIP'"));
    }
    if (np != 0 && !node_ports.insert(std::string(proto) + "/" + std::to_string(np)).second) {
      out.push_back(FieldDuplicate(Child(pp, "nodePort"), json::value(np)));
    }
    int64_t port = AsInt(Get(*p, "port")).value_or(0);
    if (!port_keys.insert(std::string(proto) + "/" + std::to_string(port)).second) {
      out.push_back({"FieldValueDuplicate",
                     "Duplicate value: core.ServicePort{Name:\"\", Protocol:\"" +
                         std::string(proto) +
                         "\", AppProtocol:(*string)(nil), Port:" + std::to_string(port) +
                         ", TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, "
                         "NodePort:0}",
                     pp});
    }
  }
  if (type == "LoadBalancer" && !sv::IsSet(Get(spec, "allocateLoadBalancerNodePorts"))) {
    out.push_back(FieldRequired("allocateLoadBalancerNodePorts"));
  }
  if (sv::IsSet(Get(spec, "allocateLoadBalancerNodePorts")) && type != "LoadBalancer") {
    out.push_back(FieldForbidden("spec.allocateLoadBalancerNodePorts",
                                 "may only be used when `type` is 'LoadBalancer'"));
  }
  bool external = type == "NodePort" || type == "LoadBalancer";
  std::string_view etp = api::Object::GetString(spec, "externalTrafficPolicy");
  if (!external) {
    if (!etp.empty()) {
      out.push_back(FieldInvalidString("spec.externalTrafficPolicy", etp,
                                       "may only be set for externally-accessible services"));
    }
  } else if (etp.empty()) {
    out.push_back(FieldRequired("spec.externalTrafficPolicy"));
  } else if (etp != "Cluster" && etp != "Local") {
    out.push_back(
        FieldNotSupported("spec.externalTrafficPolicy", json::value(etp), {"Cluster", "Local"}));
  }
  const json::value* itp = Get(spec, "internalTrafficPolicy");
  if (!sv::IsSet(itp)) {
    if (type == "NodePort" || type == "LoadBalancer" || type == "ClusterIP") {
      out.push_back(FieldRequired("spec.internalTrafficPolicy"));
    }
  } else if (AsString(itp) != "Cluster" && AsString(itp) != "Local") {
    out.push_back(FieldNotSupported("spec.internalTrafficPolicy", *itp, {"Cluster", "Local"}));
  }
  return out;
}

class ServiceStrategy : public Strategy {
 public:
  using Strategy::Strategy;

  // SetDefaults_Service.
  void Default(api::Object& obj) const override {
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    if (api::Object::GetString(spec, "sessionAffinity").empty()) spec["sessionAffinity"] = "None";
    if (api::Object::GetString(spec, "type").empty()) spec["type"] = "ClusterIP";
    std::string type(api::Object::GetString(spec, "type"));
    if (json::value* ports = spec.if_contains("ports"); ports && ports->is_array()) {
      for (json::value& pv : ports->get_array()) {
        if (!pv.is_object()) continue;
        json::object& p = pv.get_object();
        if (api::Object::GetString(p, "protocol").empty()) p["protocol"] = "TCP";
        const json::value* tp = Get(p, "targetPort");
        bool unset = !sv::IsSet(tp) || (tp->is_string() && tp->get_string().empty()) ||
                     (!tp->is_string() && AsInt(tp).value_or(0) == 0);
        if (unset && Get(p, "port")) p["targetPort"] = *Get(p, "port");
      }
    }
    if ((type == "NodePort" || type == "LoadBalancer") &&
        api::Object::GetString(spec, "externalTrafficPolicy").empty()) {
      spec["externalTrafficPolicy"] = "Cluster";
    }
    if (type != "ExternalName" && !sv::IsSet(Get(spec, "internalTrafficPolicy"))) {
      spec["internalTrafficPolicy"] = "Cluster";
    }
    if (api::Object::GetString(spec, "sessionAffinity") == "ClientIP" &&
        !sv::IsSet(api::Find(spec, {"sessionAffinityConfig", "clientIP", "timeoutSeconds"}))) {
      json::object& cfg = api::EnsureObject(spec, "sessionAffinityConfig");
      api::EnsureObject(cfg, "clientIP")["timeoutSeconds"] = 10800;
    }
    if (type == "LoadBalancer" && !sv::IsSet(Get(spec, "allocateLoadBalancerNodePorts"))) {
      spec["allocateLoadBalancerNodePorts"] = true;
    }
  }

  // Status is cleared; clusterIPs follows clusterIP; a service that gets cluster IPs is
  // single-stack IPv4 unless it says otherwise (what the allocator decides on a one-family
  // cluster). The clusterIP itself is allocated by the storage layer (AllocateClusterIp).
  void PrepareForCreate(api::Object& obj) const override {
    Strategy::PrepareForCreate(obj);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    NormalizeClusterIps(spec, nullptr);
    std::string_view type = api::Object::GetString(spec, "type");
    if (type != "ExternalName") {
      if (!sv::IsSet(Get(spec, "ipFamilyPolicy"))) spec["ipFamilyPolicy"] = "SingleStack";
      const json::array* fams = AsArray(Get(spec, "ipFamilies"));
      if (!fams || fams->empty()) {
        std::string_view ip = api::Object::GetString(spec, "clusterIP");
        spec["ipFamilies"] = json::array{sv::IsIpv6(ip) ? "IPv6" : "IPv4"};
      }
    }
  }

  void PrepareForUpdate(api::Object& obj, const api::Object& old) const override {
    Strategy::PrepareForUpdate(obj, old);
    json::object& spec = api::EnsureObject(obj.mutable_doc(), "spec");
    PatchAllocatedValues(spec, Spec(old));
    NormalizeClusterIps(spec, &Spec(old));
    const json::object& os = Spec(old);
    if (api::Object::GetString(spec, "type") != "ExternalName") {
      if (!sv::IsSet(Get(spec, "ipFamilyPolicy"))) CopyField(spec, os, "ipFamilyPolicy");
      const json::array* fams = AsArray(Get(spec, "ipFamilies"));
      if (!fams || fams->empty()) CopyField(spec, os, "ipFamilies");
    }
  }

  std::vector<StatusCause> Validate(const api::Object& obj) const override {
    return ValidateServiceSpec(obj);
  }

  // validateUpgradeDowngradeClusterIPs, then the whole service.
  std::vector<StatusCause> ValidateUpdate(const api::Object& obj,
                                          const api::Object& old) const override {
    Causes out;
    const json::object& ns = Spec(obj);
    const json::object& os = Spec(old);
    bool external_name = api::Object::GetString(ns, "type") == "ExternalName" ||
                         api::Object::GetString(os, "type") == "ExternalName";
    if (!external_name && !(IsHeadless(ns) && IsHeadless(os))) {
      const json::array* ni = AsArray(Get(ns, "clusterIPs"));
      const json::array* oi = AsArray(Get(os, "clusterIPs"));
      size_t nn = ni ? ni->size() : 0;
      size_t on = oi ? oi->size() : 0;
      std::string rendered = sv::GoStringSlice(Get(ns, "clusterIPs"));
      if (nn == on) {
        for (size_t i = 0; i < on; ++i) {
          if ((*oi)[i] != (*ni)[i]) {
            out.push_back(sv::InvalidRendered(Index("spec.clusterIPs", i), rendered,
                                              "may not change once set"));
          }
        }
      } else if (on > nn) {
        if (nn == 0) {
          out.push_back(sv::InvalidRendered("spec.clusterIPs[0]", rendered,
                                            "primary clusterIP can not be unset"));
        } else if ((*ni)[0] != (*oi)[0]) {
          out.push_back(
              sv::InvalidRendered("spec.clusterIPs[0]", rendered, "may not change once set"));
        }
        if (nn == 1 && api::Object::GetString(ns, "ipFamilyPolicy") != "SingleStack") {
          out.push_back(sv::InvalidRendered("spec.clusterIPs[0]", rendered,
                                            "`ipFamilyPolicy` must be set to 'SingleStack' when "
                                            "releasing the secondary clusterIP"));
        }
      } else if (on > 0 && (*ni)[0] != (*oi)[0]) {
        out.push_back(
            sv::InvalidRendered("spec.clusterIPs[0]", rendered, "may not change once set"));
      }
    }
    sv::Append(out, ValidateServiceSpec(obj));
    return out;
  }
  NameRule name_rule() const override { return NameRule::kDns1035Label; }
};

}  // namespace

std::optional<std::string> AllocateClusterIp(const std::set<std::string>& used,
                                             std::string_view cidr) {
  size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string base(cidr.substr(0, slash));
  int bits = -1;
  auto [p, ec] = std::from_chars(cidr.data() + slash + 1, cidr.data() + cidr.size(), bits);
  if (ec != std::errc() || p != cidr.data() + cidr.size() || bits < 8 || bits > 30) {
    return std::nullopt;
  }
  in_addr addr{};
  if (inet_pton(AF_INET, base.c_str(), &addr) != 1) return std::nullopt;
  uint32_t network = ntohl(addr.s_addr) & (bits == 0 ? 0 : ~((1u << (32 - bits)) - 1));
  uint32_t size = 1u << (32 - bits);
  std::set<uint32_t> taken;
  for (const std::string& u : used) {
    in_addr a{};
    if (inet_pton(AF_INET, u.c_str(), &a) == 1) taken.insert(ntohl(a.s_addr));
  }
  for (uint32_t off = 1; off + 1 < size; ++off) {
    uint32_t candidate = network + off;
    if (taken.count(candidate)) continue;
    in_addr out{};
    out.s_addr = htonl(candidate);
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &out, buf, sizeof(buf));
    return std::string(buf);
  }
  return std::nullopt;
}

bool ServiceNeedsClusterIp(const api::Object& svc) {
  const json::object& spec = Spec(svc);
  return api::Object::GetString(spec, "type") != "ExternalName" && !IsHeadless(spec) &&
         api::Object::GetString(spec, "clusterIP").empty();
}

void AssignClusterIp(api::Object& svc, std::string_view ip) {
  json::object& spec = api::EnsureObject(svc.mutable_doc(), "spec");
  spec["clusterIP"] = ip;
  spec["clusterIPs"] = json::array{json::string(ip)};
}

std::shared_ptr<const Strategy> MakeCoreServiceStrategy(ResourceInfoPtr info) {
  if (!info->gvr.group.empty() || info->gvr.resource != "services") return nullptr;
  return std::make_shared<ServiceStrategy>(std::move(info));
}

}  // namespace converge::apiserver
