// Random identifiers: object UIDs and generateName suffixes.
//
// Thread-safety: all functions are safe to call concurrently (per-thread generators).
#pragma once

#include <string>
#include <string_view>

namespace converge::util {

// A random (version 4) UUID in its canonical 36-character form.
std::string NewUuid();

// `n` characters drawn uniformly from `alphabet`.
std::string RandomString(size_t n, std::string_view alphabet);

// The alphabet upstream uses for generateName suffixes and pod-template hashes: no vowels (no
// accidental words) and no characters that are easily confused.
inline constexpr std::string_view kNameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";

}  // namespace converge::util
