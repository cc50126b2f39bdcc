#include "bench/stats.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace converge::bench {

double Latencies::PercentileMs(double p) {
  if (ms_.empty()) return 0;
  if (!sorted_) {
    std::sort(ms_.begin(), ms_.end());
    sorted_ = true;
  }
  // Nearest rank: the smallest sample with at least p% of the samples at or below it.
  double rank = std::ceil(p / 100.0 * static_cast<double>(ms_.size()));
  size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return ms_[std::min(index, ms_.size() - 1)];
}

double Latencies::SumMs() const {
  return std::accumulate(ms_.begin(), ms_.end(), 0.0);
}

ProcSample SampleProcess(pid_t pid) {
  ProcSample s;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return s;
  // Fields after the command name (which may contain spaces) start after the last ')'; the
  // first of them is field 3 (state). utime and stime are fields 14 and 15.
  size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 > line.size()) return s;
  std::istringstream rest(line.substr(paren + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  for (int i = 3; rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_bytes = std::stoll(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0) s.peak_rss_bytes = std::stoll(line.substr(6)) * 1024;
    if (line.rfind("RssAnon:", 0) == 0) s.rss_anon_bytes = std::stoll(line.substr(8)) * 1024;
    if (line.rfind("RssFile:", 0) == 0) s.rss_file_bytes = std::stoll(line.substr(8)) * 1024;
  }
  s.ok = true;
  return s;
}

double LoadAverage1m() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  in >> load;
  return load;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t DirectoryBytes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += static_cast<int64_t>(it->file_size(ec));
  }
  return total;
}

}  // namespace converge::bench
