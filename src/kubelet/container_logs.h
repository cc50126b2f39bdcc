// Container logs of the simulated runtime: what `kubectl logs` (-c, -f, --previous, --tail,
// --timestamps, --since, --limit-bytes) reads.
//
// Each container instance (one run of a container) writes deterministic lines:
//
//   converge-sim: container web started (image nginx:1.27, run 1)
//   converge-sim: container web running for 10s          every log-interval while it runs
//   converge-sim: container web received SIGTERM, shutting down   (or ", ignoring it")
//   converge-sim: container web exiting with code 0      (not when SIGKILLed)
//
// Lines are a function of the instance's start, interval, SIGTERM and exit times, computed when
// read: a running container costs no work and a few dozen bytes however long it runs. Each
// instance keeps at most `max_lines` lines (older ones rotate out); each container keeps its
// current and its previous instance (--previous).
//
// Which instance a request reads follows upstream's kubelet (validateContainerLogStatus):
// --previous the last terminated instance; otherwise the running or terminated one, or, while
// waiting to restart, the last terminated one; a container that never ran answers 400
// "container "c" in pod "p" is waiting to start: <reason>".
//
// Following (-f) streams the lines as they appear and ends when the instance ends.
//
// Thread-safety: every method is safe to call concurrently. Streams call back into the store;
// wake-ups are delivered without the store's lock held.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/object.h"
#include "api/types.h"
#include "apiserver/request.h"
#include "kubelet/pod_machine.h"
#include "util/clock.h"
#include "util/shared_text.h"

namespace converge::kubelet {

// The parameters of one pods/log request (upstream PodLogOptions).
struct LogRequest {
  std::string container;
  bool follow = false;
  bool previous = false;
  bool timestamps = false;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
  std::optional<WallTime> since_time;  // from sinceSeconds or sinceTime
};

// Parses the query of a pods/log request (or of the kubelet's /containerLogs). `now` resolves
// sinceSeconds. Errors are 400s with upstream's wording.
util::StatusOr<LogRequest> ParseLogRequest(const apiserver::Request& req, WallTime now);

// What the API server checks of a pods/log request before a kubelet sees it (upstream's
// LogLocation): the pod is bound to a node, and the container is named (or is the pod's only
// one) and exists. Errors are InvalidArgument with upstream's messages (400 BadRequest).
util::StatusOr<LogRequest> ResolveLogRequest(const apiserver::Request& req, const api::Object& pod,
                                             WallTime now);

// The query string of a LogRequest as the kubelet API takes it (container excluded).
std::vector<std::pair<std::string, std::string>> LogRequestQuery(const LogRequest& r);

// The states of a pod's containers as far as logs care; published by the kubelet's sync loop.
// Held for every pod: the texts, alike across the pods of a workload, are shared.
struct PodLogView {
  struct Container {
    util::SharedText name;
    util::SharedText waiting_reason;  // only when neither running nor terminated
    int instance = 0;                 // the current (or last) instance
    bool running = false;
    bool terminated = false;    // current state terminated
    bool has_previous = false;  // lastState.terminated exists
  };
  std::string uid;
  std::vector<Container> containers;  // app containers, then init containers

  static PodLogView From(const PodMachine& machine);
};

// One instance's log, computed from its times.
class InstanceLog {
 public:
  InstanceLog() = default;
  explicit InstanceLog(const ContainerLogRecord& started, size_t max_lines);

  void Sigterm(WallTime t, bool ignored);
  void Exit(WallTime t, int exit_code, bool killed);
  int instance() const { return instance_; }
  bool ended() const { return exit_.has_value(); }

  // Lines are numbered from 0 (the start line) in time order. Count() is how many exist at
  // `now`; lines before FirstRetained(now) have rotated out.
  uint64_t Count(WallTime now) const;
  uint64_t FirstRetained(WallTime now) const;
  WallTime LineTime(uint64_t index, WallTime now) const;
  std::string LineText(uint64_t index, WallTime now) const;
  // When the next line after the first `count` lines will appear (nullopt: none ever will).
  std::optional<WallTime> NextLineTime(uint64_t count, WallTime now) const;

