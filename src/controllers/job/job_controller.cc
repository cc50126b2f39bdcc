#include "controllers/job/job_controller.h"

#include <spdlog/spdlog.h>

#include "client/api_errors.h"
#include "client/rate_limiters.h"
#include "controllers/common/reconcile_metrics.h"
#include "util/time_format.h"

namespace converge::controllers::job {

namespace json = boost::json;

namespace {

const api::GroupVersionResource kJobs{"batch", "v1", "jobs"};
const api::GroupVersionResource kPods{"", "v1", "pods"};

// Upstream's Job queue: 1 s·2ⁿ up to 1 min (DefaultJobApiBackOff, MaxJobApiBackOff).
std::unique_ptr<client::RateLimiter<api::ObjectKey>> JobRateLimiter() {
  return std::make_unique<client::ItemExponentialFailureRateLimiter<api::ObjectKey>>(
      client::ExponentialFailureOptions{.base_delay = std::chrono::seconds(1),
                                        .max_delay = std::chrono::minutes(1)});
}

// The controlling owner reference of `pod`, when it is a batch Job.
api::ObjectView JobControllerRef(const api::Object& pod) {
  for (api::View r : pod.owner_references()) {
    const api::ObjectView o = r.if_object();
    if (!o) continue;
    if (!api::FindBool(o, {"controller"})) continue;
    if (api::Object::GetString(o, "kind") != "Job") return {};
    if (api::GroupVersion::Parse(api::Object::GetString(o, "apiVersion")).group != "batch") {
      return {};
    }
    return o;
  }
  return {};
}

// spec.selector.matchLabels as a ?labelSelector= string; empty when the selector has
// expressions (then every pod of the namespace is listed and filtered by owner).
std::string MatchLabelsSelector(const api::Object& job) {
  if (api::Find(job.view(), {"spec", "selector", "matchExpressions"}) != nullptr) return "";
  api::ObjectView ml = api::FindObject(job.view(), {"spec", "selector", "matchLabels"});
  if (ml == nullptr) return "";
  std::string out;
  for (const auto& [k, v] : *ml) {
    if (!v.is_string()) return "";
    if (!out.empty()) out += ",";
    out += std::string(k) + "=" + std::string(v.as_string());
  }
  return out;
}

bool NamespaceTerminating(const util::Status& s) {
  return client::IsForbidden(s) && s.message().find("is being terminated") != std::string::npos;
}

}  // namespace

// ---- RestJobClient ----

util::StatusOr<api::Object> RestJobClient::GetJob(const api::ObjectKey& key) {
  return client_->Get(kJobs, key);
}

util::StatusOr<std::vector<api::Object>> RestJobClient::ListPods(
    const std::string& ns, const std::string& label_selector) {
  client::ListOptions o;
  o.label_selector = label_selector;
  CONVERGE_ASSIGN_OR_RETURN(client::ObjectList list, client_->List(kPods, ns, o));
  return std::move(list.items);
}

util::StatusOr<api::Object> RestJobClient::CreatePod(const std::string& ns,
                                                     const api::Object& pod) {
  return client_->Create(kPods, ns, pod);
}

util::Status RestJobClient::DeletePod(const api::ObjectKey& key) {
  return client_->Delete(kPods, key);
}

util::Status RestJobClient::RemovePodFinalizer(const api::ObjectKey& key,
                                               std::string_view finalizer) {
  json::object meta;
  meta["$deleteFromPrimitiveList/finalizers"] = json::array{json::value(finalizer)};
  json::object patch;
  patch["metadata"] = std::move(meta);
  return client_->Patch(kPods, key, client::PatchType::kStrategicMerge, json::serialize(patch))
      .status();
}

util::StatusOr<api::Object> RestJobClient::UpdateJobStatus(const api::Object& job) {
  return client_->UpdateStatus(kJobs, job);
}

// ---- JobController ----

JobController::JobController(JobControllerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &util::RealClock()),
      controller_(client::ControllerOptions{
          .name = options_.queue_name,
          .reconcile = InstrumentReconcile(
              "job", options_.metrics != nullptr ? options_.metrics : &util::DefaultRegistry(),
              clock_, [this](const api::ObjectKey& key, std::stop_token) { return Sync(key); }),
          .workers = options_.workers,
          .rate_limiter = JobRateLimiter(),
          .clock = clock_,
          .metrics = options_.metrics,
          .wait_for_sync =
              [&] {
                std::vector<const client::SharedInformer*> w;
                if (options_.jobs != nullptr) w.push_back(options_.jobs);
                if (options_.pods != nullptr) w.push_back(options_.pods);
                return w;
              }(),
      }) {
  // The handlers only enqueue: called inline on the informers' threads.
  if (options_.jobs != nullptr) {
    (void)options_.jobs->AddEventHandler(controller_.EnqueueHandler(), {.inline_delivery = true});
  }
  if (options_.pods != nullptr) {
    (void)options_.pods->AddEventHandler(controller_.EnqueueOwnerHandler("batch", "Job"),
                                         {.inline_delivery = true});
  }
}

void JobController::Run(std::stop_token stop) {
  controller_.Run(stop);
}

BackoffRecord JobController::BackoffOf(const api::ObjectKey& key) const {
  std::lock_guard lock(backoff_mu_);
  auto it = backoff_.find(key);
  return it == backoff_.end() ? BackoffRecord{} : it->second;
}

void JobController::Record(const api::Object& job, std::string_view type, std::string_view reason,
                           const std::string& message) {
  if (options_.recorder != nullptr) options_.recorder->Event(job, type, reason, message);
}

util::Status JobController::ReleaseOrphans(const api::ObjectKey& key, const std::string& live_uid) {
  CONVERGE_ASSIGN_OR_RETURN(std::vector<api::Object> pods, options_.client->ListPods(key.ns, ""));
  util::Status first_error;
  for (const api::Object& pod : pods) {
    if (!pod.HasFinalizer(kTrackingFinalizer)) continue;
    const api::ObjectView ref = JobControllerRef(pod);
    if (!ref || api::Object::GetString(ref, "name") != key.name) continue;
    if (api::Object::GetString(*ref, "uid") == live_uid) continue;
    util::Status s = options_.client->RemovePodFinalizer(pod.key(), kTrackingFinalizer);
    if (!s.ok() && !client::IsNotFound(s) && first_error.ok()) first_error = s;
  }
  return first_error;
}

PodOpsResult JobController::ExecutePodOps(const api::Object& job, const SyncDecision& d,
                                          const std::vector<PodInfo>& pods, util::Status* error) {
  PodOpsResult r;
  std::map<std::string, const PodInfo*> by_name;
  for (const PodInfo& p : pods) by_name[p.name] = &p;
  for (const std::string& name : d.deletes) {
    const PodInfo* p = by_name[name];
    api::ObjectKey key{std::string(job.namespace_()), name};
    if (d.remove_finalizer_before_delete && p != nullptr && p->has_finalizer) {
      util::Status s = options_.client->RemovePodFinalizer(key, kTrackingFinalizer);
      if (!s.ok() && !client::IsNotFound(s)) {
        if (error->ok()) *error = s.WithContext("removing completion finalizer");
        continue;
      }
    }
    util::Status s = options_.client->DeletePod(key);
    if (!s.ok() && !client::IsNotFound(s)) {
      Record(job, client::kEventTypeWarning, "FailedDelete", "Error deleting: " + s.message());
      if (error->ok()) *error = s;
      continue;
    }
    if (s.ok()) Record(job, client::kEventTypeNormal, "SuccessfulDelete", "Deleted pod: " + name);
    ++r.deleted;
    if (p != nullptr && p->ready) ++r.deleted_ready;
  }
  // Creates in slow-start batches (1, 2, 4, ...): a quota or admission failure costs one
  // request, not hundreds; the rest wait for the next sync.
  int32_t remaining = d.creates;
  size_t next_index = 0;
  for (int32_t batch = std::min<int32_t>(remaining, 1); remaining > 0;
       batch = std::min(2 * batch, remaining)) {
    bool failed = false;
    for (int32_t i = 0; i < batch; ++i) {
      int index = next_index < d.create_indexes.size() ? d.create_indexes[next_index++] : -1;
      api::Object pod = PodFromTemplate(job, index);
      auto created = options_.client->CreatePod(std::string(job.namespace_()), pod);
      if (!created.ok()) {
        if (NamespaceTerminating(created.status())) continue;  // nothing more will be created
        Record(job, client::kEventTypeWarning, "FailedCreate",
               "Error creating: " + created.status().message());
        if (error->ok()) *error = created.status();
        failed = true;
        continue;
      }
      ++r.created;
      Record(job, client::kEventTypeNormal, "SuccessfulCreate",
             "Created pod: " + std::string(created->name()));
    }
    remaining -= batch;
    if (failed) break;
  }
  return r;
}

client::ReconcileResult JobController::Sync(const api::ObjectKey& key) {
  auto fetched = options_.client->GetJob(key);
  if (!fetched.ok()) {
    if (!client::IsNotFound(fetched.status()))
      return client::ReconcileResult::Error(fetched.status());
    {
      std::lock_guard lock(backoff_mu_);
      backoff_.erase(key);
    }
    // Its pods can go now.
    util::Status s = ReleaseOrphans(key, "");
    return s.ok() ? client::ReconcileResult::Done() : client::ReconcileResult::Error(s);
  }
  auto job = std::make_shared<const api::Object>(std::move(*fetched));
  if (IsFinished(*job)) {
    std::lock_guard lock(backoff_mu_);
    backoff_.erase(key);
    return client::ReconcileResult::Done();
  }
  std::string_view mode = api::FindString(job->view(), {"spec", "completionMode"});
  if (!mode.empty() && mode != "NonIndexed" && mode != "Indexed") {
    Record(*job, client::kEventTypeWarning, "UnknownCompletionMode",
           "Skipped Job sync because completion mode is unknown");
    return client::ReconcileResult::Done();
  }

  auto listed = options_.client->ListPods(key.ns, MatchLabelsSelector(*job));
  if (!listed.ok()) return client::ReconcileResult::Error(listed.status());
  JobSnapshot snap;
  snap.job = job;
  snap.now = clock_->WallNow();
  snap.backoff = BackoffOf(key);
  bool orphans = false;
  for (api::Object& pod : *listed) {
    const api::ObjectView ref = JobControllerRef(pod);
    if (!ref) continue;
    if (api::Object::GetString(*ref, "uid") != job->uid()) {
      orphans |=
          api::Object::GetString(*ref, "name") == key.name && pod.HasFinalizer(kTrackingFinalizer);
      continue;
    }
    snap.pods.push_back(ParsePod(std::make_shared<const api::Object>(std::move(pod))));
  }
  if (orphans) {
    // Pods of an earlier Job with this name.
    if (util::Status s = ReleaseOrphans(key, std::string(job->uid())); !s.ok()) {
      spdlog::info("job controller: releasing pods of an earlier {}: {}", key.ToString(),
                   s.ToString());
    }
  }

  SyncDecision d = Decide(snap, options_.backoff);
  util::Status pod_error;
  PodOpsResult ops = ExecutePodOps(*job, d, snap.pods, &pod_error);
  StatusPlan plan = TrackStatus(snap, d, ops);
  for (const Event& e : plan.events) Record(*job, e.type, e.reason, e.message);

  api::Object current = *job;
  if (plan.needs_write) {
    current.mutable_doc()["status"] = plan.status;
    auto written = options_.client->UpdateJobStatus(current);
    if (!written.ok()) {
      return client::ReconcileResult::Error(written.status().WithContext("adding uncounted pods"));
    }
    current = std::move(*written);
    std::lock_guard lock(backoff_mu_);
    backoff_[key] = d.backoff;
  }
  std::set<std::string> still_finalized;
  for (const PodInfo& p : snap.pods) {
    if (p.has_finalizer) still_finalized.insert(p.uid);
  }
  util::Status finalizer_error;
  for (const std::string& name : plan.remove_finalizers) {
    util::Status s = options_.client->RemovePodFinalizer({key.ns, name}, kTrackingFinalizer);
    if (!s.ok() && !client::IsNotFound(s)) {
      if (finalizer_error.ok()) finalizer_error = s;
      continue;
    }
    for (const PodInfo& p : snap.pods) {
      if (p.name == name) still_finalized.erase(p.uid);
    }
  }
  FinishResult fin =
      FinishStatus(plan, still_finalized, d.spec, util::FormatRfc3339(clock_->WallNow()));
  if (fin.changed) {
    current.mutable_doc()["status"] = fin.status;
    auto written = options_.client->UpdateJobStatus(current);
    if (!written.ok()) {
      return client::ReconcileResult::Error(
          written.status().WithContext("removing uncounted pods from status"));
    }
    if (fin.finished) {
      for (const Event& e : fin.events) Record(*written, e.type, e.reason, e.message);
      spdlog::info("job controller: {} finished ({})", key.ToString(),
                   plan.final_condition ? plan.final_condition->type : "");
    }
  }
  if (!finalizer_error.ok()) return client::ReconcileResult::Error(finalizer_error);
  if (!pod_error.ok()) return client::ReconcileResult::Error(pod_error);
  if (d.requeue_after) return client::ReconcileResult::RequeueAfter(*d.requeue_after);
  return client::ReconcileResult::Done();
}

util::StatusOr<std::unique_ptr<RunnableController>> InitJobController(ControllerContext& ctx) {
  class Runnable final : public RunnableController {
   public:
    Runnable(std::unique_ptr<RestJobClient> client, JobControllerOptions o)
        : client_(std::move(client)), controller_([&] {
            o.client = client_.get();
            return o;
          }()) {}
    void Run(std::stop_token stop) override { controller_.Run(stop); }

   private:
    std::unique_ptr<RestJobClient> client_;
    JobController controller_;
  };
  JobControllerOptions o;
  o.jobs = &ctx.informers->InformerFor(kJobs);
  o.pods = &ctx.informers->InformerFor(kPods);
  o.recorder = ctx.recorder ? ctx.recorder("job-controller") : nullptr;
  o.clock = ctx.clock;
  o.metrics = ctx.metrics;
  o.workers = ctx.workers;
  return std::unique_ptr<RunnableController>(
      std::make_unique<Runnable>(std::make_unique<RestJobClient>(ctx.client), std::move(o)));
}

}  // namespace converge::controllers::job
