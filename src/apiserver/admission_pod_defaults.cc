#include "apiserver/admission_pod_defaults.h"

#include <array>
#include <string_view>

#include "util/ids.h"

namespace converge::apiserver {

namespace json = boost::json;

namespace {

bool IsNewPod(const AdmissionAttributes& a) {
  return a.operation == "CREATE" && a.subresource.empty() && a.object && a.resource &&
         a.resource->gvr.group.empty() && a.resource->gvr.resource == "pods";
}

json::object* SpecOf(api::Object& pod) {
  json::object& doc = pod.mutable_doc();
  json::value& spec = doc["spec"];
  if (!spec.is_object()) spec = json::object();
  return &spec.get_object();
}

// The projected volume upstream's plugin adds (token valid 3607 s, refreshed by the kubelet).
// Its sources are the same for every pod: built once, since copying a value costs a fraction of
// building it from initializer lists.
json::object ApiAccessVolume(const std::string& name) {
  static const json::value kProjected = [] {
    json::object token{
        {"serviceAccountToken", json::object{{"expirationSeconds", 3607}, {"path", "token"}}}};
    json::object ca{
        {"configMap", json::object{{"name", "kube-root-ca.crt"},
                                   {"items", json::array{json::object{{"key", "ca.crt"},
                                                                      {"path", "ca.crt"}}}}}}};
    json::object ns{
        {"downwardAPI",
         json::object{{"items", json::array{json::object{
                                    {"fieldRef", json::object{{"apiVersion", "v1"},
                                                              {"fieldPath", "metadata.namespace"}}},
                                    {"path", "namespace"}}}}}}};
    return json::value(
        json::object{{"defaultMode", 420},
                     {"sources", json::array{std::move(token), std::move(ca), std::move(ns)}}});
  }();
  json::object volume(2);
  volume.emplace("name", name);
  volume.emplace("projected", kProjected);
  return volume;
}

// The tolerations DefaultTolerationSeconds adds, built once.
const std::array<json::value, 2>& DefaultTolerations() {
  auto make = [](std::string_view key) {
    return json::value(json::object{
        {"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}});
  };
  static const std::array<json::value, 2> kTolerations = {make("node.kubernetes.io/not-ready"),
                                                          make("node.kubernetes.io/unreachable")};
  return kTolerations;
}

bool MountsServiceAccountPath(const json::object& container) {
  auto it = container.find("volumeMounts");
  if (it == container.end() || !it->value().is_array()) return false;
  for (const auto& m : it->value().get_array()) {
    if (!m.is_object()) continue;
    auto p = m.get_object().find("mountPath");
    if (p != m.get_object().end() && p->value().is_string() &&
        p->value().get_string() == kServiceAccountMountPath) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<ApiError> ServiceAccountAdmission::Admit(AdmissionAttributes& attrs) {
  if (!IsNewPod(attrs)) return std::nullopt;
  json::object* spec = SpecOf(*attrs.object);
  std::string sa = "default";
  if (auto it = spec->find("serviceAccountName");
      it != spec->end() && it->value().is_string() && !it->value().get_string().empty()) {
    sa = std::string(it->value().get_string());
  } else if (auto dep = spec->find("serviceAccount");
             dep != spec->end() && dep->value().is_string() && !dep->value().get_string().empty()) {
    sa = std::string(dep->value().get_string());
  }
  (*spec)["serviceAccountName"] = sa;
  (*spec)["serviceAccount"] = sa;  // the deprecated mirror, as the v1 API still returns it

  bool automount = true;
  if (auto it = spec->find("automountServiceAccountToken");
      it != spec->end() && it->value().is_bool()) {
    automount = it->value().get_bool();
  } else if (lookup_) {
    if (auto v = lookup_(attrs.ns, sa)) automount = *v;
  }
  if (!automount) return std::nullopt;

  std::string volume = "kube-api-access-" + util::RandomString(5, util::kNameSuffixAlphabet);
  bool mounted = false;
  for (const char* field : {"initContainers", "containers"}) {
    auto it = spec->find(field);
    if (it == spec->end() || !it->value().is_array()) continue;
    for (auto& c : it->value().get_array()) {
      if (!c.is_object() || MountsServiceAccountPath(c.get_object())) continue;
      json::value& mounts = c.get_object()["volumeMounts"];
      if (!mounts.is_array()) mounts = json::array();
      mounts.get_array().push_back(json::object{
          {"name", volume}, {"readOnly", true}, {"mountPath", kServiceAccountMountPath}});
      mounted = true;
    }
  }
  if (mounted) {
    json::value& volumes = (*spec)["volumes"];
    if (!volumes.is_array()) volumes = json::array();
    volumes.get_array().push_back(ApiAccessVolume(volume));
  }
  return std::nullopt;
}

std::optional<ApiError> DefaultTolerationSeconds::Admit(AdmissionAttributes& attrs) {
  if (!IsNewPod(attrs)) return std::nullopt;
  json::object* spec = SpecOf(*attrs.object);
  json::value& tolerations = (*spec)["tolerations"];
  if (!tolerations.is_array()) tolerations = json::array();
  json::array& list = tolerations.get_array();
  for (const json::value& toleration : DefaultTolerations()) {
    const std::string_view key = toleration.get_object().at("key").get_string();
    bool tolerated = false;
    for (const auto& t : list) {
      if (!t.is_object()) continue;
      const json::object& o = t.get_object();
      auto str = [&](const char* f) -> std::string_view {
        auto it = o.find(f);
        return it != o.end() && it->value().is_string() ? std::string_view(it->value().get_string())
                                                        : std::string_view();
      };
      std::string_view k = str("key"), effect = str("effect"), op = str("operator");
      // A toleration with an empty key and operator Exists tolerates every taint.
      bool matches_key = k == key || (k.empty() && op == "Exists");
      bool matches_effect = effect.empty() || effect == "NoExecute";
      tolerated |= matches_key && matches_effect;
    }
    if (!tolerated) {
      list.push_back(toleration);
    }
  }
  return std::nullopt;
}

}  // namespace converge::apiserver
