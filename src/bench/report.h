// Report: the figures of one bench run, in the order they were added, printed as a table and
// written as a flat JSON object. Keys are stable snake_case names with the unit in the name
// (`startup_p99_ms`, `peak_rss_bytes`): scripts and docs/PERFORMANCE.md rely on them.
//
// Progress: a one-line progress bar on stdout, drawn only when stdout is a terminal.
//
// Thread-safety: Report is not thread-safe (one thread fills it). Progress::Set may be called
// from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "util/status.h"

namespace converge::bench {

class Report {
 public:
  explicit Report(std::string scenario) : scenario_(std::move(scenario)) {}

  // Adds (or replaces) a figure. Doubles are printed with up to 3 decimals.
  void Add(const std::string& key, double value);
  void Add(const std::string& key, int64_t value);
  void Add(const std::string& key, int value) { Add(key, static_cast<int64_t>(value)); }
  void AddString(const std::string& key, std::string value);
  // A note printed under the table (not in the JSON).
  void Note(std::string text) { notes_.push_back(std::move(text)); }

  const std::string& scenario() const { return scenario_; }
  // The final table: one figure per line.
  std::string Table() const;
  // {"scenario": "...", key: value, ...}
  std::string Json() const;
  util::Status WriteJson(const std::string& path) const;

 private:
  using Value = std::variant<double, int64_t, std::string>;
  void Set(const std::string& key, Value value);

  const std::string scenario_;
  std::vector<std::pair<std::string, Value>> figures_;
  std::vector<std::string> notes_;
};

class Progress {
 public:
  // `total` 0: an open-ended count (no bar, just the count).
  Progress(std::string label, int64_t total);
  ~Progress() { Finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Records `done` units and redraws at most ten times a second.
  void Set(int64_t done);
  // Draws the final state and ends the line. Idempotent.
  void Finish();

  // True when stdout is a terminal (bars are drawn at all).
  static bool Enabled();

 private:
  void DrawLocked(int64_t done);

  const std::string label_;
  const int64_t total_;
  const bool enabled_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_draw_;  // guarded by mu_
  int64_t last_done_ = 0;                            // guarded by mu_
  bool finished_ = false;                            // guarded by mu_
};

}  // namespace converge::bench
