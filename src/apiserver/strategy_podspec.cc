#include "apiserver/strategy_podspec.h"

#include <map>
#include <set>

#include "api/labels.h"
#include "api/object.h"
#include "apiserver/strategy.h"

namespace converge::apiserver {

namespace json = boost::json;
using sv::AsArray;
using sv::AsInt;
using sv::AsObject;
using sv::AsString;
using sv::Causes;
using sv::Child;
using sv::Get;
using sv::Index;
using sv::Key;

namespace {

void SetIfMissing(json::object& o, std::string_view key, json::value v) {
  auto it = o.find(key);
  if (it == o.end() || it->value().is_null() ||
      (it->value().is_string() && it->value().get_string().empty())) {
    o[key] = std::move(v);
  }
}

json::object* MutableObject(json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_object() ? &it->value().get_object() : nullptr;
}

json::array* MutableArray(json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_array() ? &it->value().get_array() : nullptr;
}

StatusCause NotFound(std::string field, std::string_view value) {
  return {"FieldValueNotFound", "Not found: \"" + std::string(value) + "\"", std::move(field)};
}

// ---- Defaults ----

void DefaultHttpGet(json::object& handler) {
  if (json::object* http = MutableObject(handler, "httpGet")) {
    SetIfMissing(*http, "path", "/");
    SetIfMissing(*http, "scheme", "HTTP");
  }
}

void DefaultProbe(json::object& c, std::string_view key) {
  json::object* p = MutableObject(c, key);
  if (!p) return;
  for (auto [field, value] : {std::pair<std::string_view, int64_t>{"timeoutSeconds", 1},
                              {"periodSeconds", 10},
                              {"successThreshold", 1},
                              {"failureThreshold", 3}}) {
    auto it = p->find(field);
    if (it == p->end() || it->value().is_null() || AsInt(&it->value()) == 0) (*p)[field] = value;
  }
  DefaultHttpGet(*p);
}

void DefaultContainer(json::object& c, bool host_network) {
  SetIfMissing(c, "imagePullPolicy", json::string(DefaultPullPolicy(AsString(Get(c, "image")))));
  SetIfMissing(c, "terminationMessagePath", "/dev/termination-log");
  SetIfMissing(c, "terminationMessagePolicy", "File");
  if (json::array* ports = MutableArray(c, "ports")) {
    for (json::value& pv : *ports) {
      if (!pv.is_object()) continue;
      json::object& p = pv.get_object();
      SetIfMissing(p, "protocol", "TCP");
      if (host_network && AsInt(Get(p, "hostPort")).value_or(0) == 0 && Get(p, "containerPort")) {
        p["hostPort"] = *Get(p, "containerPort");
      }
    }
  }
  DefaultProbe(c, "livenessProbe");
  DefaultProbe(c, "readinessProbe");
  DefaultProbe(c, "startupProbe");
  if (json::object* lc = MutableObject(c, "lifecycle")) {
    if (json::object* h = MutableObject(*lc, "postStart")) DefaultHttpGet(*h);
    if (json::object* h = MutableObject(*lc, "preStop")) DefaultHttpGet(*h);
  }
  if (json::array* env = MutableArray(c, "env")) {
    for (json::value& ev : *env) {
      if (!ev.is_object()) continue;
      if (json::object* from = MutableObject(ev.get_object(), "valueFrom")) {
        if (json::object* ref = MutableObject(*from, "fieldRef")) {
          SetIfMissing(*ref, "apiVersion", "v1");
        }
      }
    }
  }
}

// Kinds of volume source, in the order validateVolumeSource checks them, with the path upstream
// names in "may not specify more than 1 volume type" (two are misspelled upstream).
struct VolumeType {
  std::string_view key;
  std::string_view forbidden_path;
};
constexpr VolumeType kVolumeTypes[] = {
    {"emptyDir", "emptyDir"},
    {"hostPath", "hostPath"},
    {"gitRepo", "gitRepo"},
    {"gcePersistentDisk", "gcePersistentDisk"},
    {"awsElasticBlockStore", "awsElasticBlockStore"},
    {"secret", "secret"},
    {"nfs", "nfs"},
    {"iscsi", "iscsi"},
    {"glusterfs", "glusterfs"},
    {"flocker", "flocker"},
    {"persistentVolumeClaim", "persistentVolumeClaim"},
    {"rbd", "rbd"},
    {"cinder", "cinder"},
    {"cephfs", "cephFS"},
    {"quobyte", "quobyte"},
    {"downwardAPI", "downwarAPI"},
    {"fc", "fc"},
    {"flexVolume", "flexVolume"},
    {"configMap", "configMap"},
    {"azureFile", "azureFile"},
    {"vsphereVolume", "vsphereVolume"},
    {"photonPersistentDisk", "photonPersistentDisk"},
    {"portworxVolume", "portworxVolume"},
    {"azureDisk", "azureDisk"},
    {"storageos", "storageos"},
    {"projected", "projected"},
    {"scaleIO", "scaleIO"},
    {"csi", "csi"},
    {"ephemeral", "ephemeral"},
    {"image", "image"},
};

void DefaultVolume(json::object& v) {
  bool any = false;
  for (const VolumeType& t : kVolumeTypes) {
    if (sv::IsSet(Get(v, t.key))) any = true;
  }
  if (!any) v["emptyDir"] = json::object();
  for (std::string_view k : {"secret", "configMap", "downwardAPI", "projected"}) {
    if (json::object* src = MutableObject(v, k)) {
      if (!sv::IsSet(Get(*src, "defaultMode"))) (*src)["defaultMode"] = 420;
    }
  }
  if (json::object* hp = MutableObject(v, "hostPath")) {
    if (!Get(*hp, "type")) (*hp)["type"] = "";
  }
}

void DefaultRequestsFromLimits(json::object& c) {
  json::object* res = MutableObject(c, "resources");
  if (!res) return;
  json::object* limits = MutableObject(*res, "limits");
  if (!limits) return;
  json::object& requests = api::EnsureObject(*res, "requests");
  for (const auto& [k, v] : *limits) {
    if (requests.find(k) == requests.end()) requests[k] = v;
  }
}

}  // namespace

std::string DefaultPullPolicy(std::string_view image) {
  if (image.empty()) return "IfNotPresent";
  std::string_view name = image;
  bool digest = false;
  if (size_t at = name.find('@'); at != std::string_view::npos) {
    digest = true;
    name = name.substr(0, at);
  }
  std::string_view tag;
  size_t slash = name.rfind('/');
  size_t colon = name.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    tag = name.substr(colon + 1);
  }
  if (tag.empty() && !digest) tag = "latest";
  return tag == "latest" ? "Always" : "IfNotPresent";
}

