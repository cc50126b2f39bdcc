// Label selectors: parsing the string form (`app=web,tier in (a,b),!canary`) and metav1
// LabelSelector objects, and matching them against an object's labels.
//
// Semantics follow k8s.io/apimachinery/pkg/labels: requirements are ANDed; `!=` and `notin`
// match objects that lack the key; `>`/`<` compare integers. An empty selector matches
// everything; the Nothing() selector matches nothing (a nil LabelSelector in a controller).
//
// Thread-safety: a Selector is an immutable value after parsing.
#pragma once

#include <boost/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_view.h"
#include "util/status.h"

namespace converge::api {

class LabelSelector {
 public:
  enum class Op {
    kIn,
    kNotIn,
    kExists,
    kDoesNotExist,
    kEquals,
    kNotEquals,
    kGreaterThan,
    kLessThan
  };
  struct Requirement {
    std::string key;
    Op op = Op::kEquals;
    std::vector<std::string> values;  // sorted, unique
    bool Matches(ObjectView labels) const;
  };

  LabelSelector() = default;  // matches everything
  static LabelSelector Nothing();

  // Parses the string form used in `?labelSelector=`. Errors are InvalidArgument with upstream's
  // wording ("unable to parse requirement: ...", "found '...', expected: ...").
  static util::StatusOr<LabelSelector> Parse(std::string_view text);
  // Converts a metav1.LabelSelector ({matchLabels, matchExpressions}); null → Nothing().
  static util::StatusOr<LabelSelector> FromLabelSelector(View selector);
  // A selector requiring exactly these key=value pairs.
  static LabelSelector FromMap(const std::map<std::string, std::string>& labels);

  bool Empty() const { return !nothing_ && requirements_.empty(); }
  bool MatchesNothing() const { return nothing_; }
  bool Matches(ObjectView labels) const;
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // Canonical string form, requirements sorted by key (`app=web,env in (a,b)`).
  std::string ToString() const;

  void Add(Requirement r);

 private:
  bool nothing_ = false;
  std::vector<Requirement> requirements_;
};

// Validation helpers shared with object validation. Each returns the list of problems
// (empty when valid), worded as upstream's validation messages.
std::vector<std::string> ValidateQualifiedName(std::string_view name);
std::vector<std::string> ValidateLabelValue(std::string_view value);

}  // namespace converge::api
