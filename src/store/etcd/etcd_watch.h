// EtcdWatchStream: one etcd watch (one gRPC Watch stream) behind the WatchStream interface.
//
// A reader thread pulls etcd's responses into a bounded queue that Next() drains. When the
// stream breaks (a member dies, a connection drops) the reader opens a new one on the next
// endpoint and creates the watch again from the revision after the last event it queued, so
// the consumer sees no gap and no duplicate. A resume below etcd's compact revision ends the
// watch with kCancelReasonCompacted. When the queue holds more than `watcher_buffer` events,
// the watch ends with kCancelReasonSlow after the events queued so far.
//
// Progress: the watch is always created with etcd's progress_notify; etcd sends a notification
// for it only when it is synced (every event up to the notified revision sent before), which is
// the guarantee WatchStream promises. Those are passed on when the request asked for
// progress_notify, or once after each RequestProgress().
//
// Thread-safety: as WatchStream. Lock order: mu_ only; no gRPC call blocks while holding it
// (TryCancel does not block).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "store/etcd/etcd_connection.h"
#include "store/kv.h"

namespace converge::store::etcd {

class EtcdWatchStream final : public WatchStream {
 public:
  // Creates the watch on etcd, waiting until etcd confirms it (so a watch from "now" sees every
  // write that starts after this returns), then starts the reader thread.
  static util::StatusOr<std::unique_ptr<WatchStream>> Start(std::shared_ptr<Connection> connection,
                                                            const WatchRequest& request);
  ~EtcdWatchStream() override;

  util::StatusOr<WatchResponse> Next(std::stop_token stop) override;
  void RequestProgress() override;
  void Cancel() override;

 private:
  using Stream = grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>;
  struct Call {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<Stream> stream;
    size_t endpoint = 0;
    int64_t watch_id = 0;
  };

  EtcdWatchStream(std::shared_ptr<Connection> connection, const WatchRequest& request);

  // Opens a stream on the endpoint in use and creates the watch from next_revision_ (0 = now).
  util::StatusOr<std::unique_ptr<Call>> Open();
  // Opens, moving on to the next endpoint after failures, until it works, `deadline` passes or
  // the watch is cancelled.
  util::StatusOr<std::unique_ptr<Call>> OpenWithRetry(
      std::chrono::steady_clock::time_point deadline, std::stop_token stop);
  // Cancels the call on the server side and reaps it.
  void Close(std::unique_ptr<Call> call);
  void ReadLoop(std::stop_token stop, std::unique_ptr<Call> call);
  // Queues what `resp` carries; false when the watch has ended.
  bool Handle(const Call& call, const etcdserverpb::WatchResponse& resp);
  void EndLocked(util::Status status);
  // Whether the request's range holds no key at all ([key, end) with end <= key).
  bool EmptyRange() const;

  const std::shared_ptr<Connection> connection_;
  const WatchRequest request_;
  // Only the thread that runs Open/ReadLoop touches this: the next revision to deliver.
  Revision next_revision_ = 0;

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<WatchResponse> queue_;        // guarded by mu_
  size_t queued_events_ = 0;               // guarded by mu_: events in queue_
  bool progress_wanted_ = false;           // guarded by mu_
  bool cancelled_ = false;                 // guarded by mu_: Cancel() was called
  bool ended_ = false;                     // guarded by mu_: nothing is added to queue_ any more
  util::Status end_status_;                // guarded by mu_: what Next returns once queue_ is empty
  grpc::ClientContext* active_ = nullptr;  // guarded by mu_: the call in flight, for Cancel
  std::jthread reader_;
};

}  // namespace converge::store::etcd
