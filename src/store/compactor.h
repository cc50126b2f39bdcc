// Compactor: frees the history below a compact revision while the store keeps serving.
//
// Compact(C) (EmbeddedStore) first makes "scheduled compact revision = C" durable through the
// committer and raises the in-memory compact revision, so reads and watches below C fail from
// then on. The compactor thread then
//   1. compacts the in-memory index at C a chunk of keys at a time (the index lock is held for
//      one chunk, never for the whole key space), collecting the revisions dropped
//      (KeyIndex::Compact says which);
//   2. deletes those records in revision order, `batch` at a time, each batch riding in one
//      commit of the committer between ordinary write groups (so a writer waits for at most one
//      batch);
//   3. records "finished compact revision = C".
// A crash anywhere in between is harmless: Open finds scheduled > finished and compacts at the
// scheduled revision again (the records already deleted are simply no longer in the index).
//
// Thread-safety: Request, WaitIdle and Stop may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

#include "store/committer.h"
#include "store/index.h"
#include "store/kv.h"

namespace converge::store {

class Compactor {
 public:
  struct Options {
    size_t batch = 1000;              // records deleted per commit
    size_t index_chunk_keys = 10000;  // keys compacted per index lock hold
  };
  Compactor(Options options, Index* index, Committer* committer);
  ~Compactor();

  // Starts the thread; `finished` is the recovered finished compact revision, `target` the
  // scheduled one (compaction resumes if it is higher).
  void Start(Revision finished, Revision target);
  // Stops between two steps; unfinished work resumes at the next Open.
  void Stop();

  // Asks for compaction up to `revision` (already durable as scheduled).
  void Request(Revision revision);
  // Blocks until every requested compaction finished (or the compactor stopped). Returns the
  // finished compact revision.
  Revision WaitIdle();

 private:
  void Loop();
  // One compaction at `at`; false if stopped or failed before the end.
  bool CompactAt(Revision at);

  const Options options_;
  Index* const index_;
  Committer* const committer_;

  std::mutex mu_;
  std::condition_variable cv_;
  Revision target_ = 0;    // guarded by mu_
  Revision finished_ = 0;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  bool running_ = false;   // guarded by mu_: the thread is alive
  std::thread thread_;
};

}  // namespace converge::store
