// Packed strings: many short strings held as one, each as its length (LEB128) and then its
// bytes. One allocation instead of one per string (and no 32-byte std::string per item), for
// things held by the hundred thousand: a cached object's labels and field values, a queued event.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace converge::util {

// Appends `item` to `out`.
void AppendPacked(std::string* out, std::string_view item);

// The size AppendPacked adds for `item`.
size_t PackedSize(std::string_view item);

// `items` packed into a string of exactly their size.
std::string PackStrings(std::initializer_list<std::string_view> items);

// Reads the item at *at and moves past it; false at the end (or on malformed input).
bool NextPacked(std::string_view packed, size_t* at, std::string_view* item);

}  // namespace converge::util
