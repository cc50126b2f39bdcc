// FakeApi: a tiny in-memory API server behind a client::FakeTransport, for controller sync
// tests: GET, POST (with generateName), PUT of objects and of /status (optimistic concurrency on
// metadata.resourceVersion, 409 Conflict when stale), merge-style PATCH of metadata and DELETE.
// Every request is recorded; the next response to a method+path can be forced (FailNext).
//
// It knows nothing about defaults, validation or generation bumps beyond "spec changed →
// generation+1"; tests that need the real semantics use a real server (tests/).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <boost/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "client/fake_transport.h"
#include "client/rest_client.h"

namespace converge::controllers::testing {

class FakeApi {
 public:
  FakeApi();

  client::RestClient* client() { return client_.get(); }

  // Stores `obj` as is (at its own path); returns it with a resourceVersion.
  api::Object Put(const api::GroupVersionResource& gvr, api::Object obj);
  std::optional<api::Object> Get(const api::GroupVersionResource& gvr,
                                 const api::ObjectKey& key) const;
  std::vector<api::Object> List(const api::GroupVersionResource& gvr) const;

  // The next request with this method whose path ends with `path_suffix` gets this answer.
  void FailNext(std::string method, std::string path_suffix, int code, std::string reason,
                std::string message = "forced failure");

  struct Request {
    std::string method;
    std::string path;
    std::string body;
  };
  std::vector<Request> requests() const;
  // Requests whose method is `method` (and whose path contains `path_part`).
  std::vector<Request> RequestsOf(std::string_view method, std::string_view path_part = "") const;
  void ClearRequests();

 private:
  struct Forced {
    std::string method;
    std::string suffix;
    int code;
    std::string reason;
    std::string message;
  };
  util::StatusOr<client::HttpResponse> Handle(const client::HttpRequest& r);

  mutable std::mutex mu_;
  std::map<std::string, boost::json::object> objects_;  // by object path; guarded by mu_
  std::vector<Request> requests_;                       // guarded by mu_
  std::vector<Forced> forced_;                          // guarded by mu_
  int64_t rv_ = 100;                                    // guarded by mu_
  int64_t names_ = 0;                                   // guarded by mu_
  std::shared_ptr<client::FakeTransport> transport_;
  std::unique_ptr<client::RestClient> client_;
};

}  // namespace converge::controllers::testing
