#include "apiserver/cached_object.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/builtin_resources.h"
#include "store/record.h"

namespace converge::apiserver {
namespace {

namespace json = boost::json;

const api::ResourceInfo& Events() {
  static const api::ResourceInfo info = [] {
    for (const api::ResourceInfo& r : api::BuiltinResources()) {
      if (r.gvr.group.empty() && r.gvr.resource == "events") return r;
    }
    return api::ResourceInfo{};
  }();
  return info;
}

const api::ResourceInfo& Pods() {
  static const api::ResourceInfo info = [] {
    for (const api::ResourceInfo& r : api::BuiltinResources()) {
      if (r.gvr.group.empty() && r.gvr.resource == "pods") return r;
    }
    return api::ResourceInfo{};
  }();
  return info;
}

json::object Doc(std::string_view text) {
  return json::parse(text).as_object();
}

// The reference: what serializing the object with resourceVersion set (as the last member of
// metadata) gives.
std::string Reference(json::object doc, store::Revision rv) {
  json::object& meta = api::EnsureObject(doc, "metadata");
  meta.erase("resourceVersion");
  meta["resourceVersion"] = std::to_string(rv);
  return json::serialize(doc);
}

struct SpliceCase {
  const char* name;
  const char* doc;
};

// Where metadata.resourceVersion may have to go.
const std::vector<SpliceCase>& SpliceCases() {
  static const std::vector<SpliceCase> cases = {
      {"typical", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"d",)"
                  R"("resourceVersion":"17","labels":{"x":"y"}},"spec":{"n":[1,2.5,true,null]}})"},
      {"resourceVersion only", R"({"kind":"Pod","metadata":{"resourceVersion":"3"}})"},
      {"empty metadata", R"({"kind":"Pod","metadata":{}})"},
      {"no metadata", R"({"kind":"Pod","spec":{}})"},
      {"empty object", R"({})"},
      {"metadata first", R"({"metadata":{"name":"a"},"kind":"Pod"})"},
      {"escapes", R"({"metadata":{"name":"a\"b\\c","annotations":{"k\n":"\u00e9\t"}}})"},
      {"metadata not an object", R"({"metadata":"x","kind":"Pod"})"},
  };
  return cases;
}

TEST(EncodeObjectTest, StoresWithoutResourceVersionAndSplicesItBackExactly) {
  for (const SpliceCase& c : SpliceCases()) {
    SCOPED_TRACE(c.name);
    json::object doc = Doc(c.doc);
    EncodedObject e = EncodeObject(doc);
    json::object stored = Doc(e.json);
    if (const json::value* m = stored.if_contains("metadata"); m && m->is_object()) {
      EXPECT_FALSE(m->as_object().contains("resourceVersion")) << e.json;
    }
    json::object without = doc;
    if (json::value* m = without.if_contains("metadata"); m && m->is_object()) {
      m->as_object().erase("resourceVersion");
    }
    EXPECT_EQ(stored, without) << e.json;
    if (const json::value* m = doc.if_contains("metadata"); m && !m->is_object()) continue;
    for (store::Revision rv : {store::Revision{1}, store::Revision{1234567890123}}) {
      std::string with = e.WithResourceVersion(rv);
      EXPECT_EQ(with, Reference(doc, rv));
      EXPECT_EQ(with.substr(e.ResourceVersionValueOffset(), std::to_string(rv).size()),
                std::to_string(rv));
    }
  }
}

TEST(EncodeObjectTest, StringsHaveTheirExactSize) {
  std::string big(10000, 'x');
  json::object doc = Doc(R"({"metadata":{"name":"a"}})");
  doc["data"] = big;
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/a", api::Object(doc), 5,
                                    Holding::kInCache);
  // Held as a zstd frame of exactly its size, and decompressed to a string of exactly its size.
  EXPECT_TRUE(c->compressed());
  EXPECT_EQ(c->held_bytes().capacity(), c->held_bytes().size());
  EXPECT_LT(c->held_bytes().size(), 1000u);
  std::shared_ptr<const std::string> json = c->json();
  EXPECT_EQ(json->capacity(), json->size());
}

