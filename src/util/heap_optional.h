// HeapOptional<T>: std::optional's interface for a value that is rarely there, kept on the heap.
// Empty it takes one pointer instead of sizeof(T) and a flag: for the rare parts of state held
// per pod (a container's last termination), a hundred thousand times over.
//
// Copies copy the value (deep); moves move the pointer.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace converge::util {

template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(std::nullopt_t) {}  // NOLINT: implicit, as std::optional's
  HeapOptional(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit
  HeapOptional(const HeapOptional& other) : value_(Clone(other)) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& other) {
    if (this != &other) value_ = Clone(other);
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(T value) {
    if (value_) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_unique<T>(std::move(value));
    }
    return *this;
  }
  HeapOptional& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  void reset() { value_.reset(); }

  friend bool operator==(const HeapOptional& a, const HeapOptional& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a.has_value() || *a == *b;
  }

 private:
  static std::unique_ptr<T> Clone(const HeapOptional& other) {
    return other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
  }

  std::unique_ptr<T> value_;
};

}  // namespace converge::util