void DefaultPodSpec(json::object& spec, bool for_pod) {
  SetIfMissing(spec, "dnsPolicy", "ClusterFirst");
  SetIfMissing(spec, "restartPolicy", "Always");
  if (!sv::IsSet(Get(spec, "securityContext"))) spec["securityContext"] = json::object();
  if (!sv::IsSet(Get(spec, "terminationGracePeriodSeconds"))) {
    spec["terminationGracePeriodSeconds"] = 30;
  }
  SetIfMissing(spec, "schedulerName", "default-scheduler");
  bool host_network = for_pod && api::FindBool(spec, {"hostNetwork"});
  for (std::string_view list : {"containers", "initContainers", "ephemeralContainers"}) {
    json::array* cs = MutableArray(spec, list);
    if (!cs) continue;
    for (json::value& cv : *cs) {
      if (!cv.is_object()) continue;
      DefaultContainer(cv.get_object(), host_network && list != "ephemeralContainers");
      if (for_pod && list != "ephemeralContainers") DefaultRequestsFromLimits(cv.get_object());
    }
  }
  if (json::array* vols = MutableArray(spec, "volumes")) {
    for (json::value& v : *vols) {
      if (v.is_object()) DefaultVolume(v.get_object());
    }
  }
  if (for_pod && !sv::IsSet(Get(spec, "enableServiceLinks"))) spec["enableServiceLinks"] = true;
}

void DefaultPodTemplateAt(json::object& obj, std::string_view key) {
  json::object* tmpl = MutableObject(obj, key);
  if (!tmpl) return;
  json::object& spec = api::EnsureObject(*tmpl, "spec");
  DefaultPodSpec(spec, /*for_pod=*/false);
}

// ---- Validation ----

