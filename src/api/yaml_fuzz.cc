// libFuzzer target for YAML request bodies (application/yaml, application/apply-patch+yaml):
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

#include "api/yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto v = converge::api::YamlToJson(input);
  if (v.ok()) {
    // Whatever converts serializes (the server re-encodes it as the object's JSON). The budgets
    // keep it linear in the input: 16 scalar bytes and 64 nodes per input byte over a floor.
    std::string text = boost::json::serialize(*v);
    if (text.size() > (4u << 20) + 16 * size + 8 * (100000 + 64 * size)) std::abort();
  }
  return 0;
}
