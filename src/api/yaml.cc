#include "api/yaml.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_set>

#include "api/go_json.h"

namespace converge::api {

namespace json = boost::json;

namespace {

// Output nodes allowed per input byte (plus a floor): generous for real manifests, fatal for
// exponential alias expansion.
constexpr size_t kNodesPerByte = 64;
constexpr size_t kMinNodeBudget = 100000;
// Scalar bytes (keys and values) allowed per input byte (plus a floor): a node budget alone lets
// one long anchored string, aliased many times, expand quadratically (8 KiB × 2700 aliases from a
// 16 KiB document is 22 MB).
constexpr size_t kScalarBytesPerByte = 16;
constexpr size_t kMinScalarByteBudget = 4 << 20;
// Nesting allowed in the converted document. yaml-cpp resolves an alias to an anchor whose node is
// still open (`d: &d [*d]`) into a cycle, so without a bound the recursion below only stops when
// the stack overflows. Manifests nest a few dozen levels; CRD schemas a few hundred at most.
constexpr int kMaxDepth = 1000;

class Converter {
 public:
  Converter(size_t budget, size_t byte_budget, std::vector<std::string>* duplicate_keys)
      : budget_(budget), byte_budget_(byte_budget), duplicate_keys_(duplicate_keys) {}

  util::StatusOr<json::value> Convert(const YAML::Node& node, int depth = 0) {
    if (depth > kMaxDepth) {
      return util::InvalidArgument(
          "yaml: document nests more than 1000 levels deep (or an alias refers to its own "
          "anchor)");
    }
    if (++nodes_ > budget_) {
      return util::InvalidArgument("yaml: document expands to too many nodes (excessive aliasing)");
    }
    if (node.IsScalar() && (bytes_ += node.Scalar().size()) > byte_budget_) {
      return util::InvalidArgument("yaml: document expands to too many bytes (excessive aliasing)");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null: return json::value(nullptr);
      case YAML::NodeType::Scalar: return Scalar(node);
      case YAML::NodeType::Sequence: {
        json::array arr;
        arr.reserve(node.size());
        for (const YAML::Node& item : node) {
          auto v = Convert(item, depth + 1);
          if (!v.ok()) return v.status();
          arr.push_back(std::move(*v));
        }
        return json::value(std::move(arr));
      }
      case YAML::NodeType::Map: {
        json::object obj;
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            return util::InvalidArgument("yaml: mapping keys must be scalars");
          }
          if ((bytes_ += kv.first.Scalar().size()) > byte_budget_) {
            return util::InvalidArgument(
                "yaml: document expands to too many bytes (excessive aliasing)");
          }
          auto v = Convert(kv.second, depth + 1);
          if (!v.ok()) return v.status();
          // go-yaml decodes the value before it finds that its key is taken.
          if (duplicate_keys_ != nullptr && obj.contains(kv.first.Scalar())) {
            duplicate_keys_->push_back(DuplicateKeyError(kv.first, kv.second));
          }
          obj[kv.first.Scalar()] = std::move(*v);
        }
        return json::value(std::move(obj));
      }
    }
    return json::value(nullptr);
  }

 private:
  // go-yaml v2's setMapIndex: "line %d: key %#v already set in map", the line of the value node.
  static std::string DuplicateKeyError(const YAML::Node& key, const YAML::Node& value) {
    const YAML::Mark mark = value.Mark().is_null() ? key.Mark() : value.Mark();
    std::string text;
    util::StatusOr<json::value> resolved = Scalar(key);
    if (!resolved.ok() || resolved->is_string()) {
      text = GoQuote(key.Scalar());
    } else if (resolved->is_null()) {
      text = "<nil>";
    } else {
      text = json::serialize(*resolved);
    }
    return "line " + std::to_string(mark.line + 1) + ": key " + text + " already set in map";
  }

  static util::StatusOr<json::value> Scalar(const YAML::Node& node) {
    const std::string& s = node.Scalar();
    // Quoted scalars (and explicit !!str) are strings; only plain scalars are resolved.
    if (node.Tag() != "?") return json::value(s);
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
      return json::value(nullptr);
    }
    if (s == "true" || s == "True" || s == "TRUE") return json::value(true);
    if (s == "false" || s == "False" || s == "FALSE") return json::value(false);
    if (auto i = ParseInt(s)) return json::value(*i);
    if (auto d = ParseFloat(s)) return json::value(*d);
    return json::value(s);
  }

  static std::optional<int64_t> ParseInt(const std::string& s) {
    std::string_view v = s;
    bool neg = false;
    if (!v.empty() && (v[0] == '-' || v[0] == '+')) {
      neg = v[0] == '-';
      v.remove_prefix(1);
    }
    int base = 10;
    if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
      base = 16;
      v.remove_prefix(2);
    } else if (v.size() > 2 && v[0] == '0' && (v[1] == 'o' || v[1] == 'O')) {
      base = 8;
      v.remove_prefix(2);
    }
    if (v.empty()) return std::nullopt;
    int64_t out = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, base);
    if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
    return neg ? -out : out;
  }

  static std::optional<double> ParseFloat(const std::string& s) {
    if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf") {
      return std::numeric_limits<double>::infinity();
    }
    if (s == "-.inf" || s == "-.Inf" || s == "-.INF")
      return -std::numeric_limits<double>::infinity();
    if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
    // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
    }
    if (digits == 0) return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
      size_t exp = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp;
      if (exp == 0) return std::nullopt;
    }
    if (i != s.size()) return std::nullopt;
    double d = 0;
    std::string_view v = s;
    if (!v.empty() && v[0] == '+') v.remove_prefix(1);
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (ec != std::errc()) return std::nullopt;
    return d;
  }

  const size_t budget_;
  const size_t byte_budget_;
  std::vector<std::string>* const duplicate_keys_;  // null: not reported
  size_t nodes_ = 0;
  size_t bytes_ = 0;
};

}  // namespace

