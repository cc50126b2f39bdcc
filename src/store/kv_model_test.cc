// Conformance: a seeded, model-based randomized test against a simple reference model that
// keeps the whole history as one std::map per revision.
//
// Thousands of random puts, deletes and transactions (with compares that sometimes hold),
// reads at random (also compacted and future) revisions, watches from random revisions checked
// event by event, compactions and (where the backend can) reopens, interleaved.
//
//   CONVERGE_STORE_SEED=<n>       replay one seed (printed on failure)
//   CONVERGE_STORE_MODEL_OPS=<n>  number of operations (default 4000; 1500 under sanitizers)
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>

#include "store/kv_conformance_test.h"

namespace converge::store {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kDefaultOps = 1500;
#else
constexpr int kDefaultOps = 4000;
#endif

struct ModelKv {
  std::string value;
  Revision create = 0;
  Revision mod = 0;
  int64_t version = 0;
  friend bool operator==(const ModelKv&, const ModelKv&) = default;
};
using State = std::map<std::string, ModelKv>;

struct ModelEvent {
  bool put = true;
  std::string key;
  ModelKv kv;
  std::optional<ModelKv> prev;
};

// The reference: every revision's full state and events.
class Model {
 public:
  Model() : states_(1), events_(1) {}
  Revision current() const { return static_cast<Revision>(states_.size()) - 1; }
  Revision compact = 0;
  const State& at(Revision r) const { return states_[r]; }
  const std::vector<ModelEvent>& events(Revision r) const { return events_[r]; }
  void Commit(State state, std::vector<ModelEvent> events) {
    states_.push_back(std::move(state));
    events_.push_back(std::move(events));
  }

 private:
  std::vector<State> states_;
  std::vector<std::vector<ModelEvent>> events_;
};

std::vector<std::pair<std::string, ModelKv>> InRange(const State& s, const std::string& key,
                                                     const std::string& end) {
  std::vector<std::pair<std::string, ModelKv>> out;
  for (const auto& [k, v] : s) {
    if (end.empty() ? k == key : (k >= key && ((end.size() == 1 && end[0] == '\0') || k < end))) {
      out.emplace_back(k, v);
    }
  }
  return out;
}

bool ModelCompare(const State& s, const Compare& c) {
  auto items = InRange(s, c.key, c.range_end);
  auto one = [&](const ModelKv& kv) {
    auto cmp = [&](auto a, auto b) {
      switch (c.result) {
        case Compare::Result::kEqual: return a == b;
        case Compare::Result::kNotEqual: return a != b;
        case Compare::Result::kLess: return a < b;
        case Compare::Result::kGreater: return a > b;
      }
      return false;
    };
    switch (c.target) {
      case Compare::Target::kVersion: return cmp(kv.version, c.number);
      case Compare::Target::kCreateRevision: return cmp(kv.create, c.number);
      case Compare::Target::kModRevision: return cmp(kv.mod, c.number);
      case Compare::Target::kValue: return cmp(kv.value, c.value);
    }
    return false;
  };
  if (items.empty()) return c.target != Compare::Target::kValue && one(ModelKv{});
  for (const auto& [k, v] : items) {
    if (!one(v)) return false;
  }
  return true;
}

class ModelTest {
 public:
  ModelTest(KvFactory* factory, std::unique_ptr<KV>* kv, uint64_t seed)
      : factory_(factory), kv_(kv), rng_(seed) {}

