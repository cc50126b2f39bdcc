// libFuzzer target for label and field selectors (?labelSelector=, ?fieldSelector=):
//   scripts/fuzz-smoke.sh selector_fuzz
// No input may crash the parsers; a selector that parses must print to a form that parses to
// the same selector (ToString is what the server echoes and what clients resend), and must be
// usable for matching.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/fields.h"
#include "api/labels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace converge::api;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto labels = LabelSelector::Parse(input); labels.ok()) {
    std::string printed = labels->ToString();
    auto again = LabelSelector::Parse(printed);
    if (!again.ok() || again->ToString() != printed) std::abort();
    boost::json::object l{{"app", "web"}, {"tier", "frontend"}, {"version", "1"}};
    (void)labels->Matches(&l);
    (void)labels->Matches(nullptr);
  }
  if (auto fields = FieldSelector::Parse(input); fields.ok()) {
    std::string printed = fields->ToString();
    auto again = FieldSelector::Parse(printed);
    if (!again.ok() || again->ToString() != printed) std::abort();
    (void)fields->Matches([](std::string_view f) { return std::string(f); });
  }
  return 0;
}