namespace {

struct SpecContext {
  std::set<std::string> volumes;
  const json::value* grace_period = nullptr;
  std::string_view restart_policy;
};

Causes ValidateVolumes(const json::array* vols, const std::string& path,
                       std::set<std::string>& names) {
  Causes out;
  for (size_t i = 0; vols && i < vols->size(); ++i) {
    std::string ip = Index(path, i);
    const json::object* v = AsObject(&(*vols)[i]);
    if (!v) continue;
    Causes el;
    int types = 0;
    for (const VolumeType& t : kVolumeTypes) {
      const json::object* src = AsObject(Get(*v, t.key));
      if (!src) continue;
      if (types > 0) {
        el.push_back(
            FieldForbidden(Child(ip, t.forbidden_path), "may not specify more than 1 volume type"));
        continue;
      }
      ++types;
      std::string sp = Child(ip, t.key);
      auto required = [&](std::string_view f) {
        if (api::Object::GetString(*src, f).empty()) el.push_back(FieldRequired(Child(sp, f)));
      };
      if (t.key == "hostPath") required("path");
      if (t.key == "secret") required("secretName");
      if (t.key == "configMap") required("name");
      if (t.key == "persistentVolumeClaim") required("claimName");
      if (t.key == "nfs") {
        required("server");
        required("path");
      }
      if (std::optional<int64_t> mode = AsInt(Get(*src, "defaultMode"));
          mode && (*mode < 0 || *mode > 0777)) {
        el.push_back(sv::InvalidInt(Child(sp, "defaultMode"), *mode,
                                    "must be a number between 0 and 0777 (octal), both inclusive"));
      }
    }
    if (types == 0) el.push_back(FieldRequired(ip, "must specify a volume type"));
    std::string name(api::Object::GetString(*v, "name"));
    std::string np = Child(ip, "name");
    if (name.empty()) {
      el.push_back(FieldRequired(np));
    } else {
      sv::Append(el, sv::ValidateDns1123Label(np, name));
    }
    if (names.count(name)) el.push_back(FieldDuplicate(np, json::value(name)));
    if (el.empty()) {
      names.insert(name);
    } else {
      sv::Append(out, std::move(el));
    }
  }
  return out;
}

Causes ValidatePortNumOrName(const std::string& path, const json::value* port) {
  Causes out;
  if (port && port->is_string()) {
    std::string_view s = port->get_string();
    for (auto& m : sv::IsValidPortName(s)) out.push_back(FieldInvalidString(path, s, m));
  } else {
    int64_t n = AsInt(port).value_or(0);
    for (auto& m : sv::IsValidPortNum(n)) out.push_back(sv::InvalidInt(path, n, m));
  }
  return out;
}

Causes ValidateHandler(const json::object& h, const std::string& path, bool probe) {
  Causes out;
  int n = 0;
  auto one = [&](std::string_view key) -> const json::object* {
    const json::object* o = AsObject(Get(h, key));
    if (!o) return nullptr;
    if (n > 0) {
      out.push_back(FieldForbidden(Child(path, key), "may not specify more than 1 handler type"));
      return nullptr;
    }
    ++n;
    return o;
  };
  if (const json::object* e = one("exec")) {
    const json::array* cmd = AsArray(Get(*e, "command"));
    if (!cmd || cmd->empty()) out.push_back(FieldRequired(Child(Child(path, "exec"), "command")));
  }
  if (const json::object* hg = one("httpGet")) {
    std::string p = Child(path, "httpGet");
    if (api::Object::GetString(*hg, "path").empty()) out.push_back(FieldRequired(Child(p, "path")));
    sv::Append(out, ValidatePortNumOrName(Child(p, "port"), Get(*hg, "port")));
    std::string_view scheme = api::Object::GetString(*hg, "scheme");
    if (scheme != "HTTP" && scheme != "HTTPS") {
      out.push_back(FieldNotSupported(Child(p, "scheme"), json::value(scheme), {"HTTP", "HTTPS"}));
    }
  }
  if (const json::object* t = one("tcpSocket")) {
    sv::Append(out,
               ValidatePortNumOrName(Child(Child(path, "tcpSocket"), "port"), Get(*t, "port")));
  }
  if (probe) {
    if (const json::object* g = one("grpc")) {
      sv::Append(out, ValidatePortNumOrName(Child(Child(path, "grpc"), "port"), Get(*g, "port")));
    }
  } else if (one("sleep")) {
  }
  if (n == 0) out.push_back(FieldRequired(path, "must specify a handler type"));
  return out;
}

Causes ValidateProbe(const json::object& c, std::string_view key, const std::string& cpath) {
  Causes out;
  const json::object* p = AsObject(Get(c, key));
  if (!p) return out;
  std::string path = Child(cpath, key);
  sv::Append(out, ValidateHandler(*p, path, /*probe=*/true));
  for (std::string_view f : {"initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                             "successThreshold", "failureThreshold"}) {
    sv::Append(out, sv::NonNegative(Child(path, f), Get(*p, f)));
  }
  if (std::optional<int64_t> tg = AsInt(Get(*p, "terminationGracePeriodSeconds")); tg && *tg <= 0) {
    out.push_back(sv::InvalidInt(Child(path, "terminationGracePeriodSeconds"), *tg,
                                 "must be greater than 0"));
  }
  if (key != "readinessProbe") {
    int64_t st = AsInt(Get(*p, "successThreshold")).value_or(0);
    if (st != 1) out.push_back(sv::InvalidInt(Child(path, "successThreshold"), st, "must be 1"));
  } else if (sv::IsSet(Get(*p, "terminationGracePeriodSeconds"))) {
    out.push_back(FieldInvalid(Child(path, "terminationGracePeriodSeconds"),
                               *Get(*p, "terminationGracePeriodSeconds"),
                               "must not be set for readinessProbes"));
  }
  return out;
}

bool IsHugePages(std::string_view name) {
  return name.substr(0, 10) == "hugepages-";
}

bool IsNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos ||
         name.find("kubernetes.io/") != std::string_view::npos;
}

bool IsStandardResourceName(std::string_view name) {
  static const std::set<std::string_view> kStandard = {
      "cpu",
      "memory",
      "ephemeral-storage",
      "requests.cpu",
      "requests.memory",
      "requests.ephemeral-storage",
      "limits.cpu",
      "limits.memory",
      "limits.ephemeral-storage",
      "pods",
      "services",
      "replicationcontrollers",
      "resourcequotas",
      "secrets",
      "configmaps",
      "persistentvolumeclaims",
      "storage",
      "requests.storage",
      "services.nodeports",
      "services.loadbalancers",
  };
  return kStandard.count(name) || IsHugePages(name) || name.substr(0, 19) == "requests.hugepages-";
}

Causes ValidateResourceName(const std::string& path, std::string_view name) {
  Causes out = sv::ValidateQualifiedNameField(path, name);
  if (!out.empty()) return out;
  bool unqualified = name.find('/') == std::string_view::npos;
  if (unqualified && !IsStandardResourceName(name)) {
    out.push_back(
        FieldInvalidString(path, name, "must be a standard resource type or fully qualified"));
  }
  if (unqualified) {
    if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && !IsHugePages(name)) {
      out.push_back(FieldInvalidString(path, name, "must be a standard resource for containers"));
    }
  } else if (!IsNativeResource(name) && name.substr(0, 9) == "requests.") {
    out.push_back(FieldInvalidString(path, name, "doesn't follow extended resource name standard"));
  }
  return out;
}

