#include "store/etcd/etcd_watch.h"

#include <spdlog/spdlog.h>

namespace converge::store::etcd {

namespace {

// Pause before reopening a broken watch on the next endpoint: long enough not to spin while
// every member is down, short against etcd's 1 s election timeout.
constexpr auto kReconnectPause = std::chrono::milliseconds(100);

}  // namespace

EtcdWatchStream::EtcdWatchStream(std::shared_ptr<Connection> connection,
                                 const WatchRequest& request)
    : connection_(std::move(connection)),
      request_(request),
      next_revision_(request.start_revision) {}

util::StatusOr<std::unique_ptr<WatchStream>> EtcdWatchStream::Start(
    std::shared_ptr<Connection> connection, const WatchRequest& request) {
  if (request.key.empty()) return util::InvalidArgument("etcd: key is not provided");
  const auto deadline = std::chrono::steady_clock::now() + connection->options().dial_timeout;
  std::unique_ptr<EtcdWatchStream> w(new EtcdWatchStream(std::move(connection), request));
  auto call = w->OpenWithRetry(deadline, std::stop_token());
  if (!call.ok()) return call.status();
  w->reader_ = std::jthread([w = w.get(), c = std::move(*call)](std::stop_token stop) mutable {
    w->ReadLoop(stop, std::move(c));
  });
  return std::unique_ptr<WatchStream>(std::move(w));
}

EtcdWatchStream::~EtcdWatchStream() {
  Cancel();
  reader_.request_stop();
  if (reader_.joinable()) reader_.join();
}

util::StatusOr<std::unique_ptr<EtcdWatchStream::Call>> EtcdWatchStream::Open() {
  auto call = std::make_unique<Call>();
  call->endpoint = connection_->current();
  call->ctx = std::make_unique<grpc::ClientContext>();
  {
    std::lock_guard lock(mu_);
    if (cancelled_) return util::Cancelled("watch cancelled");
    active_ = call->ctx.get();
  }
  auto clear_active = [&] {
    std::lock_guard lock(mu_);
    active_ = nullptr;
  };
  call->stream = connection_->endpoint(call->endpoint).watch->Watch(call->ctx.get());
  etcdserverpb::WatchRequest create;
  auto* c = create.mutable_create_request();
  if (EmptyRange()) {
    // etcd refuses a watch on an empty range ("watcher range is empty"); KV allows it (it just
    // never sees an event). Watch the one key nobody writes and drop its events, so progress
    // and compaction behave as for any other watch.
    c->set_key(std::string(1, '\0'));
  } else {
    c->set_key(request_.key);
    c->set_range_end(request_.range_end);
  }
  c->set_start_revision(ToEtcdRevision(next_revision_));
  c->set_prev_kv(request_.prev_kv);
  c->set_progress_notify(true);
  etcdserverpb::WatchResponse resp;
  bool ok = call->stream->Write(create) && call->stream->Read(&resp);
  if (!ok || !resp.created()) {
    call->ctx->TryCancel();
    grpc::Status st = call->stream->Finish();
    clear_active();
    return st.ok() ? util::Unavailable("etcd: watch not created") : FromGrpc(st);
  }
  call->watch_id = resp.watch_id();
  // A watch from "now" starts right after the revision etcd registered it at.
  if (next_revision_ == 0) next_revision_ = FromEtcdRevision(resp.header().revision()) + 1;
  if (resp.canceled()) {
    // Refused at creation (etcd reports a compacted start this way on some versions).
    std::lock_guard lock(mu_);
    Handle(*call, resp);
  }
  return call;
}

util::StatusOr<std::unique_ptr<EtcdWatchStream::Call>> EtcdWatchStream::OpenWithRetry(
    std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  util::Status last;
  for (size_t attempt = 0;; ++attempt) {
    auto call = Open();
    if (call.ok() || call.status().code() == util::Code::kCancelled) return call;
    last = call.status();
    connection_->MarkFailed(connection_->current());
    if (std::chrono::steady_clock::now() >= deadline) break;
    if ((attempt + 1) % connection_->size() == 0) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, stop, kReconnectPause, [&] { return cancelled_; });
      if (cancelled_ || stop.stop_requested()) return util::Cancelled("watch cancelled");
    }
  }
  return last;
}

void EtcdWatchStream::Close(std::unique_ptr<Call> call) {
  call->ctx->TryCancel();
  etcdserverpb::WatchResponse ignored;
  while (call->stream->Read(&ignored)) {
  }
  (void)call->stream->Finish();
  std::lock_guard lock(mu_);
  if (active_ == call->ctx.get()) active_ = nullptr;
}

