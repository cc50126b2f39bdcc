// The applier: what one LMDB commit holds when compaction's maintenance joins it.
#include "store/applier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/backend.h"
#include "store/log_tail.h"
#include "store/record.h"
#include "store/store_test_util.h"

namespace converge::store {
namespace {

// A durable group of one put at revision `rev`, as the writer hands it to the tail.
LoggedGroupPtr GroupOf(uint64_t seq, Revision rev) {
  auto bytes = std::make_shared<std::string>();
  const std::string key = "k" + std::to_string(rev);
  const std::string value(1000, 'v');
  RecordView r;
  r.key = key;
  r.value = value;
  r.create_revision = rev;
  r.version = 1;
  *bytes = EncodeRecord(RevisionPair{rev, 0}, r);
  auto g = std::make_shared<LoggedGroup>();
  g->seq = seq;
  g->first_revision = rev;
  g->last_revision = rev;
  g->changes.push_back(wal::GroupView::Change{RevisionPair{rev, 0}, *bytes});
  g->bytes = bytes->size();
  g->owner = bytes;
  return g;
}

// A compaction batch may delete records of any published, hence durable, group. If the
// applier split the durable groups over several commits (their size passes max_txn_bytes) and
// ran the deletions with the first, a record of a later group would be "deleted" before it was
// in LMDB and then brought back by that group's commit.
TEST(ApplierTest, MaintenanceCommitsWithEveryDurableGroupWhateverTheirSize) {
  TempDir dir;
  Backend::Options backend_options;
  backend_options.dir = dir.path();
  backend_options.map_size = size_t{1} << 30;
  backend_options.fsync = false;
  auto backend = Backend::Open(backend_options);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  LogTail tail;
  for (uint64_t seq = 1; seq <= 3; ++seq) tail.Append(GroupOf(seq, static_cast<Revision>(seq)));
  tail.MarkDurable(3);

  Applier::Options options;
  options.max_txn_bytes = 1;  // every group alone would be its own commit
  Applier applier(options, backend->get(), &tail, /*wal=*/nullptr, 0, 0, 0);
  applier.Start();
  // No Notify(): the maintenance item is what makes the applier look at the tail.
  ASSERT_TRUE(applier.Maintain({RevisionPair{3, 0}}, {}).ok());
  applier.Stop();

  auto txn = (*backend)->BeginRead();
  ASSERT_TRUE(txn.ok());
  RecordView r;
  EXPECT_TRUE((*backend)->GetRecord(txn->get(), RevisionPair{1, 0}, &r).ok());
  EXPECT_TRUE((*backend)->GetRecord(txn->get(), RevisionPair{2, 0}, &r).ok());
  EXPECT_EQ((*backend)->GetRecord(txn->get(), RevisionPair{3, 0}, &r).code(), util::Code::kNotFound)
      << "a compacted record came back";
  uint64_t count = 0;
  ASSERT_TRUE((*backend)->GetMeta(txn->get(), kMetaRecordCount, &count).ok());
  EXPECT_EQ(count, 2u);
  uint64_t current = 0;
  ASSERT_TRUE((*backend)->GetMeta(txn->get(), kMetaCurrentRevision, &current).ok());
  EXPECT_EQ(current, 3u);
  EXPECT_TRUE(tail.Acquire()->empty());
}

}  // namespace
}  // namespace converge::store
