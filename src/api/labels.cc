#include "api/labels.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace converge::api {

namespace json = boost::json;

namespace {

bool IsAlnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: lowercase alphanumerics, '-' and '.', alphanumeric at both ends.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return lower_alnum(c) || c == '-' || c == '.'; });
}

enum class Tok {
  kEnd,
  kIdent,
  kNot,
  kEq,
  kDoubleEq,
  kNotEq,
  kIn,
  kNotIn,
  kOpen,
  kClose,
  kComma,
  kGt,
  kLt
};

bool IsSpecial(char c) {
  return c == '!' || c == '=' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Tok Next(std::string* text) {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    text->clear();
    if (pos_ >= s_.size()) return Tok::kEnd;
    char c = s_[pos_];
    if (IsSpecial(c)) {
      if (c == '!' && Peek(1) == '=') return Take(2, "!=", text, Tok::kNotEq);
      if (c == '=' && Peek(1) == '=') return Take(2, "==", text, Tok::kDoubleEq);
      switch (c) {
        case '!': return Take(1, "!", text, Tok::kNot);
        case '=': return Take(1, "=", text, Tok::kEq);
        case '(': return Take(1, "(", text, Tok::kOpen);
        case ')': return Take(1, ")", text, Tok::kClose);
        case ',': return Take(1, ",", text, Tok::kComma);
        case '>': return Take(1, ">", text, Tok::kGt);
        default: return Take(1, "<", text, Tok::kLt);
      }
    }
    size_t start = pos_;
    while (pos_ < s_.size() && !IsSpecial(s_[pos_]) &&
           !std::isspace(static_cast<unsigned char>(s_[pos_]))) {
      ++pos_;
    }
    *text = std::string(s_.substr(start, pos_ - start));
    if (*text == "in") return Tok::kIn;
    if (*text == "notin") return Tok::kNotIn;
    return Tok::kIdent;
  }

 private:
  char Peek(size_t ahead) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  Tok Take(size_t n, const char* lit, std::string* text, Tok t) {
    pos_ += n;
    *text = lit;
    return t;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// A one-token look-ahead parser over Lexer.
class Parser {
 public:
  explicit Parser(std::string_view s) : lex_(s) { Advance(); }

  util::StatusOr<LabelSelector> Parse() {
    LabelSelector sel;
    if (tok_ == Tok::kEnd) return sel;
    while (true) {
      auto req = ParseRequirement();
      if (!req.ok()) return req.status();
      sel.Add(std::move(*req));
      if (tok_ == Tok::kEnd) return sel;
      if (tok_ != Tok::kComma) return Expected("',' or end of string");
      Advance();
      // A trailing comma is tolerated upstream only before the end: "a=b," is an error.
      if (tok_ == Tok::kEnd) return Expected("identifier");
    }
  }

 private:
  void Advance() { tok_ = lex_.Next(&text_); }

  util::Status Expected(std::string_view what) const {
    return util::InvalidArgument("unable to parse requirement: found '" + text_ +
                                 "', expected: " + std::string(what));
  }

  util::StatusOr<LabelSelector::Requirement> ParseRequirement() {
    LabelSelector::Requirement r;
    bool negated = false;
    if (tok_ == Tok::kNot) {
      negated = true;
      Advance();
    }
    if (tok_ != Tok::kIdent) return Expected("identifier");
    r.key = text_;
    if (auto errs = ValidateQualifiedName(r.key); !errs.empty()) {
      return util::InvalidArgument("unable to parse requirement: key: Invalid value: \"" + r.key +
                                   "\": " + errs.front());
    }
    Advance();
    if (negated) {
      r.op = LabelSelector::Op::kDoesNotExist;
      if (tok_ != Tok::kComma && tok_ != Tok::kEnd) return Expected("',' or end of string");
      return r;
    }
    switch (tok_) {
      case Tok::kComma:
      case Tok::kEnd: r.op = LabelSelector::Op::kExists; return r;
      case Tok::kEq:
      case Tok::kDoubleEq:
      case Tok::kNotEq:
      case Tok::kGt:
      case Tok::kLt: {
        r.op = tok_ == Tok::kNotEq ? LabelSelector::Op::kNotEquals
               : tok_ == Tok::kGt  ? LabelSelector::Op::kGreaterThan
               : tok_ == Tok::kLt  ? LabelSelector::Op::kLessThan
                                   : LabelSelector::Op::kEquals;
        Advance();
        std::string value;
        if (tok_ == Tok::kIdent || tok_ == Tok::kIn || tok_ == Tok::kNotIn) {
          value = text_;
          Advance();
        } else if (tok_ != Tok::kComma && tok_ != Tok::kEnd) {
          return Expected("identifier");
        }
        if (r.op == LabelSelector::Op::kGreaterThan || r.op == LabelSelector::Op::kLessThan) {
          int64_t n = 0;
          auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
          if (ec != std::errc() || p != value.data() + value.size()) {
            return util::InvalidArgument(
                "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an "
                "integer");
          }
        } else if (auto errs = ValidateLabelValue(value); !errs.empty()) {
          return util::InvalidArgument("unable to parse requirement: values[0][" + r.key +
                                       "]: Invalid value: \"" + value + "\": " + errs.front());
        }
        r.values.push_back(std::move(value));
        return r;
      }
      case Tok::kIn:
      case Tok::kNotIn: {
        r.op = tok_ == Tok::kIn ? LabelSelector::Op::kIn : LabelSelector::Op::kNotIn;
        Advance();
        if (tok_ != Tok::kOpen) return Expected("'('");
        Advance();
        while (true) {
          std::string value;
          if (tok_ == Tok::kIdent || tok_ == Tok::kIn || tok_ == Tok::kNotIn) {
            value = text_;
            Advance();
          }
          if (auto errs = ValidateLabelValue(value); !errs.empty()) {
            return util::InvalidArgument("unable to parse requirement: values[" +
                                         std::to_string(r.values.size()) + "][" + r.key +
                                         "]: Invalid value: \"" + value + "\": " + errs.front());
          }
          r.values.push_back(std::move(value));
          if (tok_ == Tok::kClose) break;
          if (tok_ != Tok::kComma) return Expected("',' or ')'");
          Advance();
        }
        Advance();
        std::sort(r.values.begin(), r.values.end());
        r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
        return r;
      }
      default: return Expected("'=', '!=', '==', 'in', 'notin', '>', '<', ',' or end of string");
    }
  }

  Lexer lex_;
  Tok tok_ = Tok::kEnd;
  std::string text_;
};

std::string_view OpString(LabelSelector::Op op) {
  switch (op) {
    case LabelSelector::Op::kIn: return " in ";
    case LabelSelector::Op::kNotIn: return " notin ";
    case LabelSelector::Op::kEquals: return "=";
    case LabelSelector::Op::kNotEquals: return "!=";
    case LabelSelector::Op::kGreaterThan: return ">";
    case LabelSelector::Op::kLessThan: return "<";
    default: return "";
  }
}

}  // namespace

std::vector<std::string> ValidateQualifiedName(std::string_view name) {
  std::vector<std::string> errs;
  std::string_view n = name;
  auto slash = name.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = name.substr(0, slash);
    n = name.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else if (!IsDnsSubdomain(prefix)) {
      errs.push_back(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
          "characters, '-' or '.', and must start and end with an alphanumeric character");
    }
  }
  if (n.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (n.size() > 63) {
    errs.push_back("name part must be no more than 63 characters");
  } else if (!IsQualifiedNamePart(n)) {
    errs.push_back(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return errs;
}

std::vector<std::string> ValidateLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.empty()) return errs;
  if (value.size() > 63) errs.push_back("must be no more than 63 characters");
  if (!IsQualifiedNamePart(value)) {
    errs.push_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

bool LabelSelector::Requirement::Matches(ObjectView labels) const {
  const View v = labels.if_contains(key);
  const std::string_view have = v.as_string();
  auto in_values = [&] { return std::binary_search(values.begin(), values.end(), have); };
  switch (op) {
    case Op::kIn:
    case Op::kEquals: return v && in_values();
    case Op::kNotIn:
    case Op::kNotEquals: return !v || !in_values();
    case Op::kExists: return static_cast<bool>(v);
    case Op::kDoesNotExist: return !v;
    case Op::kGreaterThan:
    case Op::kLessThan: {
      if (!v || values.empty()) return false;
      int64_t lhs = 0, rhs = 0;
      auto r1 = std::from_chars(have.data(), have.data() + have.size(), lhs);
      auto r2 = std::from_chars(values[0].data(), values[0].data() + values[0].size(), rhs);
      if (r1.ec != std::errc() || r2.ec != std::errc()) return false;
      return op == Op::kGreaterThan ? lhs > rhs : lhs < rhs;
    }
  }
  return false;
}

LabelSelector LabelSelector::Nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

util::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  return Parser(text).Parse();
}

util::StatusOr<LabelSelector> LabelSelector::FromLabelSelector(View selector) {
  if (!selector || selector->is_null()) return Nothing();
  if (!selector->is_object()) return util::InvalidArgument("selector must be an object");
  LabelSelector sel;
  const ObjectView o = selector.get_object();
  if (auto it = o.find("matchLabels"); it != o.end() && it->value().is_object()) {
    for (const auto& [k, v] : it->value().get_object()) {
      if (!v.is_string()) return util::InvalidArgument("matchLabels values must be strings");
      sel.Add({std::string(k), Op::kEquals, {std::string(v.get_string())}});
    }
  }
  if (auto it = o.find("matchExpressions"); it != o.end() && it->value().is_array()) {
    for (const View e : it->value().get_array()) {
      if (!e.is_object()) return util::InvalidArgument("matchExpressions items must be objects");
      const ObjectView eo = e.get_object();
      Requirement r;
      if (auto k = eo.find("key"); k != eo.end() && k->value().is_string()) {
        r.key = k->value().get_string();
      }
      std::string_view op;
      if (auto p = eo.find("operator"); p != eo.end() && p->value().is_string()) {
        op = p->value().get_string();
      }
      if (auto vs = eo.find("values"); vs != eo.end() && vs->value().is_array()) {
        for (const View v : vs->value().get_array()) {
          if (v.is_string()) r.values.emplace_back(v.get_string());
        }
      }
      if (op == "In") {
        r.op = Op::kIn;
      } else if (op == "NotIn") {
        r.op = Op::kNotIn;
      } else if (op == "Exists") {
        r.op = Op::kExists;
      } else if (op == "DoesNotExist") {
        r.op = Op::kDoesNotExist;
      } else {
        return util::InvalidArgument("\"" + std::string(op) +
                                     "\" is not a valid label selector operator");
      }
      if ((r.op == Op::kIn || r.op == Op::kNotIn) && r.values.empty()) {
        return util::InvalidArgument("for 'in', 'notin' operators, values set can't be empty");
      }
      if ((r.op == Op::kExists || r.op == Op::kDoesNotExist) && !r.values.empty()) {
        return util::InvalidArgument(
            "values: Invalid value: must be empty for the 'exists' and 'doesnotexist' operators");
      }
      std::sort(r.values.begin(), r.values.end());
      r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
      sel.Add(std::move(r));
    }
  }
  return sel;
}

LabelSelector LabelSelector::FromMap(const std::map<std::string, std::string>& labels) {
  LabelSelector sel;
  for (const auto& [k, v] : labels) sel.Add({k, Op::kEquals, {v}});
  return sel;
}

void LabelSelector::Add(Requirement r) {
  auto pos =
      std::upper_bound(requirements_.begin(), requirements_.end(), r,
                       [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  requirements_.insert(pos, std::move(r));
}

bool LabelSelector::Matches(ObjectView labels) const {
  if (nothing_) return false;
  for (const Requirement& r : requirements_) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    if (r.op == Op::kDoesNotExist) out += '!';
    out += r.key;
    out += OpString(r.op);
    if (r.op == Op::kIn || r.op == Op::kNotIn) {
      out += '(';
      for (size_t i = 0; i < r.values.size(); ++i) {
        if (i) out += ',';
        out += r.values[i];
      }
      out += ')';
    } else if (r.op != Op::kExists && r.op != Op::kDoesNotExist && !r.values.empty()) {
      out += r.values[0];
    }
  }
  return out;
}

}  // namespace converge::api