TEST(CachedObjectTest, FromObjectCarriesKeyLabelsFieldsAndResourceVersion) {
  api::Object pod(Doc(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"d",)"
                      R"("labels":{"app":"web"},"resourceVersion":"1"},)"
                      R"("spec":{"nodeName":"n1"},"status":{"phase":"Running"}})"));
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 42);
  EXPECT_EQ(c->ns(), "d");
  EXPECT_EQ(c->name(), "web");
  EXPECT_EQ(c->revision, 42);
  EXPECT_EQ(c->FieldValue(Pods(), "spec.nodeName"), "n1");
  EXPECT_EQ(c->FieldValue(Pods(), "status.phase"), "Running");
  EXPECT_EQ(json::serialize(c->LabelsObject()), R"({"app":"web"})");
  auto parsed = c->Parse();
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->resource_version(), "42");
}

const api::ResourceInfo& Namespaces() {
  static const api::ResourceInfo info = [] {
    for (const api::ResourceInfo& r : api::BuiltinResources()) {
      if (r.gvr.group.empty() && r.gvr.resource == "namespaces") return r;
    }
    return api::ResourceInfo{};
  }();
  return info;
}

// The namespace and name are views of the storage key, for namespaced and cluster-scoped
// resources, through every way an entry is built.
TEST(CachedObjectTest, NamespaceAndNameComeFromTheStorageKey) {
  api::Object pod(Doc(R"({"kind":"Pod","metadata":{"name":"a-long-pod-name-12345","namespace":)"
                      R"("kube-system"}})"));
  auto c =
      CachedObject::FromObject(Pods(), "/registry/pods/kube-system/a-long-pod-name-12345", pod, 3);
  EXPECT_EQ(c->ns(), "kube-system");
  EXPECT_EQ(c->name(), "a-long-pod-name-12345");
  EXPECT_EQ(c->key(), (api::ObjectKey{"kube-system", "a-long-pod-name-12345"}));
  auto d = c->WithRevision(4);
  EXPECT_EQ(d->ns(), "kube-system");
  EXPECT_EQ(d->name(), "a-long-pod-name-12345");

  api::Object ns(Doc(R"({"kind":"Namespace","metadata":{"name":"team-a"}})"));
  auto n = CachedObject::FromObject(Namespaces(), "/registry/namespaces/team-a", ns, 5);
  EXPECT_EQ(n->ns(), "");
  EXPECT_EQ(n->name(), "team-a");

  PendingWrite write(std::make_shared<api::ResourceInfo>(Pods()), "/registry/pods/d/w", pod,
                     EncodeObject(pod.doc()));
  CachedObjectPtr e = write.Entry(6);
  EXPECT_EQ(e->ns(), "d");
  EXPECT_EQ(e->name(), "w");
}

// The packed labels answer every selector as LabelSelector::Matches answers on the parsed object
// (the list and watch filters use the packed form).
TEST(CachedObjectTest, PackedLabelsMatchLikeTheParsedObject) {
  const std::vector<std::string> label_sets = {
      R"({})",
      R"({"app":"web"})",
      R"({"app":"web","tier":"frontend","pod-template-hash":"7c9f8d6b5"})",
      R"({"app":"db","tier":""})",
      R"({"n":"5","app":"web"})",
      R"({"n":"12"})",
      R"({"n":"x"})",
      R"({"weird":7})",  // not a string: present, compares as ""
  };
  const std::vector<std::string> selectors = {
      "",
      "app=web",
      "app==web",
      "app!=web",
      "app",
      "!app",
      "app in (web,db)",
      "app notin (web)",
      "tier=",
      "tier!=",
      "n>4",
      "n<10",
      "n>100",
      "weird",
      "weird=",
      "!weird",
      "app=web,tier",
      "app=web,!tier",
      "missing=x",
      "missing!=x",
      "n in (5)",
      "tier in (,x)",
      "app=web,n>1,n<6",
      "app notin ()",
  };
  for (const std::string& labels : label_sets) {
    json::object doc = Doc(R"({"kind":"Pod","metadata":{"name":"p","namespace":"d"}})");
    doc["metadata"].as_object()["labels"] = json::parse(labels);
    api::Object pod(doc);
    auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/p", pod, 1);
    const json::object* parsed = api::FindObject(pod.doc(), {"metadata", "labels"});
    for (const std::string& text : selectors) {
      auto sel = api::LabelSelector::Parse(text);
      if (!sel.ok()) continue;  // not a selector this parser takes
      EXPECT_EQ(c->MatchesLabels(*sel), sel->Matches(parsed)) << labels << " / " << text;
    }
    EXPECT_FALSE(c->MatchesLabels(api::LabelSelector::Nothing())) << labels;
    if (labels != R"({"weird":7})") {
      EXPECT_EQ(json::serialize(c->LabelsObject()), labels);
    }
  }
}

