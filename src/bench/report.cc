#include "bench/report.h"

#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace converge::bench {

namespace json = boost::json;

void Report::Set(const std::string& key, Value value) {
  for (auto& [k, v] : figures_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  figures_.emplace_back(key, std::move(value));
}

void Report::Add(const std::string& key, double value) {
  Set(key, std::isfinite(value) ? value : 0.0);
}
void Report::Add(const std::string& key, int64_t value) {
  Set(key, value);
}
void Report::AddString(const std::string& key, std::string value) {
  Set(key, std::move(value));
}

namespace {

std::string FormatValue(const std::variant<double, int64_t, std::string>& v) {
  char buf[64];
  if (const double* d = std::get_if<double>(&v)) {
    std::snprintf(buf, sizeof(buf), "%.3f", *d);
    std::string s = buf;
    // Trim trailing zeros of the fraction: 12.500 -> 12.5, 3.000 -> 3.
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return std::get<std::string>(v);
}

}  // namespace

std::string Report::Table() const {
  size_t width = 0;
  for (const auto& [k, v] : figures_) width = std::max(width, k.size());
  std::ostringstream out;
  out << "converge bench " << scenario_ << "\n";
  for (const auto& [k, v] : figures_) {
    out << "  " << k << std::string(width - k.size() + 2, ' ') << FormatValue(v) << "\n";
  }
  for (const std::string& n : notes_) out << "  note: " << n << "\n";
  return out.str();
}

std::string Report::Json() const {
  json::object o;
  o["scenario"] = scenario_;
  for (const auto& [k, v] : figures_) {
    std::visit([&o, &k](const auto& x) { o[k] = x; }, v);
  }
  return json::serialize(o);
}

util::Status Report::WriteJson(const std::string& path) const {
  std::ofstream out(path, std::ios::trunc);
  out << Json() << "\n";
  out.close();
  if (!out) return util::Unavailable("cannot write " + path);
  return util::Status::Ok();
}

bool Progress::Enabled() {
  static const bool enabled = isatty(STDOUT_FILENO) == 1;
  return enabled;
}

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)), total_(total), enabled_(Enabled()) {}

void Progress::Set(int64_t done) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  last_done_ = done;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  DrawLocked(done);
}

void Progress::Finish() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  DrawLocked(last_done_);
  std::fputs("\n", stdout);
  std::fflush(stdout);
}

void Progress::DrawLocked(int64_t done) {
  constexpr int kWidth = 30;
  std::string line = "\r" + label_ + " ";
  if (total_ > 0) {
    int64_t clamped = std::clamp<int64_t>(done, 0, total_);
    int filled = static_cast<int>(clamped * kWidth / total_);
    line += "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
    line += std::to_string(done) + "/" + std::to_string(total_);
  } else {
    line += std::to_string(done);
  }
  line += "   ";
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace converge::bench
