#include "api/yaml.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <limits>

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
  Converter(size_t budget, size_t byte_budget) : budget_(budget), byte_budget_(byte_budget) {}

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
          obj[kv.first.Scalar()] = std::move(*v);
        }
        return json::value(std::move(obj));
      }
    }
    return json::value(nullptr);
  }

 private:
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
  size_t nodes_ = 0;
  size_t bytes_ = 0;
};

}  // namespace

util::StatusOr<json::value> YamlToJson(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return util::InvalidArgument(std::string("yaml: ") + e.what());
  }
  Converter c(std::max(kMinNodeBudget, text.size() * kNodesPerByte),
              std::max(kMinScalarByteBudget, text.size() * kScalarBytesPerByte));
  return c.Convert(root);
}

}  // namespace converge::api
