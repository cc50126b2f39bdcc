// The audit log: one audit.k8s.io/v1 Event per request at level Metadata (who, what, when, with
// what result; never bodies), as upstream's --audit-log-path writes it.
//
// APIServer::Handle builds the event (BuildAuditEvent is pure) and hands the serialized line to an
// AuditSink. AuditLogFile is the sink behind `--audit-log-path`: a bounded queue drained by one
// writer thread, so a slow disk never blocks a request; lines that do not fit are dropped and
// counted in apiserver_audit_error_total{plugin="log"} (upstream's name).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "apiserver/request.h"
#include "apiserver/request_info.h"
#include "util/status.h"
#include "util/time_format.h"

namespace converge::apiserver {

// Receives serialized audit events (one JSON document, no trailing newline).
// Thread-safety: Write is called from many request threads at once and must not block on I/O.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  virtual void Write(std::string line) = 0;
};

// Everything an event records about one request.
struct AuditRecord {
  std::string audit_id;  // a UUID
  // "ResponseComplete", or "ResponseStarted" for long-running requests (watches, followed logs).
  std::string stage = "ResponseComplete";
  const Request* request = nullptr;   // not owned; the request as received (path, query, headers)
  const RequestInfo* info = nullptr;  // not owned
  UserInfo user;                      // the authenticated user
  std::optional<UserInfo> impersonated;  // who the request acted as, when impersonating
  int code = 200;
  // For failures: the Status body's status/reason/message (read from the response body).
  std::string response_body;
  util::WallTime received;
  util::WallTime stage_time;
};

// The audit.k8s.io/v1 Event for `r`, serialized as one JSON line (no newline).
std::string BuildAuditEvent(const AuditRecord& r);

struct AuditLogFileOptions {
  std::string path;
  // Lines waiting for the writer; beyond this they are dropped (upstream's buffered backend
  // default is 10000 events).
  size_t queue_capacity = 10000;
};

// Appends audit lines to a file from a writer thread. Start opens the file (creating it 0600) and
// starts the thread; Stop drains what is queued, then joins. Write never blocks on the disk.
// Thread-safety: Write is safe from any thread; Start/Stop from one thread.
class AuditLogFile : public AuditSink {
 public:
  explicit AuditLogFile(AuditLogFileOptions options);
  ~AuditLogFile() override;
  AuditLogFile(const AuditLogFile&) = delete;
  AuditLogFile& operator=(const AuditLogFile&) = delete;

  util::Status Start();
  void Stop();
  void Write(std::string line) override;

 private:
  void Run();

  const AuditLogFileOptions options_;
  int fd_ = -1;  // set by Start before the writer exists; then used by the writer only
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // guarded by mu_; size <= options_.queue_capacity
  bool accepting_ = false;         // guarded by mu_; true between Start and Stop
  bool stopping_ = false;          // guarded by mu_
  std::thread writer_;
};

}  // namespace converge::apiserver
