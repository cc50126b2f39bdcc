// LatencyHistogram: log-linear buckets over nanoseconds (32 per power of two, ~3% wide), so
// that millions of samples cost a fixed 8 KB and merge by addition.
//
// Thread-safety: none; keep one per thread and Merge.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace converge::bench {

class LatencyHistogram {
 public:
  void Record(int64_t ns) {
    if (ns < 1) ns = 1;
    ++counts_[Bucket(static_cast<uint64_t>(ns))];
    ++total_;
    if (ns > max_) max_ = ns;
  }
  void Merge(const LatencyHistogram& other) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
    if (other.max_ > max_) max_ = other.max_;
  }
  uint64_t count() const { return total_; }
  int64_t max() const { return max_; }
  // The upper edge of the bucket holding quantile q (0..1), in nanoseconds.
  int64_t Quantile(double q) const {
    if (total_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(total_ - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min<int64_t>(UpperEdge(i), max_);
    }
    return max_;
  }

 private:
  static constexpr int kSubBits = 5;
  static size_t Bucket(uint64_t v) {
    const int msb = 63 - std::countl_zero(v);
    if (msb < kSubBits) return static_cast<size_t>(v);
    const uint64_t sub = (v >> (msb - kSubBits)) & ((1u << kSubBits) - 1);
    return static_cast<size_t>((msb - kSubBits + 1) << kSubBits) + sub;
  }
  static int64_t UpperEdge(size_t bucket) {
    if (bucket < (1u << kSubBits)) return static_cast<int64_t>(bucket);
    const int msb = static_cast<int>(bucket >> kSubBits) + kSubBits - 1;
    const uint64_t sub = bucket & ((1u << kSubBits) - 1);
    return static_cast<int64_t>(((1ull << kSubBits) + sub + 1) << (msb - kSubBits)) - 1;
  }

  std::array<uint64_t, 64 << kSubBits> counts_{};
  uint64_t total_ = 0;
  int64_t max_ = 0;
};

}  // namespace converge::bench
