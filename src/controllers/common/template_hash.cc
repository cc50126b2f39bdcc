#include "controllers/common/template_hash.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace converge::controllers {

namespace json = boost::json;

namespace {

bool IsEmpty(const json::value& v) {
  return v.is_null() || (v.is_object() && v.as_object().empty()) ||
         (v.is_array() && v.as_array().empty());
}

}  // namespace

json::value CanonicalJson(const json::value& v) {
  if (v.is_object()) {
    std::vector<std::pair<std::string_view, const json::value*>> members;
    for (const auto& kv : v.as_object()) members.emplace_back(kv.key(), &kv.value());
    std::sort(members.begin(), members.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    json::object out;
    for (const auto& [key, value] : members) {
      json::value c = CanonicalJson(*value);
      if (!IsEmpty(c)) out[key] = std::move(c);
    }
    return out;
  }
  if (v.is_array()) {
    json::array out;
    for (const json::value& e : v.as_array()) out.push_back(CanonicalJson(e));
    return out;
  }
  if (v.is_int64() || v.is_uint64() || v.is_double()) {
    // 3, 3u and 3.0 are one number.
    double d = v.to_number<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
    return d;
  }
  return v;
}

bool SemanticEqual(const json::value& a, const json::value& b) {
  return json::serialize(CanonicalJson(a)) == json::serialize(CanonicalJson(b));
}

uint32_t Fnv32a(std::string_view data, uint32_t seed) {
  uint32_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string SafeEncodeString(std::string_view s) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) out.push_back(kAlphabet[c % kAlphabet.size()]);
  return out;
}

std::string ComputeHash(const json::object& pod_template, std::optional<int32_t> collision_count) {
  uint32_t h = Fnv32a(json::serialize(CanonicalJson(pod_template)));
  if (collision_count.has_value()) {
    uint32_t c = static_cast<uint32_t>(*collision_count);
    char bytes[4] = {static_cast<char>(c & 0xff), static_cast<char>((c >> 8) & 0xff),
                     static_cast<char>((c >> 16) & 0xff), static_cast<char>((c >> 24) & 0xff)};
    h = Fnv32a(std::string_view(bytes, 4), h);
  }
  return SafeEncodeString(std::to_string(h));
}

bool EqualIgnoreHash(const json::object& a, const json::object& b) {
  auto strip = [](const json::object& t) {
    json::value c = CanonicalJson(t);
    if (json::value* meta = c.as_object().if_contains("metadata"); meta && meta->is_object()) {
      json::value* labels = meta->as_object().if_contains("labels");
      if (labels != nullptr && labels->is_object())
        labels->as_object().erase(kPodTemplateHashLabel);
    }
    return json::serialize(CanonicalJson(c));
  };
  return strip(a) == strip(b);
}

}  // namespace converge::controllers
