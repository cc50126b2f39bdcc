#include "controllers/ttlafterfinished/ttl_after_finished.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"
#include "controllers/common/reconcile_metrics.h"
#include "controllers/job/decide.h"

namespace converge::controllers::ttlafterfinished {

namespace {

const api::GroupVersionResource kJobs{"batch", "v1", "jobs"};

bool NeedsCleanup(const api::Object& job) {
  return api::Find(job.view(), {"spec", "ttlSecondsAfterFinished"}) != nullptr &&
         job::IsFinished(job) && !job.being_deleted();
}

class RestTtlClient final : public TtlClient {
 public:
  explicit RestTtlClient(client::RestClient* client) : client_(client) {}
  util::StatusOr<api::Object> GetJob(const api::ObjectKey& key) override {
    return client_->Get(kJobs, key);
  }
  util::Status DeleteJob(const api::ObjectKey& key, const std::string& uid) override {
    client::DeleteOptions o;
    o.propagation_policy = "Foreground";
    o.precondition_uid = uid;
    return client_->Delete(kJobs, key, o);
  }

 private:
  client::RestClient* const client_;
};

}  // namespace

TtlDecision DecideTtl(const api::Object& job, util::Clock::WallTime now) {
  if (!NeedsCleanup(job)) return {};
  std::optional<util::Clock::WallTime> finished = job::FinishTime(job);
  if (!finished) return {};  // finished without a time: upstream waits for one
  const auto ttl =
      std::chrono::seconds(api::FindInt(job.view(), {"spec", "ttlSecondsAfterFinished"}));
  const util::Clock::WallTime expire_at = *finished + ttl;
  if (now >= expire_at) return {TtlDecision::Action::kDelete, {}};
  return {TtlDecision::Action::kRequeueAfter,
          std::chrono::duration_cast<util::Clock::Duration>(expire_at - now)};
}

TtlAfterFinishedController::TtlAfterFinishedController(TtlAfterFinishedOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      controller_(client::ControllerOptions{
          .name = options_.queue_name,
          .reconcile = InstrumentReconcile(
              "ttl-after-finished",
              options_.metrics != nullptr ? options_.metrics : &util::DefaultRegistry(), clock_,
              [this](const api::ObjectKey& key, std::stop_token) { return Sync(key); }),
          .workers = options_.workers,
          .clock = clock_,
          .metrics = options_.metrics,
          .wait_for_sync = options_.jobs != nullptr
                               ? std::vector<const client::SharedInformer*>{options_.jobs}
                               : std::vector<const client::SharedInformer*>{},
      }) {
  if (options_.jobs != nullptr) {
    auto h = std::make_shared<client::ResourceEventHandlerFuncs>();
    h->add = [this](const api::ObjectPtr& obj, bool) {
      if (NeedsCleanup(*obj)) controller_.Enqueue(obj->key());
    };
    h->update = [this](const api::ObjectPtr&, const api::ObjectPtr& obj) {
      if (NeedsCleanup(*obj)) controller_.Enqueue(obj->key());
    };
    (void)options_.jobs->AddEventHandler(h, {.inline_delivery = true});  // it only enqueues
  }
}

void TtlAfterFinishedController::Run(std::stop_token stop) {
  controller_.Run(stop);
}

client::ReconcileResult TtlAfterFinishedController::Sync(const api::ObjectKey& key) {
  // The cache said it expired; the TTL may have changed since. Decide from a live read.
  auto job = options_.client->GetJob(key);
  if (!job.ok()) {
    if (client::IsNotFound(job.status())) return client::ReconcileResult::Done();
    return client::ReconcileResult::Error(job.status());
  }
  TtlDecision d = DecideTtl(*job, clock_->WallNow());
  switch (d.action) {
    case TtlDecision::Action::kNone: return client::ReconcileResult::Done();
    case TtlDecision::Action::kRequeueAfter: return client::ReconcileResult::RequeueAfter(d.after);
    case TtlDecision::Action::kDelete: {
      util::Status s = options_.client->DeleteJob(key, std::string(job->uid()));
      if (!s.ok() && !client::IsNotFound(s)) return client::ReconcileResult::Error(s);
      spdlog::info("ttl-after-finished controller: deleted {}", key.ToString());
      return client::ReconcileResult::Done();
    }
  }
  return client::ReconcileResult::Done();
}

util::StatusOr<std::unique_ptr<RunnableController>> InitTtlAfterFinished(ControllerContext& ctx) {
  class Runnable final : public RunnableController {
   public:
    Runnable(std::unique_ptr<RestTtlClient> client, TtlAfterFinishedOptions o)
        : client_(std::move(client)), controller_([&] {
            o.client = client_.get();
            return o;
          }()) {}
    void Run(std::stop_token stop) override { controller_.Run(stop); }

   private:
    std::unique_ptr<RestTtlClient> client_;
    TtlAfterFinishedController controller_;
  };
  TtlAfterFinishedOptions o;
  o.jobs = &ctx.informers->InformerFor(kJobs);
  o.clock = ctx.clock;
  o.metrics = ctx.metrics;
  o.workers = ctx.workers;
  return std::unique_ptr<RunnableController>(
      std::make_unique<Runnable>(std::make_unique<RestTtlClient>(ctx.client), std::move(o)));
}

}  // namespace converge::controllers::ttlafterfinished
