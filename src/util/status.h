// Status and StatusOr<T>: how every fallible call in Converge reports failure.
//
// A Status is a canonical code plus a message. The code says what the caller should do next
// (see Code below); the message is for humans. An OK Status holds no allocation, so returning
// one on the success path costs nothing.
//
// Thread-safety: Status and StatusOr are values; distinct instances may be used from distinct
// threads freely.
#pragma once

#include <cassert>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace converge::util {

// Canonical codes, chosen by what the caller should do (abseil's guidance):
//   kUnavailable        retry the same call later (transient: network, overload, leader change).
//   kAborted            retry the whole read-modify-write (an optimistic-concurrency conflict).
//   kFailedPrecondition do not retry until the system's state changes.
//   kInvalidArgument    the request itself is wrong; retrying will not help.
//   kOutOfRange         the request names a position that no longer (or not yet) exists,
//                       e.g. a compacted or future revision.
enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  // Empty for OK.
  const std::string& message() const;
  // "CODE: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "context: message"; OK stays OK. Keeps the reason.
  Status WithContext(std::string_view context) const;

  // A machine-readable refinement of the code, e.g. the Kubernetes Status reason ("Expired",
  // "TooManyRequests") an API error carried, so that callers can tell apart errors that share a
  // code. Empty when none (and for OK).
  const std::string& reason() const;
  // Returns a copy carrying `reason`; OK stays OK.
  Status WithReason(std::string reason) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    Code code;
    std::string message;
    std::string reason;
  };
  // Shared so that copying an error is cheap; never mutated after construction.
  std::shared_ptr<const Rep> rep_;
};

inline Status InvalidArgument(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(Code::kNotFound, std::move(m));
}
inline Status AlreadyExists(std::string m) {
  return Status(Code::kAlreadyExists, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(Code::kFailedPrecondition, std::move(m));
}
inline Status Aborted(std::string m) {
  return Status(Code::kAborted, std::move(m));
}
inline Status OutOfRange(std::string m) {
  return Status(Code::kOutOfRange, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(Code::kInternal, std::move(m));
}
inline Status Unavailable(std::string m) {
  return Status(Code::kUnavailable, std::move(m));
}
inline Status DataLoss(std::string m) {
  return Status(Code::kDataLoss, std::move(m));
}
inline Status Cancelled(std::string m) {
  return Status(Code::kCancelled, std::move(m));
}
inline Status DeadlineExceeded(std::string m) {
  return Status(Code::kDeadlineExceeded, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(Code::kResourceExhausted, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(Code::kUnimplemented, std::move(m));
}
inline Status PermissionDenied(std::string m) {
  return Status(Code::kPermissionDenied, std::move(m));
}
inline Status Unauthenticated(std::string m) {
  return Status(Code::kUnauthenticated, std::move(m));
}

// StatusOr<T> holds either a T or a non-OK Status. Accessing the value of an error aborts:
// that is a programming error, not a recoverable condition.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : v_(status) { CheckNotOk(); }        // NOLINT(runtime/explicit)
  StatusOr(Status&& status) : v_(std::move(status)) { CheckNotOk(); }  // NOLINT
  StatusOr(const T& value) : v_(value) {}                              // NOLINT
  StatusOr(T&& value) : v_(std::move(value)) {}                        // NOLINT
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Status> && !std::is_same_v<std::decay_t<U>, StatusOr>)
      StatusOr(U&& value)
      : v_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  T& value() & {
    CheckOk();
    return std::get<T>(v_);
  }
  const T& value() const& {
    CheckOk();
    return std::get<T>(v_);
  }
  T&& value() && {
    CheckOk();
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const {
    if (!ok()) {
      AbortOnBadAccess(std::get<Status>(v_));
    }
  }
  void CheckNotOk() const {
    if (std::get<Status>(v_).ok()) {
      AbortOnBadAccess(Status(Code::kInternal, "StatusOr constructed from an OK Status"));
    }
  }
  [[noreturn]] static void AbortOnBadAccess(const Status& s);

  std::variant<Status, T> v_;
};

[[noreturn]] void AbortWithStatus(const char* what, const Status& s);

template <typename T>
void StatusOr<T>::AbortOnBadAccess(const Status& s) {
  AbortWithStatus("StatusOr::value() on an error", s);
}

}  // namespace converge::util

// Propagates a non-OK Status to the caller.
#define CONVERGE_RETURN_IF_ERROR(expr)     \
  do {                                     \
    ::converge::util::Status _st = (expr); \
    if (!_st.ok()) return _st;             \
  } while (0)

#define CONVERGE_CONCAT_INNER(a, b) a##b
#define CONVERGE_CONCAT(a, b) CONVERGE_CONCAT_INNER(a, b)
// Declares `lhs` from a StatusOr expression, or returns its error.
#define CONVERGE_ASSIGN_OR_RETURN(lhs, expr) \
  CONVERGE_ASSIGN_OR_RETURN_IMPL(CONVERGE_CONCAT(_statusor_, __LINE__), lhs, expr)
#define CONVERGE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()
