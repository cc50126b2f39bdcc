#include "api/schema.h"

#include <algorithm>

namespace converge::api {

bool FieldSchema::PatchStrategyIs(std::string_view s) const {
  std::string_view rest = patch_strategy;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    if (part == s) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

const FieldSchema* TypeSchema::Field(std::string_view json_name) const {
  if (by_name_.size() != fields.size()) {
    for (const FieldSchema& f : fields) {
      if (f.name == json_name) return &f;
    }
    return nullptr;
  }
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), json_name,
                             [this](uint16_t i, std::string_view n) { return fields[i].name < n; });
  if (it != by_name_.end() && fields[*it].name == json_name) return &fields[*it];
  return nullptr;
}

const FieldSchema* TypeSchema::FieldByNumber(int number) const {
  if (number <= 0) return nullptr;
  if (by_name_.size() != fields.size()) {  // no index yet
    for (const FieldSchema& f : fields) {
      if (f.number == number) return &f;
    }
    return nullptr;
  }
  if (static_cast<size_t>(number) >= by_number_.size()) return nullptr;
  uint16_t pos = by_number_[number];
  return pos == 0 ? nullptr : &fields[pos - 1];
}

const TypeSchema::InlineEmbed* TypeSchema::InlineEmbedByNumber(int number) const {
  for (const InlineEmbed& e : inline_embeds) {
    if (e.number == number) return &e;
  }
  return nullptr;
}

void TypeSchema::BuildIndex() {
  by_name_.resize(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) by_name_[i] = static_cast<uint16_t>(i);
  std::sort(by_name_.begin(), by_name_.end(),
            [this](uint16_t a, uint16_t b) { return fields[a].name < fields[b].name; });
  int max_number = 0;
  for (const FieldSchema& f : fields) max_number = std::max(max_number, f.number);
  by_number_.assign(static_cast<size_t>(max_number) + 1, 0);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].number > 0) by_number_[fields[i].number] = static_cast<uint16_t>(i + 1);
  }
}

}  // namespace converge::api
