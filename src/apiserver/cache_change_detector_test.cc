#include "apiserver/cache_change_detector.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "api/builtin_resources.h"

namespace converge::apiserver {
namespace {

std::shared_ptr<const api::ResourceInfo> ConfigMaps() {
  for (const api::ResourceInfo& info : api::BuiltinResources()) {
    if (info.gvr.resource == "configmaps") return std::make_shared<api::ResourceInfo>(info);
  }
  return nullptr;
}

store::Event Put(const std::string& name, store::Revision revision) {
  auto kv = std::make_shared<store::KeyValue>();
  kv->key = "/registry/configmaps/default/" + name;
  kv->value = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
              R"(","namespace":"default"}})";
  kv->create_revision = revision;
  kv->mod_revision = revision;
  kv->version = 1;
  return store::Event{.type = store::Event::Type::kPut, .kv = kv};
}

TEST(CacheChangeDetectorTest, ReportsFirstLookThenOnlyNews) {
  WatchCache cache(ConfigMaps(), WatchCacheOptions{});
  cache.Reset({}, 1);
  CacheChangeDetector changes(&cache, 16);
  EXPECT_TRUE(changes.Changed());  // the first look: build from the current state
  EXPECT_FALSE(changes.Changed());
  EXPECT_FALSE(changes.Changed());
  cache.Apply({Put("a", 2)}, 2);
  EXPECT_TRUE(changes.Changed());
  EXPECT_FALSE(changes.Changed());
  cache.Advance(3);  // the revision moved without events here: no change
  EXPECT_FALSE(changes.Changed());
}

TEST(CacheChangeDetectorTest, AnEndedWatchCountsAsAChangeAndRestarts) {
  WatchCache cache(ConfigMaps(), WatchCacheOptions{});
  cache.Reset({}, 1);
  CacheChangeDetector changes(&cache, 2);
  EXPECT_TRUE(changes.Changed());
  // More events than the detector's buffer: its watch is terminated as too slow.
  for (int i = 0; i < 5; ++i) cache.Apply({Put("x" + std::to_string(i), 2 + i)}, 2 + i);
  EXPECT_TRUE(changes.Changed());
  // A relist (Reset) ends every watch; the detector starts a new one and reports the change.
  cache.Reset({}, 10);
  EXPECT_TRUE(changes.Changed());
  // What was queued before the end may take a look or two more to drain; then it is quiet, and
  // a new event is seen through the restarted watch.
  int looks = 0;
  while (changes.Changed() && looks < 3) ++looks;
  EXPECT_LT(looks, 3);
  EXPECT_FALSE(changes.Changed());
  cache.Apply({Put("y", 11)}, 11);
  EXPECT_TRUE(changes.Changed());
}

TEST(CacheChangeDetectorTest, NoCacheNeverChanges) {
  CacheChangeDetector changes(nullptr, 16);
  EXPECT_FALSE(changes.Changed());
}

}  // namespace
}  // namespace converge::apiserver
