#include "kubelet/container_logs.h"

#include <algorithm>
#include <cstdio>

#include "apiserver/errors.h"
#include "apiserver/handler_util.h"
#include "kubelet/image_registry.h"
#include "util/time_format.h"

namespace converge::kubelet {

namespace {

std::string Quote(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

apiserver::Response BadRequest(std::string message) {
  return apiserver::ErrorResponse(apiserver::BadRequest(std::move(message)));
}

}  // namespace

std::string FormatRfc3339NanoFixed(WallTime t) {
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  if (secs > t) secs -= std::chrono::seconds(1);
  int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(t - secs).count();
  std::string s = util::FormatRfc3339(secs);  // "...:05Z"
  char frac[16];
  std::snprintf(frac, sizeof(frac), ".%09lld", static_cast<long long>(nanos));
  s.insert(s.size() - 1, frac);
  return s;
}

// ---- request parsing ----

util::StatusOr<LogRequest> ParseLogRequest(const apiserver::Request& req, WallTime now) {
  LogRequest r;
  r.container = std::string(req.Query("container"));
  auto flag = [&](std::string_view key, bool* out) -> util::Status {
    auto v = apiserver::QueryBool(req, key, false);
    if (!v.ok()) return util::InvalidArgument(v.error().message);
    *out = *v;
    return util::Status();
  };
  CONVERGE_RETURN_IF_ERROR(flag("follow", &r.follow));
  CONVERGE_RETURN_IF_ERROR(flag("previous", &r.previous));
  CONVERGE_RETURN_IF_ERROR(flag("timestamps", &r.timestamps));
  auto integer = [&](std::string_view key, std::optional<int64_t>* out) -> util::Status {
    auto v = apiserver::QueryInt(req, key);
    if (!v.ok()) return util::InvalidArgument(v.error().message);
    *out = *v;
    return util::Status();
  };
  CONVERGE_RETURN_IF_ERROR(integer("tailLines", &r.tail_lines));
  CONVERGE_RETURN_IF_ERROR(integer("limitBytes", &r.limit_bytes));
  std::optional<int64_t> since_seconds;
  CONVERGE_RETURN_IF_ERROR(integer("sinceSeconds", &since_seconds));
  std::string_view since_time = req.Query("sinceTime");
  if (r.tail_lines && *r.tail_lines < 0) {
    return util::InvalidArgument("tailLines: Invalid value: " + std::to_string(*r.tail_lines) +
                                 ": must be greater than or equal to 0");
  }
  if (r.limit_bytes && *r.limit_bytes < 1) {
    return util::InvalidArgument("limitBytes: Invalid value: " + std::to_string(*r.limit_bytes) +
                                 ": must be greater than 0");
  }
  if (since_seconds && !since_time.empty()) {
    return util::InvalidArgument("at most one of `sinceTime` or `sinceSeconds` may be specified");
  }
  if (since_seconds) {
    if (*since_seconds < 1) {
      return util::InvalidArgument("sinceSeconds: Invalid value: " +
                                   std::to_string(*since_seconds) + ": must be greater than 0");
    }
    r.since_time = now - std::chrono::seconds(*since_seconds);
  } else if (!since_time.empty()) {
    auto t = util::ParseRfc3339(since_time);
    if (!t) return util::InvalidArgument("sinceTime: Invalid value: " + Quote(since_time));
    r.since_time = *t;
  }
  return r;
}

namespace {

std::vector<std::string> ContainerNames(const api::Object& pod, std::string_view list) {
  std::vector<std::string> out;
  api::ArrayView cs = api::FindArray(pod.view(), {"spec", list});
  if (!cs) return out;
  for (const api::View c : *cs) {
    if (c.is_object()) out.emplace_back(api::Object::GetString(c.get_object(), "name"));
  }
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += " ";
    out += names[i];
  }
  return out;
}

}  // namespace

util::StatusOr<LogRequest> ResolveLogRequest(const apiserver::Request& req, const api::Object& pod,
                                             WallTime now) {
  const std::string name(pod.name());
  if (api::FindString(pod.view(), {"spec", "nodeName"}).empty()) {
    return util::InvalidArgument("pod " + name + " does not have a host assigned");
  }
  CONVERGE_ASSIGN_OR_RETURN(LogRequest r, ParseLogRequest(req, now));
  std::vector<std::string> containers = ContainerNames(pod, "containers");
  std::vector<std::string> inits = ContainerNames(pod, "initContainers");
  std::vector<std::string> ephemeral = ContainerNames(pod, "ephemeralContainers");
  if (r.container.empty()) {
    if (containers.size() == 1) {
      r.container = containers[0];
    } else {
      std::string message = "a container name must be specified for pod " + name +
                            ", choose one of: [" + JoinNames(containers) + "]";
      if (!inits.empty()) message += " or one of the init containers: [" + JoinNames(inits) + "]";
      return util::InvalidArgument(message);
    }
  }
  for (const auto* list : {&containers, &inits, &ephemeral}) {
    for (const std::string& c : *list) {
      if (c == r.container) return r;
    }
  }
  return util::InvalidArgument("container " + r.container + " is not valid for pod " + name);
}

std::vector<std::pair<std::string, std::string>> LogRequestQuery(const LogRequest& r) {
  std::vector<std::pair<std::string, std::string>> q;
  if (r.follow) q.emplace_back("follow", "true");
  if (r.previous) q.emplace_back("previous", "true");
  if (r.timestamps) q.emplace_back("timestamps", "true");
  if (r.tail_lines) q.emplace_back("tailLines", std::to_string(*r.tail_lines));
  if (r.limit_bytes) q.emplace_back("limitBytes", std::to_string(*r.limit_bytes));
  if (r.since_time) q.emplace_back("sinceTime", FormatRfc3339NanoFixed(*r.since_time));
  return q;
}

// ---- views ----

PodLogView PodLogView::From(const PodMachine& m) {
  PodLogView v;
  v.uid = m.spec().uid;
  for (const auto* list : {&m.containers(), &m.init_containers()}) {
    for (const ContainerRun& c : *list) {
      Container out;
      out.name = c.spec.name;
      out.running = c.running();
      out.terminated = !c.running() && c.terminated.has_value();
      out.has_previous = c.last_terminated.has_value();
      // Only a waiting container's reason is ever read (LogStore::Serve): a running one's
      // "ContainerCreating" would cost a look-up in the shared texts at every sync.
      if (!out.running && !out.terminated) {
        out.waiting_reason =
            c.waiting_reason.empty() ? util::SharedText("ContainerCreating") : c.waiting_reason;
      }
      out.instance = c.instance;
      v.containers.push_back(std::move(out));
    }
  }
  return v;
}

// ---- one instance ----

InstanceLog::InstanceLog(const ContainerLogRecord& started, size_t max_lines)
    : name_(started.container),
      image_(started.image),
      instance_(started.instance),
      start_(started.time),
      interval_(started.log_interval > Duration::zero() ? started.log_interval
                                                        : std::chrono::seconds(10)),
      max_lines_(std::max<size_t>(max_lines, 1)) {}

void InstanceLog::Sigterm(WallTime t, bool ignored) {
  if (sigterm_ || exit_) return;
  sigterm_ = t;
  sigterm_ignored_ = ignored;
}

void InstanceLog::Exit(WallTime t, int exit_code, bool killed) {
  if (exit_) return;
  exit_ = ExitInfo{t, exit_code, killed};
}

std::optional<WallTime> InstanceLog::Stop() const {
  if (exit_) return exit_->time;
  return std::nullopt;
}

uint64_t InstanceLog::TicksUpTo(WallTime t) const {
  if (t < start_) return 0;
  uint64_t n = static_cast<uint64_t>((t - start_) / interval_);
  if (auto stop = Stop()) {
    if (*stop < start_) return 0;
    // Ticks up to the exit: k·interval <= stop - start (a tick at the exit instant stays, so a
    // follower that already saw it does not see it vanish).
    n = std::min(n, static_cast<uint64_t>((*stop - start_) / interval_));
  }
  return n;
}

uint64_t InstanceLog::Count(WallTime now) const {
  if (now < start_) return 0;
  uint64_t n = 1 + TicksUpTo(now);
  if (sigterm_ && *sigterm_ <= now) ++n;
  if (exit_ && !exit_->killed && exit_->time <= now) ++n;
  return n;
}

uint64_t InstanceLog::FirstRetained(WallTime now) const {
  uint64_t n = Count(now);
  return n > max_lines_ ? n - max_lines_ : 0;
}

WallTime InstanceLog::LineTime(uint64_t i, WallTime now) const {
  if (i == 0) return start_;
  const uint64_t n = TicksUpTo(now);
  const bool sig = sigterm_ && *sigterm_ <= now;
  const uint64_t before = sig ? TicksUpTo(*sigterm_) : n;
  if (i <= before) return start_ + interval_ * static_cast<int64_t>(i);
  if (sig && i == before + 1) return *sigterm_;
  const uint64_t off = sig ? 1 : 0;
  if (i <= n + off) return start_ + interval_ * static_cast<int64_t>(i - off);
  return exit_ ? exit_->time : now;
}

std::string InstanceLog::LineText(uint64_t i, WallTime now) const {
  const std::string prefix = "converge-sim: container " + name_.str();
  if (i == 0) {
    return prefix + " started (image " + image_.str() + ", run " + std::to_string(instance_) + ")";
  }
  const uint64_t n = TicksUpTo(now);
  const bool sig = sigterm_ && *sigterm_ <= now;
  const uint64_t before = sig ? TicksUpTo(*sigterm_) : n;
  auto tick = [&](uint64_t k) {
    return prefix + " running for " + GoDurationMillis(interval_ * static_cast<int64_t>(k));
  };
  if (i <= before) return tick(i);
  if (sig && i == before + 1) {
    return prefix + (sigterm_ignored_ ? " received SIGTERM, ignoring it"
                                      : " received SIGTERM, shutting down");
  }
  const uint64_t off = sig ? 1 : 0;
  if (i <= n + off) return tick(i - off);
  return prefix + " exiting with code " + std::to_string(exit_ ? exit_->code : 0);
}

std::optional<WallTime> InstanceLog::NextLineTime(uint64_t, WallTime now) const {
  if (exit_) return std::nullopt;  // everything left is known once the exit is
  uint64_t k = TicksUpTo(now) + 1;
  return start_ + interval_ * static_cast<int64_t>(k);
}

// ---- rendering ----

namespace {

struct RenderState {
  bool timestamps = false;
  std::optional<int64_t> bytes_left;
};

// Appends lines [from, to) of `log`; false once the byte limit is reached.
bool Render(const InstanceLog& log, uint64_t from, uint64_t to, WallTime now, RenderState& rs,
            std::string* out) {
  for (uint64_t i = from; i < to; ++i) {
    std::string line;
    if (rs.timestamps) line = FormatRfc3339NanoFixed(log.LineTime(i, now)) + " ";
    line += log.LineText(i, now);
    line += '\n';
    if (rs.bytes_left) {
      if (*rs.bytes_left <= 0) return false;
      if (static_cast<int64_t>(line.size()) > *rs.bytes_left) {
        line.resize(static_cast<size_t>(*rs.bytes_left));
      }
      *rs.bytes_left -= static_cast<int64_t>(line.size());
    }
    *out += line;
  }
  return !rs.bytes_left || *rs.bytes_left > 0;
}

// The first line a request starts from: the oldest retained, or later for --since/--tail.
uint64_t FirstLine(const InstanceLog& log, const LogRequest& r, WallTime now) {
  uint64_t first = log.FirstRetained(now);
  uint64_t count = log.Count(now);
  if (r.since_time) {
    while (first < count && log.LineTime(first, now) < *r.since_time) ++first;
  }
  if (r.tail_lines) {
    uint64_t tail = static_cast<uint64_t>(*r.tail_lines);
    if (count - first > tail) first = count - tail;
  }
  return first;
}

}  // namespace

// ---- following ----

class LogStore::FollowStream final : public apiserver::ResponseStream {
 public:
  FollowStream(LogStore* store, std::shared_ptr<InstanceLog> log, api::ObjectKey pod,
               std::string container, uint64_t cursor, RenderState rs)
      : store_(store),
        log_(std::move(log)),
        pod_(std::move(pod)),
        container_(std::move(container)),
        cursor_(cursor),
        rs_(rs) {}

