#include "api/go_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <boost/json/serialize.hpp>

namespace converge::api {
namespace {

namespace json = boost::json;

// Beyond this depth GoJsonMarshal hands the subtree to Boost.JSON's serializer: deeper documents
// do not occur in practice, and it bounds this function's recursion.
constexpr int kMaxMarshalDepth = 1000;

constexpr char kHex[] = "0123456789abcdef";

// encoding/json's float64 encoder: 'f' format unless the magnitude is below 1e-6 or at least
// 1e21, then 'e' with a one-digit negative exponent written without padding ("1e-7").
void AppendGoJsonFloat(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";  // Go refuses to encode these; parsed JSON never holds them
    return;
  }
  char buf[64];
  const double a = std::fabs(d);
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
    std::string s(buf, r.ptr);
    const size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
    out += s;
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::fixed);
  out.append(buf, r.ptr);
}

// fmt's %v of a float64: strconv 'g' with the shortest digits, exponent form when the decimal
// exponent is below -4 or at least 6 (Go decides with precision 6 when printing shortest).
std::string GoFloatV(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const int exp = std::stoi(sci.substr(e + 1));
  if (exp < -4 || exp >= 6) return sci;
  auto f = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::fixed);
  return std::string(buf, f.ptr);
}

void Marshal(std::string& out, const json::value& v, bool sort_keys, int depth) {
  if (depth > kMaxMarshalDepth) {
    out += json::serialize(v);
    return;
  }
  switch (v.kind()) {
    case json::kind::null: out += "null"; return;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; return;
    case json::kind::int64: out += std::to_string(v.get_int64()); return;
    case json::kind::uint64: out += std::to_string(v.get_uint64()); return;
    case json::kind::double_: AppendGoJsonFloat(out, v.get_double()); return;
    case json::kind::string: AppendGoJsonString(out, v.get_string()); return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const json::value& e : v.get_array()) {
        if (!first) out += ',';
        first = false;
        Marshal(out, e, sort_keys, depth + 1);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      const json::object& o = v.get_object();
      std::vector<const json::key_value_pair*> members;
      members.reserve(o.size());
      for (const json::key_value_pair& kv : o) members.push_back(&kv);
      if (sort_keys) {
        std::stable_sort(members.begin(), members.end(),
                         [](const json::key_value_pair* a, const json::key_value_pair* b) {
                           return a->key() < b->key();
                         });
      }
      out += '{';
      bool first = true;
      for (const json::key_value_pair* kv : members) {
        if (!first) out += ',';
        first = false;
        AppendGoJsonString(out, kv->key());
        out += ':';
        Marshal(out, kv->value(), sort_keys, depth + 1);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

char32_t DecodeRune(std::string_view s, size_t i, size_t* width) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *width = 1;
  if (b0 < 0x80) return b0;
  auto cont = [&](size_t k) -> int {
    if (i + k >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[i + k]);
    return (b & 0xC0) == 0x80 ? (b & 0x3F) : -1;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    const int c1 = cont(1);
    if (c1 < 0) return 0xFFFD;
    *width = 2;
    return static_cast<char32_t>(((b0 & 0x1F) << 6) | c1);
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const int c1 = cont(1), c2 = c1 < 0 ? -1 : cont(2);
    if (c1 < 0 || c2 < 0) return 0xFFFD;
    const char32_t r = static_cast<char32_t>(((b0 & 0x0F) << 12) | (c1 << 6) | c2);
    if (r < 0x800 || (r >= 0xD800 && r <= 0xDFFF)) return 0xFFFD;  // overlong or surrogate
    *width = 3;
    return r;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const int c1 = cont(1), c2 = c1 < 0 ? -1 : cont(2), c3 = c2 < 0 ? -1 : cont(3);
    if (c1 < 0 || c2 < 0 || c3 < 0) return 0xFFFD;
    const char32_t r = static_cast<char32_t>(((b0 & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3);
    if (r < 0x10000 || r > 0x10FFFF) return 0xFFFD;
    *width = 4;
    return r;
  }
  return 0xFFFD;
}

bool GoIsPrint(char32_t r) {
  if (r < 0x20 || r == 0x7F) return false;
  if (r < 0x7F) return true;
  if (r < 0xA0) return false;  // C1 controls
  switch (r) {
    case 0xA0:
    case 0xAD:
    case 0x061C:
    case 0x06DD:
    case 0x070F:
    case 0x1680:
    case 0x180E:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0xFEFF:
    case 0xFFFE:
    case 0xFFFF: return false;
    default: break;
  }
  if (r >= 0x0600 && r <= 0x0605) return false;
  if (r >= 0x2000 && r <= 0x200F) return false;    // spaces, zero-width, LRM/RLM
  if (r >= 0x2028 && r <= 0x202E) return false;    // separators, bidi embedding
  if (r >= 0x2060 && r <= 0x206F) return false;    // invisible operators, bidi isolates
  if (r >= 0xD800 && r <= 0xF8FF) return false;    // surrogates, private use
  if (r >= 0xFFF9 && r <= 0xFFFB) return false;    // interlinear annotation
  if (r >= 0xE0000 && r <= 0xE007F) return false;  // tags
  if (r >= 0xF0000) return false;                  // private use planes
  if ((r & 0xFFFE) == 0xFFFE) return false;        // non-characters
  return r <= 0x10FFFF;
}

void AppendGoJsonString(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&') {
        out += static_cast<char>(b);
      } else {
        switch (b) {
          case '\\': out += "\\\\"; break;
          case '"': out += "\\\""; break;
          case '\b': out += "\\b"; break;
          case '\f': out += "\\f"; break;
          case '\n': out += "\\n"; break;
          case '\r': out += "\\r"; break;
          case '\t': out += "\\t"; break;
          default:
            out += "\\u00";
            out += kHex[b >> 4];
            out += kHex[b & 0xF];
        }
      }
      ++i;
      continue;
    }
    size_t width = 0;
    const char32_t r = DecodeRune(s, i, &width);
    if (r == 0xFFFD && width == 1) {
      out += "\\ufffd";
    } else if (r == 0x2028 || r == 0x2029) {
      out += r == 0x2028 ? "\\u2028" : "\\u2029";
    } else {
      out.append(s.substr(i, width));
    }
    i += width;
  }
  out += '"';
}

std::string GoJsonMarshal(const json::value& v, bool sort_keys) {
  std::string out;
  Marshal(out, v, sort_keys, 0);
  return out;
}

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  char buf[16];
  while (i < s.size()) {
    size_t width = 0;
    const char32_t r = DecodeRune(s, i, &width);
    if (r == 0xFFFD && width == 1) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
      continue;
    }
    if (r == '"' || r == '\\') {
      out += '\\';
      out += static_cast<char>(r);
    } else if (GoIsPrint(r)) {
      out.append(s.substr(i, width));
    } else {
      switch (r) {
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\v': out += "\\v"; break;
        default:
          if (r < 0x20 || r == 0x7F) {
            std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(r));
          } else if (r < 0x10000) {
            std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(r));
          } else {
            std::snprintf(buf, sizeof(buf), "\\U%08x", static_cast<unsigned>(r));
          }
          out += buf;
      }
    }
    i += width;
  }
  out += '"';
  return out;
}

std::string GoValueString(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return v.get_bool() ? "true" : "false";
    case json::kind::int64: return std::to_string(v.get_int64());
    case json::kind::uint64: return std::to_string(v.get_uint64());
    case json::kind::double_: return GoFloatV(v.get_double());
    case json::kind::string: return GoQuote(v.get_string());
    case json::kind::array: {
      std::string out = "[";
      bool first = true;
      for (const json::value& e : v.get_array()) {
        if (!first) out += ',';
        first = false;
        out += GoValueString(e);
      }
      return out + "]";
    }
    case json::kind::object: {
      std::vector<const json::key_value_pair*> members;
      for (const json::key_value_pair& kv : v.get_object()) members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      std::string out;
      for (const json::key_value_pair* kv : members) {
        out += std::string(kv->key()) + "=" + GoValueString(kv->value());
      }
      return out;
    }
  }
  return {};
}

}  // namespace converge::api
