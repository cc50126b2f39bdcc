// Measurement helpers for the bench scenarios: latency samples with percentiles, and what /proc
// says about a process (CPU time, resident memory) and the machine (load average).
//
// Thread-safety: Latencies is not thread-safe (keep one per thread and Merge them); the free
// functions read /proc only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace converge::bench {

class Latencies {
 public:
  void Add(std::chrono::nanoseconds d) { ms_.push_back(static_cast<double>(d.count()) / 1e6); }
  void AddMs(double ms) { ms_.push_back(ms); }
  void Merge(const Latencies& other) { ms_.insert(ms_.end(), other.ms_.begin(), other.ms_.end()); }
  size_t size() const { return ms_.size(); }
  // Nearest-rank percentile in milliseconds (p in [0, 100]); 0 when empty. Sorts the samples.
  double PercentileMs(double p);
  double MaxMs() { return PercentileMs(100); }
  double SumMs() const;

 private:
  std::vector<double> ms_;
  bool sorted_ = false;
};

struct ProcSample {
  bool ok = false;             // the process existed and /proc was readable
  double cpu_seconds = 0;      // utime + stime
  int64_t rss_bytes = 0;       // VmRSS
  int64_t peak_rss_bytes = 0;  // VmHWM: the highest RSS so far
  int64_t rss_anon_bytes = 0;  // RssAnon: the heap and other private memory
  int64_t rss_file_bytes = 0;  // RssFile: mapped files (the binary, libraries, the store's map)
};

// Reads /proc/PID/stat and /proc/PID/status.
ProcSample SampleProcess(pid_t pid);

// The 1-minute load average (/proc/loadavg), the context every figure is read in.
double LoadAverage1m();

// Seconds since `start` on the steady clock.
double SecondsSince(std::chrono::steady_clock::time_point start);

// Total size of the regular files under `dir` (0 when it does not exist).
int64_t DirectoryBytes(const std::string& dir);

}  // namespace converge::bench
