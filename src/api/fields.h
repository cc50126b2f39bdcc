// Field selectors: `metadata.name=web,status.phase!=Running`.
//
// Only `=`, `==` and `!=` exist; terms are ANDed. Values may escape `\,`, `\=` and `\\`.
// Which fields may be selected is decided per resource by the caller (see ResourceInfo::
// selectable_fields); this class only parses and matches.
//
// Thread-safety: an immutable value after parsing.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace converge::api {

class FieldSelector {
 public:
  struct Requirement {
    std::string field;
    bool equals = true;  // false for !=
    std::string value;
  };

  FieldSelector() = default;  // matches everything
  static util::StatusOr<FieldSelector> Parse(std::string_view text);

  bool Empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // `get(field)` returns the object's value for a field ("" when absent).
  bool Matches(const std::function<std::string(std::string_view field)>& get) const;
  // If the selector pins `field` with `=`, returns that value.
  const std::string* RequiredValue(std::string_view field) const;
  std::string ToString() const;

 private:
  std::vector<Requirement> requirements_;
};

}  // namespace converge::api
