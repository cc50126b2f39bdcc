#include "controllers/endpoint/decide.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "controllers/common/pod_util.h"

namespace converge::controllers::endpoint {

namespace json = boost::json;

namespace {

api::ObjectView Selector(const api::Object& svc) {
  return api::FindObject(svc.view(), {"spec", "selector"});
}

std::string_view Str(api::ObjectView o, std::string_view key) {
  return api::GetString(o, key);
}

// The port of `pod` that the Service port `sp` sends to; nullopt when a named targetPort is not
// among the pod's container ports.
std::optional<int64_t> TargetPort(api::ObjectView sp, const api::Object& pod) {
  const api::View target = sp.if_contains("targetPort");
  if (!target || target->is_null()) return sp.if_contains("port").if_int64();
  if (target->is_int64()) return target->get_int64();
  if (!target->is_string()) return std::nullopt;
  const std::string_view name = target->get_string();
  const std::string_view protocol = Str(sp, "protocol").empty() ? "TCP" : Str(sp, "protocol");
  api::ArrayView containers = api::FindArray(pod.view(), {"spec", "containers"});
  if (!containers) return std::nullopt;
  for (const api::View c : *containers) {
    for (const api::View p : c.if_object().if_contains("ports").if_array()) {
      if (!p.is_object()) continue;
      const api::ObjectView cp = p.get_object();
      const std::string_view cp_protocol =
          Str(cp, "protocol").empty() ? "TCP" : Str(cp, "protocol");
      const std::optional<int64_t> number = cp.if_contains("containerPort").if_int64();
      if (Str(cp, "name") == name && cp_protocol == protocol && number) return number;
    }
  }
  return std::nullopt;
}

bool Headless(const api::Object& svc) {
  return api::FindString(svc.view(), {"spec", "clusterIP"}) == "None";
}

// Upstream's ShouldPodBeInEndpoints: an IP, not terminal, and not being deleted (unless the
// Service publishes not-ready addresses, which includes terminating pods).
bool Eligible(const api::Object& pod, bool include_terminating) {
  if (api::FindString(pod.view(), {"status", "podIP"}).empty()) return false;
  const std::string_view phase = PodPhase(pod);
  if (phase == "Succeeded" || phase == "Failed") return false;
  return include_terminating || !pod.being_deleted();
}

json::object Address(const api::Object& svc, const api::Object& pod) {
  json::object a{{"ip", api::FindString(pod.view(), {"status", "podIP"})}};
  const std::string_view node = api::FindString(pod.view(), {"spec", "nodeName"});
  if (!node.empty()) a["nodeName"] = node;
  const std::string_view hostname = api::FindString(pod.view(), {"spec", "hostname"});
  if (!hostname.empty() && Headless(svc) &&
      api::FindString(pod.view(), {"spec", "subdomain"}) == svc.name()) {
    a["hostname"] = hostname;
  }
  a["targetRef"] = json::object{
      {"kind", "Pod"}, {"namespace", pod.namespace_()}, {"name", pod.name()}, {"uid", pod.uid()}};
  return a;
}

// A port's identity for grouping and ordering.
using PortKey = std::tuple<std::string, int64_t, std::string, std::string>;  // name, port, ...

}  // namespace

bool HasSelector(const api::Object& svc) {
  const api::ObjectView s = Selector(svc);
  return s && !s->empty();
}

bool Selects(const api::Object& svc, const api::Object& pod) {
  const api::ObjectView s = Selector(svc);
  if (!s || s->empty() || pod.namespace_() != svc.namespace_()) return false;
  const api::ObjectView labels = pod.labels();
  if (!labels) return false;
  for (const auto& [k, v] : *s) {
    if (!(labels.if_contains(k) == v)) return false;
  }
  return true;
}

json::array Subsets(const api::Object& svc, const std::vector<api::ObjectPtr>& pods) {
  const bool publish_not_ready = api::FindBool(svc.view(), {"spec", "publishNotReadyAddresses"});
  api::ArrayView service_ports = api::FindArray(svc.view(), {"spec", "ports"});
  // Each eligible pod's address, readiness and resolved ports; then grouped by the port set.
  struct Entry {
    std::string ip;
    json::object address;
    bool ready;
  };
  std::map<std::set<PortKey>, std::vector<Entry>> by_ports;
  for (const api::ObjectPtr& pod : pods) {
    if (!Selects(svc, *pod) || !Eligible(*pod, publish_not_ready)) continue;
    std::set<PortKey> ports;
    if (service_ports) {
      for (const api::View v : *service_ports) {
        if (!v.is_object()) continue;
        const api::ObjectView sp = v.get_object();
        std::optional<int64_t> port = TargetPort(sp, *pod);
        if (!port) continue;
        ports.emplace(std::string(Str(sp, "name")), *port,
                      Str(sp, "protocol").empty() ? "TCP" : std::string(Str(sp, "protocol")),
                      std::string(Str(sp, "appProtocol")));
      }
    }
    if (ports.empty()) continue;
    by_ports[ports].push_back({std::string(api::FindString(pod->view(), {"status", "podIP"})),
                               Address(svc, *pod), publish_not_ready || IsPodReady(*pod)});
  }
  std::vector<std::pair<std::string, json::object>> subsets;  // (first IP, subset)
  for (auto& [ports, entries] : by_ports) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.ip < b.ip; });
    json::array ready, not_ready;
    for (Entry& e : entries) (e.ready ? ready : not_ready).push_back(std::move(e.address));
    json::array port_list;
    for (const auto& [name, number, protocol, app_protocol] : ports) {
      json::object p;
      if (!name.empty()) p["name"] = name;
      p["port"] = number;
      p["protocol"] = protocol;
      if (!app_protocol.empty()) p["appProtocol"] = app_protocol;
      port_list.push_back(std::move(p));
    }
    json::object subset;
    if (!ready.empty()) subset["addresses"] = std::move(ready);
    if (!not_ready.empty()) subset["notReadyAddresses"] = std::move(not_ready);
    subset["ports"] = std::move(port_list);
    subsets.emplace_back(entries.front().ip, std::move(subset));
  }
  std::sort(subsets.begin(), subsets.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  json::array out;
  for (auto& [ip, subset] : subsets) out.push_back(std::move(subset));
  return out;
}

