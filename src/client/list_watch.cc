#include "client/list_watch.h"

namespace converge::client {

ListOptions ListWatch::Apply(ListOptions o) const {
  if (!options_.label_selector.empty()) o.label_selector = options_.label_selector;
  if (!options_.field_selector.empty()) o.field_selector = options_.field_selector;
  if (options_.tweak) options_.tweak(o);
  return o;
}

util::StatusOr<ObjectList> ListWatch::List(const ListOptions& options) {
  return options_.client->List(options_.gvr, options_.ns, Apply(options));
}

util::StatusOr<std::unique_ptr<Watcher>> ListWatch::Watch(const ListOptions& options) {
  return options_.client->Watch(options_.gvr, options_.ns, Apply(options));
}

}  // namespace converge::client