Causes ValidateResources(const json::object* res, const std::string& path) {
  Causes out;
  if (!res) return out;
  std::string lim_path = Child(path, "limits");
  std::string req_path = Child(path, "requests");
  const json::object* limits = AsObject(Get(*res, "limits"));
  const json::object* requests = AsObject(Get(*res, "requests"));
  std::map<std::string, sv::Quantity> parsed_limits;
  auto check = [&](const json::object* list, const std::string& list_path,
                   std::map<std::string, sv::Quantity>* keep) {
    for (const auto& [name, qv] : *list) {
      std::string p = Key(list_path, name);
      sv::Append(out, ValidateResourceName(p, name));
      std::optional<sv::Quantity> q = sv::Quantity::FromJson(qv);
      if (!q) {
        out.push_back(FieldInvalid(p, qv, std::string(sv::kQuantityRegexError)));
        continue;
      }
      if (q->IsNegative()) {
        out.push_back(FieldInvalidString(p, q->String(), "must be greater than or equal to 0"));
      }
      bool integer_resource = IsHugePages(name) || !IsNativeResource(name);
      if (!IsHugePages(name) && integer_resource && !q->IsInteger()) {
        out.push_back(FieldInvalidString(p, q->String(), "must be an integer"));
      }
      if (keep) keep->emplace(std::string(name), *q);
    }
  };
  if (limits) check(limits, lim_path, &parsed_limits);
  if (requests) {
    std::map<std::string, sv::Quantity> parsed_requests;
    check(requests, req_path, &parsed_requests);
    for (const auto& [name, q] : parsed_requests) {
      bool overcommit = IsNativeResource(name) && !IsHugePages(name);
      auto lim = parsed_limits.find(name);
      if (lim != parsed_limits.end()) {
        if (!overcommit && q.Compare(lim->second) != 0) {
          out.push_back(
              FieldInvalidString(req_path, q.String(),
                                 "must be equal to " + name + " limit of " + lim->second.String()));
        } else if (q.Compare(lim->second) > 0) {
          out.push_back(FieldInvalidString(
              req_path, q.String(),
              "must be less than or equal to " + name + " limit of " + lim->second.String()));
        }
      } else if (!overcommit) {
        out.push_back(
            FieldRequired(lim_path, "Limit must be set for non overcommitable resources"));
      }
    }
  }
  return out;
}

const std::vector<std::string>& EnvFieldPaths() {
  static const std::vector<std::string> kPaths = {"metadata.name",
                                                  "metadata.namespace",
                                                  "metadata.uid",
                                                  "spec.nodeName",
                                                  "spec.serviceAccountName",
                                                  "status.hostIP",
                                                  "status.hostIPs",
                                                  "status.podIP",
                                                  "status.podIPs"};
  return kPaths;
}

Causes ValidateKeySelector(const json::object& s, const std::string& path) {
  Causes out;
  std::string_view name = api::Object::GetString(s, "name");
  for (auto& m : IsDnsSubdomain(name)) {
    out.push_back(FieldInvalidString(Child(path, "name"), name, m));
  }
  std::string_view key = api::Object::GetString(s, "key");
  if (key.empty()) {
    out.push_back(FieldRequired(Child(path, "key")));
  } else {
    for (auto& m : sv::IsConfigMapKey(key)) {
      out.push_back(FieldInvalidString(Child(path, "key"), key, m));
    }
  }
  return out;
}

Causes ValidateEnv(const json::array* env, const std::string& path) {
  Causes out;
  for (size_t i = 0; env && i < env->size(); ++i) {
    const json::object* ev = AsObject(&(*env)[i]);
    if (!ev) continue;
    std::string ip = Index(path, i);
    std::string_view name = api::Object::GetString(*ev, "name");
    if (name.empty()) {
      out.push_back(FieldRequired(Child(ip, "name")));
    } else {
      for (auto& m : sv::IsEnvVarName(name)) {
        out.push_back(FieldInvalidString(Child(ip, "name"), name, m));
      }
    }
    const json::object* from = AsObject(Get(*ev, "valueFrom"));
    if (!from) continue;
    std::string fp = Child(ip, "valueFrom");
    int sources = 0;
    if (const json::object* fr = AsObject(Get(*from, "fieldRef"))) {
      ++sources;
      std::string rp = Child(fp, "fieldRef");
      std::string_view fpath = api::Object::GetString(*fr, "fieldPath");
      if (api::Object::GetString(*fr, "apiVersion").empty()) {
        out.push_back(FieldRequired(Child(rp, "apiVersion")));
      } else if (fpath.empty()) {
        out.push_back(FieldRequired(Child(rp, "fieldPath")));
      } else if (fpath.find('[') != std::string_view::npos) {
        std::string_view base = fpath.substr(0, fpath.find('['));
        if (base != "metadata.labels" && base != "metadata.annotations") {
          out.push_back(FieldInvalidString(rp, base, "does not support subscript"));
        }
      } else {
        const auto& ok = EnvFieldPaths();
        if (std::find(ok.begin(), ok.end(), fpath) == ok.end()) {
          out.push_back(FieldNotSupported(Child(rp, "fieldPath"), json::value(fpath), ok));
        }
      }
    }
    if (const json::object* rr = AsObject(Get(*from, "resourceFieldRef"))) {
      ++sources;
      if (api::Object::GetString(*rr, "resource").empty()) {
        out.push_back(FieldRequired(Child(Child(fp, "resourceFieldRef"), "resource")));
      }
    }
    if (const json::object* cm = AsObject(Get(*from, "configMapKeyRef"))) {
      ++sources;
      sv::Append(out, ValidateKeySelector(*cm, Child(fp, "configMapKeyRef")));
    }
    if (const json::object* sk = AsObject(Get(*from, "secretKeyRef"))) {
      ++sources;
      sv::Append(out, ValidateKeySelector(*sk, Child(fp, "secretKeyRef")));
    }
    if (sources == 0) {
      out.push_back(FieldInvalidString(
          fp, "",
          "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
          "`secretKeyRef`"));
    } else if (!api::Object::GetString(*ev, "value").empty()) {
      out.push_back(FieldInvalidString(fp, "", "may not be specified when `value` is not empty"));
    } else if (sources > 1) {
      out.push_back(
          FieldInvalidString(fp, "", "may not have more than one field specified at a time"));
    }
  }
  return out;
}

