#include "apiserver/stored_json.h"

#include <cstddef>

namespace converge::apiserver {

namespace {

// A cursor over JSON text known to be valid: it never checks what it skips.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}

  size_t pos() const { return i_; }
  bool AtEnd() const { return i_ >= s_.size(); }
  char Peek() {
    SkipSpace();
    return AtEnd() ? '\0' : s_[i_];
  }
  void Advance() { ++i_; }

  // At a string: its contents (without quotes); *escaped tells whether it contains escapes.
  std::string_view String(bool* escaped) {
    SkipSpace();
    if (AtEnd()) {  // only in text that is not JSON: answered as "not sure"
      *escaped = true;
      return {};
    }
    const size_t begin = ++i_;  // past the opening quote
    *escaped = false;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        *escaped = true;
        ++i_;  // the escaped character, whatever it is
      }
      ++i_;
    }
    std::string_view contents = s_.substr(begin, i_ - begin);
    ++i_;  // the closing quote
    return contents;
  }

  // Skips one value of any kind.
  void SkipValue() {
    const char c = Peek();
    if (c == '"') {
      bool escaped;
      String(&escaped);
      return;
    }
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        const char d = s_[i_];
        if (d == '"') {
          bool escaped;
          String(&escaped);
          continue;
        }
        ++i_;
        if (d == '{' || d == '[') ++depth;
        if ((d == '}' || d == ']') && --depth == 0) return;
      }
      return;
    }
    // A number or a literal: up to the next delimiter.
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && !IsSpace(s_[i_])) {
      ++i_;
    }
  }

 private:
  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  void SkipSpace() {
    while (i_ < s_.size() && IsSpace(s_[i_])) ++i_;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// Walks the members of the object the scanner is at, calling fn(key) with the scanner at each
// member's value; fn must consume the value. Returns false if a key has escapes (fn is not called
// for it) or fn returns false. On success the scanner is at the object's closing brace, and
// *members holds the number of members.
template <typename Fn>
bool Members(Scanner& scan, int* members, Fn fn) {
  *members = 0;
  scan.Advance();  // '{'
  while (scan.Peek() != '}') {
    if (scan.AtEnd()) return false;  // text that is not JSON
    if (scan.Peek() == ',') scan.Advance();
    bool escaped;
    std::string_view key = scan.String(&escaped);
    if (escaped) return false;
    scan.Peek();     // to the colon
    scan.Advance();  // ':'
    ++*members;
    if (!fn(key)) return false;
  }
  return true;
}

}  // namespace

std::optional<EncodedObject> FindResourceVersionSlot(std::string_view json) {
  Scanner scan(json);
  if (scan.Peek() != '{') return std::nullopt;
  EncodedObject e;
  bool saw_metadata = false;
  int top_members = 0;
  const bool ok = Members(scan, &top_members, [&](std::string_view key) {
    if (key != "metadata") {
      scan.SkipValue();
      return true;
    }
    if (saw_metadata || scan.Peek() != '{') return false;
    saw_metadata = true;
    int meta_members = 0;
    const bool meta_ok = Members(scan, &meta_members, [&](std::string_view meta_key) {
      if (meta_key == "resourceVersion") return false;
      scan.SkipValue();
      return true;
    });
    if (!meta_ok) return false;
    e.insert_at = scan.pos();
    e.needs_comma = meta_members > 0;
    scan.Advance();  // metadata's '}'
    return true;
  });
  if (!ok) return std::nullopt;
  if (!saw_metadata) {
    e.insert_at = scan.pos();
    e.needs_comma = top_members > 0;
    e.needs_metadata = true;
  }
  return e;
}

}  // namespace converge::apiserver
