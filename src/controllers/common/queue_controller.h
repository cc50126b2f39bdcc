// The shape of the small controllers (the ServiceAccount controller, the root CA publisher, the
// Endpoints controller): one client::Controller — a work queue and its workers — fed by handlers
// on shared informers. Run waits until every handler has been handed its informer's initial list
// (upstream waits on the registrations' HasSynced), then runs the workers until `stop`.
//
// A subclass builds `runner_` and adds its handlers to `handlers_` in an Init(ControllerContext&)
// that InitQueueController calls. Its handlers may use `runner_` and the informers' caches only:
// they are removed (their threads joined) when `handlers_` is destroyed, which is after any
// member of the subclass.
//
// Thread-safety: as client::Controller; Run once.
#pragma once

#include <memory>
#include <stop_token>

#include "client/controller.h"
#include "controllers/common/handler_registrations.h"
#include "controllers/manager/controller_context.h"

namespace converge::controllers {

class QueueController : public RunnableController {
 public:
  void Run(std::stop_token stop) override {
    if (!handlers_.WaitForSynced(stop)) return;
    runner_->Run(stop);
  }

 protected:
  std::unique_ptr<client::Controller> runner_;
  HandlerRegistrations handlers_;  // last: removed (joined) before runner_ is destroyed
};

// Builds a T (a QueueController with `util::Status Init(ControllerContext&)`) and runs its Init.
template <typename T>
util::StatusOr<std::unique_ptr<RunnableController>> InitQueueController(ControllerContext& ctx) {
  auto c = std::make_unique<T>();
  CONVERGE_RETURN_IF_ERROR(c->Init(ctx));
  return std::unique_ptr<RunnableController>(std::move(c));
}

}  // namespace converge::controllers
