// libFuzzer target for YAML request bodies (application/yaml, application/apply-patch+yaml) and
// their repeated-key reports:
//   scripts/fuzz-smoke.sh yaml_fuzz
// No input may crash the converter, and hostile input stays bounded: alias expansion has a budget
// proportional to the input, so the JSON that comes out is never more than linearly larger than
// the YAML that went in.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "api/yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> duplicates;
  auto v = converge::api::YamlToJson(input, &duplicates);
  // Apply bodies that are JSON have their repeated keys found by a scanner of their own (run
  // only on what the JSON parser accepted).
  boost::system::error_code ec;
  boost::json::parse(input, ec);
  if (!ec && !converge::api::JsonDuplicateKeysAsYaml(input).ok()) std::abort();
  if (v.ok()) {
    // Whatever converts serializes (the server re-encodes it as the object's JSON). The budgets
    // keep it linear in the input: 16 scalar bytes and 64 nodes per input byte over a floor.
    std::string text = boost::json::serialize(*v);
    if (text.size() > (4u << 20) + 16 * size + 8 * (100000 + 64 * size)) std::abort();
  }
  return 0;
}