void EtcdWatchStream::ReadLoop(std::stop_token stop, std::unique_ptr<Call> call) {
  while (true) {
    etcdserverpb::WatchResponse resp;
    bool ended;
    {
      std::lock_guard lock(mu_);
      ended = ended_;
    }
    if (!ended && call->stream->Read(&resp)) {
      std::lock_guard lock(mu_);
      if (Handle(*call, resp)) continue;
      ended = true;
    }
    const size_t endpoint = call->endpoint;
    Close(std::move(call));
    {
      std::lock_guard lock(mu_);
      if (ended_ || cancelled_ || stop.stop_requested()) return;
    }
    // The stream broke: resume on the next endpoint from where the consumer is.
    spdlog::warn("etcd watch on {}: stream ended; resuming from revision {}", request_.key,
                 next_revision_);
    connection_->MarkFailed(endpoint);
    auto reopened = OpenWithRetry(std::chrono::steady_clock::time_point::max(), stop);
    if (!reopened.ok()) {
      std::lock_guard lock(mu_);
      EndLocked(reopened.status());
      return;
    }
    call = std::move(*reopened);
  }
}

bool EtcdWatchStream::Handle(const Call& call, const etcdserverpb::WatchResponse& resp) {
  if (ended_) return false;
  const Revision header = FromEtcdRevision(resp.header().revision());
  if (resp.canceled() || resp.compact_revision() != 0) {
    WatchResponse out;
    out.header_revision = header;
    out.canceled = true;
    if (resp.compact_revision() != 0) {
      out.cancel_reason = kCancelReasonCompacted;
      out.compact_revision = FromEtcdRevision(resp.compact_revision());
      connection_->RaiseCompact(out.compact_revision);
    } else {
      out.cancel_reason = resp.cancel_reason().empty() ? "etcd cancelled the watch"
                                                       : "etcd: " + resp.cancel_reason();
    }
    queue_.push_back(std::move(out));
    EndLocked(util::Cancelled("watch cancelled: " + queue_.back().cancel_reason));
    return false;
  }
  if (resp.created()) return true;
  if (resp.events_size() == 0) {
    // A progress notification for this watcher (etcd sends them only when it is synced);
    // etcd 3.4's answers to explicit progress requests (watch_id -1) are not trusted.
    if (resp.watch_id() != call.watch_id) return true;
    if (!request_.progress_notify && !progress_wanted_) return true;
    progress_wanted_ = false;
    WatchResponse out;
    out.header_revision = header;
    queue_.push_back(std::move(out));
    cv_.notify_all();
    return true;
  }
  // Bounded: a response is refused only when the consumer has not taken the earlier ones (an
  // empty queue takes a response of any size: etcd sends a catch-up in large batches).
  if (!queue_.empty() && queued_events_ + static_cast<size_t>(resp.events_size()) >
                             connection_->options().watcher_buffer) {
    WatchResponse out;
    out.header_revision = header;
    out.canceled = true;
    out.cancel_reason = kCancelReasonSlow;
    queue_.push_back(std::move(out));
    EndLocked(util::Cancelled(std::string("watch cancelled: ") + kCancelReasonSlow));
    return false;
  }
  if (EmptyRange()) {
    next_revision_ = FromEtcdRevision(resp.events(resp.events_size() - 1).kv().mod_revision()) + 1;
    return true;
  }
  WatchResponse out;
  out.header_revision = header;
  out.events.reserve(resp.events_size());
  for (const auto& e : resp.events()) {
    Event ev;
    ev.type = e.type() == etcdserverpb::Event::DELETE ? Event::Type::kDelete : Event::Type::kPut;
    ev.kv = FromEtcd(e.kv());
    if (request_.prev_kv && e.has_prev_kv()) ev.prev_kv = FromEtcd(e.prev_kv());
    out.events.push_back(std::move(ev));
  }
  next_revision_ = out.events.back().kv->mod_revision + 1;
  queued_events_ += out.events.size();
  queue_.push_back(std::move(out));
  cv_.notify_all();
  return true;
}

bool EtcdWatchStream::EmptyRange() const {
  const std::string& end = request_.range_end;
  return !end.empty() && end != std::string(1, '\0') && end <= request_.key;
}

void EtcdWatchStream::EndLocked(util::Status status) {
  if (ended_) return;
  ended_ = true;
  end_status_ = std::move(status);
  cv_.notify_all();
}

util::StatusOr<WatchResponse> EtcdWatchStream::Next(std::stop_token stop) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, stop, [&] { return cancelled_ || !queue_.empty() || ended_; });
  if (cancelled_) return util::Cancelled("watch cancelled");
  if (!queue_.empty()) {
    WatchResponse r = std::move(queue_.front());
    queue_.pop_front();
    queued_events_ -= r.events.size();
    return r;
  }
  if (ended_) return end_status_;
  return util::Cancelled("stopped");
}

void EtcdWatchStream::RequestProgress() {
  std::lock_guard lock(mu_);
  progress_wanted_ = true;
}

void EtcdWatchStream::Cancel() {
  std::lock_guard lock(mu_);
  if (cancelled_) return;
  cancelled_ = true;
  if (!ended_) EndLocked(util::Cancelled("watch cancelled"));
  if (active_ != nullptr) active_->TryCancel();
  cv_.notify_all();
}

}  // namespace converge::store::etcd
