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

namespace {

// The name table's hash: a field name's length and three of its bytes, mixed by a multiply. Names
// of one type rarely share all four; the probe compares whole names anyway.
uint32_t FieldNameHash(std::string_view name) {
  const size_t n = name.size();
  uint32_t h = static_cast<uint32_t>(n);
  if (n > 0) {
    h ^= static_cast<uint32_t>(static_cast<unsigned char>(name[0])) << 8;
    h ^= static_cast<uint32_t>(static_cast<unsigned char>(name[n / 2])) << 16;
    h ^= static_cast<uint32_t>(static_cast<unsigned char>(name[n - 1])) << 24;
  }
  return (h * 0x9E3779B1u) >> 7;
}

}  // namespace

const FieldSchema* TypeSchema::Field(std::string_view json_name) const {
  if (indexed_fields_ != fields.size()) {
    for (const FieldSchema& f : fields) {
      if (f.name == json_name) return &f;
    }
    return nullptr;
  }
  const size_t mask = by_name_.size() - 1;
  for (size_t slot = FieldNameHash(json_name) & mask;; slot = (slot + 1) & mask) {
    const uint16_t pos = by_name_[slot];
    if (pos == 0) return nullptr;
    const FieldSchema& f = fields[pos - 1];
    if (f.name == json_name) return &f;
  }
}

const FieldSchema* TypeSchema::FieldByNumber(int number) const {
  if (number <= 0) return nullptr;
  if (indexed_fields_ != fields.size()) {  // no index yet
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
  size_t slots = 4;
  while (slots < 2 * fields.size()) slots *= 2;
  by_name_.assign(slots, 0);
  for (size_t i = 0; i < fields.size(); ++i) {
    size_t slot = FieldNameHash(fields[i].name) & (slots - 1);
    while (by_name_[slot] != 0) {
      if (fields[by_name_[slot] - 1].name == fields[i].name) break;  // the first one wins
      slot = (slot + 1) & (slots - 1);
    }
    if (by_name_[slot] == 0) by_name_[slot] = static_cast<uint16_t>(i + 1);
  }
  int max_number = 0;
  for (const FieldSchema& f : fields) max_number = std::max(max_number, f.number);
  by_number_.assign(static_cast<size_t>(max_number) + 1, 0);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].number > 0) by_number_[fields[i].number] = static_cast<uint16_t>(i + 1);
  }
  indexed_fields_ = fields.size();
}

}  // namespace converge::api
