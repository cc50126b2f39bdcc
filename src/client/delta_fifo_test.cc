#include "client/delta_fifo.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/indexer.h"

namespace converge::client {
namespace {

api::ObjectPtr Obj(const std::string& name, const std::string& rv, const std::string& ns = "ns") {
  api::Object o;
  o.SetGvk({"", "v1", "ConfigMap"});
  o.set_namespace(ns);
  o.set_name(name);
  o.set_resource_version(rv);
  return std::make_shared<const api::Object>(std::move(o));
}

// "Added:1,Updated:2,Deleted?:3" — the delta types with resourceVersions; "?" marks a tombstone.
std::string Describe(const std::vector<Delta>& deltas) {
  std::string out;
  for (const Delta& d : deltas) {
    if (!out.empty()) out += ",";
    out += DeltaTypeName(d.type);
    if (d.final_state_unknown) out += "?";
    out += ":";
    out += d.object ? std::string(d.object->resource_version()) : "null";
  }
  return out;
}

// Pops one item; returns "key=deltas".
std::string PopOne(DeltaFIFO& f, bool* initial = nullptr) {
  std::string out;
  util::Status s = f.Pop([&](Deltas& d, bool is_initial) {
    out = d.key.ToString() + "=" + Describe(d.items);
    if (initial) *initial = is_initial;
  });
  EXPECT_TRUE(s.ok());
  return out;
}

TEST(DeltaFifoTest, CompressesChangesPerKeyAndKeepsFirstDirtyOrder) {
  DeltaFIFO f;
  f.Add(Obj("a", "1"));
  f.Add(Obj("b", "2"));
  f.Update(Obj("a", "3"));
  f.Update(Obj("a", "4"));
  f.Delete(Obj("b", "5"));
  EXPECT_EQ(f.size(), 2u);
  EXPECT_EQ(PopOne(f), "ns/a=Added:1,Updated:3,Updated:4");
  EXPECT_EQ(PopOne(f), "ns/b=Added:2,Deleted:5");
  // A key that is popped and dirtied again goes to the back.
  f.Add(Obj("c", "6"));
  f.Update(Obj("a", "7"));
  EXPECT_EQ(PopOne(f), "ns/c=Added:6");
  EXPECT_EQ(PopOne(f), "ns/a=Updated:7");
}

TEST(DeltaFifoTest, ConsecutiveDeletionsCollapsePreferringTheObservedOne) {
  Indexer known;
  known.Upsert(Obj("a", "1"));
  known.Upsert(Obj("b", "1"));
  DeltaFIFO f({.known_objects = &known});
  // Observed, then a relist tombstone: the observed deletion (with the real final state) stays.
  f.Delete(Obj("a", "5"));
  f.Replace({}, "9");
  EXPECT_EQ(Describe(f.Pending({"ns", "a"})), "Deleted:5");
  // Tombstone first, then an observed deletion: the observed one replaces it.
  f.Replace({Obj("a", "9")}, "10");  // nothing for b in the list: tombstone with the cached state
  EXPECT_EQ(Describe(f.Pending({"ns", "b"})), "Deleted?:1");
  f.Delete(Obj("b", "8"));
  EXPECT_EQ(Describe(f.Pending({"ns", "b"})), "Deleted:8");
}

TEST(DeltaFifoTest, DeleteOfAnUnknownKeyIsDropped) {
  Indexer known;
  DeltaFIFO f({.known_objects = &known});
  f.Delete(Obj("ghost", "3"));
  EXPECT_EQ(f.size(), 0u);
  known.Upsert(Obj("cached", "1"));
  f.Delete(Obj("cached", "4"));
  EXPECT_EQ(Describe(f.Pending({"ns", "cached"})), "Deleted:4");
}

TEST(DeltaFifoTest, ReplaceEmitsTombstonesForEverythingMissing) {
  // The consumer's cache knows a, b and c; d has an Add queued that was never processed.
  Indexer known;
  known.Upsert(Obj("a", "1"));
  known.Upsert(Obj("b", "2"));
  known.Upsert(Obj("c", "3"));
  DeltaFIFO f({.known_objects = &known});
  f.Add(Obj("d", "4"));
  f.Update(Obj("c", "5"));
  // The relist (after a watch outage) has a and a new e: b, c and d were deleted meanwhile.
  f.Replace({Obj("a", "6"), Obj("e", "7")}, "8");

  std::map<std::string, std::string> got;
  while (f.size() > 0) {
    std::string item = PopOne(f);
    got[item.substr(0, item.find('='))] = item.substr(item.find('=') + 1);
  }
  EXPECT_EQ(got["ns/a"], "Replaced:6");
  EXPECT_EQ(got["ns/e"], "Replaced:7");
  // Known only to the cache: the tombstone carries the cached state.
  EXPECT_EQ(got["ns/b"], "Deleted?:2");
  // Queued: the tombstone carries the newest queued state, after what was queued.
  EXPECT_EQ(got["ns/c"], "Updated:5,Deleted?:5");
  EXPECT_EQ(got["ns/d"], "Added:4,Deleted?:4");
  EXPECT_EQ(got.size(), 5u);
}

TEST(DeltaFifoTest, ResyncSkipsKeysWithQueuedChangesAndPendingDeletions) {
  Indexer known;
  known.Upsert(Obj("a", "1"));
  known.Upsert(Obj("b", "1"));
  DeltaFIFO f({.known_objects = &known});
  f.Update(Obj("b", "2"));  // newer than the cache: a Sync with the cached b would go back
  f.Resync();
  EXPECT_EQ(Describe(f.Pending({"ns", "a"})), "Sync:1");
  EXPECT_EQ(Describe(f.Pending({"ns", "b"})), "Updated:2");
}

TEST(DeltaFifoTest, HasSyncedAfterTheFirstListIsPopped) {
  DeltaFIFO f;
  EXPECT_FALSE(f.HasSynced());
  f.Replace({Obj("a", "1"), Obj("b", "1")}, "1");
  EXPECT_FALSE(f.HasSynced());
  f.Add(Obj("c", "2"));  // arrives after the list: not part of the initial population
  bool initial = false;
  PopOne(f, &initial);
  EXPECT_TRUE(initial);
  EXPECT_FALSE(f.HasSynced());
  bool synced_after = false;
  ASSERT_TRUE(f.Pop([&](Deltas&, bool is_initial) { initial = is_initial; }, &synced_after).ok());
  EXPECT_TRUE(initial);
  EXPECT_TRUE(synced_after);
  EXPECT_TRUE(f.HasSynced());
  PopOne(f, &initial);
  EXPECT_FALSE(initial);

  DeltaFIFO empty;
  empty.Replace({}, "1");
  EXPECT_TRUE(empty.HasSynced());  // an empty first list syncs at once
}

TEST(DeltaFifoTest, PopWaitsAndCloseDrainsThenCancels) {
  DeltaFIFO f;
  std::string got;
  std::thread consumer([&] { got = PopOne(f); });
  f.Add(Obj("a", "1"));
  consumer.join();
  EXPECT_EQ(got, "ns/a=Added:1");
  f.Add(Obj("b", "2"));
  f.Close();
  EXPECT_EQ(PopOne(f), "ns/b=Added:2");
  EXPECT_EQ(f.Pop([](Deltas&, bool) {}).code(), util::Code::kCancelled);
}

TEST(DeltaFifoTest, TryPopTakesTheOldestKeyOrReturnsAtOnceWhenEmpty) {
  DeltaFIFO f;
  int calls = 0;
  auto count = [&](Deltas&, bool) { ++calls; };
  EXPECT_FALSE(f.TryPop(count));
  EXPECT_EQ(calls, 0);
  f.Replace({Obj("a", "1"), Obj("b", "2")}, "2");
  f.Update(Obj("a", "3"));
  std::string got;
  bool initial = false;
  bool synced = true;
  ASSERT_TRUE(f.TryPop(
      [&](Deltas& d, bool is_initial) {
        got = d.key.ToString() + "=" + Describe(d.items);
        initial = is_initial;
      },
      &synced));
  EXPECT_EQ(got, "ns/a=Replaced:1,Updated:3");
  EXPECT_TRUE(initial);
  EXPECT_FALSE(synced) << "b of the initial list is still queued";
  ASSERT_TRUE(f.TryPop(count, &synced));
  EXPECT_TRUE(synced);
  EXPECT_FALSE(f.TryPop(count));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(f.size(), 0u);
}

}  // namespace
}  // namespace converge::client