TEST(CachedObjectTest, WithRevisionRewritesOnlyTheResourceVersion) {
  api::Object pod(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"},"spec":{}})"));
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 9);
  for (store::Revision rv : {store::Revision{10}, store::Revision{7}, store::Revision{123456}}) {
    auto d = c->WithRevision(rv);
    EXPECT_EQ(*d->json(), Reference(pod.doc(), rv));
    EXPECT_EQ(d->revision, rv);
    EXPECT_EQ(d->name(), "web");
    // Rewritable again (its own offsets are right).
    EXPECT_EQ(*d->WithRevision(9)->json(), *c->json());
  }
}

// `doc` with a member large and repetitive enough for its bytes to be held compressed, placed
// last so that where metadata is (or is not) stays as the case has it.
json::object Padded(json::object doc) {
  json::array items;
  for (int i = 0; i < 40; ++i) {
    items.push_back(json::object{{"name", "container-" + std::to_string(i)},
                                 {"image", "registry.k8s.io/pause:3.9"}});
  }
  doc["padding"] = std::move(items);
  return doc;
}

TEST(CachedObjectTest, CompressedBytesGiveTheSameJsonForEveryShape) {
  for (const SpliceCase& sc : SpliceCases()) {
    SCOPED_TRACE(sc.name);
    json::object doc = Padded(Doc(sc.doc));
    if (const json::value* m = doc.if_contains("metadata"); m && !m->is_object()) continue;
    const std::string stored = EncodeObject(doc).json;
    // Built from the writer's object, and from the stored bytes (a relist) at the same revision.
    auto from_object = CachedObject::FromObject(Pods(), "/registry/pods/d/a", api::Object(doc), 41,
                                                Holding::kInCache);
    auto from_store = CachedObject::FromKeyValue(
        Pods(), store::KeyValue{"/registry/pods/d/a", stored, 2, 41, 1, 0}, Holding::kInCache);
    ASSERT_TRUE(from_store.ok());
    for (const CachedObjectPtr& c : {from_object, *from_store}) {
      ASSERT_TRUE(c->compressed());
      EXPECT_LT(c->held_bytes().size(), stored.size() / 3);
      EXPECT_EQ(*c->json(), Reference(doc, 41));
      EXPECT_EQ(c->json()->substr(c->rv_value_at, c->rv_value_len), "41");
      // Another revision shares the frame (nothing is copied) and splices its own digits.
      for (store::Revision rv : {store::Revision{7}, store::Revision{1234567890123}}) {
        CachedObjectPtr d = c->WithRevision(rv);
        EXPECT_EQ(&d->held_bytes(), &c->held_bytes());
        EXPECT_EQ(*d->json(), Reference(doc, rv));
        EXPECT_EQ(*d->WithRevision(41)->json(), *c->json());
      }
      auto parsed = c->Decoded();
      ASSERT_TRUE(parsed.ok());
      EXPECT_EQ((*parsed)->resource_version(), "41");
    }
  }
}

TEST(CachedObjectTest, ObjectsBuiltForOneUseAreNotCompressed) {
  json::object doc = Padded(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  const std::string stored = EncodeObject(doc).json;
  auto from_object = CachedObject::FromObject(Pods(), "/registry/pods/d/web", api::Object(doc), 6);
  auto from_store = CachedObject::FromKeyValue(
      Pods(), store::KeyValue{"/registry/pods/d/web", stored, 2, 6, 1, 0});
  ASSERT_TRUE(from_store.ok());
  for (const CachedObjectPtr& c : {from_object, *from_store}) {
    EXPECT_FALSE(c->compressed());
    EXPECT_EQ(c->held_bytes(), Reference(doc, 6));
  }
}

TEST(CachedObjectTest, SmallObjectsAreHeldAsTheirJson) {
  api::Object pod(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 3, Holding::kInCache);
  EXPECT_FALSE(c->compressed());
  EXPECT_EQ(c->held_bytes(), Reference(pod.doc(), 3));
  EXPECT_EQ(c->json().get(), &c->held_bytes());
}

TEST(CachedObjectTest, DecompressedJsonIsSharedWhileHeldAndMadeAgainAfter) {
  json::object doc = Padded(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", api::Object(doc), 5,
                                    Holding::kInCache);
  ASSERT_TRUE(c->compressed());
  std::shared_ptr<const std::string> first = c->json();
  std::shared_ptr<const std::string> second = c->json();
  EXPECT_EQ(first.get(), second.get());
  const std::string expected = *first;
  first.reset();
  second.reset();
  EXPECT_EQ(*c->json(), expected);
  // Readers on several threads (a watch event's watchers) all get the same bytes.
  std::vector<std::thread> readers;
  std::vector<std::string> got(4);
  for (size_t i = 0; i < got.size(); ++i) {
    readers.emplace_back([&, i] {
      for (int n = 0; n < 200; ++n) got[i] = *c->json();
    });
  }
  for (std::thread& t : readers) t.join();
  for (const std::string& g : got) EXPECT_EQ(g, expected);
}

TEST(CachedObjectTest, DecodedIsSharedWhileHeldAndParsedAgainAfter) {
  api::Object pod(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 3);
  auto first = c->Decoded();
  ASSERT_TRUE(first.ok());
  auto second = c->Decoded();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ((*first)->resource_version(), "3");
  first->reset();
  second->reset();
  // Nobody holds it: the cache kept only a weak reference, so this is a fresh parse.
  auto third = c->Decoded();
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)->name(), "web");
}

