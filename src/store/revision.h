// RevisionPair: the position of one change in the global history, and its on-disk key.
//
// Every write transaction takes one main revision; the changes it makes (puts and deletes) are
// numbered sub = 0, 1, ... in request order. The history db is keyed by the 16-byte big-endian
// encoding of (main, sub), so LMDB's byte order is revision order.
//
// Thread-safety: values; free functions are pure.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/kv.h"

namespace converge::store {

struct RevisionPair {
  Revision main = 0;
  int64_t sub = 0;

  friend auto operator<=>(const RevisionPair&, const RevisionPair&) = default;
  bool IsZero() const { return main == 0 && sub == 0; }
};

inline constexpr size_t kRevisionKeySize = 16;

// Writes the 16-byte big-endian key of `rev` into `out`.
void EncodeRevisionKey(RevisionPair rev, char* out);
std::string RevisionKey(RevisionPair rev);
// Decodes a 16-byte key; false if `key` has the wrong size.
bool DecodeRevisionKey(std::string_view key, RevisionPair* rev);

// True if `key` lies in the etcd range (key, range_end): see RangeRequest in kv.h.
inline bool KeyInRange(std::string_view key, std::string_view start, std::string_view end) {
  if (end.empty()) return key == start;
  if (key < start) return false;
  if (end.size() == 1 && end[0] == '\0') return true;
  return key < end;
}

// True if nothing in [start, end) can exist: a non-empty, non-"\0" end at or below start.
inline bool RangeIsEmpty(std::string_view start, std::string_view end) {
  if (end.empty()) return false;
  if (end.size() == 1 && end[0] == '\0') return false;
  return end <= start;
}

}  // namespace converge::store
