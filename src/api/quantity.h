// Quantity: a resource quantity (k8s.io/apimachinery/pkg/api/resource.Quantity) — "500m", "1Gi",
// "1e3" — parsed exactly, compared, added and printed in upstream's canonical form.
//
// Used by validation (apiserver), by the scheduler (requests against allocatable) and by the
// simulated kubelet (capacity). A plain value; safe to share between threads once built.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/json_view.h"

namespace converge::api {

class Quantity {
 public:
  // Parses "500m", "1Gi", "1e3", "0.5"; nullopt when the text is not a quantity.
  static std::optional<Quantity> Parse(std::string_view text);
  // A JSON quantity: a string or a number.
  static std::optional<Quantity> FromJson(const boost::json::value& v);
  static std::optional<Quantity> FromJson(View v);

  // Three-way comparison of the values.
  int Compare(const Quantity& o) const;
  bool IsNegative() const { return nanos_ < 0; }
  bool IsInteger() const;
  void Add(const Quantity& o) { nanos_ += o.nanos_; }
  // The canonical form upstream's Quantity.String() prints ("0.5" -> "500m", "1024Mi" -> "1Gi").
  std::string String() const;

  // The value rounded up (away from zero) to an integer, as upstream's Value(): "1500m" -> 2,
  // "1Gi" -> 1073741824. Saturates at the int64 range.
  int64_t Value() const;
  // The value in thousandths rounded up (away from zero), as upstream's MilliValue(): "1" -> 1000,
  // "100m" -> 100, "1n" -> 1. Saturates at the int64 range.
  int64_t MilliValue() const;

 private:
  enum class Format { kDecimalSi, kBinarySi, kDecimalExponent };
  // nanos_ scaled down by `divisor`, rounded away from zero and saturated.
  int64_t Scaled(int64_t divisor) const;

  __int128 nanos_ = 0;  // value * 10^9, rounded up to the nearest nano
  Format format_ = Format::kDecimalSi;
};

}  // namespace converge::api