  void Run(int ops) {
    for (int i = 0; i < 3; ++i) OpenLongWatch(i, 1);
    for (int i = 0; i < ops && !::testing::Test::HasFailure(); ++i) {
      const int dice = Uniform(0, 99);
      if (dice < 28) {
        RandomPut();
      } else if (dice < 36) {
        RandomDelete();
      } else if (dice < 56) {
        RandomTxn();
      } else if (dice < 76) {
        RandomRange();
      } else if (dice < 80) {
        RandomCompact();
      } else if (dice < 88) {
        RandomWatch();
      } else if (dice < 89 && factory_->CanReopen()) {
        Reopen();
      }
      if (i % 250 == 249) DrainLongWatches();
    }
    // A failed reopen leaves no store and no long watches to drain.
    if (!::testing::Test::HasFatalFailure()) DrainLongWatches();
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin(int percent = 50) { return Uniform(0, 99) < percent; }
  KV& kv() { return **kv_; }

  std::string RandomKey() {
    static const char* const kKeys[] = {"a",   "a/1", "a/2", "a/3", "a/4", "b",   "b/1", "b/2",
                                        "b/3", "c",   "c/1", "c/2", "d",   "e/x", "e/y", "f"};
    return kKeys[Uniform(0, std::size(kKeys) - 1)];
  }
  // A random etcd range: single key, prefix, interval or from-key.
  std::pair<std::string, std::string> RandomRangeSpec() {
    std::string key = RandomKey();
    switch (Uniform(0, 3)) {
      case 0: return {key, ""};
      case 1: return {key, PrefixEnd(key)};
      case 2: {
        std::string end = RandomKey();
        return {key, end};
      }
      default: return {key, std::string(1, '\0')};
    }
  }
  std::string RandomValue() { return "v" + std::to_string(Uniform(0, 20)); }
  Revision RandomRevision() {
    return std::clamp<Revision>(
        model_.compact + Uniform(-2, 3) +
            (model_.current() > model_.compact
                 ? Uniform(0, static_cast<int>(model_.current() - model_.compact))
                 : 0),
        0, model_.current() + 2);
  }

  util::Status RevisionError(Revision rev) const {
    if (rev > model_.current()) return FutureRevisionError(rev, model_.current());
    if (rev != 0 && rev < model_.compact) return CompactedError(model_.compact);
    return util::Status::Ok();
  }

  static void ExpectKv(const KeyValuePtr& got, const std::string& key, const ModelKv& want,
                       bool keys_only = false) {
    ASSERT_NE(got, nullptr) << key;
    EXPECT_EQ(got->key, key);
    EXPECT_EQ(got->value, keys_only ? "" : want.value) << key;
    EXPECT_EQ(got->create_revision, want.create) << key;
    EXPECT_EQ(got->mod_revision, want.mod) << key;
    EXPECT_EQ(got->version, want.version) << key;
  }

  void ExpectRange(const RangeResponse& got, const RangeRequest& req, const State& state) {
    auto items = InRange(state, req.key, req.range_end);
    EXPECT_EQ(got.count, static_cast<int64_t>(items.size()));
    size_t n = req.count_only ? 0 : items.size();
    bool more = false;
    if (!req.count_only && req.limit > 0 && static_cast<size_t>(req.limit) < n) {
      n = req.limit;
      more = true;
    }
    EXPECT_EQ(got.more, more);
    ASSERT_EQ(got.kvs.size(), n);
    for (size_t i = 0; i < n; ++i)
      ExpectKv(got.kvs[i], items[i].first, items[i].second, req.keys_only);
  }

  RangeRequest RandomRangeRequest(bool in_txn) {
    auto [key, end] = RandomRangeSpec();
    RangeRequest r{.key = key, .range_end = end};
    if (Coin(30)) r.limit = Uniform(1, 4);
    if (Coin(15)) r.keys_only = true;
    if (Coin(10)) r.count_only = true;
    if (Coin(in_txn ? 15 : 60)) r.revision = RandomRevision();
    return r;
  }

  void RandomPut() {
    PutRequest req{.key = RandomKey(), .value = RandomValue(), .prev_kv = Coin()};
    TxnRequest txn;
    txn.success.push_back(req);
    CheckTxn(txn);
  }

  void RandomDelete() {
    auto [key, end] = RandomRangeSpec();
    TxnRequest txn;
    txn.success.push_back(DeleteRangeRequest{.key = key, .range_end = end, .prev_kv = Coin()});
    CheckTxn(txn);
  }

  void RandomTxn() {
    TxnRequest txn;
    for (int i = Uniform(0, 2); i > 0; --i) {
      Compare c;
      if (Coin(80)) {
        c.key = RandomKey();
      } else {
        auto [key, end] = RandomRangeSpec();
        c.key = key;
        c.range_end = end;
      }
      c.target = static_cast<Compare::Target>(Uniform(0, 3));
      c.result = static_cast<Compare::Result>(Uniform(0, 3));
      // Numbers near real values so that compares hold often.
      auto it = model_.at(model_.current()).find(c.key);
      const ModelKv kv = it == model_.at(model_.current()).end() ? ModelKv{} : it->second;
      const int64_t base = c.target == Compare::Target::kVersion          ? kv.version
                           : c.target == Compare::Target::kCreateRevision ? kv.create
                                                                          : kv.mod;
      c.number = std::max<int64_t>(0, base + Uniform(-1, 1));
      c.value = Coin() ? kv.value : RandomValue();
      txn.compare.push_back(c);
    }
    for (auto* branch : {&txn.success, &txn.failure}) {
      for (int i = Uniform(0, 3); i > 0; --i) {
        switch (Uniform(0, 2)) {
          case 0:
            branch->push_back(
                PutRequest{.key = RandomKey(), .value = RandomValue(), .prev_kv = Coin()});
            break;
          case 1: {
            auto [key, end] = RandomRangeSpec();
            branch->push_back(DeleteRangeRequest{.key = key, .range_end = end, .prev_kv = Coin()});
            break;
          }
          default: branch->push_back(RandomRangeRequest(/*in_txn=*/true));
        }
      }
    }
    CheckTxn(txn);
  }

  // Applies `txn` to the model and the store and compares everything.
  void CheckTxn(const TxnRequest& txn) {
    // Validation, as the store does it.
    bool invalid = false;
    for (const auto* branch : {&txn.success, &txn.failure}) {
      std::vector<std::string> puts;
      std::vector<std::pair<std::string, std::string>> dels;
      for (const auto& op : *branch) {
        if (auto* p = std::get_if<PutRequest>(&op)) puts.push_back(p->key);
        if (auto* d = std::get_if<DeleteRangeRequest>(&op)) dels.emplace_back(d->key, d->range_end);
      }
      std::sort(puts.begin(), puts.end());
      if (std::adjacent_find(puts.begin(), puts.end()) != puts.end()) invalid = true;
      for (const auto& [k, e] : dels) {
        for (const auto& p : puts) {
          State one{{p, ModelKv{}}};
          if (!InRange(one, k, e).empty()) invalid = true;
        }
      }
    }
    auto got = kv().Txn(txn);
    if (invalid) {
      EXPECT_EQ(got.status().code(), util::Code::kInvalidArgument) << got.status().ToString();
      return;
    }
    const Revision cur = model_.current();
    const State& before = model_.at(cur);
    bool succeeded = true;
    for (const Compare& c : txn.compare) {
      if (!ModelCompare(before, c)) {
        succeeded = false;
        break;
      }
    }
    const auto& ops = succeeded ? txn.success : txn.failure;
    for (const auto& op : ops) {
      if (auto* r = std::get_if<RangeRequest>(&op)) {
        util::Status err = RevisionError(r->revision);
        if (!err.ok()) {
          ASSERT_FALSE(got.ok()) << "expected " << err.ToString();
          EXPECT_EQ(IsFutureRevision(got.status()), IsFutureRevision(err))
              << got.status().ToString();
          EXPECT_EQ(IsCompacted(got.status()), IsCompacted(err)) << got.status().ToString();
          return;
        }
      }
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->succeeded, succeeded);
    ASSERT_EQ(got->responses.size(), ops.size());
    State state = before;
    const Revision rev = cur + 1;
    int64_t writes = 0;
    std::vector<ModelEvent> events;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (auto* r = std::get_if<RangeRequest>(&ops[i])) {
        ExpectRange(std::get<RangeResponse>(got->responses[i]), *r,
                    r->revision == 0 ? state : model_.at(r->revision));
      } else if (auto* p = std::get_if<PutRequest>(&ops[i])) {
        std::optional<ModelKv> prev;
        if (auto it = state.find(p->key); it != state.end()) prev = it->second;
        ModelKv kv{p->value, prev ? prev->create : rev, rev, prev ? prev->version + 1 : 1};
        const auto& pr = std::get<PutResponse>(got->responses[i]);
        if (p->prev_kv && prev) {
          ExpectKv(pr.prev_kv, p->key, *prev);
        } else {
          EXPECT_EQ(pr.prev_kv, nullptr);
        }
        state[p->key] = kv;
        events.push_back(ModelEvent{true, p->key, kv, prev});
        ++writes;
      } else if (auto* d = std::get_if<DeleteRangeRequest>(&ops[i])) {
        auto items = InRange(state, d->key, d->range_end);
        const auto& dr = std::get<DeleteRangeResponse>(got->responses[i]);
        EXPECT_EQ(dr.deleted, static_cast<int64_t>(items.size()));
        ASSERT_EQ(dr.prev_kvs.size(), d->prev_kv ? items.size() : 0);
        for (size_t j = 0; j < items.size(); ++j) {
          if (d->prev_kv) ExpectKv(dr.prev_kvs[j], items[j].first, items[j].second);
          state.erase(items[j].first);
          events.push_back(
              ModelEvent{false, items[j].first, ModelKv{"", 0, rev, 0}, items[j].second});
          ++writes;
        }
      }
    }
    if (writes > 0) model_.Commit(std::move(state), std::move(events));
    EXPECT_EQ(got->header_revision, model_.current());
    EXPECT_EQ(kv().CurrentRevision(), model_.current());
  }

