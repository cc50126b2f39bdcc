#include "util/shared_text.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace converge::util {
namespace {

// Looks texts up by view, without building a std::string for each lookup.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
};

struct Table {
  std::mutex mu;
  // By text; an entry whose text every holder let go of is dropped when the table has doubled
  // since the last sweep, so the table stays within twice the texts in use.
  std::unordered_map<std::string, std::weak_ptr<const std::string>, TextHash, std::equal_to<>>
      texts;
  size_t sweep_at = 64;
};

Table& TheTable() {
  static Table* const table = new Table;  // never destroyed: holders may outlive statics
  return *table;
}

}  // namespace

SharedText& SharedText::operator=(std::string_view text) {
  if (text.empty()) {
    text_.reset();
    return *this;
  }
  if (text_ && *text_ == text) return *this;
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  auto it = t.texts.find(text);
  const bool inserted = it == t.texts.end();
  if (inserted) it = t.texts.emplace(std::string(text), std::weak_ptr<const std::string>()).first;
  std::shared_ptr<const std::string> shared = it->second.lock();
  if (!shared) {
    shared = std::make_shared<const std::string>(it->first);
    it->second = shared;
  }
  text_ = std::move(shared);
  if (inserted && t.texts.size() >= t.sweep_at) {
    std::erase_if(t.texts, [](const auto& entry) { return entry.second.expired(); });
    t.sweep_at = std::max<size_t>(64, 2 * t.texts.size());
  }
  return *this;
}

const std::string& SharedText::Empty() {
  static const std::string* const empty = new std::string;
  return *empty;
}

size_t SharedText::TableSizeForTest() {
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  return t.texts.size();
}

}  // namespace converge::util
