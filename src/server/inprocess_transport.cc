#include "server/inprocess_transport.h"

#include <condition_variable>
#include <mutex>
#include <optional>

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
// for the wake, then Poll again.
class InProcessResponseStream final : public client::ResponseStream {
 public:
  InProcessResponseStream(std::shared_ptr<apiserver::ResponseStream> source,
                          std::optional<Clock::time_point> server_end,
                          std::optional<Clock::time_point> client_deadline, std::stop_token stop)
      : source_(std::move(source)),
        server_end_(server_end),
        client_deadline_(client_deadline),
        stop_(std::move(stop)) {}

  ~InProcessResponseStream() override { CloseSource(); }

  util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
    for (;;) {
      if (source_ == nullptr) return ended_status_;
      if (stop_.stop_requested()) return Finish(util::Cancelled("in-process stream: cancelled"));
      Clock::time_point now = Clock::now();
      if (client_deadline_ && now >= *client_deadline_) {
        return Finish(util::DeadlineExceeded("in-process stream: timed out"));
      }
      if (server_end_ && now >= *server_end_) return Finish(false);  // timeoutSeconds passed

      auto wake = std::make_shared<WakeState>();
      size_t before = out->size();
      apiserver::ResponseStream::PollResult r = source_->Poll(out, [wake] {
        std::lock_guard lock(wake->mu);
        wake->woken = true;
        wake->cv.notify_all();
      });
      if (r == apiserver::ResponseStream::PollResult::kData) {
        if (out->size() > before) return true;
        continue;
      }
      if (r == apiserver::ResponseStream::PollResult::kEnd) {
        if (out->size() > before) {  // deliver the last chunks now, the end next time
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

 private:
  util::StatusOr<bool> Finish(util::StatusOr<bool> result) {
    CloseSource();
    ended_status_ = result;
    return result;
  }

  void CloseSource() {
    if (source_ != nullptr) {
      source_->Close();
      source_ = nullptr;
    }
  }

  std::shared_ptr<apiserver::ResponseStream> source_;  // null once ended
  const std::optional<Clock::time_point> server_end_;
  const std::optional<Clock::time_point> client_deadline_;
  std::stop_token stop_;
  util::StatusOr<bool> ended_status_ = false;  // what Read returns once ended
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
