#include "util/status.h"

#include <cstdio>

namespace converge::util {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kCancelled: return "CANCELLED";
    case Code::kUnknown: return "UNKNOWN";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kAlreadyExists: return "ALREADY_EXISTS";
    case Code::kPermissionDenied: return "PERMISSION_DENIED";
    case Code::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::kFailedPrecondition: return "FAILED_PRECONDITION";
    case Code::kAborted: return "ABORTED";
    case Code::kOutOfRange: return "OUT_OF_RANGE";
    case Code::kUnimplemented: return "UNIMPLEMENTED";
    case Code::kInternal: return "INTERNAL";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kDataLoss: return "DATA_LOSS";
    case Code::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

Status::Status(Code code, std::string message) {
  if (code != Code::kOk) {
    rep_ = std::make_shared<const Rep>(Rep{code, std::move(message), {}});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeName(code()));
  out += ": ";
  out += message();
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += ": ";
  m += message();
  return Status(code(), std::move(m)).WithReason(reason());
}

const std::string& Status::reason() const {
  static const std::string kEmpty;
  return rep_ ? rep_->reason : kEmpty;
}

Status Status::WithReason(std::string reason) const {
  if (ok()) return *this;
  Status s;
  s.rep_ = std::make_shared<const Rep>(Rep{code(), message(), std::move(reason)});
  return s;
}

void AbortWithStatus(const char* what, const Status& s) {
  std::fprintf(stderr, "FATAL: %s: %s\n", what, s.ToString().c_str());
  std::abort();
}

}  // namespace converge::util
