// InProcessTransport: the client library's Transport over an API server in the same process.
//
// Each request becomes an apiserver::Request handed to the server's handler (APIServer::Handle),
// so in-process components pass through exactly the chain HTTP clients do: authentication,
// authorization, admission, validation, storage, watch. The only work beyond Handle's own is
// moving strings: paths, queries, headers and bodies are handed over as they are, and streamed
// chunks (the shared, encode-once watch bytes) are passed on without copying.
//
// Streams honour the server's stream_timeout (watch timeoutSeconds) by ending cleanly, as the
// HTTP server does, and the request's own timeout and stop token by failing with
// kDeadlineExceeded and kCancelled.
//
// Thread-safety: safe for concurrent use. Do and Stream call the handler on the calling thread
// (Handle blocks while the store commits, which is what a client thread expects).
#pragma once

#include <functional>

#include "apiserver/request.h"
#include "client/transport.h"

namespace converge::server {

struct InProcessTransportOptions {
  // The identity requests carry. The in-process transport authenticates its callers by being
  // in the process; the handler chain still authorizes them as this user.
  apiserver::UserInfo user{.name = "system:apiserver",
                           .groups = {"system:masters", "system:authenticated"},
                           .authenticated = true};
  // Sent as User-Agent when a request has none (its prefix names the field manager of writes
  // without ?fieldManager, as for HTTP clients). Empty: none.
  std::string user_agent;
  // Watches hand their objects over without metadata.managedFields, shared by every watcher that
  // asks the same (apiserver::Request::watch_without_managed_fields): for components whose
  // informers drop them anyway (client::ReflectorOptions::drop_managed_fields). Gets, lists and
  // the bytes of watch frames are unchanged.
  bool watch_without_managed_fields = false;
};

class InProcessTransport final : public client::Transport {
 public:
  using Handler = std::function<apiserver::Response(apiserver::Request&)>;

  // `handler` is usually [&server](apiserver::Request& r) { return server.Handle(r); }; the
  // server must outlive the transport and every stream it returned.
  explicit InProcessTransport(Handler handler, InProcessTransportOptions options = {});

  util::StatusOr<client::HttpResponse> Do(client::HttpRequest request) override;
  util::StatusOr<client::StreamedResponse> Stream(client::HttpRequest request) override;

 private:
  apiserver::Request ToServerRequest(client::HttpRequest& request) const;

  const Handler handler_;
  const InProcessTransportOptions options_;
};

}  // namespace converge::server
