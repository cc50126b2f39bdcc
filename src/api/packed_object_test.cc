#include "api/packed_object.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace converge::api {
namespace {

constexpr const char* kPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web-7d4b9c8f6d-x2k9p", "namespace": "default",
               "uid": "0f8e6c1a-3b2d-4e5f-8a9b-1c2d3e4f5a6b", "resourceVersion": "123456",
               "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d"},
               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": "web-7d4b9c8f6d", "controller": true,
                                    "blockOwnerDeletion": true, "uid": "5e6f7a8b"}]},
  "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.2.3",
                           "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                           "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
           "nodeName": "node-00042", "terminationGracePeriodSeconds": 30,
           "priority": 0, "enableServiceLinks": true, "overhead": null,
           "weight": 0.5, "big": 18446744073709551615},
  "status": {"phase": "Running",
             "conditions": [{"type": "Ready", "status": "True",
                             "lastTransitionTime": "2026-12-06T18:00:00Z"}]}
})";

Object ParsePod() {
  auto pod = Object::Parse(kPod);
  EXPECT_TRUE(pod.ok()) << pod.status().ToString();
  return std::move(*pod);
}

// The measure and the copy agree: nothing overflowed; one block is filled exactly; of two, the
// tail is filled exactly and the head as far as the copy's requests fitted.
void ExpectTheCopyFilledWhatWasMeasured(const PackedStats& stats) {
  ASSERT_EQ(stats.overflowed, 0u);
  if (stats.blocks == 1) {
    ASSERT_EQ(stats.capacity, stats.measured);
    ASSERT_EQ(stats.used, stats.measured);
  } else {
    ASSERT_EQ(stats.blocks, 2u);
    ASSERT_EQ(stats.tail_used, stats.tail);
    ASSERT_LE(stats.used, stats.capacity);
  }
}

TEST(PackedCopyTest, EqualsItsSourceInTheSizeMeasured) {
  Object pod = ParsePod();
  PackedStats stats;
  Object packed = PackedCopy(pod.doc(), &stats);
  EXPECT_EQ(packed.doc(), pod.doc());
  EXPECT_EQ(json::serialize(packed.doc()), json::serialize(pod.doc()));
  EXPECT_NE(packed.doc().storage(), pod.doc().storage());
  EXPECT_GT(stats.capacity, 1000u);
  ExpectTheCopyFilledWhatWasMeasured(stats);
}

TEST(PackedCopyTest, ATreeBuiltOneMemberAtATimePacks) {
  // Its tables grew (and were moved) while it was built; the copy measures and fills its own.
  // ~20 KB, more than a thread's scratch memory: the measure goes on in the heap.
  json::object grown;
  json::array& items = grown["items"].emplace_array();
  for (int i = 0; i < 100; ++i) {
    json::object item;
    item["name"] = "item-with-a-name-longer-than-the-inline-buffer-" + std::to_string(i);
    item["index"] = i;
    items.push_back(std::move(item));
  }
  PackedStats stats;
  Object packed = PackedCopy(grown, &stats);
  EXPECT_EQ(packed.doc(), grown);
  EXPECT_GT(stats.capacity, 16u * 1024);
  ExpectTheCopyFilledWhatWasMeasured(stats);
}

TEST(PackedCopyTest, AnEmptyObjectPacks) {
  PackedStats stats;
  Object packed = PackedCopy(json::object(), &stats);
  EXPECT_TRUE(packed.doc().empty());
  ExpectTheCopyFilledWhatWasMeasured(stats);
}

TEST(PackedCopyTest, SizeClassesAreJemallocs) {
  // jemalloc 5's classes (`nallocx` of these requests under the server's allocator).
  const std::pair<size_t, size_t> kClasses[] = {
      {9, 16},       {16, 16},       {17, 32},       {100, 112},       {129, 160},
      {580, 640},    {1025, 1280},   {4096, 4096},   {4097, 5120},     {7748, 8192},
      {8193, 10240}, {14337, 16384}, {16385, 20480}, {100000, 114688},
  };
  for (const auto& [request, size_class] : kClasses) {
    EXPECT_EQ(AllocatorSizeClass(request), size_class) << request;
  }
}

TEST(PackedCopyTest, TreesOfEverySizeTakeNoMoreThanOneBlockAndMostTakeLess) {
  // Trees from ~100 bytes to ~20 KB: each is copied exactly, into blocks whose size classes add
  // up to no more than one block of the copy's size would take; where the copy lies above a
  // class, a head of that class and a small tail take less.
  json::object tree;
  json::array& items = tree["items"].emplace_array();
  size_t split = 0;
  size_t saved = 0;
  for (int i = 0; i < 200; ++i) {
    items.push_back(json::object{
        {"name", "an-item-name-beyond-the-inline-buffer-" + std::to_string(i)}, {"index", i}});
    PackedStats stats;
    Object packed = PackedCopy(tree, &stats);
    ASSERT_EQ(packed.doc(), tree) << i;
    ASSERT_NO_FATAL_FAILURE(ExpectTheCopyFilledWhatWasMeasured(stats)) << i;
    const size_t one_block = AllocatorSizeClass(stats.measured);
    ASSERT_LE(stats.allocated, one_block) << i;
    if (stats.blocks == 2) {
      ++split;
      saved += one_block - stats.allocated;
      ASSERT_LT(stats.allocated, one_block) << i << ": two blocks only where they take less";
    }
  }
  EXPECT_GT(split, 100u);
  EXPECT_GT(saved / split, 256u) << "on average a split saves a good part of a class step";
}

TEST(PackedCopyTest, CopiesTakenFromItOutliveItAndCanBeChanged) {
  Object pod = ParsePod();
  json::value spec;
  Object edited;
  {
    auto packed = std::make_shared<const Object>(PackedCopy(pod.doc()));
    spec = packed->doc().at("spec");  // takes the packed storage: grows on the heap from here
    edited = *packed;
  }
  // The packed object is gone; its resource lives on in the copies.
  EXPECT_EQ(spec, pod.doc().at("spec"));
  spec.as_object()["nodeName"] = "node-with-a-much-longer-name-than-before-00042";
  spec.as_object()["containers"].as_array().emplace_back(json::object{{"name", "sidecar"}});
  EXPECT_EQ(spec.at("containers").as_array().size(), 2u);
  edited.mutable_metadata()["labels"].as_object()["tier"] = "frontend-tier-label-value";
  edited.mutable_doc().erase("status");
  EXPECT_EQ(edited.label("tier"), "frontend-tier-label-value");
  EXPECT_EQ(edited.label("app"), "web");
  EXPECT_FALSE(edited.doc().contains("status"));
}

TEST(PackedCopyTest, ManyThreadsCopyFromOnePackedObjectAtOnce) {
  Object pod = ParsePod();
  PackedStats stats;
  auto packed = std::make_shared<const Object>(PackedCopy(pod.doc(), &stats));
  EXPECT_EQ(stats.overflowed, 0u);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        Object copy = *packed;
        copy.mutable_metadata()["name"] = "copy-" + std::to_string(t) + "-" + std::to_string(i);
        json::value status = packed->doc().at("status");
        status.as_object()["phase"] = "Succeeded";
        if (packed->doc().at("status").at("phase") != "Running") ++mismatches[t];
        if (copy.doc().at("spec") != pod.doc().at("spec")) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  EXPECT_EQ(packed->doc(), pod.doc());
}

}  // namespace
}  // namespace converge::api
