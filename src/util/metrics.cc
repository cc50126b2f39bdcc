#include "util/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

namespace converge::util {

namespace {

[[noreturn]] void Die(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "metrics: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

bool IsMetricName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsLabelName(std::string_view s) {
  if (s.empty() || s.starts_with("__")) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Prometheus float syntax: NaN, +Inf, -Inf; integral values below 2^53 as integers (counts read
// best that way); everything else in the shortest form that round-trips.
void AppendValue(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[32];
  std::to_chars_result r;
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (v == std::trunc(v) && std::fabs(v) < kExactIntegers) {
    r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(v));
  } else {
    r = std::to_chars(buf, buf + sizeof(buf), v);
  }
  out->append(buf, r.ptr);
}

void AppendUint(uint64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

// Label values escape backslash, double quote and newline.
void AppendEscapedLabelValue(std::string_view v, std::string* out) {
  for (char c : v) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      default: out->push_back(c);
    }
  }
}

// HELP text escapes backslash and newline.
void AppendEscapedHelp(std::string_view v, std::string* out) {
  for (char c : v) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      default: out->push_back(c);
    }
  }
}

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

std::vector<std::string> LeStrings(const std::vector<double>& bounds) {
  std::vector<std::string> out;
  out.reserve(bounds.size() + 1);
  for (double b : bounds) {
    std::string s;
    AppendValue(b, &s);
    out.push_back(std::move(s));
  }
  out.emplace_back("+Inf");
  return out;
}

// Appends `name` + suffix + `{labels}` (or `{labels,extra}`), then a space.
void AppendSeries(std::string_view name, std::string_view suffix, std::string_view labels,
                  std::string_view extra, std::string* out) {
  out->append(name);
  out->append(suffix);
  if (!labels.empty() || !extra.empty()) {
    out->push_back('{');
    out->append(labels);
    if (!labels.empty() && !extra.empty()) out->push_back(',');
    out->append(extra);
    out->push_back('}');
  }
  out->push_back(' ');
}

}  // namespace

// ---- Counter, Histogram ---------------------------------------------------------------------

void Counter::Add(double v) {
  if (v < 0) Die("counter decreased", std::to_string(v));
  value_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  size_t i = bounds_->size();  // +Inf, also for NaN
  if (!std::isnan(v)) {
    i = std::lower_bound(bounds_->begin(), bounds_->end(), v) - bounds_->begin();
  }
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out(bounds_->size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    total += counts_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

uint64_t Histogram::Count() const {
  return CumulativeCounts().back();
}

std::vector<double> DefaultLatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  if (!(start > 0) || !(factor > 1) || count < 1) Die("bad exponential buckets", "");
  std::vector<double> out;
  out.reserve(count);
  // Repeated multiplication, as client_golang does, so bounds (and their `le` text) match it.
  for (int i = 0; i < count; ++i, start *= factor) out.push_back(start);
  return out;
}

std::vector<double> LinearBuckets(double start, double width, int count) {
  if (!(width > 0) || count < 1) Die("bad linear buckets", "");
  std::vector<double> out;
  out.reserve(count);
  for (int i = 0; i < count; ++i, start += width) out.push_back(start);
  return out;
}

// ---- Families -------------------------------------------------------------------------------

namespace metrics_internal {

FamilyBase::FamilyBase(MetricType type, std::string name, std::string help,
                       std::vector<std::string> labels)
    : type_(type),
      name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(labels)) {}

void FamilyBase::RenderHeaderTo(std::string* out) const {
  out->append("# HELP ");
  out->append(name_);
  out->push_back(' ');
  AppendEscapedHelp(help_, out);
  out->append("\n# TYPE ");
  out->append(name_);
  out->push_back(' ');
  out->append(TypeName(type_));
  out->push_back('\n');
}

std::string FamilyBase::FormatLabels(std::span<const std::string_view> values) const {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(label_names_[i]);
    out.append("=\"");
    AppendEscapedLabelValue(values[i], &out);
    out.push_back('"');
  }
  return out;
}

bool LabelValuesLess::operator()(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) const {
  return a < b;
}

bool LabelValuesLess::operator()(const std::vector<std::string>& a,
                                 std::span<const std::string_view> b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](std::string_view x, std::string_view y) { return x < y; });
}

bool LabelValuesLess::operator()(std::span<const std::string_view> a,
                                 const std::vector<std::string>& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                      [](std::string_view x, std::string_view y) { return x < y; });
}

}  // namespace metrics_internal

template <typename M>
M Family<M>::Child::MakeMetric(const std::vector<double>* bounds) {
  if constexpr (std::is_same_v<M, Histogram>) {
    return M(bounds);
  } else {
    (void)bounds;
    return M();
  }
}

template <typename M>
Family<M>::Family(MetricType type, std::string name, std::string help,
                  std::vector<std::string> labels, std::vector<double> bounds)
    : FamilyBase(type, std::move(name), std::move(help), std::move(labels)),
      bounds_(std::move(bounds)),
      le_strings_(type == MetricType::kHistogram ? LeStrings(bounds_)
                                                 : std::vector<std::string>{}) {
  if (label_names().empty()) WithLabelValues({});
}

template <typename M>
M& Family<M>::WithLabelValues(std::span<const std::string_view> values) {
  if (values.size() != label_names().size()) {
    Die("wrong number of label values for", name());
  }
  {
    std::shared_lock lock(mu_);
    auto it = children_.find(values);
    if (it != children_.end()) return it->second->metric;
  }
  std::unique_lock lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end()) return it->second->metric;
  std::vector<std::string> key(values.begin(), values.end());
  auto child = std::make_unique<Child>(FormatLabels(values), &bounds_);
  M& metric = child->metric;
  children_.emplace(std::move(key), std::move(child));
  return metric;
}

