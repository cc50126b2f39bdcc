#include "util/ids.h"

#include <random>

namespace converge::util {

namespace {

std::mt19937_64& Engine() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

}  // namespace

std::string NewUuid() {
  uint64_t hi = Engine()();
  uint64_t lo = Engine()();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  auto put = [&](uint64_t v, int nibbles) {
    for (int i = nibbles - 1; i >= 0; --i) out += kHex[(v >> (i * 4)) & 0xf];
  };
  put(hi >> 32, 8);
  out += '-';
  put((hi >> 16) & 0xffff, 4);
  out += '-';
  put(hi & 0xffff, 4);
  out += '-';
  put(lo >> 48, 4);
  out += '-';
  put(lo & 0xffffffffffffULL, 12);
  return out;
}

std::string RandomString(size_t n, std::string_view alphabet) {
  std::uniform_int_distribution<size_t> dist(0, alphabet.size() - 1);
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out += alphabet[dist(Engine())];
  return out;
}

}  // namespace converge::util