 private:
  // Ticks k = 1, 2, ... at start + k·interval, up to the exit.
  uint64_t TicksUpTo(WallTime t) const;
  std::optional<WallTime> Stop() const;

  // Alike for every instance of the container, in every pod of its workload: shared.
  util::SharedText name_;
  util::SharedText image_;
  int instance_ = 0;
  WallTime start_;
  Duration interval_{std::chrono::seconds(10)};
  size_t max_lines_ = 10000;
  std::optional<WallTime> sigterm_;
  bool sigterm_ignored_ = false;
  struct ExitInfo {
    WallTime time;
    int code = 0;
    bool killed = false;
  };
  std::optional<ExitInfo> exit_;
};

struct LogStoreOptions {
  util::Clock* clock = nullptr;  // nullptr: util::RealClock()
  size_t max_lines = 10000;      // per instance
};

class LogStore {
 public:
  explicit LogStore(LogStoreOptions options);
  ~LogStore();
  LogStore(const LogStore&) = delete;
  LogStore& operator=(const LogStore&) = delete;

  // From the sync loop.
  void Apply(const api::ObjectKey& pod, const ContainerLogRecord& record);
  void SetView(const api::ObjectKey& pod, PodLogView view);
  void RemovePod(const api::ObjectKey& pod);

  // Serves a request for `container` of `pod` (already validated against the pod's spec by
  // the caller): the text, or a stream when following. `uid` empty: any incarnation. Streams
  // refer to the store: it must outlive them (stop the servers that carry them first).
  apiserver::Response Serve(const api::ObjectKey& pod, std::string_view uid,
                            std::string_view pod_name, const LogRequest& request);

  // Wakes followers when their next line is due. Run on a thread of its own until stop.
  void Run(std::stop_token stop);

  size_t follower_count() const;

 private:
  class FollowStream;
  // One container of a pod: its state as the last view published it, and its instances.
  struct ContainerLogs {
    PodLogView::Container view;  // view.name names the container even when not `viewed`
    bool viewed = false;  // in the last view (records may come before the view that lists it)
    std::shared_ptr<InstanceLog> current;
    std::shared_ptr<InstanceLog> previous;
  };
  // One pod. The view's containers and their logs are one vector (two, and the view's copy of
  // the names, cost ~50 bytes more per pod).
  struct PodLogs {
    std::string uid;  // of the incarnation viewed last; "" before the first view
    // By container name. A pod has a handful of containers: a vector searched in order (a hash
    // map cost ~130 bytes more per pod, its buckets and a node per container).
    std::vector<ContainerLogs> containers;

    // The entry of `container`, added (not viewed, without logs) if it has none yet.
    ContainerLogs& Logs(const std::string& container);
  };
  struct Follower {
    std::function<void()> wake;
    api::ObjectKey pod;
    std::string container;
    std::optional<WallTime> at;  // next line time, if any
  };

  // Registers a follower to be woken once (its next line is due, or its container changed).
  uint64_t AddFollowerLocked(Follower f);
  // Wakes (and unregisters) the followers of a container; called without mu_.
  void WakeContainer(const api::ObjectKey& pod, const std::string& container);

  const LogStoreOptions options_;
  util::Clock* const clock_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::unordered_map<api::ObjectKey, PodLogs> pods_;  // guarded by mu_
  std::unordered_map<uint64_t, Follower> followers_;  // guarded by mu_
  uint64_t next_follower_ = 1;                        // guarded by mu_
};

// RFC 3339 with nine fractional digits ("2025-01-01T00:00:10.000000000Z"), the kubelet's
// --timestamps format (RFC3339NanoFixed).
std::string FormatRfc3339NanoFixed(WallTime t);

}  // namespace converge::kubelet
