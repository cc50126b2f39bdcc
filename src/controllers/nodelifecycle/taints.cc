#include "controllers/nodelifecycle/taints.h"

namespace converge::controllers::nodelifecycle {

namespace json = boost::json;

json::object Taint::ToJson() const {
  json::object o;
  o["key"] = key;
  if (!value.empty()) o["value"] = value;
  o["effect"] = effect;
  if (!time_added.empty()) o["timeAdded"] = time_added;
  return o;
}

Taint Taint::FromJson(const json::object& o) {
  return {std::string(api::Object::GetString(o, "key")),
          std::string(api::Object::GetString(o, "value")),
          std::string(api::Object::GetString(o, "effect")),
          std::string(api::Object::GetString(o, "timeAdded"))};
}

bool Toleration::Tolerates(const Taint& t) const {
  if (!effect.empty() && effect != t.effect) return false;
  if (!key.empty() && key != t.key) return false;
  if (op == "Exists") return true;
  if (op.empty() || op == "Equal") return value == t.value;
  return false;
}

Toleration Toleration::FromJson(const json::object& o) {
  Toleration t;
  t.key = std::string(api::Object::GetString(o, "key"));
  t.op = std::string(api::Object::GetString(o, "operator"));
  t.value = std::string(api::Object::GetString(o, "value"));
  t.effect = std::string(api::Object::GetString(o, "effect"));
  if (const json::value* s = o.if_contains("tolerationSeconds"); s && s->is_int64()) {
    t.toleration_seconds = s->get_int64();
  }
  return t;
}

std::vector<Taint> NodeTaints(const api::Object& node) {
  std::vector<Taint> out;
  if (const json::array* a = api::FindArray(node.doc(), {"spec", "taints"})) {
    for (const json::value& v : *a) {
      if (v.is_object()) out.push_back(Taint::FromJson(v.get_object()));
    }
  }
  return out;
}

std::vector<Toleration> PodTolerations(const api::Object& pod) {
  std::vector<Toleration> out;
  if (const json::array* a = api::FindArray(pod.doc(), {"spec", "tolerations"})) {
    for (const json::value& v : *a) {
      if (v.is_object()) out.push_back(Toleration::FromJson(v.get_object()));
    }
  }
  return out;
}

bool HasTaint(const std::vector<Taint>& taints, std::string_view key, std::string_view effect) {
  for (const Taint& t : taints) {
    if (t.key == key && t.effect == effect) return true;
  }
  return false;
}

}  // namespace converge::controllers::nodelifecycle
