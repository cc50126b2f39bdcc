// TtlAfterFinishedController: deletes finished Jobs once spec.ttlSecondsAfterFinished has passed
// since they finished (upstream's pkg/controller/ttlafterfinished). The deletion is foreground
// (the Job's pods go first) and preconditioned on the Job's uid, and it is decided from a live
// read: the TTL may have been changed since the cache saw the Job.
//
// Thread-safety: Run once; Sync is called by the workers, one per Job at a time.
#pragma once

#include <memory>
#include <optional>
#include <stop_token>

#include "api/object.h"
#include "client/controller.h"
#include "client/rest_client.h"
#include "controllers/manager/controller_context.h"
#include "util/clock.h"

namespace converge::controllers::ttlafterfinished {

struct TtlDecision {
  enum class Action { kNone, kDelete, kRequeueAfter };
  Action action = Action::kNone;
  util::Clock::Duration after{0};  // kRequeueAfter
};

// Nothing for a Job that is not finished, has no TTL or is already being deleted; delete once
// finish time + TTL has passed; otherwise re-check when it will have.
TtlDecision DecideTtl(const api::Object& job, util::Clock::WallTime now);

// The API calls (a fake in tests).
class TtlClient {
 public:
  virtual ~TtlClient() = default;
  virtual util::StatusOr<api::Object> GetJob(const api::ObjectKey& key) = 0;
  // Foreground deletion preconditioned on `uid`.
  virtual util::Status DeleteJob(const api::ObjectKey& key, const std::string& uid) = 0;
};

struct TtlAfterFinishedOptions {
  TtlClient* client = nullptr;             // required; not owned
  client::SharedInformer* jobs = nullptr;  // optional: enqueues finished Jobs with a TTL
  util::Clock* clock = nullptr;
  util::Registry* metrics = nullptr;
  std::string queue_name = "ttl_jobs_to_delete";
  int workers = 5;  // upstream's --concurrent-ttl-after-finished-syncs
};

class TtlAfterFinishedController final : public RunnableController {
 public:
  explicit TtlAfterFinishedController(TtlAfterFinishedOptions options);
  void Run(std::stop_token stop) override;
  client::ReconcileResult Sync(const api::ObjectKey& key);

 private:
  const TtlAfterFinishedOptions options_;
  util::Clock* const clock_;
  client::Controller controller_;
};

util::StatusOr<std::unique_ptr<RunnableController>> InitTtlAfterFinished(ControllerContext& ctx);

}  // namespace converge::controllers::ttlafterfinished