  void RandomRange() {
    RangeRequest req = RandomRangeRequest(/*in_txn=*/false);
    auto got = kv().Range(req);
    util::Status err = RevisionError(req.revision);
    if (!err.ok()) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(IsFutureRevision(got.status()), IsFutureRevision(err)) << got.status().ToString();
      EXPECT_EQ(IsCompacted(got.status()), IsCompacted(err)) << got.status().ToString();
      return;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->header_revision, model_.current());
    ExpectRange(*got, req, model_.at(req.revision == 0 ? model_.current() : req.revision));
  }

  void RandomCompact() {
    const Revision at = RandomRevision();
    auto got = kv().Compact(at);
    if (at <= model_.compact) {
      EXPECT_TRUE(!got.ok() && IsCompacted(got.status())) << at << " " << got.status().ToString();
    } else if (at > model_.current()) {
      EXPECT_TRUE(!got.ok() && IsFutureRevision(got.status())) << got.status().ToString();
    } else {
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      model_.compact = at;
      EXPECT_EQ(kv().CompactRevision(), at);
    }
  }

  std::string Describe(const ModelEvent& e, bool prev_kv) {
    std::string s = std::string(e.put ? "PUT " : "DEL ") + e.key + "@" + std::to_string(e.kv.mod);
    if (e.put)
      s += "=" + e.kv.value + " c" + std::to_string(e.kv.create) + " v" +
           std::to_string(e.kv.version);
    if (prev_kv && e.prev) {
      s += " prev=" + e.prev->value + "@" + std::to_string(e.prev->mod) + " c" +
           std::to_string(e.prev->create) + " v" + std::to_string(e.prev->version);
    }
    return s;
  }
  std::string Describe(const Event& e, bool prev_kv) {
    ModelEvent m{e.type == Event::Type::kPut, e.kv->key,
                 ModelKv{e.kv->value, e.kv->create_revision, e.kv->mod_revision, e.kv->version},
                 std::nullopt};
    if (e.prev_kv) {
      m.prev = ModelKv{e.prev_kv->value, e.prev_kv->create_revision, e.prev_kv->mod_revision,
                       e.prev_kv->version};
    }
    if (!prev_kv) {
      EXPECT_EQ(e.prev_kv, nullptr);
    }
    return Describe(m, prev_kv);
  }

