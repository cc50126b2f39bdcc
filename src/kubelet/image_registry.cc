#include "kubelet/image_registry.h"

#include <cctype>
#include <cstdio>
#include <vector>

namespace converge::kubelet {

namespace {

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool IsAlnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool IsWordChar(char c) {
  return IsAlnum(c) || c == '_';
}
bool HasUpper(std::string_view s) {
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

// path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [._] | "__" | "-"+
bool ValidPathComponent(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  size_t i = 0;
  while (i < s.size()) {
    if (IsLowerAlnum(s[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < s.size() && !IsLowerAlnum(s[i])) ++i;
    std::string_view sep = s.substr(start, i - start);
    bool dashes = sep.find_first_not_of('-') == std::string_view::npos;
    if (!(sep == "." || sep == "_" || sep == "__" || dashes)) return false;
  }
  return true;
}

// domain := host[:port], host components alphanumeric with inner dashes.
bool ValidDomain(std::string_view s) {
  std::string_view host = s;
  if (size_t colon = s.rfind(':'); colon != std::string_view::npos) {
    std::string_view port = s.substr(colon + 1);
    if (port.empty()) return false;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    host = s.substr(0, colon);
  }
  if (host.empty()) return false;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    std::string_view part =
        host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !IsAlnum(part.front()) || !IsAlnum(part.back())) return false;
    for (char c : part) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool ValidTag(std::string_view s) {
  if (s.empty() || s.size() > 128 || !IsWordChar(s.front())) return false;
  for (char c : s) {
    if (!IsWordChar(c) && c != '.' && c != '-') return false;
  }
  return true;
}

bool ValidDigest(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view algo = s.substr(0, colon);
  std::string_view hex = s.substr(colon + 1);
  if (!std::isalpha(static_cast<unsigned char>(algo.front()))) return false;
  for (char c : algo) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '+' && c != '.') return false;
  }
  if (hex.size() < 32) return false;
  for (char c : hex) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

util::Status InvalidFormat() {
  return util::InvalidArgument("invalid reference format");
}

uint64_t Fnv1a(std::string_view s, uint64_t seed) {
  uint64_t h = 14695981039346656037ull ^ (seed * 0x9e3779b97f4a7c15ull);
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  // Final avalanche (splitmix64), so that close seeds give unrelated digits.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

util::StatusOr<ImageReference> ParseImageReference(std::string_view image) {
  if (image.empty() || image.size() > 4096) return InvalidFormat();
  ImageReference ref;
  std::string_view rest = image;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    std::string_view digest = rest.substr(at + 1);
    if (!ValidDigest(digest)) return InvalidFormat();
    ref.digest = std::string(digest);
    rest = rest.substr(0, at);
  }
  size_t last_slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || colon > last_slash)) {
    std::string_view tag = rest.substr(colon + 1);
    if (!ValidTag(tag)) return InvalidFormat();
    ref.tag = std::string(tag);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return InvalidFormat();

  // splitDockerDomain: the first component is a registry host when it looks like one.
  std::string_view remainder = rest;
  size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    std::string_view first = rest.substr(0, slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
        HasUpper(first)) {
      if (!ValidDomain(first)) return InvalidFormat();
      ref.domain = std::string(first);
      remainder = rest.substr(slash + 1);
    }
  }
  if (ref.domain.empty()) ref.domain = "docker.io";
  std::string path(remainder);
  if (ref.domain == "docker.io" && path.find('/') == std::string::npos) path = "library/" + path;
  if (HasUpper(path)) {
    return util::InvalidArgument("invalid reference format: repository name (" + path +
                                 ") must be lowercase");
  }
  size_t start = 0;
  while (true) {
    size_t next = path.find('/', start);
    std::string_view part = std::string_view(path).substr(
        start, next == std::string::npos ? std::string::npos : next - start);
    if (!ValidPathComponent(part)) return InvalidFormat();
    if (next == std::string::npos) break;
    start = next + 1;
  }
  if (ref.domain.size() + 1 + path.size() > 255) {
    return util::InvalidArgument(
        "invalid reference format: repository name must not be more "
        "than 255 characters");
  }
  ref.path = std::move(path);
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  ref.normalized = ref.Repository();
  if (!ref.tag.empty()) ref.normalized += ":" + ref.tag;
  if (!ref.digest.empty()) ref.normalized += "@" + ref.digest;
  return ref;
}

std::string InvalidImageNameMessage(std::string_view image, const util::Status& parse_error) {
  std::string quoted = "\"" + std::string(image) + "\"";
  return "Failed to apply default image tag " + quoted + ": couldn't parse image name " + quoted +
         ": " + parse_error.message();
}

bool ImageExists(const ImageReference& ref, std::string* error) {
  std::string lower = ref.normalized;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string& n = ref.normalized;
  std::string host = ref.domain.substr(0, ref.domain.find(':'));
  const bool unknown_host = host == "missing.example" ||
                            (host.size() > 8 && host.compare(host.size() - 8, 8, ".invalid") == 0);
  if (unknown_host) {
    if (error) {
      std::string reference = ref.digest.empty() ? ref.tag : ref.digest;
      *error = "rpc error: code = Unknown desc = failed to pull and unpack image \"" + n +
               "\": failed to resolve reference \"" + n +
               "\": failed to do request: Head \"https://" + ref.domain + "/v2/" + ref.path +
               "/manifests/" + reference + "\": dial tcp: lookup " + host + ": no such host";
    }
    return false;
  }
  if (lower.find("doesnotexist") != std::string::npos) {
    if (error) {
      *error = "rpc error: code = NotFound desc = failed to pull and unpack image \"" + n +
               "\": failed to resolve reference \"" + n + "\": " + n + ": not found";
    }
    return false;
  }
  return true;
}

std::string HexId(std::string_view seed, size_t digits) {
  std::string out;
  out.reserve(digits + 16);
  char buf[17];
  for (uint64_t i = 0; out.size() < digits; ++i) {
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(Fnv1a(seed, i + 1)));
    out += buf;
  }
  out.resize(digits);
  return out;
}

std::string ImageId(const ImageReference& ref) {
  if (!ref.digest.empty()) return ref.Repository() + "@" + ref.digest;
  return ref.Repository() + "@sha256:" + HexId("image:" + ref.normalized);
}

int64_t ImageSizeBytes(const ImageReference& ref) {
  constexpr int64_t kMin = 5'000'000;
  constexpr int64_t kSpan = 195'000'000;
  return kMin + static_cast<int64_t>(Fnv1a("size:" + ref.normalized, 7) % kSpan);
}

std::string GoDurationMillis(std::chrono::nanoseconds d) {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms == 0) return "0s";
  std::string sign;
  if (ms < 0) {
    sign = "-";
    ms = -ms;
  }
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  int64_t hours = ms / 3'600'000;
  int64_t minutes = (ms / 60'000) % 60;
  int64_t seconds = (ms / 1000) % 60;
  int64_t frac = ms % 1000;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += std::to_string(seconds);
  if (frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), ".%03lld", static_cast<long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

}  // namespace converge::kubelet
