#include "apiserver/stored_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/builtin_resources.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

// Objects of every shape the splice point depends on.
const std::vector<std::string>& Documents() {
  static const std::vector<std::string> docs = {
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"default"},"spec":{}})",
      R"({"metadata":{}})",
      R"({"kind":"X","metadata":{}})",
      R"({})",
      R"({"kind":"NoMetadata","spec":{"x":[1,2,{"metadata":{"y":"}"}}]}})",
      R"({"spec":{"metadata":{"a":1}},"metadata":{"name":"after-a-nested-metadata"}})",
      R"({"metadata":{"name":"q","annotations":{"a\"b}":"{\"metadata\":{}}","c":"\\"}},"x":null})",
      R"({"a":true,"b":false,"c":-1.5e3,"metadata":{"labels":{"k":"v"},"finalizers":["x","y"]}})",
      R"({"data":{"k":"line\nwith \"quotes\" and \\ and \u00e9"},"metadata":{"name":"u"},"z":[]})",
  };
  return docs;
}

TEST(StoredJsonTest, FindsWhereEncodeObjectSplices) {
  for (const std::string& text : Documents()) {
    EncodedObject encoded = EncodeObject(json::parse(text).as_object());
    std::optional<EncodedObject> found = FindResourceVersionSlot(encoded.json);
    ASSERT_TRUE(found) << encoded.json;
    EXPECT_EQ(found->insert_at, encoded.insert_at) << encoded.json;
    EXPECT_EQ(found->needs_comma, encoded.needs_comma) << encoded.json;
    EXPECT_EQ(found->needs_metadata, encoded.needs_metadata) << encoded.json;
  }
}

TEST(StoredJsonTest, SpliceIntoIndentedJsonGivesTheSameObject) {
  for (const std::string& text : Documents()) {
    json::value parsed = json::parse(text);
    // The same document with whitespace everywhere a JSON writer may put it.
    std::string spaced;
    bool in_string = false;
    bool escape = false;
    for (char c : json::serialize(parsed)) {
      spaced.push_back(c);
      if (in_string) {
        if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') in_string = true;
      if (c == ',' || c == ':' || c == '{' || c == '[') spaced += " \n\t";
    }
    ASSERT_EQ(json::parse(spaced), parsed) << spaced;
    std::optional<EncodedObject> found = FindResourceVersionSlot(spaced);
    ASSERT_TRUE(found) << spaced;
    found->json = spaced;
    json::value spliced = json::parse(found->WithResourceVersion(42));
    json::object& expected = parsed.as_object();
    if (!expected.contains("metadata")) expected["metadata"] = json::object();
    expected["metadata"].as_object()["resourceVersion"] = "42";
    EXPECT_EQ(spliced, expected) << spaced;
  }
}

TEST(StoredJsonTest, ObjectsReadFromTheStoreAreTheBytesAnEncodeWouldGive) {
  const api::ResourceInfo* pods = nullptr;
  for (const api::ResourceInfo& r : api::BuiltinResources()) {
    if (r.gvr.group.empty() && r.gvr.resource == "pods") pods = &r;
  }
  ASSERT_NE(pods, nullptr);
  for (const std::string& text : Documents()) {
    store::KeyValue kv;
    kv.key = "/registry/pods/default/a";
    kv.value = EncodeObject(json::parse(text).as_object()).json;
    kv.mod_revision = 1234;
    auto read = CachedObject::FromKeyValue(*pods, kv);
    ASSERT_TRUE(read.ok()) << read.status().message();
    auto parsed = api::Object::Parse(kv.value);
    ASSERT_TRUE(parsed.ok());
    CachedObjectPtr encoded = CachedObject::FromObject(*pods, kv.key, std::move(*parsed), 1234);
    EXPECT_EQ(*(*read)->json(), *encoded->json());
    EXPECT_EQ((*read)->rv_value_at, encoded->rv_value_at);
    EXPECT_EQ((*read)->rv_value_len, encoded->rv_value_len);
    EXPECT_EQ((*read)->labels, encoded->labels);
    EXPECT_EQ((*read)->field_values, encoded->field_values);
  }
}

TEST(StoredJsonTest, DeclinesWhatItCannotBeSureOf) {
  for (std::string_view text : {
           R"({"metadata":{"name":"a","resourceVersion":"5"}})",    // already has one
           R"({"meta\u0064ata":{"name":"a"}})",                     // an escaped key
           R"({"metadata":{"resource\u0056ersion":"5"}})",          // an escaped key inside
           R"({"metadata":{"name":"a"},"metadata":{"name":"b"}})",  // twice
           R"({"metadata":"not an object"})",
           R"({"metadata":null})",
           R"([1,2])",
           // Not JSON at all (callers parse first; the scan still ends and declines).
           R"({"metadata":{"name":"a")",
           R"({"abc)",
           R"({"metadata":{"a":[1,{)",
           "{",
           "",
       }) {
    EXPECT_FALSE(FindResourceVersionSlot(text)) << text;
  }
}

}  // namespace
}  // namespace converge::apiserver
