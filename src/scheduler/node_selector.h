// Node selectors and node affinity (upstream component-helpers nodeaffinity): which nodes a pod's
// spec.nodeSelector, required node affinity and preferred node affinity select.
//
// Terms are parsed once per pod. Semantics, as upstream:
//   - nodeSelectorTerms are ORed; a term's matchExpressions and matchFields are ANDed; a term with
//     neither matches no node; a term with a parse error (a Gt value that is not an integer, an In
//     without values, a matchFields key other than metadata.name) matches no node.
//   - In: the label exists with one of the values. NotIn: the label is absent or has none of the
//     values. Exists / DoesNotExist: the key is present / absent. Gt / Lt: the label exists and
//     both it and the single value parse as base-10 int64, compared numerically.
//   - matchFields supports only metadata.name with In / NotIn and exactly one value.
//
// Plain values and pure functions; safe to use from any thread.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_view.h"

namespace converge::scheduler {

// A node's labels, sorted by key (keys unique).
using Labels = std::vector<std::pair<std::string, std::string>>;

Labels ParseLabels(api::ObjectView labels);
// The value of label `key`, or null.
const std::string* LabelValue(const Labels& labels, std::string_view key);

struct NodeSelectorRequirement {
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Op op = Op::kIn;
  std::vector<std::string> values;
  int64_t number = 0;  // kGt / kLt

  bool MatchesLabels(const Labels& labels) const;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  // metadata.name requirements (kIn / kNotIn, one value each).
  std::vector<NodeSelectorRequirement> match_fields;
  bool valid = true;  // false: a parse error; the term matches nothing

  bool Matches(std::string_view node_name, const Labels& labels) const;
};

// Parses one NodeSelectorTerm object. Returns nullopt for an empty term (it selects nothing and
// is dropped, as upstream does).
std::optional<NodeSelectorTerm> ParseNodeSelectorTerm(api::ObjectView term);

// requiredDuringSchedulingIgnoredDuringExecution: terms ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool Matches(std::string_view node_name, const Labels& labels) const;
};
NodeSelector ParseNodeSelector(api::ObjectView selector);

struct PreferredSchedulingTerm {
  int64_t weight = 0;
  NodeSelectorTerm preference;
};
// Terms with weight 0 or an empty preference are dropped.
std::vector<PreferredSchedulingTerm> ParsePreferredSchedulingTerms(api::ArrayView terms);

// The pod's node constraints that filter (upstream RequiredNodeAffinity): spec.nodeSelector (all
// labels must match) and, when set, the required node affinity.
struct RequiredNodeAffinity {
  Labels node_selector;
  std::optional<NodeSelector> required;

  bool Matches(std::string_view node_name, const Labels& labels) const;
  bool empty() const { return node_selector.empty() && !required; }
};
RequiredNodeAffinity ParseRequiredNodeAffinity(api::ObjectView pod_spec);

}  // namespace converge::scheduler
