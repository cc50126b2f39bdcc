// Pod-template hashes and semantic template comparison (upstream's controller.ComputeHash and
// deploymentutil.EqualIgnoreHash).
//
// ComputeHash: FNV-1a (32 bit) over the template's canonical JSON (keys sorted, nulls and empty
// objects/arrays dropped: they mean "unset", as Go's semantic equality treats them), followed,
// when collision_count is set, by its 4 little-endian bytes; the decimal value of the hash is
// then spelled in upstream's SafeEncodeString alphabet ("bcdfghjklmnpqrstvwxz2456789", each
// digit d as alphabet[('0' + d) % 27]), e.g. hash 3546925611 → "798bf69b55".
//
// Upstream hashes a Go struct dump, which cannot be reproduced outside Go; the values here are
// stable across Converge versions and processes, which is what the name and label need.
//
// Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace converge::controllers {

inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";

// The canonical form described above (a copy).
boost::json::value CanonicalJson(const boost::json::value& v);
// Equal after canonicalization.
bool SemanticEqual(const boost::json::value& a, const boost::json::value& b);

uint32_t Fnv32a(std::string_view data, uint32_t seed = 2166136261u);
// Upstream's rand.SafeEncodeString.
std::string SafeEncodeString(std::string_view s);

std::string ComputeHash(const boost::json::object& pod_template,
                        std::optional<int32_t> collision_count);

// Two PodTemplateSpecs are equal ignoring their pod-template-hash label.
bool EqualIgnoreHash(const boost::json::object& a, const boost::json::object& b);

}  // namespace converge::controllers
