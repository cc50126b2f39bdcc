#include "controllers/common/namespaces.h"

#include <string>

namespace converge::controllers {

bool NamespaceTerminating(const api::Object& ns) {
  return ns.being_deleted() || api::FindString(ns.view(), {"status", "phase"}) == "Terminating";
}

std::shared_ptr<client::ResourceEventHandlerFuncs> EnqueueNamespaces(client::Controller* runner) {
  auto handler = std::make_shared<client::ResourceEventHandlerFuncs>();
  handler->add = [runner](const api::ObjectPtr& o, bool) {
    runner->Enqueue({"", std::string(o->name())});
  };
  handler->update = [runner](const api::ObjectPtr&, const api::ObjectPtr& o) {
    runner->Enqueue({"", std::string(o->name())});
  };
  return handler;
}

}  // namespace converge::controllers
