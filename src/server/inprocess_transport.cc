#include "server/inprocess_transport.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "client/watch.h"

namespace converge::server {
namespace {

using Clock = std::chrono::steady_clock;

client::HeaderList ResponseHeaders(apiserver::Response& r) {
  client::HeaderList out = std::move(r.headers);
  if (!r.content_type.empty() && client::FindHeader(out, "content-type").empty()) {
    out.emplace_back("content-type", std::move(r.content_type));
  }
  return out;
}

// Where a pending Poll's wake lands. Shared with the wake function, which may outlive the
// stream (the server can call it after the client went away).
struct WakeState {
  std::mutex mu;
  std::condition_variable_any cv;
  bool woken = false;  // guarded by mu
};

// Reads an apiserver::ResponseStream with the pull protocol of request.h: Poll; on kPending wait
// for the wake, then Poll again. As an EventStream it hands the watch cache's shared objects on
// (apiserver::WatchEventSource) instead of bytes to parse.
class InProcessResponseStream final : public client::ResponseStream, public client::EventStream {
 public:
  InProcessResponseStream(std::shared_ptr<apiserver::ResponseStream> source,
                          std::optional<Clock::time_point> server_end,
                          std::optional<Clock::time_point> client_deadline, std::stop_token stop)
      : source_(std::move(source)),
        events_(dynamic_cast<apiserver::WatchEventSource*>(source_.get())),
        server_end_(server_end),
        client_deadline_(client_deadline),
        stop_(std::move(stop)) {}

  ~InProcessResponseStream() override { CloseSource(); }

  util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
    return Pull([&](std::function<void()> wake) {
      size_t before = out->size();
      auto r = source_->Poll(out, std::move(wake));
      return std::make_pair(r, out->size() > before);
    });
  }

  util::StatusOr<bool> ReadEvents(std::deque<client::WatchEvent>* out) override {
    if (events_ == nullptr) {  // not a watch of the cache: decode its bytes
      std::vector<std::shared_ptr<const std::string>> chunks;
      for (;;) {
        chunks.clear();
        CONVERGE_ASSIGN_OR_RETURN(bool more, Read(&chunks));
        size_t before = out->size();
        for (const auto& c : chunks) CONVERGE_RETURN_IF_ERROR(decoder_.Feed(*c, out));
        if (!more || out->size() > before) return more;
      }
    }
    util::Status decode_error;
    auto read = Pull([&](std::function<void()> wake) {
      polled_.clear();
      auto r = events_->PollEvents(&polled_, std::move(wake));
      size_t before = out->size();
      for (apiserver::WatchEventSource::Event& e : polled_) {
        if (e.type.empty()) {
          if (decode_error.ok()) decode_error = decoder_.Feed(*e.frame, out);
          continue;
        }
        client::WatchEvent ev;
        ev.type = e.type == "ADDED"     ? client::EventType::kAdded
                  : e.type == "DELETED" ? client::EventType::kDeleted
                                        : client::EventType::kModified;
        ev.object = std::move(e.object);
        out->push_back(std::move(ev));
      }
      return std::make_pair(r, out->size() > before || !decode_error.ok());
    });
    if (!decode_error.ok()) return decode_error;
    return read;
  }

 private:
  // Polls until `poll` (one Poll of the source with a wake callback, returning the result and
  // whether it appended anything) produced something, the source ended, or a deadline or the stop
  // token ended the stream. Returns as client::ResponseStream::Read does.
  template <typename PollFn>
  util::StatusOr<bool> Pull(PollFn poll) {
    for (;;) {
      if (source_ == nullptr) return ended_status_;
      if (stop_.stop_requested()) return Finish(util::Cancelled("in-process stream: cancelled"));
      Clock::time_point now = Clock::now();
      if (client_deadline_ && now >= *client_deadline_) {
        return Finish(util::DeadlineExceeded("in-process stream: timed out"));
      }
      if (server_end_ && now >= *server_end_) return Finish(false);  // timeoutSeconds passed

      auto wake = std::make_shared<WakeState>();
      auto [r, appended] = poll([wake] {
        std::lock_guard lock(wake->mu);
        wake->woken = true;
        wake->cv.notify_all();
      });
      if (r == apiserver::ResponseStream::PollResult::kData) {
        if (appended) return true;
        continue;
      }
      if (r == apiserver::ResponseStream::PollResult::kEnd) {
        if (appended) {  // deliver the last items now, the end next time
          CloseSource();
          ended_status_ = false;
          return true;
        }
        return Finish(false);
      }
      // kPending: wait for the wake, the stop token or the nearer deadline.
      std::unique_lock lock(wake->mu);
      std::optional<Clock::time_point> until = server_end_;
      if (client_deadline_ && (!until || *client_deadline_ < *until)) until = client_deadline_;
      if (until) {
        wake->cv.wait_until(lock, stop_, *until, [&] { return wake->woken; });
      } else {
        wake->cv.wait(lock, stop_, [&] { return wake->woken; });
      }
    }
  }