TEST(PendingWriteTest, EntryIsBuiltOnceAndSharedByWriterAndCache) {
  api::Object pod(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d",)"
                      R"("labels":{"app":"web"}},"spec":{"nodeName":"n1"}})"));
  PendingWrite write(std::make_shared<const api::ResourceInfo>(Pods()), "/registry/pods/d/web", pod,
                     EncodeObject(pod.doc()));
  EXPECT_EQ(write.json(), R"({"kind":"Pod","metadata":{"name":"web","namespace":"d",)"
                          R"("labels":{"app":"web"}},"spec":{"nodeName":"n1"}})");
  CachedObjectPtr a = write.Entry(8);
  CachedObjectPtr b = write.Entry(8);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(*a->json(), Reference(pod.doc(), 8));
  EXPECT_EQ(a->FieldValue(Pods(), "spec.nodeName"), "n1");
  EXPECT_EQ(json::serialize(a->LabelsObject()), R"({"app":"web"})");
  // Asked at another revision (never in practice: one put, one revision), it still answers right.
  CachedObjectPtr c = write.Entry(12);
  EXPECT_EQ(*c->json(), Reference(pod.doc(), 12));
  EXPECT_EQ(c->FieldValue(Pods(), "spec.nodeName"), "n1");
  EXPECT_EQ(json::serialize(c->LabelsObject()), R"({"app":"web"})");
}

// Whether an object is being deleted is known from every way an entry is built, without its JSON.
TEST(CachedObjectTest, KnowsWhetherTheObjectIsBeingDeleted) {
  const std::string deleting = R"({"kind":"Pod","metadata":{"name":"a","namespace":"d",)"
                               R"("deletionTimestamp":"2026-12-05T10:00:00Z"}})";
  const std::string live = R"({"kind":"Pod","metadata":{"name":"a","namespace":"d"}})";
  for (const std::string& text : {deleting, live}) {
    SCOPED_TRACE(text);
    const bool expected = text == deleting;
    api::Object obj(Doc(text));
    EXPECT_EQ(CachedObject::FromObject(Pods(), "/registry/pods/d/a", obj, 3)->being_deleted(),
              expected);
    store::KeyValue kv;
    kv.key = "/registry/pods/d/a";
    kv.value = text;
    kv.mod_revision = 4;
    auto from_kv = CachedObject::FromKeyValue(Pods(), kv);
    ASSERT_TRUE(from_kv.ok());
    EXPECT_EQ((*from_kv)->being_deleted(), expected);
    EXPECT_EQ((*from_kv)->WithRevision(5)->being_deleted(), expected);
    PendingWrite write(std::make_shared<const api::ResourceInfo>(Pods()), "/registry/pods/d/a", obj,
                       EncodeObject(obj.doc()));
    EXPECT_EQ(write.Entry(6)->being_deleted(), expected);
  }
}

