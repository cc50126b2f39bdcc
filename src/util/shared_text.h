// SharedText: a string that objects repeating the same text share. Assigning a text looks it up
// in a process-wide table and keeps a reference to the one copy (16 bytes per holder instead of
// a 32-byte std::string and its own heap copy); the copy is freed with its last holder. For text
// many objects hold alike and that changes rarely — an image reference on every container of a
// simulated node — not for text unique to each holder.
//
// Thread-safety: a SharedText is a value (one writer or many readers); the table behind the
// assignments is shared and locked.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace converge::util {

class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string_view text) { *this = text; }                      // NOLINT: implicit
  SharedText(const std::string& text) { *this = std::string_view(text); }  // NOLINT: implicit
  SharedText(const char* text) { *this = std::string_view(text); }         // NOLINT: implicit
  SharedText& operator=(std::string_view text);
  SharedText& operator=(const std::string& text) { return *this = std::string_view(text); }
  SharedText& operator=(const char* text) { return *this = std::string_view(text); }

  const std::string& str() const { return text_ ? *text_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT: reads as the string
  bool empty() const { return !text_ || text_->empty(); }

  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const SharedText& b) { return a.str() == b.str(); }
  friend std::ostream& operator<<(std::ostream& os, const SharedText& t) { return os << t.str(); }

  // How many distinct texts the table holds (tests).
  static size_t TableSizeForTest();

 private:
  static const std::string& Empty();
  std::shared_ptr<const std::string> text_;
};

}  // namespace converge::util
