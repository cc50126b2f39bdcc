// core/v1 printers other than Pod: nodes, namespaces, events (also served as
// events.k8s.io/v1), services, endpoints, configmaps, secrets, serviceaccounts and PVCs.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "apiserver/printers.h"
#include "apiserver/strategy_util.h"

namespace converge::apiserver::printers {

namespace {

// --- Node ------------------------------------------------------------------------------------

constexpr std::string_view kNodeRolePrefix = "node-role.kubernetes.io/";
constexpr std::string_view kNodeRoleLabel = "kubernetes.io/role";

std::string NodeStatus(const api::Object& node) {
  // Only the Ready condition is summarised; the last one of that type wins, as upstream's map does.
  std::vector<std::string> status;
  const json::object* ready = nullptr;
  for (const json::object* c : Objects(Sub(node.doc(), "status"), "conditions")) {
    if (Str(*c, "type") == "Ready") ready = c;
  }
  if (ready) {
    status.push_back(Str(*ready, "status") == "True" ? "Ready" : "NotReady");
  } else {
    status.push_back("Unknown");
  }
  if (Bool(Sub(node.doc(), "spec"), "unschedulable")) status.push_back("SchedulingDisabled");
  return Join(status, ",");
}

std::string NodeRoles(const api::Object& node) {
  std::set<std::string> roles;
  if (const json::object* labels = api::FindObject(node.doc(), {"metadata", "labels"})) {
    for (const auto& [key, value] : *labels) {
      std::string_view k = key;
      std::string_view v = value.is_string() ? std::string_view(value.get_string()) : "";
      if (k.starts_with(kNodeRolePrefix)) {
        if (k.size() > kNodeRolePrefix.size()) roles.emplace(k.substr(kNodeRolePrefix.size()));
      } else if (k == kNodeRoleLabel && !v.empty()) {
        roles.emplace(v);
      }
    }
  }
  return OrNone(Join(std::vector<std::string>(roles.begin(), roles.end()), ","));
}

std::string NodeAddress(const api::Object& node, std::string_view type) {
  for (const json::object* a : Objects(Sub(node.doc(), "status"), "addresses")) {
    if (Str(*a, "type") == type) return std::string(Str(*a, "address"));
  }
  return "<none>";
}

std::string OrUnknown(std::string_view s) {
  return s.empty() ? "<unknown>" : std::string(s);
}

json::array NodeCells(const api::Object& node, TimePoint now) {
  const json::object& info = Sub(Sub(node.doc(), "status"), "nodeInfo");
  json::array cells;
  cells.emplace_back(node.name());
  cells.emplace_back(NodeStatus(node));
  cells.emplace_back(NodeRoles(node));
  cells.emplace_back(AgeOf(node, now));
  cells.emplace_back(Str(info, "kubeletVersion"));
  cells.emplace_back(NodeAddress(node, "InternalIP"));
  cells.emplace_back(NodeAddress(node, "ExternalIP"));
  cells.emplace_back(OrUnknown(Str(info, "osImage")));
  cells.emplace_back(OrUnknown(Str(info, "kernelVersion")));
  cells.emplace_back(OrUnknown(Str(info, "containerRuntimeVersion")));
  return cells;
}

// --- Event -----------------------------------------------------------------------------------

// The fields the Event printer reads, from either the core/v1 shape or the events.k8s.io/v1 one
// (regarding/note/deprecated*), since both resources share one store.
struct EventView {
  const json::object* involved = nullptr;
  std::string_view message, first, last, event_time, component, host;
  std::string_view reporting_controller, reporting_instance;
  int64_t count = 0;
  const json::object* series = nullptr;
};

EventView ViewEvent(const json::object& e) {
  EventView v;
  const bool core = e.contains("involvedObject") || !e.contains("regarding");
  v.involved = &Sub(e, core ? "involvedObject" : "regarding");
  v.message = Str(e, core ? "message" : "note");
  v.first = Str(e, core ? "firstTimestamp" : "deprecatedFirstTimestamp");
  v.last = Str(e, core ? "lastTimestamp" : "deprecatedLastTimestamp");
  v.count = Int(e, core ? "count" : "deprecatedCount");
  const json::object& source = Sub(e, core ? "source" : "deprecatedSource");
  v.component = Str(source, "component");
  v.host = Str(source, "host");
  v.event_time = Str(e, "eventTime");
  v.reporting_controller = Str(e, core ? "reportingComponent" : "reportingController");
  v.reporting_instance = Str(e, "reportingInstance");
  if (Has(e, "series")) v.series = &Sub(e, "series");
  return v;
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

json::array EventCells(const api::Object& event, TimePoint now) {
  const EventView e = ViewEvent(event.doc());
  std::string first =
      e.first.empty() ? TimestampSince(e.event_time, now) : TimestampSince(e.first, now);
  std::string last = e.last.empty() ? first : TimestampSince(e.last, now);
  int64_t count = e.count;
  if (e.series) {
    last = TimestampSince(Str(*e.series, "lastObservedTime"), now);
    count = Int(*e.series, "count");
  } else if (count == 0) {
    count = 1;  // singleton events of the new API carry no count
  }
  std::string target = Lower(Str(*e.involved, "kind"));
  if (!Str(*e.involved, "name").empty()) target += "/" + std::string(Str(*e.involved, "name"));
  // "component, host", each falling back to the reporting controller / instance.
  std::string source(e.component.empty() ? e.reporting_controller : e.component);
  std::string_view host = e.host.empty() ? e.reporting_instance : e.host;
  if (!host.empty()) source += ", " + std::string(host);

  json::array cells;
  cells.emplace_back(last);
  cells.emplace_back(Str(event.doc(), "type"));
  cells.emplace_back(Str(event.doc(), "reason"));
  cells.emplace_back(target);
  cells.emplace_back(Str(*e.involved, "fieldPath"));
  cells.emplace_back(source);
  cells.emplace_back(TrimSpace(e.message));
  cells.emplace_back(first);
  cells.emplace_back(count);
  cells.emplace_back(event.name());
  return cells;
}

TablePrinter EventPrinter() {
  TableColumn name = NameColumn();
  name.priority = 1;
  return MakePrinter(
      {
          Column("Last Seen", "string", "Time since the event was last observed."),
          Column("Type", "string", "Normal or Warning."),
          Column("Reason", "string", "Why the event happened, in CamelCase."),
          Column("Object", "string", "The object the event is about, as kind/name."),
          Column("Subobject", "string", "The part of the object (e.g. a container).", 1),
          Column("Source", "string", "The component (and host) that reported the event.", 1),
          Column("Message", "string", "What happened, for humans."),
          Column("First Seen", "string", "Time since the event was first observed.", 1),
          Column("Count", "string", "How many times the event has occurred.", 1),
          name,
      },
      EventCells);
}

// --- Service and Endpoints ---------------------------------------------------------------------

std::vector<std::string> Strings(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const json::array* a = api::FindArray(o, {key})) {
    for (const json::value& v : *a) {
      if (v.is_string()) out.emplace_back(v.get_string());
    }
  }
  return out;
}

std::string ServiceType(const json::object& spec) {
  std::string_view t = Str(spec, "type");
  return t.empty() ? "ClusterIP" : std::string(t);
}

// Load-balancer ingress points: IPs, else hostnames; sorted and unique.
std::string LoadBalancerIngress(const json::object& service_status) {
  std::set<std::string> points;
  for (const json::object* in : Objects(Sub(service_status, "loadBalancer"), "ingress")) {
    if (!Str(*in, "ip").empty()) {
      points.emplace(Str(*in, "ip"));
    } else if (!Str(*in, "hostname").empty()) {
      points.emplace(Str(*in, "hostname"));
    }
  }
  return Join(std::vector<std::string>(points.begin(), points.end()), ",");
}

std::string ServiceExternalIP(const api::Object& svc) {
  const json::object& spec = Sub(svc.doc(), "spec");
  const std::vector<std::string> external = Strings(spec, "externalIPs");
  const std::string type = ServiceType(spec);
  if (type == "ClusterIP" || type == "NodePort") {
    return external.empty() ? "<none>" : Join(external, ",");
  }
  if (type == "LoadBalancer") {
    // The server prints wide, so the ingress list is never clipped.
    std::string lb = LoadBalancerIngress(Sub(svc.doc(), "status"));
    if (!external.empty()) {
      return lb.empty() ? Join(external, ",") : lb + "," + Join(external, ",");
    }
    return lb.empty() ? "<pending>" : lb;
  }
  if (type == "ExternalName") return std::string(Str(spec, "externalName"));
  return "<unknown>";
}

std::string ServicePorts(const json::object& spec) {
  std::vector<std::string> pieces;
  for (const json::object* p : Objects(spec, "ports")) {
    std::string_view protocol = Str(*p, "protocol");
    if (protocol.empty()) protocol = "TCP";
    std::string piece = std::to_string(Int(*p, "port"));
    if (int64_t node_port = Int(*p, "nodePort"); node_port > 0) {
      piece += ":" + std::to_string(node_port);
    }
    pieces.push_back(piece + "/" + std::string(protocol));
  }
  return OrNone(Join(pieces, ","));
}

json::array ServiceCells(const api::Object& svc, TimePoint now) {
  const json::object& spec = Sub(svc.doc(), "spec");
  // v1 → internal conversion fills clusterIPs from clusterIP when only the latter is set.
  std::vector<std::string> cluster_ips = Strings(spec, "clusterIPs");
  std::string cluster_ip =
      cluster_ips.empty() ? std::string(Str(spec, "clusterIP")) : cluster_ips.front();
  json::array cells;
  cells.emplace_back(svc.name());
  cells.emplace_back(ServiceType(spec));
  cells.emplace_back(OrNone(cluster_ip));
  cells.emplace_back(ServiceExternalIP(svc));
  cells.emplace_back(ServicePorts(spec));
  cells.emplace_back(AgeOf(svc, now));
  cells.emplace_back(FormatLabels(Sub(spec, "selector")));
  return cells;
}

std::string JoinHostPort(std::string_view host, int64_t port) {
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return h + ":" + std::to_string(port);
}

// Up to three "ip:port" endpoints, then " + N more...".
std::string FormatEndpoints(const api::Object& ep) {
  const std::vector<const json::object*> subsets = Objects(ep.doc(), "subsets");
  if (subsets.empty()) return "<none>";
  constexpr size_t kMax = 3;
  std::vector<std::string> list;
  bool more = false;
  int64_t count = 0;
  for (const json::object* ss : subsets) {
    const std::vector<const json::object*> addresses = Objects(*ss, "addresses");
    const std::vector<const json::object*> ports = Objects(*ss, "ports");
    if (ports.empty()) {  // headless services may have no ports
      count += static_cast<int64_t>(addresses.size());
      for (const json::object* a : addresses) {
        if (list.size() == kMax) {
          more = true;
          break;
        }
        list.emplace_back(Str(*a, "ip"));
      }
      continue;
    }
    for (const json::object* port : ports) {
      count += static_cast<int64_t>(addresses.size());
      for (const json::object* a : addresses) {
        if (list.size() == kMax) {
          more = true;
          break;
        }
        list.push_back(JoinHostPort(Str(*a, "ip"), Int(*port, "port")));
      }
    }
  }
  std::string out = Join(list, ",");
  if (more) out += " + " + std::to_string(count - static_cast<int64_t>(kMax)) + " more...";
  return out;
}

// --- PersistentVolumeClaim ---------------------------------------------------------------------

std::string AccessModes(const json::object& status) {
  const std::vector<std::string> modes = Strings(status, "accessModes");
  auto has = [&](std::string_view m) {
    return std::find(modes.begin(), modes.end(), m) != modes.end();
  };
  std::vector<std::string> out;
  if (has("ReadWriteOnce")) out.push_back("RWO");
  if (has("ReadOnlyMany")) out.push_back("ROX");
  if (has("ReadWriteMany")) out.push_back("RWX");
  if (has("ReadWriteOncePod")) out.push_back("RWOP");
  return Join(out, ",");
}

// Quantity.String() of o[key]: canonical ("1024Mi" → "1Gi"), "0" when absent, as stored when
// unparsable.
std::string CanonicalQuantity(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end()) return "0";
  if (auto q = sv::Quantity::FromJson(it->value())) return q->String();
  return std::string(Str(o, key));
}

json::array PvcCells(const api::Object& pvc, TimePoint now) {
  const json::object& spec = Sub(pvc.doc(), "spec");
  const json::object& status = Sub(pvc.doc(), "status");
  std::string phase = pvc.being_deleted() ? "Terminating" : std::string(Str(status, "phase"));
  std::string capacity, modes;
  if (!Str(spec, "volumeName").empty()) {
    capacity = CanonicalQuantity(Sub(status, "capacity"), "storage");
    modes = AccessModes(status);
  }
  // The beta annotation still wins over spec.storageClassName.
  std::string storage_class(Str(spec, "storageClassName"));
  if (auto a = pvc.annotation("volume.beta.kubernetes.io/storage-class")) storage_class = *a;
  std::string_view vac = Str(spec, "volumeAttributesClassName");
  std::string_view mode = Str(spec, "volumeMode");
  json::array cells;
  cells.emplace_back(pvc.name());
  cells.emplace_back(phase);
  cells.emplace_back(Str(spec, "volumeName"));
  cells.emplace_back(capacity);
  cells.emplace_back(modes);
  cells.emplace_back(storage_class);
  cells.emplace_back(Has(spec, "volumeAttributesClassName") ? std::string(vac) : "<unset>");
  cells.emplace_back(AgeOf(pvc, now));
  cells.emplace_back(Has(spec, "volumeMode") ? std::string(mode) : "<unset>");
  return cells;
}

// --- Small kinds -------------------------------------------------------------------------------

// Name, one computed cell, Age.
TablePrinter NameValueAge(TableColumn value,
                          std::function<json::value(const api::Object&)> compute) {
  return MakePrinter({NameColumn(), std::move(value), AgeColumn()},
                     [compute = std::move(compute)](const api::Object& obj, TimePoint now) {
                       json::array cells;
                       cells.emplace_back(obj.name());
                       cells.push_back(compute(obj));
                       cells.emplace_back(AgeOf(obj, now));
                       return cells;
                     });
}

int64_t SecretDataCount(const api::Object& secret) {
  // stringData is merged into data on write; count the union in case a stored object kept both.
  std::set<std::string_view> keys;
  for (const char* field : {"data", "stringData"}) {
    for (const auto& kv : Sub(secret.doc(), field)) keys.insert(kv.key());
  }
  return static_cast<int64_t>(keys.size());
}

}  // namespace