TEST(PendingWriteTest, TheStoreAndTheCacheShareOneFrame) {
  json::object doc = Padded(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  api::Object pod(doc);
  PendingWrite write(std::make_shared<const api::ResourceInfo>(Pods()), "/registry/pods/d/web", pod,
                     EncodeObject(pod.doc()));
  ASSERT_NE(write.compressed(), nullptr);
  // The store is given this frame with the bytes: it must be theirs.
  const std::optional<size_t> size = store::CompressedValueSize(*write.compressed());
  ASSERT_TRUE(size.has_value());
  std::string value(*size, '\0');
  ASSERT_TRUE(store::DecompressValue(*write.compressed(), value.data(), value.size()).ok());
  EXPECT_EQ(value, write.json());
  CachedObjectPtr entry = write.Entry(8);
  EXPECT_EQ(&entry->held_bytes(), write.compressed().get());
  EXPECT_EQ(*entry->json(), Reference(doc, 8));
}

TEST(PendingWriteTest, TheEntrysJsonNeedsNoDecompressingWhileTheWriteLives) {
  json::object doc = Padded(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  api::Object pod(doc);
  auto write = std::make_unique<PendingWrite>(std::make_shared<const api::ResourceInfo>(Pods()),
                                              "/registry/pods/d/web", pod, EncodeObject(pod.doc()));
  CachedObjectPtr entry = write->Entry(8);
  ASSERT_TRUE(entry->compressed());
  // Nobody but the write holds the spliced bytes, and readers get them.
  std::weak_ptr<const std::string> spliced = entry->json();
  EXPECT_FALSE(spliced.expired());
  EXPECT_EQ(entry->json().get(), spliced.lock().get());
  write.reset();
  EXPECT_TRUE(spliced.expired());
  EXPECT_EQ(*entry->json(), Reference(doc, 8));
}

// A pod as a writer holds it: managedFields, and the resourceVersion it was read at.
api::Object WrittenPod() {
  return api::Object(
      Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d","resourceVersion":"4",)"
          R"("managedFields":[{"manager":"kubelet","operation":"Update","fieldsType":"FieldsV1",)"
          R"("fieldsV1":{"f:status":{"f:phase":{}}}}]},"status":{"phase":"Running"}})"));
}

TEST(PendingWriteTest, TheWritersObjectIsWhatReadersWouldHaveParsed) {
  api::Object pod = WrittenPod();
  PendingWrite write(std::make_shared<const api::ResourceInfo>(Pods()), "/registry/pods/d/web", pod,
                     EncodeObject(pod.doc()));
  write.KeepObjectForReaders(pod);
  CachedObjectPtr entry = write.Entry(9);
  auto lean = entry->DecodedWithoutManagedFields();
  ASSERT_TRUE(lean.ok());
  auto parsed = api::Object::Parse(*entry->json());
  ASSERT_TRUE(parsed.ok());
  parsed->mutable_metadata().erase("managedFields");
  EXPECT_EQ((*lean)->doc(), parsed->doc());
  EXPECT_EQ((*lean)->resource_version(), "9");
  // Shared like a parsed one; the whole object (with managedFields) is still parsed apart.
  auto again = entry->DecodedWithoutManagedFields();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(lean->get(), again->get());
  // Held for as long as it is current: compact (api/json_view.h), not the writer's tree.
  EXPECT_TRUE((*lean)->is_compact());
  auto full = entry->Decoded();
  ASSERT_TRUE(full.ok());
  EXPECT_NE(api::Find((*full)->doc(), {"metadata", "managedFields"}), nullptr);
  EXPECT_EQ((*full)->doc().storage(), json::storage_ptr()) << "read-modify-writes' copy";
  // Once the entry exists, the object is the entry's: nothing to take back.
  EXPECT_FALSE(write.TakeObject().has_value());
}

TEST(PendingWriteTest, AWriteThatPutNothingGivesItsObjectBack) {
  api::Object pod = WrittenPod();
  PendingWrite write(std::make_shared<const api::ResourceInfo>(Pods()), "/registry/pods/d/web", pod,
                     EncodeObject(pod.doc()));
  write.KeepObjectForReaders(pod);
  std::optional<api::Object> back = write.TakeObject();
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->doc(), pod.doc());
  EXPECT_FALSE(write.TakeObject().has_value());
}