  std::vector<std::string> Expected(const std::string& key, const std::string& end, Revision from,
                                    bool prev_kv) {
    std::vector<std::string> out;
    for (Revision r = std::max<Revision>(from, 1); r <= model_.current(); ++r) {
      for (const ModelEvent& e : model_.events(r)) {
        if (!InRange(State{{e.key, ModelKv{}}}, key, end).empty())
          out.push_back(Describe(e, prev_kv));
      }
    }
    return out;
  }

  // Reads `w` until a progress notification at or past the model's current revision; returns
  // the descriptions of the events at or after `check_from`, or nullopt (with *canceled set) if
  // the watch was canceled.
  std::optional<std::vector<std::string>> ReadToCurrent(WatchStream& w, bool prev_kv,
                                                        WatchResponse* canceled,
                                                        Revision check_from = 0) {
    std::vector<std::string> got;
    w.RequestProgress();
    Revision last = 0;
    while (true) {
      auto r = NextOrTimeout(w);
      if (!r.ok()) {
        ADD_FAILURE() << r.status().ToString();
        return got;
      }
      if (r->canceled) {
        *canceled = *r;
        return std::nullopt;
      }
      if (r->IsProgressNotify()) {
        if (r->header_revision >= model_.current()) return got;
        w.RequestProgress();
        continue;
      }
      // Atomic: a response never splits a revision.
      for (const Event& e : r->events) {
        EXPECT_GE(e.kv->mod_revision, last);
        last = e.kv->mod_revision;
        if (e.kv->mod_revision >= check_from) got.push_back(Describe(e, prev_kv));
      }
    }
  }

  Revision WatchStart() {
    const Revision lo = FirstExactRevision();
    if (Coin(10)) return 0;
    if (Coin(10) && model_.compact > 1) return model_.compact - 1;  // compacted
    return std::min(
        lo + Uniform(0, static_cast<int>(std::max<Revision>(0, model_.current() - lo + 1))),
        model_.current() + 1);
  }

  void RandomWatch() {
    auto [key, end] = RandomRangeSpec();
    const bool prev_kv = Coin();
    const Revision start = WatchStart();
    auto w = kv().Watch(
        WatchRequest{.key = key, .range_end = end, .start_revision = start, .prev_kv = prev_kv});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    WatchResponse canceled;
    auto got = ReadToCurrent(**w, prev_kv, &canceled);
    if (start != 0 && start < model_.compact) {
      ASSERT_FALSE(got.has_value())
          << "watch from " << start << " below compact " << model_.compact;
      EXPECT_EQ(canceled.cancel_reason, kCancelReasonCompacted);
      EXPECT_EQ(canceled.compact_revision, model_.compact);
      return;
    }
    ASSERT_TRUE(got.has_value()) << canceled.cancel_reason;
    EXPECT_EQ(*got, Expected(key, end, start == 0 ? model_.current() + 1 : start, prev_kv))
        << "watch " << key << ".." << end << " from " << start;
  }

