#include "api/quantity.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

namespace converge::api {

namespace json = boost::json;

namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

constexpr __int128 kSaturate = static_cast<__int128>(1000000000000000000LL) * 1000000000000000000LL;

__int128 Pow10(int e) {
  __int128 r = 1;
  for (int i = 0; i < e; ++i) r *= 10;
  return r;
}

__int128 SatMul(__int128 a, __int128 b) {
  if (a == 0 || b == 0) return 0;
  __int128 abs_a = a < 0 ? -a : a;
  __int128 abs_b = b < 0 ? -b : b;
  if (abs_a > kSaturate / abs_b) return (a < 0) != (b < 0) ? -kSaturate : kSaturate;
  return a * b;
}

std::string Int128ToString(__int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  if (neg) v = -v;
  std::string s;
  while (v > 0) {
    s += static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  if (neg) s += '-';
  std::reverse(s.begin(), s.end());
  return s;
}

}  // namespace

std::optional<Quantity> Quantity::Parse(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  std::string digits;
  int frac_digits = 0;
  bool seen_dot = false;
  size_t start = i;
  for (; i < text.size() && (IsDigit(text[i]) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (seen_dot) return std::nullopt;
      seen_dot = true;
      continue;
    }
    digits += text[i];
    if (seen_dot) ++frac_digits;
  }
  if (i == start || digits.empty()) return std::nullopt;
  std::string_view suffix = text.substr(i);
  Quantity q;
  int exp10 = 0;
  int exp2 = 0;
  static const std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::pair<std::string_view, int> kBinary[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                                             {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  bool matched = false;
  for (const auto& [s, e] : kDecimal) {
    if (suffix == s) {
      exp10 = e;
      matched = true;
    }
  }
  for (const auto& [s, e] : kBinary) {
    if (suffix == s) {
      exp2 = e;
      q.format_ = Format::kBinarySi;
      matched = true;
    }
  }
  if (!matched && !suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view num = suffix.substr(1);
    bool neg_exp = false;
    if (!num.empty() && (num[0] == '+' || num[0] == '-')) {
      neg_exp = num[0] == '-';
      num.remove_prefix(1);
    }
    if (num.empty() || num.size() > 3 ||
        !std::all_of(num.begin(), num.end(), [](char c) { return IsDigit(c); })) {
      return std::nullopt;
    }
    int e = 0;
    std::from_chars(num.data(), num.data() + num.size(), e);
    exp10 = neg_exp ? -e : e;
    q.format_ = Format::kDecimalExponent;
    matched = true;
  }
  if (!matched) return std::nullopt;

  // Drop leading zeros and cap precision at 30 significant digits (rounding up beyond that).
  size_t nz = digits.find_first_not_of('0');
  digits = nz == std::string::npos ? "0" : digits.substr(nz);
  bool dropped_nonzero = false;
  while (digits.size() > 30) {
    if (digits.back() != '0') dropped_nonzero = true;
    digits.pop_back();
    if (frac_digits > 0) {
      --frac_digits;
    } else {
      ++exp10;
    }
  }
  __int128 mantissa = 0;
  for (char c : digits) mantissa = mantissa * 10 + (c - '0');
  if (dropped_nonzero) ++mantissa;
  __int128 v = SatMul(mantissa, static_cast<__int128>(1) << exp2);
  int e = exp10 + 9 - frac_digits;
  if (e >= 0) {
    v = e > 36 ? (v == 0 ? 0 : kSaturate) : SatMul(v, Pow10(e));
  } else if (e < -36) {
    v = v == 0 ? 0 : 1;
  } else {
    __int128 d = Pow10(-e);
    v = v / d + (v % d != 0 ? 1 : 0);  // round up to the nearest nano, as upstream does
  }
  q.nanos_ = negative ? -v : v;
  return q;
}

std::optional<Quantity> Quantity::FromJson(const json::value& v) {
  return FromJson(View(v));
}

std::optional<Quantity> Quantity::FromJson(View v) {
  if (std::optional<std::string_view> s = v.if_string()) return Parse(*s);
  if (std::optional<int64_t> i = v.if_int64()) return Parse(std::to_string(*i));
  if (std::optional<uint64_t> u = v.if_uint64()) return Parse(std::to_string(*u));
  if (v.is_double()) {
    std::string s = json::serialize(json::value(*v.to_double()));
    return Parse(s);
  }
  return std::nullopt;
}

int Quantity::Compare(const Quantity& o) const {
  return nanos_ < o.nanos_ ? -1 : nanos_ > o.nanos_ ? 1 : 0;
}

bool Quantity::IsInteger() const {
  return nanos_ % 1000000000 == 0;
}

std::string Quantity::String() const {
  if (nanos_ == 0) return "0";
  Format format = format_;
  __int128 units = nanos_ / 1000000000;
  if (format == Format::kBinarySi && (!IsInteger() || (units > -1024 && units < 1024))) {
    format = Format::kDecimalSi;
  }
  if (format == Format::kBinarySi) {
    static const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int k = 0;
    while (k < 6 && units % (static_cast<__int128>(1) << (10 * (k + 1))) == 0) ++k;
    return Int128ToString(units >> (10 * k)) + kSuffix[k];
  }
  // Largest exponent (a multiple of 3) that leaves an integer mantissa.
  int exp = 18;
  while (exp > -9 && nanos_ % Pow10(exp + 9) != 0) exp -= 3;
  std::string mantissa = Int128ToString(nanos_ / Pow10(exp + 9));
  if (format == Format::kDecimalExponent) {
    return exp == 0 ? mantissa : mantissa + "e" + std::to_string(exp);
  }
  static const std::map<int, std::string> kSuffix = {{-9, "n"}, {-6, "u"}, {-3, "m"}, {0, ""},
                                                     {3, "k"},  {6, "M"},  {9, "G"},  {12, "T"},
                                                     {15, "P"}, {18, "E"}};
  return mantissa + kSuffix.at(exp);
}

int64_t Quantity::Scaled(int64_t divisor) const {
  __int128 d = divisor;
  __int128 v = nanos_ / d;
  if (nanos_ % d != 0) v += nanos_ < 0 ? -1 : 1;  // away from zero, as upstream rounds
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int64_t Quantity::Value() const {
  return Scaled(1000000000);
}

int64_t Quantity::MilliValue() const {
  return Scaled(1000000);
}

}  // namespace converge::api
