// Taints and tolerations (core/v1 Taint and Toleration, with upstream's matching rules).
//
// Plain values and pure functions; safe to use from any thread.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_view.h"

namespace converge::scheduler {

inline constexpr std::string_view kEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kEffectNoExecute = "NoExecute";

// Taints the node lifecycle controller and the kubelet set (well-known keys).
inline constexpr std::string_view kTaintNodeNotReady = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kTaintNodeUnreachable = "node.kubernetes.io/unreachable";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  bool operator==(const Taint&) const = default;
};

struct Toleration {
  std::string key;  // empty with operator Exists: every key
  std::string op;   // "Equal" (or empty) or "Exists"
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> toleration_seconds;

  // Upstream Toleration.ToleratesTaint: the effect matches (or is empty), the key matches (or is
  // empty), and the operator is Exists, or Equal (empty) with an equal value. Unknown operators
  // tolerate nothing.
  bool ToleratesTaint(const Taint& taint) const;
};

std::vector<Taint> ParseTaints(api::ArrayView taints);
std::vector<Toleration> ParseTolerations(api::ArrayView tolerations);

using TolerationsPtr = std::shared_ptr<const std::vector<Toleration>>;
// ParseTolerations, shared: pods with the same tolerations (every pod gets the two defaults for
// not-ready and unreachable nodes) share one parsed list while any of them holds it, instead of
// ~380 bytes each. Never null. Thread-safe.
TolerationsPtr SharedTolerations(api::ArrayView tolerations);

// Whether any toleration tolerates `taint`.
bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint);

// The first taint (in node order) whose effect is NoSchedule or NoExecute and that no toleration
// tolerates (upstream FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc); null
// when every such taint is tolerated.
const Taint* FindUntoleratedScheduleTaint(const std::vector<Taint>& taints,
                                          const std::vector<Toleration>& tolerations);

}  // namespace converge::scheduler
