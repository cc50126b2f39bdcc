#include "util/time_format.h"

#include <chrono>
#include <cstdint>

namespace converge::util {

namespace {

// Writes `v` as exactly `n` decimal digits at `p` (v >= 0 and below 10^n).
void PutDigits(char* p, int64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

// Every write stamps times (creationTimestamp, managedFields, conditions, events): the calendar
// comes from <chrono>'s civil-date arithmetic and the digits are placed by hand, which costs a
// fraction of gmtime_r and snprintf.
std::string Format(WallTime t, bool micro) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);  // floor, also for times before the epoch
  const auto day = floor<days>(secs);
  const year_month_day ymd{day};
  const hh_mm_ss<seconds> hms{secs - day};
  // WallTime counts nanoseconds in 64 bits (years 1677 to 2262): always four digits.
  const int year = static_cast<int>(ymd.year());
  // "2006-01-02T15:04:05Z", or "2006-01-02T15:04:05.000000Z".
  std::string out(micro ? 27 : 20, '\0');
  char* p = out.data();
  PutDigits(p, year, 4);
  p[4] = '-';
  PutDigits(p + 5, static_cast<unsigned>(ymd.month()), 2);
  p[7] = '-';
  PutDigits(p + 8, static_cast<unsigned>(ymd.day()), 2);
  p[10] = 'T';
  PutDigits(p + 11, hms.hours().count(), 2);
  p[13] = ':';
  PutDigits(p + 14, hms.minutes().count(), 2);
  p[16] = ':';
  PutDigits(p + 17, hms.seconds().count(), 2);
  if (micro) {
    p[19] = '.';
    PutDigits(p + 20, duration_cast<microseconds>(t - secs).count(), 6);
  }
  out.back() = 'Z';
  return out;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string FormatRfc3339(WallTime t) {
  return Format(t, false);
}
std::string FormatRfc3339Micro(WallTime t) {
  return Format(t, true);
}

std::optional<WallTime> ParseRfc3339(std::string_view s) {
  int y, mo, d, h, mi, se;
  if (!Digits(s, 0, 4, &y) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &se)) {
    return std::nullopt;
  }
  size_t pos = 19;
  std::chrono::nanoseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000000;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac += std::chrono::nanoseconds((s[pos] - '0') * scale);
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  std::chrono::seconds offset{0};
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om)) {
      return std::nullopt;
    }
    offset = std::chrono::hours(oh) + std::chrono::minutes(om);
    if (s[pos] == '-') offset = -offset;
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year{y},
                                  std::chrono::month{static_cast<unsigned>(mo)},
                                  std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60) return std::nullopt;
  auto tp = std::chrono::sys_days{ymd} + std::chrono::hours(h) + std::chrono::minutes(mi) +
            std::chrono::seconds(se) - offset;
  return std::chrono::time_point_cast<WallTime::duration>(tp) +
         std::chrono::duration_cast<WallTime::duration>(frac);
}

std::string HumanDuration(std::chrono::nanoseconds d) {
  using std::to_string;
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return to_string(seconds) + "s";
  int64_t minutes = seconds / 60;
  if (minutes < 10) {
    int64_t s = seconds % 60;
    return s == 0 ? to_string(minutes) + "m" : to_string(minutes) + "m" + to_string(s) + "s";
  }
  if (minutes < 60 * 3) return to_string(minutes) + "m";
  int64_t hours = minutes / 60;
  if (hours < 8) {
    int64_t m = minutes % 60;
    return m == 0 ? to_string(hours) + "h" : to_string(hours) + "h" + to_string(m) + "m";
  }
  if (hours < 48) return to_string(hours) + "h";
  if (hours < 24 * 8) {
    int64_t h = hours % 24;
    return h == 0 ? to_string(hours / 24) + "d" : to_string(hours / 24) + "d" + to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    int64_t dy = (hours / 24) % 365;
    return dy == 0 ? to_string(hours / 24 / 365) + "y"
                   : to_string(hours / 24 / 365) + "y" + to_string(dy) + "d";
  }
  return to_string(hours / 24 / 365) + "y";
}

std::string ShortHumanDuration(std::chrono::nanoseconds d) {
  using std::to_string;
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60) return to_string(seconds) + "s";
  int64_t minutes = seconds / 60;
  if (minutes < 60) return to_string(minutes) + "m";
  int64_t hours = minutes / 60;
  if (hours < 24) return to_string(hours) + "h";
  if (hours < 24 * 365) return to_string(hours / 24) + "d";
  return to_string(hours / 24 / 365) + "y";
}

}  // namespace converge::util
