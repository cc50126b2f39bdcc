#include "api/fields.h"

namespace converge::api {

namespace {

// Splits on unescaped commas; keeps escapes (they are resolved per value).
std::vector<std::string> SplitTerms(std::string_view s) {
  std::vector<std::string> terms;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      cur += c;
      cur += s[++i];
    } else if (c == ',') {
      terms.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  terms.push_back(std::move(cur));
  return terms;
}

util::StatusOr<std::string> Unescape(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\') {
      if (i + 1 >= v.size())
        return util::InvalidArgument("invalid field selector: trailing backslash");
      char n = v[++i];
      if (n != '\\' && n != ',' && n != '=') {
        return util::InvalidArgument(
            std::string("invalid field selector: invalid escape sequence: \\") + n);
      }
      out += n;
    } else if (v[i] == '=' || v[i] == ',') {
      return util::InvalidArgument("invalid field selector: unescaped " + std::string(1, v[i]) +
                                   " in value");
    } else {
      out += v[i];
    }
  }
  return out;
}

std::string Escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

util::StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector sel;
  if (text.empty()) return sel;
  for (const std::string& term : SplitTerms(text)) {
    if (term.empty()) continue;
    Requirement r;
    // The earliest operator wins, "!=" and "==" before "=" at one position (upstream's
    // splitTerm): "a=b==c" is a = "b==c", not "a=b" == "c".
    size_t op_pos = term.find_first_of("!=");
    while (op_pos != std::string::npos && term[op_pos] == '!' &&
           (op_pos + 1 >= term.size() || term[op_pos + 1] != '=')) {
      op_pos = term.find_first_of("!=", op_pos + 1);
    }
    size_t op_len = 1;
    if (op_pos != std::string::npos && term[op_pos] == '!') {
      r.equals = false;
      op_len = 2;
    } else if (op_pos != std::string::npos && term.compare(op_pos, 2, "==") == 0) {
      op_len = 2;
    }
    if (op_pos == std::string::npos) {
      return util::InvalidArgument("invalid selector: '" + std::string(text) +
                                   "'; can't understand '" + term + "'");
    }
    r.field = term.substr(0, op_pos);
    auto value = Unescape(std::string_view(term).substr(op_pos + op_len));
    if (!value.ok()) return value.status();
    r.value = std::move(*value);
    sel.requirements_.push_back(std::move(r));
  }
  return sel;
}

bool FieldSelector::Matches(const std::function<std::string(std::string_view)>& get) const {
  for (const Requirement& r : requirements_) {
    if ((get(r.field) == r.value) != r.equals) return false;
  }
  return true;
}

const std::string* FieldSelector::RequiredValue(std::string_view field) const {
  for (const Requirement& r : requirements_) {
    if (r.equals && r.field == field) return &r.value;
  }
  return nullptr;
}

std::string FieldSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    out += r.field;
    out += r.equals ? "=" : "!=";
    out += Escape(r.value);
  }
  return out;
}

}  // namespace converge::api
