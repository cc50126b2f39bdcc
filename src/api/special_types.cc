#include "api/special_types.h"

#include <array>
#include <cstdio>
#include <limits>

namespace converge::api {
namespace {

// Howard Hinnant's civil-from-days / days-from-civil (proleptic Gregorian, 1970-01-01 = day 0).
struct Civil {
  int64_t year;
  unsigned month, day;
};

Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

std::string FormatDateTime(int64_t secs, const char* frac) {
  int64_t days = FloorDiv(secs, 86400);
  int64_t rem = secs - days * 86400;
  Civil c = CivilFromDays(days);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02d:%02d:%02d%sZ",
                static_cast<long long>(c.year), c.month, c.day, static_cast<int>(rem / 3600),
                static_cast<int>(rem % 3600 / 60), static_cast<int>(rem % 60), frac);
  return buf;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string FormatTime(int64_t unix_seconds) {
  return FormatDateTime(unix_seconds, "");
}

std::string FormatMicroTime(int64_t unix_seconds, int32_t nanos) {
  int64_t secs = unix_seconds + FloorDiv(nanos, 1'000'000'000);
  int64_t ns = nanos - FloorDiv(nanos, 1'000'000'000) * 1'000'000'000;
  char frac[32];  // room for any long long, so -Wformat-truncation is satisfied
  std::snprintf(frac, sizeof(frac), ".%06lld", static_cast<long long>(ns / 1000));
  return FormatDateTime(secs, frac);
}

std::optional<UnixTime> ParseTime(std::string_view s) {
  int year, month, day, hour, minute, second;
  if (!Digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &month) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &hour) || s[13] != ':' || !Digits(s, 14, 2, &minute) || s[16] != ':' ||
      !Digits(s, 17, 2, &second)) {
    return std::nullopt;
  }
  static constexpr int kDaysIn[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1 || day > kDaysIn[month - 1] ||
      (month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = 100'000'000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      nanos += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  int64_t secs =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offset;
  return UnixTime{secs, static_cast<int32_t>(nanos)};
}

std::string FormatDuration(int64_t d) {
  // A port of Go's time.Duration.String(), writing from the end of the buffer.
  char buf[40];
  size_t w = sizeof(buf);
  uint64_t u = static_cast<uint64_t>(d);
  bool neg = d < 0;
  if (neg) u = 0 - u;
  auto fmt_frac = [&](uint64_t v, int prec) {
    bool print = false;
    for (int i = 0; i < prec; ++i) {
      uint64_t digit = v % 10;
      print = print || digit != 0;
      if (print) buf[--w] = static_cast<char>('0' + digit);
      v /= 10;
    }
    if (print) buf[--w] = '.';
    return v;
  };
  auto fmt_int = [&](uint64_t v) {
    if (v == 0) {
      buf[--w] = '0';
      return;
    }
    while (v > 0) {
      buf[--w] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
  };
  if (u < 1'000'000'000ULL) {
    int prec;
    buf[--w] = 's';
    if (u == 0) return "0s";
    if (u < 1000ULL) {
      prec = 0;
      buf[--w] = 'n';
    } else if (u < 1'000'000ULL) {
      prec = 3;
      buf[--w] = '\xb5';  // U+00B5 MICRO SIGN in UTF-8 is C2 B5
      buf[--w] = '\xc2';
    } else {
      prec = 6;
      buf[--w] = 'm';
    }
    u = fmt_frac(u, prec);
    fmt_int(u);
  } else {
    buf[--w] = 's';
    u = fmt_frac(u, 9);
    fmt_int(u % 60);
    u /= 60;
    if (u > 0) {
      buf[--w] = 'm';
      fmt_int(u % 60);
      u /= 60;
      if (u > 0) {
        buf[--w] = 'h';
        fmt_int(u);
      }
    }
  }
  if (neg) buf[--w] = '-';
  return std::string(buf + w, sizeof(buf) - w);
}

std::optional<int64_t> ParseDuration(std::string_view s) {
  // A port of Go's time.ParseDuration.
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  uint64_t total = 0;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1;
  while (!s.empty()) {
    if (!(s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return std::nullopt;
    uint64_t v = 0;
    size_t i = 0;
    bool any = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (v > (kMax - 9) / 10) return std::nullopt;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      any = true;
    }
    uint64_t frac = 0;
    double scale = 1;
    if (i < s.size() && s[i] == '.') {
      ++i;
      for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        any = true;
        if (frac > (kMax - 9) / 10) continue;  // drop precision like Go does
        frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
        scale *= 10;
      }
    }
    if (!any) return std::nullopt;
    size_t u = i;
    while (u < s.size() && s[u] != '.' && (s[u] < '0' || s[u] > '9')) ++u;
    std::string_view unit = s.substr(i, u - i);
    uint64_t mult;
    if (unit == "ns")
      mult = 1;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs")
      mult = 1000;
    else if (unit == "ms")
      mult = 1'000'000;
    else if (unit == "s")
      mult = 1'000'000'000ULL;
    else if (unit == "m")
      mult = 60'000'000'000ULL;
    else if (unit == "h")
      mult = 3'600'000'000'000ULL;
    else
      return std::nullopt;
    if (v > kMax / mult) return std::nullopt;
    v *= mult;
    if (frac > 0) {
      v += static_cast<uint64_t>(static_cast<double>(frac) * (static_cast<double>(mult) / scale));
      if (v > kMax) return std::nullopt;
    }
    total += v;
    if (total > kMax) return std::nullopt;
    s.remove_prefix(u);
  }
  if (neg) return -static_cast<int64_t>(total - 1) - 1;
  if (total > kMax - 1) return std::nullopt;
  return static_cast<int64_t>(total);
}

std::string Base64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    out += kBase64[n >> 18];
    out += kBase64[(n >> 12) & 63];
    out += kBase64[(n >> 6) & 63];
    out += kBase64[n & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    out += kBase64[n >> 18];
    out += kBase64[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t n = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
    out += kBase64[n >> 18];
    out += kBase64[(n >> 12) & 63];
    out += kBase64[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view in) {
  static const std::array<int8_t, 256> kTable = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kBase64[i])] = static_cast<int8_t>(i);
    return t;
  }();
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      char c = in[i + j];
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        v[j] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[j] = kTable[static_cast<uint8_t>(c)];
      if (v[j] < 0) return std::nullopt;
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

namespace {
// Length of the valid UTF-8 sequence at s[i], or 0 when invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  if (c < 0x80) return 1;
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(i + 1) > 0x9F) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;
    if (c == 0xF4 && b(i + 1) > 0x8F) return 0;
    return 4;
  }
  return 0;
}
}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace converge::api