Causes ValidateEnvFrom(const json::array* env_from, const std::string& path) {
  Causes out;
  for (size_t i = 0; env_from && i < env_from->size(); ++i) {
    const json::object* ef = AsObject(&(*env_from)[i]);
    if (!ef) continue;
    std::string ip = Index(path, i);
    std::string_view prefix = api::Object::GetString(*ef, "prefix");
    if (!prefix.empty()) {
      for (auto& m : sv::IsEnvVarName(prefix)) {
        out.push_back(FieldInvalidString(Child(ip, "prefix"), prefix, m));
      }
    }
    int sources = 0;
    for (std::string_view k : {"configMapRef", "secretRef"}) {
      const json::object* ref = AsObject(Get(*ef, k));
      if (!ref) continue;
      ++sources;
      std::string_view name = api::Object::GetString(*ref, "name");
      std::string np = Child(Child(ip, k), "name");
      if (name.empty()) {
        out.push_back(FieldRequired(np));
      } else {
        for (auto& m : IsDnsSubdomain(name)) out.push_back(FieldInvalidString(np, name, m));
      }
    }
    if (sources == 0) {
      out.push_back(
          FieldInvalidString(path, "", "must specify one of: `configMapRef` or `secretRef`"));
    } else if (sources > 1) {
      out.push_back(
          FieldInvalidString(path, "", "may not have more than one field specified at a time"));
    }
  }
  return out;
}

Causes ValidateVolumeMounts(const json::array* mounts, const std::string& path,
                            const SpecContext& ctx) {
  Causes out;
  std::set<std::string> mount_points;
  for (size_t i = 0; mounts && i < mounts->size(); ++i) {
    const json::object* m = AsObject(&(*mounts)[i]);
    if (!m) continue;
    std::string ip = Index(path, i);
    std::string_view name = api::Object::GetString(*m, "name");
    std::string_view mount_path = api::Object::GetString(*m, "mountPath");
    if (name.empty()) out.push_back(FieldRequired(Child(ip, "name")));
    if (!ctx.volumes.count(std::string(name))) out.push_back(NotFound(Child(ip, "name"), name));
    if (mount_path.empty()) out.push_back(FieldRequired(Child(ip, "mountPath")));
    if (mount_points.count(std::string(mount_path))) {
      out.push_back(FieldInvalidString(Child(ip, "mountPath"), mount_path, "must be unique"));
    }
    mount_points.insert(std::string(mount_path));
  }
  return out;
}

Causes ValidateContainerPorts(const json::array* ports, const std::string& path) {
  Causes out;
  std::set<std::string> names;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const json::object* p = AsObject(&(*ports)[i]);
    if (!p) continue;
    std::string ip = Index(path, i);
    std::string_view name = api::Object::GetString(*p, "name");
    if (!name.empty()) {
      auto msgs = sv::IsValidPortName(name);
      for (auto& m : msgs) out.push_back(FieldInvalidString(Child(ip, "name"), name, m));
      if (msgs.empty()) {
        if (names.count(std::string(name))) {
          out.push_back(FieldDuplicate(Child(ip, "name"), json::value(name)));
        }
        names.insert(std::string(name));
      }
    }
    int64_t cp = AsInt(Get(*p, "containerPort")).value_or(0);
    if (cp == 0) {
      out.push_back(FieldRequired(Child(ip, "containerPort")));
    } else {
      for (auto& m : sv::IsValidPortNum(cp)) {
        out.push_back(sv::InvalidInt(Child(ip, "containerPort"), cp, m));
      }
    }
    int64_t hp = AsInt(Get(*p, "hostPort")).value_or(0);
    if (hp != 0) {
      for (auto& m : sv::IsValidPortNum(hp))
        out.push_back(sv::InvalidInt(Child(ip, "hostPort"), hp, m));
    }
    std::string_view proto = api::Object::GetString(*p, "protocol");
    if (proto.empty()) {
      out.push_back(FieldRequired(Child(ip, "protocol")));
    } else if (proto != "TCP" && proto != "UDP" && proto != "SCTP") {
      out.push_back(
          FieldNotSupported(Child(ip, "protocol"), json::value(proto), {"SCTP", "TCP", "UDP"}));
    }
  }
  return out;
}

Causes ValidateContainerCommon(const json::object& c, const std::string& path,
                               const SpecContext& ctx) {
  Causes out;
  std::string_view name = api::Object::GetString(c, "name");
  if (name.empty()) {
    out.push_back(FieldRequired(Child(path, "name")));
  } else {
    sv::Append(out, sv::ValidateDns1123Label(Child(path, "name"), name));
  }
  if (api::Object::GetString(c, "image").empty())
    out.push_back(FieldRequired(Child(path, "image")));
  std::string_view tmp = api::Object::GetString(c, "terminationMessagePolicy");
  if (tmp.empty()) {
    out.push_back(FieldRequired(Child(path, "terminationMessagePolicy")));
  } else if (tmp != "File" && tmp != "FallbackToLogsOnError") {
    out.push_back(FieldNotSupported(Child(path, "terminationMessagePolicy"), json::value(tmp),
                                    {"File", "FallbackToLogsOnError"}));
  }
  sv::Append(out, ValidateContainerPorts(AsArray(Get(c, "ports")), Child(path, "ports")));
  sv::Append(out, ValidateEnv(AsArray(Get(c, "env")), Child(path, "env")));
  sv::Append(out, ValidateEnvFrom(AsArray(Get(c, "envFrom")), Child(path, "envFrom")));
  sv::Append(
      out, ValidateVolumeMounts(AsArray(Get(c, "volumeMounts")), Child(path, "volumeMounts"), ctx));
  std::string_view pull = api::Object::GetString(c, "imagePullPolicy");
  if (pull.empty()) {
    out.push_back(FieldRequired(Child(path, "imagePullPolicy")));
  } else if (pull != "Always" && pull != "IfNotPresent" && pull != "Never") {
    out.push_back(FieldNotSupported(Child(path, "imagePullPolicy"), json::value(pull),
                                    {"Always", "IfNotPresent", "Never"}));
  }
  sv::Append(out, ValidateResources(AsObject(Get(c, "resources")), Child(path, "resources")));
  if (const json::object* sc = AsObject(Get(c, "securityContext"))) {
    for (std::string_view f : {"runAsUser", "runAsGroup"}) {
      std::optional<int64_t> id = AsInt(Get(*sc, f));
      if (id && (*id < 0 || *id > 2147483647)) {
        out.push_back(sv::InvalidInt(Child(Child(path, "securityContext"), f), *id,
                                     "must be between 0 and 2147483647, inclusive"));
      }
    }
  }
  return out;
}

