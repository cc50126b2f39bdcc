// Text exactly as Go writes it, where Kubernetes clients read our output byte for byte.
//
// Server-side apply serializes values in three places whose bytes users and kubectl see: the keys
// of managedFields' fieldsV1 (`k:{"containerPort":80,"protocol":"TCP"}`, `v:"finalizer"`), the
// field paths of conflict messages (`.spec.containers[name="nginx"].image`, built with Go's %v and
// %q), and the kubectl.kubernetes.io/last-applied-configuration annotation that a server-side
// apply by kubectl rewrites (json.Marshal of a map: keys sorted). Boost.JSON's serializer differs
// from Go's in details that show there (HTML escaping, float spelling), hence these helpers.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace converge::api {

// json.Marshal(v): compact; object members in their order, or sorted by key (as Go does for maps)
// when `sort_keys`; strings escaped as encoding/json does (`<`, `>`, `&` as \u003c, \u003e, \u0026;
// U+2028 and U+2029 escaped; invalid UTF-8 replaced by U+FFFD); integers in decimal; doubles in
// Go's shortest form ("1.5", "100", "1e+21", "1e-7").
std::string GoJsonMarshal(const boost::json::value& v, bool sort_keys);

// Appends `s` as a JSON string literal (with the quotes), escaped as GoJsonMarshal does.
void AppendGoJsonString(std::string& out, std::string_view s);

// fmt's %v of a value as structured-merge-diff prints key values (value.ToString): strings
// quoted as %q (strconv.Quote), integers in decimal, doubles as %v of a float64 ("80", "1.5",
// "1e+06"), booleans, "null"; lists as "[a,b]"; maps as concatenated "k=v" pairs.
std::string GoValueString(const boost::json::value& v);

// strconv.Quote: a double-quoted Go string literal; printable runes kept, others escaped.
std::string GoQuote(std::string_view s);

// unicode.IsPrint, for the runes Kubernetes names contain. Exact for ASCII and Latin-1; above
// that, spaces other than U+0020, format characters (zero-width, bidi controls, BOM), line and
// paragraph separators, private use and non-characters are not printable and every other code
// point is treated as printable (unassigned code points are the one known difference).
bool GoIsPrint(char32_t r);

// Decodes one UTF-8 rune starting at s[i]; returns U+FFFD and a width of 1 for an invalid
// sequence, as Go's utf8.DecodeRuneInString does.
char32_t DecodeRune(std::string_view s, size_t i, size_t* width);

}  // namespace converge::api
