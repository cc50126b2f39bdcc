#include "util/packed_strings.h"

namespace converge::util {

void AppendPacked(std::string* out, std::string_view item) {
  size_t n = item.size();
  while (n >= 0x80) {
    out->push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
  out->append(item);
}

size_t PackedSize(std::string_view item) {
  size_t size = 1;
  for (size_t n = item.size(); n >= 0x80; n >>= 7) ++size;
  return size + item.size();
}

std::string PackStrings(std::initializer_list<std::string_view> items) {
  size_t size = 0;
  for (std::string_view item : items) size += PackedSize(item);
  std::string packed;
  packed.reserve(size);
  for (std::string_view item : items) AppendPacked(&packed, item);
  return packed;
}

bool NextPacked(std::string_view packed, size_t* at, std::string_view* item) {
  size_t i = *at;
  if (i >= packed.size()) return false;
  size_t n = static_cast<unsigned char>(packed[i++]);
  if (n >= 0x80) {  // rare: 128 bytes or more (most packed items are short)
    n &= 0x7f;
    for (int shift = 7;; shift += 7) {
      if (i >= packed.size() || shift > 56) return false;
      auto byte = static_cast<unsigned char>(packed[i++]);
      n |= static_cast<size_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
  }
  if (n > packed.size() - i) return false;
  *item = std::string_view(packed.data() + i, n);
  *at = i + n;
  return true;
}

}  // namespace converge::util