void CheckHostPortConflicts(const std::vector<const json::object*>& containers,
                            const std::string& path, size_t first_index, Causes& out) {
  std::set<std::string> seen;
  for (size_t ci = 0; ci < containers.size(); ++ci) {
    const json::array* ports = AsArray(Get(*containers[ci], "ports"));
    for (size_t pi = 0; ports && pi < ports->size(); ++pi) {
      const json::object* p = AsObject(&(*ports)[pi]);
      if (!p) continue;
      int64_t hp = AsInt(Get(*p, "hostPort")).value_or(0);
      if (hp == 0) continue;
      std::string key = std::string(api::Object::GetString(*p, "protocol")) + "/" +
                        std::string(api::Object::GetString(*p, "hostIP")) + "/" +
                        std::to_string(hp);
      if (!seen.insert(key).second) {
        out.push_back(FieldDuplicate(
            Child(Index(Child(Index(path, first_index + ci), "ports"), pi), "hostPort"),
            json::value(key)));
      }
    }
  }
}

Causes ValidateTolerations(const json::array* tols, const std::string& path) {
  Causes out;
  for (size_t i = 0; tols && i < tols->size(); ++i) {
    const json::object* t = AsObject(&(*tols)[i]);
    if (!t) continue;
    std::string ip = Index(path, i);
    std::string_view key = api::Object::GetString(*t, "key");
    std::string_view op = api::Object::GetString(*t, "operator");
    std::string_view value = api::Object::GetString(*t, "value");
    std::string_view effect = api::Object::GetString(*t, "effect");
    if (!key.empty()) sv::Append(out, sv::ValidateQualifiedNameField(Child(ip, "key"), key));
    if (key.empty() && op != "Exists") {
      out.push_back(FieldInvalidString(
          Child(ip, "operator"), op,
          "operator must be Exists when `key` is empty, which means \"match all values and all "
          "keys\""));
    }
    if (sv::IsSet(Get(*t, "tolerationSeconds")) && effect != "NoExecute") {
      out.push_back(
          FieldInvalidString(Child(ip, "effect"), effect,
                             "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (op == "Equal" || op.empty()) {
      auto errs = api::ValidateLabelValue(value);
      if (!errs.empty()) {
        std::string joined;
        for (size_t j = 0; j < errs.size(); ++j) joined += (j ? ";" : "") + errs[j];
        out.push_back(FieldInvalidString(Child(ip, "operator"), value, joined));
      }
    } else if (op == "Exists") {
      if (!value.empty()) {
        out.push_back(FieldInvalidString(Child(ip, "operator"), value,
                                         "value must be empty when `operator` is 'Exists'"));
      }
    } else {
      out.push_back(FieldNotSupported(Child(ip, "operator"), json::value(op), {"Equal", "Exists"}));
    }
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" &&
        effect != "NoExecute") {
      out.push_back(FieldNotSupported(Child(ip, "effect"), json::value(effect),
                                      {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
    }
  }
  return out;
}

}  // namespace

Causes ValidatePodSpec(const json::object& spec, const std::string& path, bool for_pod) {
  Causes out;
  SpecContext ctx;
  ctx.grace_period = Get(spec, "terminationGracePeriodSeconds");
  ctx.restart_policy = api::Object::GetString(spec, "restartPolicy");
  if (!sv::IsSet(ctx.grace_period)) {
    out.push_back(FieldRequired(Child(path, "terminationGracePeriodSeconds")));
  }
  sv::Append(out,
             ValidateVolumes(AsArray(Get(spec, "volumes")), Child(path, "volumes"), ctx.volumes));

  // Regular containers.
  std::string cpath = Child(path, "containers");
  const json::array* containers = AsArray(Get(spec, "containers"));
  std::set<std::string> all_names;
  std::vector<const json::object*> regular;
  if (!containers || containers->empty()) {
    out.push_back(FieldRequired(cpath));
  } else {
    for (size_t i = 0; i < containers->size(); ++i) {
      const json::object* c = AsObject(&(*containers)[i]);
      if (!c) continue;
      regular.push_back(c);
      std::string ip = Index(cpath, i);
      sv::Append(out, ValidateContainerCommon(*c, ip, ctx));
      std::string name(api::Object::GetString(*c, "name"));
      if (all_names.count(name)) {
        out.push_back(FieldDuplicate(Child(ip, "name"), json::value(name)));
      } else {
        all_names.insert(name);
      }
      if (const json::object* lc = AsObject(Get(*c, "lifecycle"))) {
        for (std::string_view h : {"postStart", "preStop"}) {
          if (const json::object* ho = AsObject(Get(*lc, h))) {
            sv::Append(out, ValidateHandler(*ho, Child(Child(ip, "lifecycle"), h), false));
          }
        }
      }
      for (std::string_view probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
        sv::Append(out, ValidateProbe(*c, probe, ip));
      }
      if (sv::IsSet(Get(*c, "restartPolicy"))) {
        out.push_back(
            FieldForbidden(Child(ip, "restartPolicy"), "may not be set for non-init containers"));
      }
    }
    CheckHostPortConflicts(regular, cpath, 0, out);
  }

  // Init containers: names unique across init and regular containers.
  std::string ipath = Child(path, "initContainers");
  const json::array* inits = AsArray(Get(spec, "initContainers"));
  std::set<std::string> names = all_names;
  for (size_t i = 0; inits && i < inits->size(); ++i) {
    const json::object* c = AsObject(&(*inits)[i]);
    if (!c) continue;
    std::string ip = Index(ipath, i);
    sv::Append(out, ValidateContainerCommon(*c, ip, ctx));
    bool restart_always = false;
    if (const json::value* rp = Get(*c, "restartPolicy"); sv::IsSet(rp)) {
      if (AsString(rp) != "Always") {
        out.push_back(FieldNotSupported(Child(ip, "restartPolicy"), *rp, {"Always"}));
      } else {
        restart_always = true;
      }
    }
    std::string name(api::Object::GetString(*c, "name"));
    if (names.count(name)) {
      out.push_back(FieldDuplicate(Child(ip, "name"), json::value(name)));
    } else if (!name.empty()) {
      names.insert(name);
    }
    CheckHostPortConflicts({c}, ipath, i, out);
    if (restart_always) {
      for (std::string_view probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
        sv::Append(out, ValidateProbe(*c, probe, ip));
      }
    } else {
      for (std::string_view f : {"lifecycle", "livenessProbe", "readinessProbe", "startupProbe"}) {
        if (sv::IsSet(Get(*c, f))) {
          out.push_back(FieldForbidden(
              Child(ip, f), "may not be set for init containers without restartPolicy=Always"));
        }
      }
    }
  }

  if (for_pod) {
    bool host_network = api::FindBool(spec, {"hostNetwork"});
    for (size_t i = 0; host_network && i < regular.size(); ++i) {
      const json::array* ports = AsArray(Get(*regular[i], "ports"));
      for (size_t j = 0; ports && j < ports->size(); ++j) {
        const json::object* p = AsObject(&(*ports)[j]);
        if (!p) continue;
        int64_t hp = AsInt(Get(*p, "hostPort")).value_or(0);
        if (hp != AsInt(Get(*p, "containerPort")).value_or(0)) {
          out.push_back(sv::InvalidInt(Child(Index(Child(Index(cpath, i), "ports"), j), "hostPort"),
                                       hp,
                                       "must match `containerPort` when `hostNetwork` is true"));
        }
      }
    }
  }

  std::string_view rp = ctx.restart_policy;
  if (rp.empty()) {
    out.push_back(FieldRequired(Child(path, "restartPolicy")));
  } else if (rp != "Always" && rp != "OnFailure" && rp != "Never") {
    out.push_back(FieldNotSupported(Child(path, "restartPolicy"), json::value(rp),
                                    {"Always", "OnFailure", "Never"}));
  }
  std::string_view dns = api::Object::GetString(spec, "dnsPolicy");
  if (dns.empty()) {
    out.push_back(FieldRequired(Child(path, "dnsPolicy")));
  } else if (dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst" && dns != "Default" &&
             dns != "None") {
    out.push_back(
        FieldNotSupported(Child(path, "dnsPolicy"), json::value(dns),
                          {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}));
  }
  sv::Append(out, sv::ValidateLabelsField(Child(path, "nodeSelector"), Get(spec, "nodeSelector")));
  if (const json::array* secrets = AsArray(Get(spec, "imagePullSecrets"))) {
    for (size_t i = 0; i < secrets->size(); ++i) {
      const json::object* s = AsObject(&(*secrets)[i]);
      if (s && (s->size() > 1 || (s->size() == 1 && !s->contains("name")))) {
        out.push_back(FieldInvalid(Index(Child(path, "imagePullSecrets"), i), (*secrets)[i],
                                   "only name may be set"));
      }
    }
  }
  if (dns == "None") {
    const json::object* cfg = AsObject(Get(spec, "dnsConfig"));
    const json::array* ns = cfg ? AsArray(Get(*cfg, "nameservers")) : nullptr;
    if (!cfg) {
      out.push_back(FieldRequired(Child(path, "dnsConfig"),
                                  "must provide `dnsConfig` when `dnsPolicy` is None"));
    } else if (!ns || ns->empty()) {
      out.push_back(
          FieldRequired(Child(Child(path, "dnsConfig"), "nameservers"),
                        "must provide at least one DNS nameserver when `dnsPolicy` is None"));
    }
  }
  if (const json::array* gates = AsArray(Get(spec, "readinessGates"))) {
    for (size_t i = 0; i < gates->size(); ++i) {
      const json::object* g = AsObject(&(*gates)[i]);
      sv::Append(out, sv::ValidateQualifiedNameField(
                          Child(Index(Child(path, "readinessGates"), i), "conditionType"),
                          g ? api::Object::GetString(*g, "conditionType") : ""));
    }
  }
  if (const json::array* gates = AsArray(Get(spec, "schedulingGates"))) {
    std::set<std::string> seen;
    for (size_t i = 0; i < gates->size(); ++i) {
      const json::object* g = AsObject(&(*gates)[i]);
      std::string name(g ? api::Object::GetString(*g, "name") : "");
      std::string gp = Index(Child(path, "schedulingGates"), i);
      sv::Append(out, sv::ValidateQualifiedNameField(gp, name));
      if (!seen.insert(name).second) out.push_back(FieldDuplicate(gp, json::value(name)));
    }
  }
  for (std::string_view f : {"serviceAccountName", "nodeName", "priorityClassName"}) {
    std::string_view v = api::Object::GetString(spec, f);
    if (!v.empty()) sv::Append(out, sv::ValidateDns1123Subdomain(Child(path, f), v));
  }
  if (const json::value* ads = Get(spec, "activeDeadlineSeconds"); sv::IsSet(ads)) {
    int64_t v = AsInt(ads).value_or(0);
    if (v < 1 || v > 2147483647) {
      out.push_back(sv::InvalidInt(Child(path, "activeDeadlineSeconds"), v,
                                   "must be between 1 and 2147483647, inclusive"));
    }
  }
  for (std::string_view f : {"hostname", "subdomain"}) {
    std::string_view v = api::Object::GetString(spec, f);
    if (!v.empty()) sv::Append(out, sv::ValidateDns1123Label(Child(path, f), v));
  }
  sv::Append(out,
             ValidateTolerations(AsArray(Get(spec, "tolerations")), Child(path, "tolerations")));
  if (const json::value* pp = Get(spec, "preemptionPolicy"); sv::IsSet(pp)) {
    std::string_view v = AsString(pp);
    if (v.empty()) {
      out.push_back(FieldRequired(Child(path, "preemptionPolicy")));
    } else if (v != "PreemptLowerPriority" && v != "Never") {
      out.push_back(FieldNotSupported(Child(path, "preemptionPolicy"), *pp,
                                      {"PreemptLowerPriority", "Never"}));
    }
  }

  if (for_pod) {
    for (std::string_view list : {"containers", "initContainers"}) {
      const json::array* cs = AsArray(Get(spec, list));
      for (size_t i = 0; cs && i < cs->size(); ++i) {
        const json::object* c = AsObject(&(*cs)[i]);
        if (!c) continue;
        std::string_view image = api::Object::GetString(*c, "image");
        size_t b = image.find_first_not_of(" \t\n\r\v\f");
        size_t e = image.find_last_not_of(" \t\n\r\v\f");
        bool trimmed = image.empty() || (b == 0 && e == image.size() - 1);
        if (!trimmed) {
          out.push_back(FieldInvalidString(Child(Index(Child(path, list), i), "image"), image,
                                           "must not have leading or trailing whitespace"));
        }
      }
    }
  }
  return out;
}

Causes ValidatePodTemplateSpec(const json::value* tmpl, const std::string& path) {
  Causes out;
  const json::object* t = AsObject(tmpl);
  if (!t) {
    // An absent template still has an (empty) spec upstream: report what the spec lacks.
    static const json::object kEmpty;
    t = &kEmpty;
  }
  const json::object* meta = AsObject(Get(*t, "metadata"));
  if (meta) {
    sv::Append(out, sv::ValidateLabelsField(Child(Child(path, "metadata"), "labels"),
                                            Get(*meta, "labels")));
    sv::Append(out, sv::ValidateAnnotationsField(Child(Child(path, "metadata"), "annotations"),
                                                 Get(*meta, "annotations")));
  }
  static const json::object kEmptySpec;
  const json::object* spec = AsObject(Get(*t, "spec"));
  std::string spec_path = Child(path, "spec");
  sv::Append(out, ValidatePodSpec(spec ? *spec : kEmptySpec, spec_path, /*for_pod=*/false));
  if (spec) {
    const json::array* eph = AsArray(Get(*spec, "ephemeralContainers"));
    if (eph && !eph->empty()) {
      out.push_back(FieldForbidden(Child(spec_path, "ephemeralContainers"),
                                   "ephemeral containers not allowed in pod template"));
    }
  }
  return out;
}

std::string ComputeQosClass(const json::object& spec) {
  std::map<std::string, sv::Quantity> requests;
  std::map<std::string, sv::Quantity> limits;
  bool guaranteed = true;
  auto add = [](std::map<std::string, sv::Quantity>& into, const std::string& name,
                const sv::Quantity& q) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else {
      it->second.Add(q);
    }
  };
  static const sv::Quantity kZero = *sv::Quantity::Parse("0");
  for (std::string_view list : {"initContainers", "containers"}) {
    const json::array* cs = AsArray(Get(spec, list));
    for (size_t i = 0; cs && i < cs->size(); ++i) {
      const json::object* c = AsObject(&(*cs)[i]);
      const json::object* res = c ? AsObject(Get(*c, "resources")) : nullptr;
      const json::object* req = res ? AsObject(Get(*res, "requests")) : nullptr;
      const json::object* lim = res ? AsObject(Get(*res, "limits")) : nullptr;
      std::set<std::string> limits_found;
      for (const auto& [list_obj, into, found] :
           {std::tuple{req, &requests, static_cast<std::set<std::string>*>(nullptr)},
            std::tuple{lim, &limits, &limits_found}}) {
        if (!list_obj) continue;
        for (const auto& [name, qv] : *list_obj) {
          if (name != "cpu" && name != "memory") continue;
          std::optional<sv::Quantity> q = sv::Quantity::FromJson(qv);
          if (!q || q->Compare(kZero) <= 0) continue;
          add(*into, std::string(name), *q);
          if (found) found->insert(std::string(name));
        }
      }
      if (limits_found.size() != 2) guaranteed = false;
    }
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed) {
    for (const auto& [name, q] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second.Compare(q) != 0) guaranteed = false;
    }
  }
  if (guaranteed && requests.size() == limits.size()) return "Guaranteed";
  return "Burstable";
}

}  // namespace converge::apiserver