std::optional<api::Object> DesiredEndpoints(const api::Object& svc, const api::Object* current,
                                            const std::vector<api::ObjectPtr>& pods) {
  json::array subsets = Subsets(svc, pods);
  json::object labels;
  if (const api::ObjectView l = svc.labels()) labels = api::ToJson(l);
  if (Headless(svc)) labels["service.kubernetes.io/headless"] = "";
  if (current) {
    const json::value* have = current->doc().if_contains("subsets");
    const bool same_subsets =
        have ? (have->is_array() && have->get_array() == subsets) : subsets.empty();
    const api::ObjectView have_labels = current->labels();
    const bool same_labels = have_labels ? have_labels == api::ObjectView(labels) : labels.empty();
    if (same_subsets && same_labels) return std::nullopt;
  }
  api::Object eps;
  if (current) {
    eps = *current;
  } else {
    eps.SetGvk({"", "v1", "Endpoints"});
    eps.set_namespace(std::string(svc.namespace_()));
    eps.set_name(std::string(svc.name()));
  }
  json::object& meta = eps.mutable_metadata();
  if (labels.empty()) {
    meta.erase("labels");
  } else {
    meta["labels"] = std::move(labels);
  }
  if (subsets.empty()) {
    eps.mutable_doc().erase("subsets");
  } else {
    eps.mutable_doc()["subsets"] = std::move(subsets);
  }
  return eps;
}

}  // namespace converge::controllers::endpoint