util::StatusOr<json::value> YamlToJson(std::string_view text,
                                       std::vector<std::string>* duplicate_keys) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return util::InvalidArgument(std::string("yaml: ") + e.what());
  }
  Converter c(std::max(kMinNodeBudget, text.size() * kNodesPerByte),
              std::max(kMinScalarByteBudget, text.size() * kScalarBytesPerByte), duplicate_keys);
  return c.Convert(root);
}

namespace {

// Reads valid JSON as go-yaml reads a flow document, reporting repeated keys as it would: nested
// ones first, each at the line where the repeated key's value starts.
class JsonAsYamlScanner {
 public:
  explicit JsonAsYamlScanner(std::string_view text) : text_(text) {}

  util::Status Scan() {
    if (!Value(0)) return util::InvalidArgument("invalid JSON at offset " + std::to_string(pos_));
    SkipSpace();
    if (pos_ != text_.size()) {
      return util::InvalidArgument("invalid JSON at offset " + std::to_string(pos_));
    }
    return util::Status::Ok();
  }
  std::vector<std::string> TakeErrors() { return std::move(errors_); }

 private:
  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  // A string token; its decoded value in `out` (escapes resolved, enough to compare keys).
  bool String(std::string* out) {
    if (!Peek('"')) return false;
    ++pos_;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        if (out) out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return false;
      const char e = text_[pos_++];
      if (e == 'u') {
        std::optional<uint32_t> cp = Hex4();
        if (!cp) return false;
        // A surrogate pair is one code point; compared keys must decode as the parser's did.
        if (*cp >= 0xD800 && *cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
          pos_ += 2;
          std::optional<uint32_t> low = Hex4();
          if (!low) return false;
          if (*low >= 0xDC00 && *low < 0xE000) {
            *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
          } else {
            if (out) AppendUtf8(*out, 0xFFFD);
            *cp = *low;
          }
        }
        if (out) AppendUtf8(*out, *cp);
        continue;
      }
      if (out) {
        switch (e) {
          case 'n': out->push_back('\n'); break;
          case 't': out->push_back('\t'); break;
          case 'r': out->push_back('\r'); break;
          case 'b': out->push_back('\b'); break;
          case 'f': out->push_back('\f'); break;
          default: out->push_back(e);
        }
      }
    }
    return false;
  }

  std::optional<uint32_t> Hex4() {
    if (pos_ + 4 > text_.size()) return std::nullopt;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return std::nullopt;
      }
    }
    return v;
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;  // a lone surrogate
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool Value(int depth) {
    if (depth > kMaxDepth) return false;
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    const char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      std::unordered_set<std::string> keys;
      SkipSpace();
      if (Peek('}')) {
        ++pos_;
        return true;
      }
      while (true) {
        SkipSpace();
        std::string key;
        if (!String(&key)) return false;
        SkipSpace();
        if (!Peek(':')) return false;
        ++pos_;
        SkipSpace();
        const int value_line = line_;
        if (!Value(depth + 1)) return false;
        if (!keys.insert(key).second) {
          errors_.push_back("line " + std::to_string(value_line) + ": key " + GoQuote(key) +
                            " already set in map");
        }
        SkipSpace();
        if (Peek(',')) {
          ++pos_;
          continue;
        }
        if (!Peek('}')) return false;
        ++pos_;
        return true;
      }
    }
    if (c == '[') {
      ++pos_;
      SkipSpace();
      if (Peek(']')) {
        ++pos_;
        return true;
      }
      while (true) {
        if (!Value(depth + 1)) return false;
        SkipSpace();
        if (Peek(',')) {
          ++pos_;
          continue;
        }
        if (!Peek(']')) return false;
        ++pos_;
        return true;
      }
    }
    if (c == '"') return String(nullptr);
    // A number or a literal: up to the next delimiter.
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           std::string_view(",]} \t\r\n").find(text_[pos_]) == std::string_view::npos) {
      ++pos_;
    }
    return pos_ > start;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<std::string> errors_;
};

}  // namespace

util::StatusOr<std::vector<std::string>> JsonDuplicateKeysAsYaml(std::string_view text) {
  JsonAsYamlScanner scanner(text);
  CONVERGE_RETURN_IF_ERROR(scanner.Scan());
  return scanner.TakeErrors();
}

std::string YamlUnmarshalErrors(const std::vector<std::string>& errors) {
  std::string out = "yaml: unmarshal errors:";
  for (const std::string& e : errors) out += "\n  " + e;
  return out;
}

}  // namespace converge::api