  util::StatusOr<bool> Finish(util::StatusOr<bool> result) {
    CloseSource();
    ended_status_ = result;
    return result;
  }

  void CloseSource() {
    if (source_ != nullptr) {
      source_->Close();
      source_ = nullptr;
      events_ = nullptr;
    }
  }

  std::shared_ptr<apiserver::ResponseStream> source_;  // null once ended
  apiserver::WatchEventSource* events_;                // source_ as one, or null
  const std::optional<Clock::time_point> server_end_;
  const std::optional<Clock::time_point> client_deadline_;
  std::stop_token stop_;
  util::StatusOr<bool> ended_status_ = false;               // what Read returns once ended
  client::WatchDecoder decoder_;                            // frames that come as bytes
  std::vector<apiserver::WatchEventSource::Event> polled_;  // ReadEvents' buffer
};

}  // namespace

InProcessTransport::InProcessTransport(Handler handler, InProcessTransportOptions options)
    : handler_(std::move(handler)), options_(std::move(options)) {}

apiserver::Request InProcessTransport::ToServerRequest(client::HttpRequest& request) const {
  apiserver::Request r;
  r.method = std::move(request.method);
  r.path = std::move(request.path);
  r.query = std::move(request.query);
  r.headers = std::move(request.headers);
  if (!options_.user_agent.empty() && r.Header("user-agent").empty()) {
    r.headers.emplace_back("user-agent", options_.user_agent);
  }
  r.body = std::move(request.body);
  r.remote_address = "in-process";
  r.user = options_.user;
  r.in_process = true;
  r.cancelled = request.stop;
  r.watch_without_managed_fields = options_.watch_without_managed_fields;
  return r;
}

util::StatusOr<client::HttpResponse> InProcessTransport::Do(client::HttpRequest request) {
  if (request.stop.stop_requested()) return util::Cancelled("in-process request: cancelled");
  std::optional<Clock::time_point> deadline;
  if (request.timeout.count() > 0) deadline = Clock::now() + request.timeout;
  std::stop_token stop = request.stop;
  apiserver::Request req = ToServerRequest(request);
  apiserver::Response resp = handler_(req);
  client::HttpResponse out;
  out.status = resp.status;
  out.body = std::move(resp.body);
  std::shared_ptr<apiserver::ResponseStream> stream = std::move(resp.stream);
  std::optional<Clock::time_point> server_end;
  if (resp.stream_timeout.count() > 0) server_end = Clock::now() + resp.stream_timeout;
  out.headers = ResponseHeaders(resp);
  if (stream != nullptr) {  // a streamed answer to a plain request: collect it whole
    InProcessResponseStream body(std::move(stream), server_end, deadline, std::move(stop));
    CONVERGE_ASSIGN_OR_RETURN(std::string rest, client::ReadAll(body));
    out.body += rest;
  }
  return out;
}

util::StatusOr<client::StreamedResponse> InProcessTransport::Stream(client::HttpRequest request) {
  if (request.stop.stop_requested()) return util::Cancelled("in-process stream: cancelled");
  std::optional<Clock::time_point> deadline;
  if (request.timeout.count() > 0) deadline = Clock::now() + request.timeout;
  std::stop_token stop = request.stop;
  apiserver::Request req = ToServerRequest(request);
  apiserver::Response resp = handler_(req);
  client::StreamedResponse out;
  out.status = resp.status;
  std::shared_ptr<apiserver::ResponseStream> stream = std::move(resp.stream);
  std::optional<Clock::time_point> server_end;
  if (resp.stream_timeout.count() > 0) server_end = Clock::now() + resp.stream_timeout;
  std::string body = std::move(resp.body);
  out.headers = ResponseHeaders(resp);
  if (stream != nullptr) {
    out.body = std::make_unique<InProcessResponseStream>(std::move(stream), server_end, deadline,
                                                         std::move(stop));
  } else {
    out.body = client::MakeStringStream(std::move(body));
  }
  return out;
}

}  // namespace converge::server