TEST(CachedObjectTest, ASeedIsDroppedIfAReaderParsedFirstOrTheVersionIsSuperseded) {
  api::Object pod = WrittenPod();
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 5);
  auto first = c->DecodedWithoutManagedFields();  // a reader before the writer's seed
  ASSERT_TRUE(first.ok());
  c->SeedDecodedWithoutManagedFields(pod);
  auto second = c->DecodedWithoutManagedFields();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get());

  // Whoever holds the object at hand keeps it for later readers, after the seed is released.
  auto d = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 6);
  EXPECT_EQ(d->DecodedWithoutManagedFieldsIfAtHand(), nullptr) << "no seed, no reader yet";
  d->SeedDecodedWithoutManagedFields(pod);
  api::ObjectPtr at_hand = d->DecodedWithoutManagedFieldsIfAtHand();
  ASSERT_NE(at_hand, nullptr);
  d->ReleaseSeed();
  auto late = d->DecodedWithoutManagedFields();
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->get(), at_hand.get()) << "a later reader gets the writer's object, not a parse";
  EXPECT_EQ((*late)->resource_version(), "6");
  late->reset();
  at_hand.reset();
  EXPECT_EQ(d->DecodedWithoutManagedFieldsIfAtHand(), nullptr);
  auto parsed = d->DecodedWithoutManagedFields();  // nobody holds it: parsed from the bytes
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)->resource_version(), "6");
  EXPECT_FALSE(api::Find((*parsed)->view(), {"metadata", "managedFields"}));
  EXPECT_TRUE((*parsed)->is_compact()) << "parsed, then made compact";
  EXPECT_EQ(d->DecodedWithoutManagedFieldsIfAtHand(), *parsed);
}

TEST(CachedObjectTest, ConcurrentDecodedCallsAgreeOnOneObject) {
  api::Object pod(Doc(R"({"kind":"Pod","metadata":{"name":"web","namespace":"d"}})"));
  auto c = CachedObject::FromObject(Pods(), "/registry/pods/d/web", pod, 3);
  constexpr int kThreads = 4;
  std::vector<api::ObjectPtr> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto d = c->Decoded();
      if (d.ok()) got[i] = *d;
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_NE(got[i], nullptr);
    EXPECT_EQ(got[i].get(), got[0].get());  // all held at once: one published object
  }
}

// Every selectable field of an Event (eleven) reads back as api::FieldValue computes it from the
// object: empty, absent, short and long values (lengths past one LEB128 byte), and escapes.
TEST(CachedObjectTest, SelectableFieldValuesReadBackFromThePackedForm) {
  const std::string long_name(300, 'n');
  json::object doc = Doc(R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e1",)"
                         R"("namespace":"default"},"involvedObject":{"kind":"Pod","namespace":)"
                         R"("default","uid":"8f14e45f-ceea-467a-a866-051f2b6b3c41",)"
                         R"("apiVersion":"v1","fieldPath":""},"reason":"Pulled\u0000x",)"
                         R"("source":{"component":"kubelet"},"type":"Normal"})");
  doc["involvedObject"].as_object()["name"] = long_name;
  const api::ResourceInfo& info = Events();
  ASSERT_EQ(info.selectable_fields.size(), 11u);
  CachedObjectPtr c =
      CachedObject::FromObject(info, "/registry/events/default/e1", api::Object(doc), 7);
  for (const std::string& f : info.selectable_fields) {
    SCOPED_TRACE(f);
    EXPECT_EQ(c->FieldValue(info, f), api::FieldValue(doc, f));
  }
  EXPECT_EQ(c->FieldValue(info, "involvedObject.name"), long_name);
  EXPECT_EQ(c->FieldValue(info, "reason"), std::string("Pulled\0x", 8));
  EXPECT_EQ(c->FieldValue(info, "metadata.name"), "e1");
  EXPECT_EQ(c->FieldValue(info, "no.such.field"), "");
  // The revision-rewritten copy (a DELETED event) keeps them.
  EXPECT_EQ(c->WithRevision(9)->FieldValue(info, "involvedObject.name"), long_name);
}

TEST(CachedObjectTest, UnpackFieldValuePastTheEndOrTruncatedIsEmpty) {
  EXPECT_EQ(UnpackFieldValue("", 0), "");
  EXPECT_EQ(UnpackFieldValue(std::string("\x01"
                                         "a"
                                         "\x02"
                                         "bc",
                                         5),
                             1),
            "bc");
  EXPECT_EQ(UnpackFieldValue(std::string("\x01"
                                         "a"
                                         "\x02"
                                         "bc",
                                         5),
                             2),
            "");
  EXPECT_EQ(UnpackFieldValue(std::string("\x05"
                                         "ab",
                                         3),
                             0),
            "");                                               // length past the end
  EXPECT_EQ(UnpackFieldValue(std::string("\x80", 1), 0), "");  // length cut short
}

}  // namespace
}  // namespace converge::apiserver
