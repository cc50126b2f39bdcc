// Request and Response: the transport-independent form of one API call.
//
// HTTP/1.1, HTTP/2 and the in-process transport all turn what they receive into a Request, call
// APIServer::Handle, and deliver the Response. That is what makes behaviour identical across
// transports: authentication, authorization, admission, validation, storage and watch all sit
// behind Handle.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace converge::api {
class Object;
}  // namespace converge::api

namespace converge::apiserver {

// Who made a request, as established by authentication.
struct UserInfo {
  std::string name;  // "system:anonymous" when unauthenticated
  std::string uid;
  std::vector<std::string> groups;
  bool authenticated = false;
};

struct Request {
  std::string method;  // upper case: GET, POST, PUT, PATCH, DELETE
  std::string path;    // percent-decoded, without the query
  // Query parameters in order of appearance, percent-decoded.
  std::vector<std::pair<std::string, std::string>> query;
  // Header names are lower case.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string remote_address;
  // Filled by the transport when it authenticated the peer at the TLS layer (client certificate)
  // and by the authentication filter otherwise.
  UserInfo user;
  // The client certificate the transport saw: its subject when it chains to the cluster CA, or
  // client_cert_error when it does not (then authentication fails with 401).
  bool has_client_cert = false;
  std::string client_cert_cn;
  std::vector<std::string> client_cert_orgs;
  std::string client_cert_error;
  bool in_process = false;
  // In-process watches only: the objects handed over (WatchEventSource) come without
  // metadata.managedFields (InProcessTransportOptions::watch_without_managed_fields).
  bool watch_without_managed_fields = false;
  // The transport already established `user` (the in-process transport, the explicit
  // --insecure-http listener on loopback): authentication keeps it.
  bool preauthenticated = false;
  // The caller gave up: the in-process transport's stop token (a component shutting down).
  // Handlers that loop over many objects (deletecollection) stop between them, as upstream's
  // check their request's context.
  std::stop_token cancelled;
  // Set by a transport that can finish a request after its handler returned (HttpServer): runs a
  // continuation on a thread of the transport's, without blocking the caller. With it, a write
  // may answer with a pending Response (below) instead of holding its thread while the store
  // commits. Unset (in-process transport, tests): every response is complete.
  std::function<void(std::function<void()>)> resume;

  // First value of a query parameter; `present` tells an empty value from an absent one.
  std::string_view Query(std::string_view key, bool* present = nullptr) const;
  bool HasQuery(std::string_view key) const;
  std::string_view Header(std::string_view lower_case_name) const;
};

// A response body delivered in pieces (watch events, followed logs). The transport pulls: it
// calls Poll whenever it can write; when Poll returns kPending it waits until `wake` is called
// (exactly once, from any thread) and then polls again.
//
// Thread-safety: Poll and Close are called by the transport, one at a time; `wake` may be
// invoked from any thread.
class ResponseStream {
 public:
  enum class PollResult { kData, kPending, kEnd };
  virtual ~ResponseStream() = default;
  // Appends available chunks to `out` (shared: fan-out sends the same bytes to every watcher).
  virtual PollResult Poll(std::vector<std::shared_ptr<const std::string>>* out,
                          std::function<void()> wake) = 0;
  // The client went away or the transport is shutting down; release resources.
  virtual void Close() = 0;
};

// Implemented by the streams of watch responses, besides ResponseStream: the in-process
// transport reads the events as the objects the watch cache holds (CachedObject::Decoded, shared
// by every in-process reader) instead of bytes each reader would parse into a copy of its own.
// Events the stream cannot hand over as a shared object (bookmarks, tables, converted custom
// resources) come as their frame. When the request asked for it (watch_without_managed_fields),
// the objects are CachedObject::DecodedWithoutManagedFields, shared the same way; frames always
// carry the whole object.
//
// Thread-safety: as ResponseStream (Poll and PollEvents are not mixed on one stream).
class WatchEventSource {
 public:
  struct Event {
    std::string_view type;                      // "ADDED", "MODIFIED", "DELETED"; empty: frame
    std::shared_ptr<const api::Object> object;  // set with `type`
    std::shared_ptr<const std::string> frame;   // set without `type`: one whole watch document
  };
  virtual ~WatchEventSource() = default;
  // As ResponseStream::Poll, appending events.
  virtual ResponseStream::PollResult PollEvents(std::vector<Event>* out,
                                                std::function<void()> wake) = 0;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, the body is streamed chunk by chunk from here instead of `body`.
  std::shared_ptr<ResponseStream> stream;
  // For streams: end the response after this long (watch timeoutSeconds); zero = no limit.
  std::chrono::milliseconds stream_timeout{0};
  // A response that is not ready yet (only when the request had a `resume`): a create whose store
  // commit has not been submitted. The transport calls `pending` exactly once with a callback;
  // the commit starts then, and the callback receives the final response, through the request's
  // `resume`, once the commit is durable. The other fields are unset. The Request must outlive
  // the callback.
  std::function<void(std::function<void(Response)>)> pending;
};

// Applies `finish` (a copyable callable taking Response&) to `resp` now when it is complete, or
// to its final form when it is pending. Handlers use it for what follows the store write
// (encoding, warnings, metrics, audit), so that both forms go through the same code.
template <typename F>
Response Then(Response resp, F finish) {
  if (!resp.pending) {
    finish(resp);
    return resp;
  }
  auto inner = std::move(resp.pending);
  resp.pending = [inner = std::move(inner),
                  finish = std::move(finish)](std::function<void(Response)> done) mutable {
    inner([finish = std::move(finish), done = std::move(done)](Response r) mutable {
      finish(r);
      done(std::move(r));
    });
  };
  return resp;
}

}  // namespace converge::apiserver
