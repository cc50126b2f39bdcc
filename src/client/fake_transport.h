// FakeTransport: a Transport test double that answers from a handler function and records every
// request, for testing code built on RestClient without a server.
//
//   auto fake = std::make_shared<FakeTransport>([](const HttpRequest& r) {
//     return FakeTransport::Json(200, R"({"kind":"ConfigMap", ...})");
//   });
//   RestClient client({.transport = fake});
//
// Streams answer from the stream handler (a FakeStream the test pushes chunks into), or, when
// none is set, with the handler's response as a one-chunk body.
//
// Thread-safety: safe for concurrent use; handlers run on the calling thread without locks held.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "client/transport.h"

namespace converge::client {

// A response body the test feeds by hand. Read blocks until a chunk is pushed, the body is
// ended, or the request's stop token fires.
class FakeStream {
 public:
  // Appends a chunk to the body.
  void Push(std::string chunk);
  // Ends the body cleanly (Read returns false once the chunks are consumed).
  void End();
  // Ends the body with a failure (e.g. kUnavailable for a dropped connection).
  void Fail(util::Status status);
  // Whether a reader is attached and waiting (tests use it to sequence steps).
  bool reader_waiting() const;

  std::unique_ptr<ResponseStream> NewReader(std::stop_token stop);

 private:
  class Reader;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<std::shared_ptr<const std::string>> chunks_;  // guarded by mu_
  bool ended_ = false;                                     // guarded by mu_
  util::Status failure_;                                   // guarded by mu_
  int waiting_ = 0;                                        // guarded by mu_
};

class FakeTransport final : public Transport {
 public:
  using Handler = std::function<util::StatusOr<HttpResponse>(const HttpRequest&)>;
  struct StreamAnswer {
    int status = 200;
    std::shared_ptr<FakeStream> body;
  };
  using StreamHandler = std::function<util::StatusOr<StreamAnswer>(const HttpRequest&)>;

  explicit FakeTransport(Handler handler, StreamHandler stream_handler = nullptr)
      : handler_(std::move(handler)), stream_handler_(std::move(stream_handler)) {}

  util::StatusOr<HttpResponse> Do(HttpRequest request) override;
  util::StatusOr<StreamedResponse> Stream(HttpRequest request) override;

  // Every request so far, in order (stop tokens included).
  std::vector<HttpRequest> requests() const;

  // A JSON response.
  static HttpResponse Json(int status, std::string body);

 private:
  void Record(const HttpRequest& r);

  const Handler handler_;
  const StreamHandler stream_handler_;
  mutable std::mutex mu_;
  std::vector<HttpRequest> requests_;  // guarded by mu_
};

}  // namespace converge::client
