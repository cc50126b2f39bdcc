// Pieces shared by the controllers that keep something in every namespace (the ServiceAccount
// controller, the root CA publisher).
//
// Thread-safety: NamespaceTerminating is a pure function; the handler's callbacks may run on any
// informer thread (they only enqueue).
#pragma once

#include <memory>

#include "api/object.h"
#include "client/controller.h"
#include "client/resource_event_handler.h"

namespace converge::controllers {

// A namespace being deleted (deletionTimestamp set) or already Terminating: the namespace
// controller is emptying it, and nothing new should be put in it.
bool NamespaceTerminating(const api::Object& ns);

// A namespace informer handler that enqueues the namespace's name (the key {"", name}) into
// `runner` whenever a namespace is added or updated.
std::shared_ptr<client::ResourceEventHandlerFuncs> EnqueueNamespaces(client::Controller* runner);

}  // namespace converge::controllers
