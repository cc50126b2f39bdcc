// SchedulerClient: every write the scheduler makes to the API, behind a small interface so that
// tests can record them (RecordingSchedulerClient in scheduler_test.cc) and the scheduler runs
// against any API server through RestSchedulerClient.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <string>
#include <string_view>

#include "client/rest_client.h"
#include "scheduler/pod_info.h"
#include "util/status.h"

namespace converge::scheduler {

class SchedulerClient {
 public:
  virtual ~SchedulerClient() = default;
  // POST pods/<name>/binding: binds `pod` to `node` (the pod's uid as a precondition). Errors
  // as the API reports them: NotFound (the pod is gone), Conflict (already bound, or another
  // incarnation).
  virtual util::Status Bind(const PodInfo& pod, const std::string& node) = 0;
  // Applies a strategic merge patch to the pod's status subresource.
  virtual util::Status PatchPodStatus(const PodInfo& pod, const std::string& patch) = 0;
  // Preemption: marks `victim` with the DisruptionTarget condition, then deletes it (uid
  // precondition). NotFound means it is gone already, which is what was wanted.
  virtual util::Status EvictVictim(const PodInfo& victim, std::string_view message) = 0;
};

class RestSchedulerClient final : public SchedulerClient {
 public:
  explicit RestSchedulerClient(client::RestClient* client) : client_(client) {}
  util::Status Bind(const PodInfo& pod, const std::string& node) override;
  util::Status PatchPodStatus(const PodInfo& pod, const std::string& patch) override;
  util::Status EvictVictim(const PodInfo& victim, std::string_view message) override;

 private:
  client::RestClient* const client_;  // not owned
};

}  // namespace converge::scheduler
