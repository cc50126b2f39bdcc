#include "client/lister.h"

#include "client/index_funcs.h"

namespace converge::client {

std::vector<api::ObjectPtr> Lister::List(const api::LabelSelector& selector) const {
  std::vector<api::ObjectPtr> all = indexer_->List();
  if (selector.Empty()) return all;
  std::vector<api::ObjectPtr> out;
  for (api::ObjectPtr& o : all) {
    if (selector.Matches(o->labels())) out.push_back(std::move(o));
  }
  return out;
}

std::vector<api::ObjectPtr> Lister::List(std::string_view ns,
                                         const api::LabelSelector& selector) const {
  std::vector<api::ObjectPtr> candidates;
  if (util::StatusOr<std::vector<api::ObjectPtr>> by_ns = indexer_->ByIndex(kNamespaceIndex, ns);
      by_ns.ok()) {
    candidates = *std::move(by_ns);
  } else {
    for (api::ObjectPtr& o : indexer_->List()) {
      if (o->namespace_() == ns) candidates.push_back(std::move(o));
    }
  }
  if (selector.Empty()) return candidates;
  std::vector<api::ObjectPtr> out;
  for (api::ObjectPtr& o : candidates) {
    if (selector.Matches(o->labels())) out.push_back(std::move(o));
  }
  return out;
}

}  // namespace converge::client
