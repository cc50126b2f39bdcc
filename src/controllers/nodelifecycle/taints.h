// Taints and tolerations (core/v1), and upstream's matching rules: a toleration tolerates a taint
// when its effect is empty or equal, its key is empty or equal, and either its operator is
// Exists or (Equal, the default) the values are equal.
//
// Thread-safety: values and pure functions.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"

namespace converge::controllers::nodelifecycle {

inline constexpr std::string_view kUnreachableTaint = "node.kubernetes.io/unreachable";
inline constexpr std::string_view kNotReadyTaint = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kNoExecute = "NoExecute";
inline constexpr std::string_view kNoSchedule = "NoSchedule";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  std::string time_added;  // RFC 3339; NoExecute taints carry it

  bool SameAs(const Taint& o) const { return key == o.key && effect == o.effect; }
  boost::json::object ToJson() const;
  static Taint FromJson(const boost::json::object& o);
};

struct Toleration {
  std::string key;
  std::string op;  // "Equal" (or "") or "Exists"
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;

  bool Tolerates(const Taint& t) const;
  static Toleration FromJson(const boost::json::object& o);
};

std::vector<Taint> NodeTaints(const api::Object& node);
std::vector<Toleration> PodTolerations(const api::Object& pod);
bool HasTaint(const std::vector<Taint>& taints, std::string_view key, std::string_view effect);

}  // namespace converge::controllers::nodelifecycle
