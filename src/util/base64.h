// Standard base64 (RFC 4648, with padding), as JSON encodes []byte fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace converge::util {

std::string Base64Encode(std::string_view data);
// nullopt when `text` is not valid padded base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace converge::util