  PollResult Poll(std::vector<std::shared_ptr<const std::string>>* out,
                  std::function<void()> wake) override {
    std::string chunk;
    {
      std::lock_guard lock(store_->mu_);
      if (closed_) return PollResult::kEnd;
      WallTime now = store_->clock_->WallNow();
      uint64_t count = log_->Count(now);
      cursor_ = std::max(cursor_, log_->FirstRetained(now));
      bool more = true;
      if (cursor_ < count) {
        more = Render(*log_, cursor_, count, now, rs_, &chunk);
        cursor_ = count;
      }
      const bool pod_gone = !store_->pods_.count(pod_);
      if (!more || ((log_->ended() || pod_gone) && chunk.empty() && cursor_ >= count)) {
        if (!chunk.empty()) {
          ended_ = true;
        } else {
          return PollResult::kEnd;
        }
      }
      if (chunk.empty()) {
        if (ended_) return PollResult::kEnd;
        Follower f;
        f.wake = std::move(wake);
        f.pod = pod_;
        f.container = container_;
        f.at = log_->NextLineTime(count, now);
        follower_ = store_->AddFollowerLocked(std::move(f));
        return PollResult::kPending;
      }
    }
    out->push_back(std::make_shared<const std::string>(std::move(chunk)));
    return PollResult::kData;
  }