void AddCorePrinters(PrinterMap& map) {
  map[{"", "nodes"}] = MakePrinter(
      {
          NameColumn(),
          Column("Status", "string", "Ready/NotReady/Unknown, and SchedulingDisabled if cordoned."),
          Column("Roles", "string", "Roles from node-role.kubernetes.io/<role> labels."),
          AgeColumn(),
          Column("Version", "string", "The kubelet's version."),
          Column("Internal-IP", "string", "The node's first InternalIP address.", 1),
          Column("External-IP", "string", "The node's first ExternalIP address.", 1),
          Column("OS-Image", "string", "The operating system image.", 1),
          Column("Kernel-Version", "string", "The kernel version.", 1),
          Column("Container-Runtime", "string", "The container runtime and its version.", 1),
      },
      NodeCells);

  map[{"", "namespaces"}] = NameValueAge(Column("Status", "string", "Active or Terminating."),
                                         [](const api::Object& o) -> json::value {
                                           // Namespaces are created Active; print that for one
                                           // stored without a phase.
                                           std::string_view phase =
                                               Str(Sub(o.doc(), "status"), "phase");
                                           return json::string(phase.empty() ? "Active" : phase);
                                         });

  map[{"", "events"}] = EventPrinter();
  map[{"events.k8s.io", "events"}] = EventPrinter();

  map[{"", "services"}] = MakePrinter(
      {
          NameColumn(),
          Column("Type", "string", "ClusterIP, NodePort, LoadBalancer or ExternalName."),
          Column("Cluster-IP", "string", "The service's virtual IP."),
          Column("External-IP", "string", "Load-balancer ingress and external IPs."),
          Column("Port(s)", "string", "port[:nodePort]/protocol for each port."),
          AgeColumn(),
          Column("Selector", "string", "The pods the service routes to.", 1),
      },
      ServiceCells);

  map[{"", "endpoints"}] = NameValueAge(
      Column("Endpoints", "string", "Ready addresses, ip:port, first three."),
      [](const api::Object& o) -> json::value { return json::string(FormatEndpoints(o)); });

  map[{"", "configmaps"}] =
      NameValueAge(Column("Data", "string", "Number of data and binaryData entries."),
                   [](const api::Object& o) -> json::value {
                     return Count(o.doc(), "data") + Count(o.doc(), "binaryData");
                   });

  map[{"", "secrets"}] =
      MakePrinter({NameColumn(), Column("Type", "string", "The secret's type."),
                   Column("Data", "string", "Number of data entries."), AgeColumn()},
                  [](const api::Object& o, TimePoint now) {
                    std::string_view type = Str(o.doc(), "type");
                    json::array cells;
                    cells.emplace_back(o.name());
                    cells.emplace_back(type.empty() ? "Opaque" : type);
                    cells.emplace_back(SecretDataCount(o));
                    cells.emplace_back(AgeOf(o, now));
                    return cells;
                  });

  map[{"", "serviceaccounts"}] =
      NameValueAge(Column("Secrets", "string", "Number of secrets listed on the account."),
                   [](const api::Object& o) -> json::value { return Count(o.doc(), "secrets"); });

  map[{"", "persistentvolumeclaims"}] = MakePrinter(
      {
          NameColumn(),
          Column("Status", "string", "Pending, Bound, Lost or Terminating."),
          Column("Volume", "string", "The bound persistent volume."),
          Column("Capacity", "string", "The bound volume's capacity."),
          Column("Access Modes", "string", "The bound volume's access modes."),
          Column("StorageClass", "string", "The claim's storage class."),
          Column("VolumeAttributesClass", "string", "The claim's volume attributes class."),
          AgeColumn(),
          Column("VolumeMode", "string", "Filesystem or Block.", 1),
      },
      PvcCells);
}

}  // namespace converge::apiserver::printers