  struct LongWatch {
    std::string key, end;
    std::unique_ptr<WatchStream> stream;
    Revision next = 1;  // the revision after the last one checked
  };
  void OpenLongWatch(int i, Revision from) {
    static const std::pair<const char*, const char*> kRanges[] = {
        {"a", "b"}, {"b/", "b0"}, {"c", ""}};
    if (long_.size() <= static_cast<size_t>(i)) long_.resize(i + 1);
    LongWatch& lw = long_[i];
    lw.key = kRanges[i].first;
    lw.end = kRanges[i].second;
    lw.next = from;
    auto w = kv().Watch(
        WatchRequest{.key = lw.key, .range_end = lw.end, .start_revision = from, .prev_kv = true});
    ASSERT_TRUE(w.ok());
    lw.stream = std::move(w).value();
  }
  void DrainLongWatches() {
    for (size_t i = 0; i < long_.size(); ++i) {
      LongWatch& lw = long_[i];
      WatchResponse canceled;
      // A compaction since the watch was opened may have reached its next revision; on backends
      // that are not exact there, a watch still catching up reads that revision's events without
      // the compacted prev_kv and deletes: they are not checked.
      const Revision check_from =
          factory_->ExactAtCompactRevision() ? lw.next : ResumeFrom(lw.next);
      auto got = ReadToCurrent(*lw.stream, true, &canceled, check_from);
      if (!got) {
        // Compacted (the watch was resumed below the compact revision) or too slow: resume.
        ASSERT_TRUE(canceled.cancel_reason == kCancelReasonCompacted ||
                    canceled.cancel_reason == kCancelReasonSlow)
            << canceled.cancel_reason;
        OpenLongWatch(static_cast<int>(i), ResumeFrom(lw.next));
        continue;
      }
      EXPECT_EQ(*got, Expected(lw.key, lw.end, check_from, true)) << "long watch " << lw.key;
      lw.next = model_.current() + 1;
    }
  }

  void Reopen() {
    for (auto& lw : long_) lw.stream.reset();
    auto kv = factory_->Reopen(std::move(*kv_));
    ASSERT_TRUE(kv.ok()) << kv.status().ToString();
    *kv_ = std::move(kv).value();
    EXPECT_EQ(this->kv().CurrentRevision(), model_.current());
    // A compaction at revision 1 removes nothing, and a backend that learns its compact revision
    // from reads (etcd) cannot tell it from none.
    EXPECT_EQ(std::max<Revision>(this->kv().CompactRevision(), 1),
              std::max<Revision>(model_.compact, 1));
    for (size_t i = 0; i < long_.size(); ++i) {
      OpenLongWatch(static_cast<int>(i), ResumeFrom(long_[i].next));
    }
  }

  // The lowest revision a watch may start from and see every event exactly: the compact revision
  // on backends that keep its deletes and prev_kv, just above it on the others (etcd, where a
  // client that needs the events at exactly the compact revision must relist instead).
  Revision FirstExactRevision() const {
    return factory_->ExactAtCompactRevision() ? model_.compact : model_.compact + 1;
  }
  // Where a long watch that fell behind compaction (or a reopen) resumes.
  Revision ResumeFrom(Revision next) const { return std::max(next, FirstExactRevision()); }

  KvFactory* factory_;
  std::unique_ptr<KV>* kv_;
  std::mt19937_64 rng_;
  Model model_;
  std::vector<LongWatch> long_;
};

uint64_t SeedFromEnv() {
  if (const char* s = std::getenv("CONVERGE_STORE_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device()();
}

int OpsFromEnv() {
  if (const char* s = std::getenv("CONVERGE_STORE_MODEL_OPS")) return std::atoi(s);
  return kDefaultOps;
}

TEST_P(KvConformanceTest, MatchesReferenceModel) {
  const uint64_t seed = SeedFromEnv();
  SCOPED_TRACE("CONVERGE_STORE_SEED=" + std::to_string(seed));
  ModelTest model(factory_.get(), &kv_, seed);
  model.Run(OpsFromEnv());
  if (HasFailure()) {
    std::cerr << "reproduce with CONVERGE_STORE_SEED=" << seed << "\n";
  }
}

}  // namespace
}  // namespace converge::store