  void Close() override {
    std::lock_guard lock(store_->mu_);
    closed_ = true;
    if (follower_) store_->followers_.erase(follower_);
    follower_ = 0;
  }

 private:
  LogStore* const store_;
  const std::shared_ptr<InstanceLog> log_;
  const api::ObjectKey pod_;
  const std::string container_;
  uint64_t cursor_;        // guarded by store_->mu_
  RenderState rs_;         // guarded by store_->mu_
  uint64_t follower_ = 0;  // guarded by store_->mu_
  bool ended_ = false;     // guarded by store_->mu_
  bool closed_ = false;    // guarded by store_->mu_
};

// ---- the store ----

LogStore::LogStore(LogStoreOptions options)
    : options_(options), clock_(options.clock ? options.clock : &util::RealClock()) {}

LogStore::~LogStore() = default;

LogStore::ContainerLogs& LogStore::PodLogs::Logs(const std::string& container) {
  for (ContainerLogs& c : containers) {
    if (c.view.name == container) return c;
  }
  ContainerLogs& added = containers.emplace_back();
  added.view.name = container;
  return added;
}

void LogStore::Apply(const api::ObjectKey& pod, const ContainerLogRecord& r) {
  {
    std::lock_guard lock(mu_);
    PodLogs& p = pods_[pod];
    ContainerLogs& c = p.Logs(r.container);
    switch (r.kind) {
      case ContainerLogRecord::Kind::kStarted:
        if (c.current && c.current->instance() == r.instance) break;
        if (c.current) c.previous = std::move(c.current);
        c.current = std::make_shared<InstanceLog>(r, options_.max_lines);
        break;
      case ContainerLogRecord::Kind::kSigterm:
        if (c.current && c.current->instance() == r.instance) c.current->Sigterm(r.time, r.ignored);
        break;
      case ContainerLogRecord::Kind::kExited:
        if (c.current && c.current->instance() == r.instance) {
          c.current->Exit(r.time, r.exit_code, r.killed);
        }
        break;
    }
  }
  WakeContainer(pod, r.container);
}

void LogStore::SetView(const api::ObjectKey& pod, PodLogView view) {
  std::lock_guard lock(mu_);
  PodLogs& p = pods_[pod];
  if (p.uid != view.uid) {
    if (!p.uid.empty()) p.containers.clear();  // a new incarnation
    p.uid = std::move(view.uid);
  }
  for (ContainerLogs& c : p.containers) c.viewed = false;
  for (PodLogView::Container& v : view.containers) {
    ContainerLogs& c = p.Logs(v.name);
    c.view = std::move(v);
    c.viewed = true;
  }
}

void LogStore::RemovePod(const api::ObjectKey& pod) {
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mu_);
    pods_.erase(pod);
    for (auto it = followers_.begin(); it != followers_.end();) {
      if (it->second.pod == pod) {
        wakes.push_back(std::move(it->second.wake));
        it = followers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : wakes) w();
}

uint64_t LogStore::AddFollowerLocked(Follower f) {
  uint64_t id = next_follower_++;
  followers_[id] = std::move(f);
  cv_.notify_all();
  return id;
}

void LogStore::WakeContainer(const api::ObjectKey& pod, const std::string& container) {
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard lock(mu_);
    for (auto it = followers_.begin(); it != followers_.end();) {
      if (it->second.pod == pod && it->second.container == container) {
        wakes.push_back(std::move(it->second.wake));
        it = followers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : wakes) w();
}

size_t LogStore::follower_count() const {
  std::lock_guard lock(mu_);
  return followers_.size();
}

void LogStore::Run(std::stop_token stop) {
  std::stop_callback wake_on_stop(stop, [this] {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  });
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    WallTime now = clock_->WallNow();
    std::vector<std::function<void()>> wakes;
    std::optional<WallTime> next;
    for (auto it = followers_.begin(); it != followers_.end();) {
      if (it->second.at && *it->second.at <= now) {
        wakes.push_back(std::move(it->second.wake));
        it = followers_.erase(it);
        continue;
      }
      if (it->second.at && (!next || *it->second.at < *next)) next = it->second.at;
      ++it;
    }
    if (!wakes.empty()) {
      lock.unlock();
      for (auto& w : wakes) w();
      lock.lock();
      continue;
    }
    auto deadline = next ? clock_->Now() + (*next - now) : clock_->Now() + std::chrono::hours(1);
    clock_->WaitUntil(cv_, lock, deadline);
  }
  // Whoever still waits learns that the stream is over at its next poll.
  std::vector<std::function<void()>> wakes;
  for (auto& [id, f] : followers_) wakes.push_back(std::move(f.wake));
  followers_.clear();
  lock.unlock();
  for (auto& w : wakes) w();
}

apiserver::Response LogStore::Serve(const api::ObjectKey& pod, std::string_view uid,
                                    std::string_view pod_name, const LogRequest& r) {
  std::unique_lock lock(mu_);
  auto pit = pods_.find(pod);
  if (pit == pods_.end() || (!uid.empty() && !pit->second.uid.empty() && pit->second.uid != uid)) {
    return BadRequest("pod " + Quote(pod_name) + " cannot be found - no logs available");
  }
  const ContainerLogs* found = nullptr;
  for (const ContainerLogs& c : pit->second.containers) {
    if (c.viewed && c.view.name == r.container) found = &c;
  }
  if (!found) {
    return BadRequest("container " + Quote(r.container) + " in pod " + Quote(pod_name) +
                      " is waiting to start - no logs yet");
  }
  const ContainerLogs& logs = *found;
  const PodLogView::Container* view = &logs.view;
  std::shared_ptr<InstanceLog> log;
  const std::string which = "container " + Quote(r.container) + " in pod " + Quote(pod_name);
  if (r.previous) {
    if (!view->has_previous) {
      return BadRequest("previous terminated " + which + " not found");
    }
    // While running (or just exited), the previous instance is the one before the current one.
    log = (view->running || view->terminated) ? logs.previous : logs.current;
  } else if (view->running || view->terminated) {
    log = logs.current;
  } else if (view->has_previous) {
    log = logs.current;  // waiting to restart: the last run
  } else {
    const std::string& reason = view->waiting_reason;
    if (reason == "ErrImagePull")
      return BadRequest(which + " is waiting to start: image can't be pulled");
    if (reason == "ImagePullBackOff") {
      return BadRequest(which + " is waiting to start: trying and failing to pull image");
    }
    return BadRequest(which + " is waiting to start: " + reason);
  }
  if (!log) {
    // The instance ran before this kubelet knew it (adopted after a restart): no lines kept.
    apiserver::Response empty;
    empty.content_type = "text/plain";
    return empty;
  }
  WallTime now = clock_->WallNow();
  uint64_t first = FirstLine(*log, r, now);
  RenderState rs{r.timestamps, r.limit_bytes};
  apiserver::Response resp;
  resp.content_type = "text/plain";
  if (!r.follow || log->ended()) {
    Render(*log, first, log->Count(now), now, rs, &resp.body);
    return resp;
  }
  resp.stream = std::make_shared<FollowStream>(this, log, pod, r.container, first, rs);
  return resp;
}

}  // namespace converge::kubelet
