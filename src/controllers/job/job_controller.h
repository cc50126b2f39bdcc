// JobController: runs a Job's pods to completion (upstream's pkg/controller/job). The decisions
// are pure functions (decide.h); this file reads state and carries them out.
//
// Each sync reads the Job and its pods *live* from the API server (not from caches), so a cache
// that has not yet seen the pods this controller just created can never make it create more.
// TODO(#6): read pods from the shared informer with expectations once src/controllers/common
// lands, as upstream does, and adopt orphaned pods matching the selector (ControllerRefManager).
//
// Pods carry the batch.kubernetes.io/job-tracking finalizer until the Job has counted them; pods
// whose Job is gone (or replaced) lose it here too, so they can be deleted.
//
// Thread-safety: Run once; Sync is called by the workers, one per Job at a time.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "api/object.h"
#include "client/controller.h"
#include "client/event_recorder.h"
#include "client/rest_client.h"
#include "controllers/job/decide.h"
#include "controllers/manager/controller_context.h"
#include "util/clock.h"

namespace converge::controllers::job {

// The API calls the Job controller makes (a fake in the sync test).
class JobClient {
 public:
  virtual ~JobClient() = default;
  virtual util::StatusOr<api::Object> GetJob(const api::ObjectKey& key) = 0;
  // Pods of `ns` matching `label_selector` (a ?labelSelector= string; empty: all).
  virtual util::StatusOr<std::vector<api::Object>> ListPods(const std::string& ns,
                                                            const std::string& label_selector) = 0;
  virtual util::StatusOr<api::Object> CreatePod(const std::string& ns, const api::Object& pod) = 0;
  virtual util::Status DeletePod(const api::ObjectKey& key) = 0;
  virtual util::Status RemovePodFinalizer(const api::ObjectKey& key,
                                          std::string_view finalizer) = 0;
  virtual util::StatusOr<api::Object> UpdateJobStatus(const api::Object& job) = 0;
};

class RestJobClient final : public JobClient {
 public:
  explicit RestJobClient(client::RestClient* client) : client_(client) {}
  util::StatusOr<api::Object> GetJob(const api::ObjectKey& key) override;
  util::StatusOr<std::vector<api::Object>> ListPods(const std::string& ns,
                                                    const std::string& label_selector) override;
  util::StatusOr<api::Object> CreatePod(const std::string& ns, const api::Object& pod) override;
  util::Status DeletePod(const api::ObjectKey& key) override;
  util::Status RemovePodFinalizer(const api::ObjectKey& key, std::string_view finalizer) override;
  util::StatusOr<api::Object> UpdateJobStatus(const api::Object& job) override;

 private:
  client::RestClient* const client_;  // not owned
};

struct JobControllerOptions {
  JobClient* client = nullptr;                // required; not owned
  client::SharedInformer* jobs = nullptr;     // optional: enqueues on Job changes
  client::SharedInformer* pods = nullptr;     // optional: enqueues the owning Job on pod changes
  client::EventRecorder* recorder = nullptr;  // optional
  util::Clock* clock = nullptr;               // nullptr: util::RealClock()
  util::Registry* metrics = nullptr;
  std::string queue_name = "job";
  int workers = 5;  // upstream's --concurrent-job-syncs
  BackoffOptions backoff;
};

class JobController final : public RunnableController {
 public:
  explicit JobController(JobControllerOptions options);

  void Run(std::stop_token stop) override;
  void Enqueue(const api::ObjectKey& key) { controller_.Enqueue(key); }

  // One sync of a Job (what the workers run).
  client::ReconcileResult Sync(const api::ObjectKey& key);

  // The stored pod-failure backoff of a Job (tests).
  BackoffRecord BackoffOf(const api::ObjectKey& key) const;

 private:
  // Removes the tracking finalizer from pods whose controlling Job named `key` is not `live_uid`
  // (empty: the Job is gone).
  util::Status ReleaseOrphans(const api::ObjectKey& key, const std::string& live_uid);
  PodOpsResult ExecutePodOps(const api::Object& job, const SyncDecision& d,
                             const std::vector<PodInfo>& pods, util::Status* error);
  void Record(const api::Object& job, std::string_view type, std::string_view reason,
              const std::string& message);

  const JobControllerOptions options_;
  util::Clock* const clock_;
  client::Controller controller_;

  mutable std::mutex backoff_mu_;
  std::map<api::ObjectKey, BackoffRecord> backoff_;  // guarded by backoff_mu_
};

util::StatusOr<std::unique_ptr<RunnableController>> InitJobController(ControllerContext& ctx);

}  // namespace converge::controllers::job
