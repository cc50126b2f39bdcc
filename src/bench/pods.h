// Pods for the bench scenarios, and bulk creation of them through the API.
//
// Thread-safety: functions only; CreatePods starts and joins its own threads.
#pragma once

#include <cstdint>
#include <string>

#include "api/object.h"
#include "api/types.h"
#include "bench/report.h"
#include "util/status.h"

namespace converge::bench {

inline const api::GroupVersionResource kPodsResource{"", "v1", "pods"};

// A minimal pod (one container, image pause:3.9) named `name`, unscheduled.
api::Object MakePod(const std::string& name);

struct CreatePodsResult {
  int64_t created = 0;
  double seconds = 0;
};

// Creates pods `prefix`0 .. `prefix`(count-1) in `ns` with `concurrency` clients, each with its own
// connection to the server `kubeconfig` names. Fails on the first error that is not
// AlreadyExists.
util::StatusOr<CreatePodsResult> CreatePods(const std::string& kubeconfig, const std::string& ns,
                                            const std::string& prefix, int64_t count,
                                            int concurrency, Progress* progress);

}  // namespace converge::bench
