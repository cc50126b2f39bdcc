// ListerWatcher: how a Reflector lists and watches one collection; ListWatch implements it over
// a RestClient for a resource, an optional namespace and optional selectors.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/types.h"
#include "client/rest_client.h"
#include "client/watch.h"
#include "util/status.h"

namespace converge::client {

class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;
  // One list request (one page when options.limit is set).
  virtual util::StatusOr<ObjectList> List(const ListOptions& options) = 0;
  // Starts a watch; options.stop ends it.
  virtual util::StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& options) = 0;
};

struct ListWatchOptions {
  RestClient* client = nullptr;  // not owned
  api::GroupVersionResource gvr;
  std::string ns;  // empty: all namespaces (or a cluster-scoped resource)
  std::string label_selector;
  std::string field_selector;
  // Last word on every list and watch request (e.g. to add selectors computed elsewhere).
  std::function<void(ListOptions&)> tweak;
};

class ListWatch final : public ListerWatcher {
 public:
  explicit ListWatch(ListWatchOptions options) : options_(std::move(options)) {}
  util::StatusOr<ObjectList> List(const ListOptions& options) override;
  util::StatusOr<std::unique_ptr<Watcher>> Watch(const ListOptions& options) override;

 private:
  ListOptions Apply(ListOptions o) const;
  const ListWatchOptions options_;
};

}  // namespace converge::client
