#include "client/fake_transport.h"

namespace converge::client {

class FakeStream::Reader final : public ResponseStream {
 public:
  Reader(FakeStream* owner, std::stop_token stop) : owner_(owner), stop_(std::move(stop)) {}

  util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* out) override {
    std::unique_lock lock(owner_->mu_);
    ++owner_->waiting_;
    bool ready = owner_->cv_.wait(lock, stop_,
                                  [this] { return !owner_->chunks_.empty() || owner_->ended_; });
    --owner_->waiting_;
    if (!ready) return util::Cancelled("fake stream: cancelled");
    if (!owner_->chunks_.empty()) {
      while (!owner_->chunks_.empty()) {
        out->push_back(std::move(owner_->chunks_.front()));
        owner_->chunks_.pop_front();
      }
      return true;
    }
    if (!owner_->failure_.ok()) return owner_->failure_;
    return false;
  }

 private:
  FakeStream* const owner_;
  std::stop_token stop_;
};

void FakeStream::Push(std::string chunk) {
  std::lock_guard lock(mu_);
  chunks_.push_back(std::make_shared<const std::string>(std::move(chunk)));
  cv_.notify_all();
}

void FakeStream::End() {
  std::lock_guard lock(mu_);
  ended_ = true;
  cv_.notify_all();
}

void FakeStream::Fail(util::Status status) {
  std::lock_guard lock(mu_);
  ended_ = true;
  failure_ = std::move(status);
  cv_.notify_all();
}

bool FakeStream::reader_waiting() const {
  std::lock_guard lock(mu_);
  return waiting_ > 0;
}

std::unique_ptr<ResponseStream> FakeStream::NewReader(std::stop_token stop) {
  return std::make_unique<Reader>(this, std::move(stop));
}

void FakeTransport::Record(const HttpRequest& r) {
  std::lock_guard lock(mu_);
  requests_.push_back(r);
}

util::StatusOr<HttpResponse> FakeTransport::Do(HttpRequest request) {
  Record(request);
  if (request.stop.stop_requested()) return util::Cancelled("fake transport: cancelled");
  return handler_(request);
}

util::StatusOr<StreamedResponse> FakeTransport::Stream(HttpRequest request) {
  Record(request);
  if (request.stop.stop_requested()) return util::Cancelled("fake transport: cancelled");
  if (stream_handler_) {
    CONVERGE_ASSIGN_OR_RETURN(StreamAnswer answer, stream_handler_(request));
    StreamedResponse out;
    out.status = answer.status;
    // The reader keeps the FakeStream alive through the shared_ptr captured here.
    struct Holder final : ResponseStream {
      std::shared_ptr<FakeStream> owner;
      std::unique_ptr<ResponseStream> reader;
      util::StatusOr<bool> Read(std::vector<std::shared_ptr<const std::string>>* o) override {
        return reader->Read(o);
      }
    };
    auto holder = std::make_unique<Holder>();
    holder->owner = answer.body;
    holder->reader = answer.body->NewReader(request.stop);
    out.body = std::move(holder);
    return out;
  }
  CONVERGE_ASSIGN_OR_RETURN(HttpResponse resp, handler_(request));
  StreamedResponse out;
  out.status = resp.status;
  out.headers = std::move(resp.headers);
  out.body = MakeStringStream(std::move(resp.body));
  return out;
}

std::vector<HttpRequest> FakeTransport::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

HttpResponse FakeTransport::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.headers = {{"content-type", "application/json"}};
  r.body = std::move(body);
  return r;
}

}  // namespace converge::client