template <typename M>
void Family<M>::RenderTo(std::string* out) const {
  std::shared_lock lock(mu_);
  if (children_.empty()) return;
  RenderHeaderTo(out);
  for (const auto& [values, child] : children_) {
    if constexpr (std::is_same_v<M, Histogram>) {
      const Histogram& h = child->metric;
      const std::vector<uint64_t> cumulative = h.CumulativeCounts();
      std::string le = "le=\"";
      for (size_t i = 0; i < cumulative.size(); ++i) {
        le.resize(4);
        le.append(le_strings_[i]);
        le.push_back('"');
        AppendSeries(name(), "_bucket", child->labels, le, out);
        AppendUint(cumulative[i], out);
        out->push_back('\n');
      }
      AppendSeries(name(), "_sum", child->labels, "", out);
      AppendValue(h.Sum(), out);
      out->push_back('\n');
      AppendSeries(name(), "_count", child->labels, "", out);
      AppendUint(cumulative.back(), out);
      out->push_back('\n');
    } else {
      AppendSeries(name(), "", child->labels, "", out);
      AppendValue(child->metric.Value(), out);
      out->push_back('\n');
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// ---- CollectHook, Registry ------------------------------------------------------------------

CollectHook& CollectHook::operator=(CollectHook&& other) noexcept {
  if (this != &other) {
    Reset();
    entry_ = std::move(other.entry_);
  }
  return *this;
}

void CollectHook::Reset() {
  if (entry_ == nullptr) return;
  {
    std::lock_guard lock(entry_->mu);  // waits for a running call
    entry_->fn = nullptr;
  }
  entry_.reset();
}

metrics_internal::FamilyBase& Registry::AddFamily(MetricType type, std::string name,
                                                  std::string help, std::vector<std::string> labels,
                                                  std::vector<double> bounds) {
  if (!IsMetricName(name)) Die("invalid metric name", name);
  std::set<std::string_view> seen;
  for (const std::string& l : labels) {
    if (!IsLabelName(l)) Die("invalid label name", l);
    if (type == MetricType::kHistogram && l == "le") Die("histogram label may not be le", name);
    if (!seen.insert(l).second) Die("duplicate label name", l);
  }
  if (type == MetricType::kHistogram) {
    if (!bounds.empty() && std::isinf(bounds.back()) && bounds.back() > 0) bounds.pop_back();
    for (size_t i = 0; i < bounds.size(); ++i) {
      if (std::isnan(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
        Die("histogram buckets must increase strictly", name);
      }
    }
  }

  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {
    metrics_internal::FamilyBase& f = *it->second;
    bool same = f.type() == type && f.help() == help && f.label_names() == labels;
    if (same && type == MetricType::kHistogram) {
      same = static_cast<HistogramFamily&>(f).bounds() == bounds;
    }
    if (!same) Die("conflicting redeclaration of", name);
    return f;
  }
  std::unique_ptr<metrics_internal::FamilyBase> family;
  switch (type) {
    case MetricType::kCounter:
      family = std::make_unique<CounterFamily>(type, name, std::move(help), std::move(labels),
                                               std::vector<double>{});
      break;
    case MetricType::kGauge:
      family = std::make_unique<GaugeFamily>(type, name, std::move(help), std::move(labels),
                                             std::vector<double>{});
      break;
    case MetricType::kHistogram:
      family = std::make_unique<HistogramFamily>(type, name, std::move(help), std::move(labels),
                                                 std::move(bounds));
      break;
  }
  auto& ref = *family;
  families_.emplace(std::move(name), std::move(family));
  return ref;
}

CounterFamily& Registry::AddCounter(MetricOptions o) {
  return static_cast<CounterFamily&>(AddFamily(MetricType::kCounter, std::move(o.name),
                                               std::move(o.help), std::move(o.labels), {}));
}

GaugeFamily& Registry::AddGauge(MetricOptions o) {
  return static_cast<GaugeFamily&>(
      AddFamily(MetricType::kGauge, std::move(o.name), std::move(o.help), std::move(o.labels), {}));
}

HistogramFamily& Registry::AddHistogram(HistogramOptions o) {
  return static_cast<HistogramFamily&>(AddFamily(MetricType::kHistogram, std::move(o.name),
                                                 std::move(o.help), std::move(o.labels),
                                                 std::move(o.buckets)));
}

CollectHook Registry::AddCollectHook(std::function<void()> fn) {
  auto entry = std::make_shared<CollectHook::Entry>();
  entry->fn = std::move(fn);
  std::lock_guard lock(mu_);
  hooks_.push_back(entry);
  return CollectHook(std::move(entry));
}

void Registry::RunCollectHooks() const {
  std::vector<std::shared_ptr<CollectHook::Entry>> live;
  {
    std::lock_guard lock(mu_);
    std::erase_if(hooks_, [&](const std::weak_ptr<CollectHook::Entry>& w) {
      auto e = w.lock();
      if (e == nullptr) return true;
      live.push_back(std::move(e));
      return false;
    });
  }
  for (const auto& e : live) {
    std::lock_guard lock(e->mu);
    if (e->fn) e->fn();
  }
}

void Registry::RenderTo(std::string* out) const {
  RunCollectHooks();
  std::lock_guard lock(mu_);
  for (const auto& [name, family] : families_) family->RenderTo(out);
}

std::string Registry::Render() const {
  std::string out;
  out.reserve(last_render_size_.load(std::memory_order_relaxed) + 256);
  RenderTo(&out);
  last_render_size_.store(out.size(), std::memory_order_relaxed);
  return out;
}

Registry& DefaultRegistry() {
  static Registry* const registry = new Registry();
  return *registry;
}

}  // namespace converge::util
